// The trajectory viewer's pure parts: marker geometry (points, drags, scroll arrows, actions without a marker),
// the view-model built from an event stream (numbering, decisions superseded after a lost worker, invalid outputs),
// HTML escaping of everything that comes from the run, and desktop runs (one step per step, screen-pixel markers).
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { desktopLines } from '../../src/viewer/run-text';
import { NORM1000, resizedPixelsSpace } from '../../src/coords/viewport';
import {
  actionEvent,
  handbackEvent,
  postObservation,
  preObservation,
  sessionRestored,
  steerMessage,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import type { RunRecord } from '../../src/trajectory/reader';
import type { Action, Event } from '../../src/trajectory/schema';
import { TaskSchema } from '../../src/trajectory/schema';
import { stepSummaries } from '../../src/trajectory/steps';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { callTarget, environmentOf, screenOf, stepToolsSummary } from '../../src/viewer/desktop';
import { renderTrajectoryHtml } from '../../src/viewer/html';
import { markerSvg } from '../../src/viewer/marker-svg';
import { escapeHtml } from '../../src/viewer/markup';
import { arrowHead, markerFor, spaceOf } from '../../src/viewer/markers';
import type { Geometry, Marker, Point } from '../../src/viewer/markers';
import { buildTrajectoryView } from '../../src/viewer/model';
import { renderTrajectoryReport } from '../../src/viewer/report';

const VIEWPORT = { width: 1440, height: 900 };
const NORM: Geometry = { space: NORM1000, viewport: VIEWPORT, image: VIEWPORT };

const close = (actual: Point | null | undefined, expected: Point) => {
  expect(actual).not.toBeNull();
  expect(actual?.x).toBeCloseTo(expected.x, 6);
  expect(actual?.y).toBeCloseTo(expected.y, 6);
};

describe('click-like actions mark their pixel point', () => {
  it.each([
    ['left_click', [500, 200], NORM, { x: 720, y: 180 }],
    ['right_click', [0, 0], NORM, { x: 0, y: 0 }],
    ['double_click', [1000, 1000], NORM, { x: 1440, y: 900 }],
    ['triple_click', [250, 750], NORM, { x: 360, y: 675 }],
    ['mouse_move', [500, 256], NORM, { x: 720, y: 230.4 }],
    ['hover', [100, 900], NORM, { x: 144, y: 810 }],
    ['type', [250, 500], NORM, { x: 360, y: 450 }], // Fara-7B's type-at clicks the field first
    // Fara-7B speaks pixels of the resized screenshot (1428×896 for 1440×900).
    ['left_click', [714, 448], { ...NORM, space: resizedPixelsSpace(1428, 896) }, { x: 720, y: 450 }],
    // A screenshot taken at twice the viewport's size: the point scales with it.
    ['left_click', [500, 200], { ...NORM, image: { width: 2880, height: 1800 } }, { x: 1440, y: 360 }],
  ] as const)('%s %j → %j', (name, coordinate, geo, expected) => {
    const marker = markerFor(name, { coordinate: [...coordinate], thoughts: 'x' }, geo);
    expect(marker?.kind).toBe('point');
    close(marker?.kind === 'point' ? marker.at : null, expected);
  });
});

describe('drags draw a path from the start to the end point', () => {
  it.each([
    ['pointer left by a previous action', {}, { x: 100, y: 100 }, { x: 100, y: 100 }],
    ['explicit start_coordinate', { start_coordinate: [250, 500] }, null, { x: 360, y: 450 }],
    ['start_coordinate wins over the pointer', { start_coordinate: [0, 0] }, { x: 5, y: 5 }, { x: 0, y: 0 }],
  ])('%s', (_what, extra, pointer, from) => {
    const marker = markerFor('left_click_drag', { coordinate: [600, 500], ...extra }, NORM, pointer);
    expect(marker?.kind).toBe('drag');
    if (marker?.kind !== 'drag') return;
    close(marker.to, { x: 864, y: 450 });
    close(marker.from, from);
    expect(marker.head).toHaveLength(3);
    close(marker.head[0], marker.to); // the arrow's tip is the end point
  });

  it('an unknown start draws the end point only', () => {
    const marker = markerFor('drag', { coordinate: [600, 500] }, NORM, null);
    expect(marker).toMatchObject({ kind: 'drag', from: null, head: [] });
  });
});

describe('scrolls draw an arrow in the scroll direction', () => {
  const centre = { x: 720, y: 450 };
  it.each([
    ['scroll', 300, undefined, 'up', centre],
    ['scroll', -500, undefined, 'down', centre],
    ['hscroll', 200, undefined, 'left', centre],
    ['hscroll', -200, undefined, 'right', centre],
    ['scroll', -100, [100, 100], 'down', { x: 144, y: 90 }],
  ] as const)('%s %d at %j → %s', (name, pixels, coordinate, direction, at) => {
    const args = coordinate ? { pixels, coordinate: [...coordinate] } : { pixels };
    const marker = markerFor(name, args, NORM);
    expect(marker?.kind).toBe('scroll');
    if (marker?.kind !== 'scroll') return;
    expect(marker.direction).toBe(direction);
    close(marker.at, at);
    const dx = marker.to.x - marker.at.x;
    const dy = marker.to.y - marker.at.y;
    const expected = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[direction];
    expect([Math.sign(dx) + 0, Math.sign(dy) + 0]).toEqual(expected);
    expect(Math.hypot(dx, dy)).toBeGreaterThan(40);
    close(marker.head[0], marker.to);
  });

  it('a bigger scroll draws a longer arrow, within bounds', () => {
    const length = (pixels: number) => {
      const m = markerFor('scroll', { pixels }, NORM) as Extract<Marker, { kind: 'scroll' }>;
      return Math.abs(m.to.y - m.at.y);
    };
    expect(length(200)).toBeLessThan(length(300));
    expect(length(5)).toBeCloseTo(900 * 0.08);
    expect(length(5000)).toBeCloseTo(900 * 0.3);
  });
});

describe('actions with nothing to point at have no marker', () => {
  it.each([
    ['type', { text: 'Lisbon', press_enter: true }],
    ['terminate', { answer: 'done' }],
    ['visit_url', { url: 'https://example.com' }],
    ['key', { keys: ['Enter'] }],
    ['wait', { time: 2 }],
    ['read_page_answer_question', { question: 'price?' }],
    ['web_search', { query: 'hotels' }],
    ['history_back', {}],
    ['scroll', { pixels: 0 }],
    ['left_click', { coordinate: 'not a point' }],
    ['left_click', { coordinate: [Number.NaN, 3] }],
  ])('%s %j', (name, args) => {
    expect(markerFor(name, args, NORM)).toBeNull();
  });
});

describe('geometry helpers', () => {
  it('arrowHead is a triangle with its tip at the end, symmetric about the line', () => {
    const [tip, left, right] = arrowHead({ x: 0, y: 0 }, { x: 0, y: 100 }, 20);
    expect(tip).toEqual({ x: 0, y: 100 });
    expect(left?.y).toBeCloseTo(80);
    expect(right?.y).toBeCloseTo(80);
    expect((left?.x ?? 0) + (right?.x ?? 0)).toBeCloseTo(0);
    expect(arrowHead({ x: 1, y: 1 }, { x: 1, y: 1 }, 20)).toEqual([]);
  });

  it.each([
    ['fara-1.5', { kind: 'norm1000' }],
    ['fara-7b', { kind: 'resized-pixels', width: 1428, height: 896 }],
  ] as const)('the %s space for 1440×900', (profile, space) => {
    expect(spaceOf(profile, VIEWPORT)).toEqual(space);
  });

  it('the overlay viewBox is the screenshot pixel size', () => {
    const svg = markerSvg({ kind: 'point', at: { x: 720, y: 180 } }, VIEWPORT);
    expect(svg).toContain('viewBox="0 0 1440 900"');
    expect(svg).toContain('data-x="720" data-y="180"');
    expect(svg).toMatch(/class="marker-center" cx="720" cy="180"/);
  });
});

// ---------- view-model and page ----------

const T = '2026-01-01T00:00:00.000Z';
const stamp = { timestamp: T };
const EVIL = '<img src=x onerror="alert(1)">&\'';

function events(): Event[] {
  const act = (step: number, action: string, args: Record<string, unknown>) =>
    actionEvent(step, { action_name: action, content: { action, arguments: args } }, stamp);
  const page = (n: number, url: string) => ({ screenshot_path: `screenshot_${n}_pre.png`, url, page_info: '' });
  return [
    taskMessage(`Book ${EVIL}`, stamp),
    preObservation(1, page(1, 'http://site/'), stamp),
    act(1, 'mouse_move', { coordinate: [100, 100], thoughts: `Think ${EVIL}` }),
    toolOutput(1, 'step-0001-action-g0', { output: 'moved' }, stamp),
    postObservation(1, 'step-0001-action-g0', { screenshot_path: 'screenshot_1_post.png', url: 'http://site/' }, stamp),
    preObservation(2, page(2, `http://site/?q=${EVIL}`), stamp),
    act(2, 'left_click_drag', { coordinate: [500, 500], thoughts: 'Drag it.' }),
    toolOutput(2, 'step-0002-action-g0', { output: '', error: `boom ${EVIL}` }, stamp),
    postObservation(2, 'step-0002-action-g0', { screenshot_path: 'screenshot_2_post.png' }, stamp),
    preObservation(3, { url: 'http://site/b' }, stamp), // no screenshot: the previous post one is used
    act(3, 'ask_user_question', { question: `Which ${EVIL}?`, thoughts: '' }),
    toolOutput(3, 'step-0003-action-g0', { output: 'Which?' }, stamp),
    postObservation(3, 'step-0003-action-g0', { screenshot_path: 'screenshot_3_post.png' }, stamp),
    userReply(3, `Reply ${EVIL}`, stamp),
    preObservation(4, page(4, 'http://site/c'), stamp),
    act(4, 'terminate', { answer: `Answer ${EVIL}`, thoughts: 'Done.' }),
  ];
}

function record(evs: Event[]): RunRecord {
  return {
    taskId: 'run-1',
    location: '/tmp/run-1',
    task: TaskSchema.parse({
      task_id: 'run-1',
      instruction: `Book ${EVIL}`,
      environment_config: { start_url: 'http://site/', viewport: VIEWPORT },
      metadata: { profile: 'fara-1.5' },
    }),
    events: evs,
    status: 'complete',
    fileStatus: 'complete',
    outcome: { answer: `Answer ${EVIL}` },
    verification: {},
    metadata: { stats: {}, run_id: 'run-1', created_at: T },
    runState: {},
    warnings: [],
  };
}

describe('the view-model of a run', () => {
  const run = record(events());
  const view = buildTrajectoryView(run, () => VIEWPORT);

  it('has one step per action, numbered as stepSummaries', () => {
    expect(view.steps.map((s) => s.number)).toEqual(stepSummaries(run.events).map((s) => s.step));
    expect(view.steps.map((s) => s.actionName)).toEqual([
      'mouse_move',
      'left_click_drag',
      'ask_user_question',
      'terminate',
    ]);
  });

  it('uses the screenshot the model saw (pre, else the previous post)', () => {
    expect(view.steps.map((s) => s.screenshot)).toEqual([
      'screenshot_1_pre.png',
      'screenshot_2_pre.png',
      'screenshot_2_post.png',
      'screenshot_4_pre.png',
    ]);
  });

  it('starts a drag where the previous action left the pointer', () => {
    const drag = view.steps[1]?.marker;
    expect(drag?.kind).toBe('drag');
    if (drag?.kind !== 'drag') return;
    close(drag.from, { x: 144, y: 90 });
    close(drag.to, { x: 720, y: 450 });
    close(view.steps[1]?.pixelPoint, { x: 720, y: 450 });
  });

  it('carries thoughts, observations, user replies, URLs and the outcome', () => {
    expect(view.steps[0]?.thoughts).toBe(`Think ${EVIL}`);
    expect(view.steps[1]?.observation).toBe(`error: boom ${EVIL}`);
    expect(view.steps[1]?.url).toBe(`http://site/?q=${EVIL}`);
    expect(view.steps[3]?.userMessages).toEqual([{ type: 'critical_point_response', content: `Reply ${EVIL}` }]);
    expect(view.steps[0]?.userMessages).toEqual([]); // the task message is the instruction, shown at the top
    expect(view).toMatchObject({ status: 'complete', answer: `Answer ${EVIL}`, profile: 'fara-1.5' });
    expect(view.steps[0]?.summary).toBe('mouse_move (100, 100)');
  });
});

// ---------- lost workers and invalid outputs ----------

const gstamp = (generation: number, metadata?: Record<string, unknown>) => ({ ...stamp, generation, metadata });
const actionId = (step: number, generation = 0) => `step-${String(step).padStart(4, '0')}-action-g${generation}`;
const shot = (step: number, generation = 0) => `screenshot_${step}${generation ? `_g${generation}` : ''}_pre.png`;

function decide(step: number, generation: number, action: string, args: Record<string, unknown>, meta?: object) {
  const metadata = meta ? { ...meta } : undefined;
  return actionEvent(step, { action_name: action, content: { action, arguments: args } }, gstamp(generation, metadata));
}

/** pre, a click (or another action), its tool output and post. */
function whole(step: number, generation = 0, action = 'left_click', args: Record<string, unknown> = {}): Event[] {
  const id = actionId(step, generation);
  return [
    preObservation(step, { screenshot_path: shot(step, generation), url: `http://site/${step}` }, gstamp(generation)),
    decide(step, generation, action, { coordinate: [100 * step, 100], ...args }),
    toolOutput(step, id, { output: `did ${action}` }, gstamp(generation)),
    postObservation(step, id, { screenshot_path: `screenshot_${step}_post.png` }, gstamp(generation)),
  ];
}

/** Step 3 decided in generation 0, the worker lost (after `acted`), the session restored and step 3 re-decided. */
function redecided(acted: 'nothing' | 'tool'): Event[] {
  return [
    taskMessage(`Book ${EVIL}`, stamp),
    ...whole(1),
    ...whole(2),
    preObservation(3, { screenshot_path: shot(3), url: 'http://site/3' }, stamp),
    decide(3, 0, 'left_click', { coordinate: [300, 300], thoughts: 'Click the lost button.' }),
    ...(acted === 'tool' ? [toolOutput(3, actionId(3), { output: 'clicked' }, stamp)] : []),
    sessionRestored(3, 'The browser session was lost and restored.', gstamp(1)),
    ...whole(3, 1, 'left_click_drag', { coordinate: [600, 600] }),
    ...whole(4, 0, 'terminate', { answer: 'done' }),
  ];
}

const count = (html: string, pattern: RegExp) => html.match(new RegExp(pattern, 'g'))?.length ?? 0;
const sectionOf = (html: string, n: number) =>
  html.match(new RegExp(`<section [^>]*id="step-${n}"[\\s\\S]*?</section>`))?.[0] ?? '';

describe("a person's controls in the report", () => {
  it('a message said to the task, a handback and what a lost worker left in doubt are shown with their step', () => {
    const inDoubt = sessionRestored(3, 'Your last action, left_click (300, 100), may or may not have taken effect.', {
      ...gstamp(1),
      metadata: { in_doubt: { action: 'left_click (300, 100)' } },
    });
    const evs = [
      taskMessage(`Book ${EVIL}`, stamp),
      ...whole(1),
      steerMessage(2, 'The blue one, not the red one.', 1, stamp),
      handbackEvent(2, 'A person took over the browser for 2 min and handed it back.', stamp),
      ...whole(2),
      preObservation(3, { screenshot_path: shot(3), url: 'http://site/3' }, stamp),
      decide(3, 0, 'left_click', { coordinate: [300, 100] }),
      inDoubt,
      ...whole(3, 1),
      ...whole(4, 0, 'terminate', { answer: 'done' }),
    ];
    const view = buildTrajectoryView(record(evs), () => VIEWPORT);
    expect(view.steps[1]?.userMessages).toEqual([
      { type: 'steer', content: 'The blue one, not the red one.' },
      { type: 'handback', content: 'A person took over the browser for 2 min and handed it back.' },
    ]);
    expect(view.steps[2]?.userMessages.map((m) => m.type)).toEqual(['in_doubt']);
    const html = sectionOf(renderTrajectoryHtml(view, new Map()), 2);
    expect(html).toContain('Message from the user (cua say)');
    expect(html).toContain('A person had the browser');
  });
});

describe('a step re-decided after a lost worker', () => {
  it.each([
    ['decided, lost before acting', 'nothing', '(none)'],
    ['acted (tool output written), lost before the post observation', 'tool', 'clicked'],
  ] as const)('%s: the superseded decision rides on step 3, not as a step', (_what, acted, observation) => {
    const view = buildTrajectoryView(record(redecided(acted)), () => VIEWPORT);
    expect(view.steps.map((s) => [s.number, s.generation, s.superseded, s.supersededDecisions.length])).toEqual([
      [1, 0, false, 0],
      [2, 0, false, 0],
      [3, 1, false, 1],
      [4, 0, false, 0],
    ]);
    const [lost] = view.steps[2]?.supersededDecisions ?? [];
    expect(lost).toMatchObject({ number: 3, generation: 0, superseded: true, screenshot: shot(3) });
    expect(lost?.observation || '(none)').toBe(observation);
    expect(view.steps[2]?.screenshot).toBe(shot(3, 1));
    // The new session's pointer starts nowhere: the re-decided drag's start is unknown.
    expect(view.steps[2]?.marker).toMatchObject({ kind: 'drag', from: null });

    const html = renderTrajectoryHtml(view, new Map([[shot(3), 'data:image/webp;base64,AAAA']]));
    expect(count(html, /<section class="step[ "]/)).toBe(4);
    expect(count(html, /<nav [\s\S]*?<\/nav>/)).toBe(1);
    expect(count(html.match(/<nav [\s\S]*?<\/nav>/)?.[0] ?? '', /<a href="#step-/)).toBe(4);
    expect(html).toContain('<h2>Steps (4)</h2>');
    expect(html).toContain('<dt>Steps</dt><dd>4</dd>');
    expect(html).toContain('<dt>Superseded decisions</dt><dd>1 ');
    expect(count(html, /<div class="superseded"/)).toBe(1);
    const step3 = sectionOf(html, 3);
    expect(step3).toContain('<div class="superseded" data-step="3" data-generation="0" data-action="left_click">');
    expect(step3).toContain('Effect unknown: the worker was lost and the step was re-decided.');
    expect(step3).toContain('Click the lost button.');
    expect(step3).toContain('re-decided after a lost worker');
    expect(step3.indexOf('class="superseded"')).toBeLessThan(step3.indexOf('did left_click_drag'));
  });

  it('the report and stepSummaries agree: one summary row per decision, one step per number', () => {
    const run = record(redecided('nothing'));
    const rows = stepSummaries(run.events);
    const view = buildTrajectoryView(run, () => VIEWPORT);
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3, 3, 4]);
    expect(view.steps.map((s) => s.number)).toEqual(rows.filter((r) => !r.superseded).map((r) => r.step));
  });

  it('metadata.supersedes on the newer action is enough, with foreign ids numbered by counting', () => {
    const uuid = (id: string) => `uuid-${id}`;
    const evs = [...whole(1), ...whole(2), ...whole(3, 0, 'terminate', { answer: 'done' })].map((e): Event => {
      if (e.type === 'action') return { ...e, id: uuid(e.id) };
      return { ...e, id: uuid(e.id), action_id: e.action_id === null ? null : uuid(e.action_id) };
    });
    const plain = buildTrajectoryView(record(evs), () => VIEWPORT);
    expect(plain.steps.map((s) => [s.number, s.generation, s.superseded])).toEqual([
      [1, 0, false],
      [2, 0, false],
      [3, 0, false],
    ]);
    const second = evs[5];
    if (second?.type !== 'action') throw new Error('bad fixture');
    const marked: Action = { ...second, metadata: { supersedes: uuid(actionId(1)) } };
    const view = buildTrajectoryView(record(evs.map((e) => (e === second ? marked : e))), () => VIEWPORT);
    expect(view.steps.map((s) => [s.number, s.supersededDecisions.map((d) => d.number)])).toEqual([
      [1, [1]],
      [2, []],
    ]);
  });
});

describe('an invalid output', () => {
  const error = 'no tool call in the output: expected a <tool_call> block';
  function invalidRun(name: string): Event[] {
    const id = actionId(2);
    const pre = preObservation(2, { screenshot_path: shot(2), url: 'http://site/2' }, stamp);
    return [
      taskMessage(`Book ${EVIL}`, stamp),
      ...whole(1),
      pre,
      decide(
        2,
        0,
        name,
        { coordinate: [500, 500], thoughts: 'I will click.' },
        {
          invalid_reply: { error, error_type: 'ActionParseError' },
        },
      ),
      toolOutput(2, id, { output: '', error }, stamp),
      postObservation(2, id, { screenshot_path: pre.screenshot_path, url: pre.url }, stamp),
      ...whole(3, 0, 'terminate', { answer: 'done' }),
    ];
  }

  it.each(['click', 'invalid_reply'])('%s: a step with its error and no marker', (name) => {
    const view = buildTrajectoryView(record(invalidRun(name)), () => VIEWPORT);
    expect(view.steps.map((s) => [s.number, s.invalid])).toEqual([
      [1, null],
      [2, error],
      [3, null],
    ]);
    expect(view.steps[1]).toMatchObject({ actionName: name, marker: null, pixelPoint: null });
    expect(view.steps[1]?.summary).toBe(`${name} (invalid output)`);
    const images = new Map([shot(1), shot(2)].map((p) => [p, 'data:image/webp;base64,AAAA']));
    const html = renderTrajectoryHtml(view, images);
    const step2 = sectionOf(html, 2);
    expect(step2).toContain('<section class="step invalid" id="step-2"');
    expect(step2).toContain(`<pre class="error">${escapeHtml(error)}</pre>`);
    expect(step2).toContain('<span class="badge invalid">invalid output</span>');
    expect(step2).not.toContain('class="marker');
    expect(sectionOf(html, 1)).toContain('class="marker'); // the valid click next to it has one
  });
});

describe('escaping', () => {
  it.each([
    ['<b>', '&lt;b&gt;'],
    ['a & b', 'a &amp; b'],
    ['"quoted" \'single\'', '&quot;quoted&quot; &#39;single&#39;'],
    ['</script><script>alert(1)</script>', '&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['plain €120', 'plain €120'],
  ])('%j → %j', (text, escaped) => {
    expect(escapeHtml(text)).toBe(escaped);
  });

  it('no text from the run reaches the page unescaped', () => {
    const run = record(events());
    const view = buildTrajectoryView(run, () => VIEWPORT);
    view.warnings.push(`warning ${EVIL}`);
    const images = new Map(view.steps.map((s) => [s.screenshot, 'data:image/webp;base64,AAAA']));
    const html = renderTrajectoryHtml(view, images);
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('onerror="alert');
    const escaped = escapeHtml(EVIL);
    for (const text of ['Book ', 'Think ', 'boom ', 'Which ', 'Reply ', 'Answer ', 'warning ', 'http://site/?q=']) {
      expect(html, text).toContain(`${text}${escaped}`);
    }
    // Only the page's own script, allowed by its hash; no network sources at all.
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).toMatch(/Content-Security-Policy" content="default-src &#39;none&#39;; img-src data:;/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});

// ---------- desktop runs ----------

const SCREEN = { width: 1280, height: 800 };
const callId = (step: number, call = 0, generation = 0) => `${actionId(step, generation)}${call ? `-c${call}` : ''}`;

interface CallResult {
  output: string;
  error?: string;
  point?: Point;
}

/** One tool call of a desktop step: its action event (the first call with the screen description) and tool output. */
function desktopCall(
  step: number,
  call: number,
  name: string,
  args: Record<string, unknown>,
  result: CallResult,
  generation = 0,
): Event[] {
  const metadata = call === 0 ? { screen_description: `Screen of step ${step}.` } : undefined;
  const fields = { action_name: name, content: { action: name, arguments: args } };
  const meta = result.point ? { point: result.point } : {};
  return [
    actionEvent(step, fields, { ...stamp, generation, call, metadata }),
    toolOutput(step, callId(step, call, generation), result, { ...stamp, generation, call, metadata: meta }),
  ];
}

const desktopPre = (step: number, windows: string, generation = 0) =>
  preObservation(
    step,
    { screenshot_path: shot(step, generation), url: '', page_info: `Windows: ${windows}` },
    gstamp(generation),
  );
const desktopPost = (step: number, call: number, windows: string, generation = 0) =>
  postObservation(
    step,
    callId(step, call, generation),
    { screenshot_path: `screenshot_${step}_post.png`, url: '', page_info: `Windows: ${windows}` },
    gstamp(generation),
  );

const MOUSEPAD = 'xterm | ~/notes.txt - Mousepad';

/** Four steps: two calls, three calls (a grounded click first), a drag, stop. */
function desktopEvents(): Event[] {
  return [
    taskMessage('Write a shopping list', stamp),
    desktopPre(1, 'xterm'),
    ...desktopCall(
      1,
      0,
      'run_background_command',
      { command: 'mousepad notes.txt', thoughts: 'Open the editor.' },
      {
        output: 'Started in the background.',
      },
    ),
    ...desktopCall(1, 1, 'run_command', { command: 'sleep 2' }, { output: '(no output)' }),
    desktopPost(1, 1, MOUSEPAD),
    desktopPre(2, MOUSEPAD),
    ...desktopCall(
      2,
      0,
      'click',
      { query: 'the text area', thoughts: 'Type the list and save.' },
      {
        output: 'Clicked at (320, 560) (the text area).',
        point: { x: 320, y: 560 },
      },
    ),
    ...desktopCall(2, 1, 'type_text', { text: 'milk\neggs\n' }, { output: 'The text has been typed.' }),
    ...desktopCall(2, 2, 'send_key', { key: 'ctrl+s' }, { output: '', error: 'send_key failed: no display' }),
    desktopPost(2, 2, MOUSEPAD),
    desktopPre(3, MOUSEPAD),
    ...desktopCall(
      3,
      0,
      'drag',
      { from_x: 100, from_y: 200, to_x: 400, to_y: 200, thoughts: 'Select it.' },
      {
        output: 'Dragged from (100, 200) to (400, 200).',
      },
    ),
    desktopPost(3, 0, MOUSEPAD),
    desktopPre(4, 'xterm'),
    ...desktopCall(4, 0, 'stop', { answer: 'milk, eggs', thoughts: 'Done.' }, { output: 'milk, eggs' }),
    desktopPost(4, 0, 'xterm'),
  ];
}

function desktopRecord(evs: Event[], runState: Record<string, unknown> = {}): RunRecord {
  return {
    ...record(evs),
    task: TaskSchema.parse({
      task_id: 'run-1',
      instruction: 'Write a shopping list',
      environment_config: { environment: 'desktop', screen: SCREEN },
      metadata: { profile: 'desktop', environment: 'desktop' },
    }),
    outcome: { answer: 'milk, eggs' },
    runState,
  };
}

const images = (view: { steps: { screenshot: string }[] }) =>
  new Map(view.steps.map((s) => [s.screenshot, 'data:image/webp;base64,AAAA']));
const factsOf = (html: string) => html.match(/<dl class="facts">[\s\S]*?<\/dl>/)?.[0] ?? '';

describe('a desktop run', () => {
  const view = buildTrajectoryView(desktopRecord(desktopEvents()), () => SCREEN);
  const html = renderTrajectoryHtml(view, images(view));

  it('has a header with its environment and screen, and no browser settings', () => {
    expect(view).toMatchObject({ environment: 'desktop', screen: SCREEN });
    const facts = factsOf(html);
    expect(facts).toContain('<dt>Environment</dt><dd>desktop</dd>');
    expect(facts).toContain('<dt>Screen</dt><dd>1280×800</dd>');
    expect(facts).toContain('<dt>Steps</dt><dd>4</dd>');
    expect(facts).toContain('<dt>Tool calls</dt><dd>7</dd>');
    for (const row of ['Start URL', 'Model family', 'Viewport']) expect(facts).not.toContain(row);
    // A browser run keeps its rows.
    const browser = factsOf(
      renderTrajectoryHtml(
        buildTrajectoryView(record(events()), () => VIEWPORT),
        new Map(),
      ),
    );
    expect(browser).toContain('<dt>Start URL</dt><dd>http://site/</dd>');
    expect(browser).toContain('<dt>Viewport</dt><dd>1440×900</dd>');
    expect(browser).not.toContain('Environment');
  });

  it('is one view step per step, the calls of a step in order inside it', () => {
    expect(view.steps.map((s) => [s.number, s.calls.map((c) => c.actionName)])).toEqual([
      [1, ['run_background_command', 'run_command']],
      [2, ['click', 'type_text', 'send_key']],
      [3, ['drag']],
      [4, ['stop']],
    ]);
    const step = view.steps[1];
    expect(step).toMatchObject({
      summary: 'click + type_text + send_key',
      thoughts: 'Type the list and save.',
      screenshot: shot(2),
      windows: MOUSEPAD,
      screenDescription: 'Screen of step 2.',
    });
    expect(step?.calls.map((c) => c.observation)).toEqual([
      'Clicked at (320, 560) (the text area).',
      'The text has been typed.',
      'error: send_key failed: no display',
    ]);
    expect(view.steps[2]?.summary).toBe('drag (100, 200) → (400, 200)'); // a lone call is named in full
  });

  it('renders a step as one card: the screenshot once, the screen description once, every call', () => {
    expect(count(html, /<section class="step[ "]/)).toBe(4);
    expect(html).toContain('<h2>Steps (4)</h2>');
    const step2 = sectionOf(html, 2);
    expect(step2).toContain('data-calls="3"');
    expect(count(step2, /<img /)).toBe(1);
    expect(count(step2, /<li class="call"/)).toBe(3);
    expect(count(step2, /Screen \(vision model\)/)).toBe(1);
    expect(count(step2, /Screen of step 2\./)).toBe(1);
    expect(step2).toContain('Type the list and save.');
    expect(step2).toContain(`<span class="label">Windows</span> <span class="value">${escapeHtml(MOUSEPAD)}</span>`);
    expect(step2).not.toContain('>URL<');
    const calls = [...step2.matchAll(/<li class="call" data-call="(\d)" data-action="(\w+)">/g)];
    expect(calls.map((m) => [m[1], m[2]])).toEqual([
      ['1', 'click'],
      ['2', 'type_text'],
      ['3', 'send_key'],
    ]);
    expect(step2.indexOf('The text has been typed.')).toBeLessThan(step2.indexOf('send_key failed: no display'));
  });

  it('marks a grounded click at its resolved point, in screen pixels scaled to the screenshot', () => {
    const click = view.steps[1]?.calls[0];
    expect(click?.pixelPoint).toEqual({ x: 320, y: 560 });
    expect(click?.marker).toEqual({ kind: 'point', at: { x: 320, y: 560 } });
    expect(view.steps[1]?.calls.slice(1).map((c) => c.marker)).toEqual([null, null]);
    expect(sectionOf(html, 2)).toContain('data-kind="point" data-x="320" data-y="560" data-call="1"');
    expect(sectionOf(html, 2)).toContain('at 320, 560 px (screen)');
    // A screenshot at twice the screen's size: the marker scales with it, the point stays in screen pixels.
    const hiDpi = buildTrajectoryView(desktopRecord(desktopEvents()), () => ({ width: 2560, height: 1600 }));
    expect(hiDpi.steps[1]?.calls[0]).toMatchObject({
      pixelPoint: { x: 320, y: 560 },
      marker: { kind: 'point', at: { x: 640, y: 1120 } },
    });
  });

  it('draws a drag as an arrow from its start to its end', () => {
    const drag = view.steps[2]?.calls[0]?.marker;
    expect(drag).toMatchObject({ kind: 'drag', from: { x: 100, y: 200 }, to: { x: 400, y: 200 } });
    if (drag?.kind !== 'drag') return;
    expect(drag.head).toHaveLength(3);
    close(drag.head[0], drag.to);
    expect(sectionOf(html, 3)).toContain('data-kind="drag" data-x="400" data-y="200"');
  });

  it('numbers several markers of one step by call', () => {
    const evs = desktopEvents().map((e): Event => {
      if (e.type !== 'action' || e.id !== callId(2, 1)) return e;
      return { ...e, action_name: 'double_click', content: { action: 'double_click', arguments: { x: 10, y: 20 } } };
    });
    const twice = buildTrajectoryView(desktopRecord(evs), () => SCREEN);
    const step2 = sectionOf(renderTrajectoryHtml(twice, images(twice)), 2);
    expect(count(step2, /<g class="marker /)).toBe(2);
    expect(step2).toMatch(/data-x="10" data-y="20" data-call="2">.*?<text class="marker-label"[^>]*>2<\/text>/);
  });

  it('rides a step lost with its worker, all its calls, on the step that re-decided it', () => {
    const evs = [
      ...desktopEvents().slice(0, 6),
      desktopPre(2, MOUSEPAD),
      ...desktopCall(2, 0, 'click', { x: 5, y: 5 }, { output: 'Clicked at (5, 5).' }),
      ...desktopCall(2, 1, 'type_text', { text: 'lost' }, { output: 'The text has been typed.' }),
      sessionRestored(2, 'A new desktop was started.', gstamp(1)),
      desktopPre(2, 'xterm', 1),
      ...desktopCall(2, 0, 'stop', { answer: 'done' }, { output: 'done' }, 1),
    ];
    const lost = buildTrajectoryView(desktopRecord(evs), () => SCREEN);
    expect(lost.steps.map((s) => [s.number, s.generation, s.calls.length, s.supersededDecisions.length])).toEqual([
      [1, 0, 2, 0],
      [2, 1, 1, 1],
    ]);
    expect(lost.steps[1]?.supersededDecisions[0]).toMatchObject({ superseded: true, summary: 'click + type_text' });
  });

  it('counts steps in the report it writes from a run folder', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'cua-viewer-'));
    try {
      const task = {
        task_id: 'run-1',
        instruction: 'Write a shopping list',
        environment_config: { environment: 'desktop', screen: SCREEN },
        metadata: { profile: 'desktop', environment: 'desktop' },
      };
      const w = await TrajectoryWriter.create(root, 'run-1', task);
      const png = await sharp({ create: { ...SCREEN, channels: 3, background: '#000' } })
        .png()
        .toBuffer();
      for (const n of [1, 2, 3, 4]) await w.saveScreenshot(n, 'pre', png);
      for (const e of desktopEvents()) await w.appendEvent(e);
      const report = await renderTrajectoryReport(path.join(root, 'run-1'));
      expect(report.steps).toBe(4);
      expect(report.html).toContain('<dt>Steps</dt><dd>4</dd>');
      expect(report.html).not.toContain('is missing or unreadable');
      expect(sectionOf(report.html, 2)).toContain('data-kind="point" data-x="320" data-y="560"');
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('is listed by `cua show` one line per call under its step, with the windows in place of the URL', () => {
    const lines = desktopLines(view);
    expect(lines).toHaveLength(7);
    expect(lines[0]).toMatch(/^ {3}1 {2}run_background_command: mousepad notes\.txt +xterm +Open the editor\.$/);
    expect(lines[1]).toMatch(/^ {3}1 {2}\+ run_command: sleep 2$/);
    expect(lines[2]).toMatch(/^ {3}2 {2}click "the text area" +xterm \| ~\/notes\.txt - Mousepad +Type the list/);
    expect(lines[4]).toMatch(/^ {3}2 {2}\+ send_key ctrl\+s +error: send_key failed: no display$/);
    expect(lines[5]).toMatch(/^ {3}3 {2}drag /);
  });
});

describe('desktop settings and call targets', () => {
  const run = (environment_config: Record<string, unknown>, input?: Record<string, unknown>) => ({
    task: { environment_config, metadata: {} },
    runState: input ? { input } : {},
  });

  it.each([
    ['task.json', run({ environment: 'desktop', screen: { width: 1024, height: 768 } }), 'desktop', [1024, 768]],
    [
      'run state input',
      run({}, { environment: 'desktop', screen: { width: 800, height: 600 } }),
      'desktop',
      [800, 600],
    ],
    ['run state input, no screen: the default', run({}, { environment: 'desktop' }), 'desktop', [1280, 800]],
    ['a browser run', run({ start_url: 'http://x/', viewport: { width: 1440, height: 900 } }), 'browser', [1280, 800]],
  ] as const)('%s', (_what, settings, environment, [width, height]) => {
    expect(environmentOf(settings)).toBe(environment);
    expect(screenOf(settings)).toEqual({ width, height });
  });

  const out = (output: string, metadata: Record<string, unknown> = {}, error = '') =>
    toolOutput(1, callId(1), { output, error }, { ...stamp, metadata });

  it.each([
    [
      'metadata.point first',
      'click',
      { query: 'OK' },
      [out('Clicked at (1, 2) (OK).', { point: { x: 7, y: 8 } })],
      [7, 8],
    ],
    [
      'else the point in the output',
      'double_click',
      { query: 'OK' },
      [out('Double-clicked at (30, 40) (OK).')],
      [30, 40],
    ],
    ['else the call’s own x/y', 'right_click', { x: '50', y: 60 }, [], [50, 60]],
    ['a failed grounding: no point', 'click', { query: 'OK' }, [out('', {}, 'no such element')], null],
    ['not a pointer tool', 'send_key', { key: 'ctrl+s', x: 1, y: 2 }, [out('Pressed ctrl+s.')], null],
  ] as const)('%s', (_what, name, args, post, expected) => {
    const target = callTarget(name, args, post);
    expect(target).toEqual(expected ? { kind: 'point', at: { x: expected[0], y: expected[1] } } : null);
  });

  it.each([
    ['from its arguments', { from_x: 1, from_y: 2, to_x: 3, to_y: 4 }, []],
    ['from its output', {}, [out('Dragged from (1, 2) to (3, 4).')]],
  ])('a drag %s', (_what, args, post) => {
    expect(callTarget('drag', args, post)).toEqual({ kind: 'drag', from: { x: 1, y: 2 }, to: { x: 3, y: 4 } });
  });

  it.each([
    [['click', 'type_text', 'send_key'], 'click + type_text + send_key'],
    [['run_command', 'run_command', 'stop'], 'run_command ×2 + stop'],
    [['run_command'], 'run_command'],
  ])('step %j → %s', (names, summary) => {
    expect(stepToolsSummary(names)).toBe(summary);
  });
});
