// Specification of step reconstruction from the flat event stream, and of the flat per-step rows (numbering,
// decisions superseded after a lost worker, invalid outputs) as `cua show` prints them.
import { describe, expect, it } from 'vitest';

import { stepLine } from '../../src/viewer/run-text';

import { ConsecutiveActionsError, UnknownActionIdError } from '../../src/trajectory/errors';
import {
  actionEvent,
  postObservation,
  preObservation,
  sessionRestored,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import type { Action, Event } from '../../src/trajectory/schema';
import { buildSteps, stepScreenshot, stepSummaries } from '../../src/trajectory/steps';

const T = { timestamp: '2026-07-20T10:00:00Z' };
const act = (step: number, name = 'left_click', thoughts = '') =>
  actionEvent(
    step,
    { action_name: name, content: { action: name, arguments: { thoughts } }, action_nl_description: `${name}()` },
    T,
  );
const aid = (step: number) => `step-${String(step).padStart(4, '0')}-action-g0`;
const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

describe('buildSteps', () => {
  it('groups pre observations, the action and its post observations', () => {
    const events: Event[] = [
      taskMessage('go', T),
      preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }, T),
      act(1),
      toolOutput(1, aid(1), { output: 'clicked' }, T),
      postObservation(1, aid(1), { screenshot_path: 'screenshot_1_post.png' }, T),
      preObservation(2, {}, T),
      act(2),
    ];
    const steps = buildSteps(events);
    expect(steps).toHaveLength(2);
    expect(ids(steps[0]!.pre)).toEqual(['user-0000-task-g0', 'step-0001-pre-g0']);
    expect(steps[0]!.action?.id).toBe(aid(1));
    expect(ids(steps[0]!.post)).toEqual(['step-0001-tool-g0', 'step-0001-post-g0']);
    expect(ids(steps[1]!.pre)).toEqual(['step-0002-pre-g0']);
    expect(steps[1]!.post).toEqual([]);
  });

  it('keeps trailing observations as a step without action, unless asked not to', () => {
    const events: Event[] = [preObservation(1, {}, T), act(1), userReply(1, 'from SF', T)];
    expect(buildSteps(events).map((s) => s.action?.id ?? null)).toEqual([aid(1), null]);
    expect(buildSteps(events, { withTail: false })).toHaveLength(1);
  });

  it('attaches a late observation both to its own step and to the step it arrived in', () => {
    const late = toolOutput(1, aid(1), { output: 'download finished' }, T);
    const events: Event[] = [
      preObservation(1, {}, T),
      act(1),
      preObservation(2, {}, T),
      act(2),
      late, // arrives in step 3's window, after action 2
      preObservation(3, {}, T),
      act(3),
    ];
    const steps = buildSteps(events);
    expect(ids(steps[0]!.post)).toEqual([late.id]);
    expect(ids(steps[0]!.latePost)).toEqual([late.id]);
    expect(ids(steps[2]!.lateArrivals)).toEqual([late.id]);
    expect(steps[1]!.lateArrivals).toEqual([]);
  });

  it('an observation right after its action is not late', () => {
    const steps = buildSteps([preObservation(1, {}, T), act(1), toolOutput(1, aid(1), { output: 'ok' }, T)]);
    expect(steps[0]!.latePost).toEqual([]);
  });

  it('an observation naming no action is UnknownActionIdError', () => {
    const events: Event[] = [preObservation(1, {}, T), act(1), toolOutput(1, 'nope', { output: 'x' }, T)];
    expect(() => buildSteps(events)).toThrow(UnknownActionIdError);
    expect(() => buildSteps(events)).toThrow(/step-0001-tool-g0 refers to action_id nope/);
  });

  it('two actions with no observation between them is ConsecutiveActionsError', () => {
    expect(() => buildSteps([preObservation(1, {}, T), act(1), act(2)])).toThrow(ConsecutiveActionsError);
  });

  it('a crashed step re-observed in a new generation keeps the stream alternating', () => {
    const events: Event[] = [
      preObservation(7, {}, T),
      act(7),
      sessionRestored(7, 'session restored at http://127.0.0.1/', { ...T, generation: 1 }),
      preObservation(7, {}, { ...T, generation: 1 }),
      actionEvent(7, { action_name: 'wait', content: { action: 'wait' } }, { ...T, generation: 1 }),
    ];
    const steps = buildSteps(events);
    expect(ids(steps[1]!.pre)).toEqual(['step-0007-restored-g1', 'step-0007-pre-g1']);
    expect(steps[1]!.action?.id).toBe('step-0007-action-g1');
  });
});

describe('stepScreenshot', () => {
  it.each([
    [
      'the first post environment observation with a screenshot',
      [
        postObservation(1, aid(1), { url: 'u' }, T),
        postObservation(1, aid(1), { screenshot_path: 'screenshot_1_post.png' }, { ...T, generation: 1 }),
        preObservation(2, { screenshot_path: 'screenshot_2_pre.png' }, T),
      ],
      'screenshot_1_post.png',
    ],
    [
      "else the next step's pre observation",
      [toolOutput(1, aid(1), { output: 'x' }, T), preObservation(2, { screenshot_path: 'screenshot_2_pre.png' }, T)],
      'screenshot_2_pre.png',
    ],
    ['else nothing', [toolOutput(1, aid(1), { output: 'x' }, T)], ''],
  ])('%s', (_name, after, expected) => {
    const steps = buildSteps([preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }, T), act(1), ...after]);
    expect(stepScreenshot(steps, 0)).toBe(expected);
  });
});

describe('stepSummaries', () => {
  it('gives one row per action with url, screenshot, text observation and the user messages before it', () => {
    const events: Event[] = [
      taskMessage('book a ticket', T),
      preObservation(1, { url: 'http://a/', screenshot_path: 'screenshot_1_pre.png' }, T),
      act(1, 'ask_user_question', 'Need the origin.'),
      toolOutput(1, aid(1), { output: 'asked', error: '' }, T),
      postObservation(1, aid(1), { url: 'http://a/', screenshot_path: 'screenshot_1_post.png' }, T),
      userReply(1, 'from San Francisco', T),
      preObservation(2, { url: 'http://b/', screenshot_path: 'screenshot_2_pre.png' }, T),
      act(2, 'left_click'),
      toolOutput(2, aid(2), { output: '', error: 'element not found' }, T),
    ];
    expect(stepSummaries(events)).toEqual([
      {
        step: 1,
        generation: 0,
        superseded: false,
        invalid: null,
        action_name: 'ask_user_question',
        arguments: {},
        description: 'ask_user_question()',
        thoughts: 'Need the origin.',
        url: 'http://a/',
        screenshot: 'screenshot_1_post.png',
        text_observation: 'asked',
        user_messages: [{ message_type: 'task', content: 'book a ticket' }],
        sub_calls: [],
      },
      {
        step: 2,
        generation: 0,
        superseded: false,
        invalid: null,
        action_name: 'left_click',
        arguments: {},
        description: 'left_click()',
        thoughts: '',
        url: 'http://b/',
        screenshot: '',
        text_observation: 'error: element not found',
        user_messages: [{ message_type: 'critical_point_response', content: 'from San Francisco' }],
        sub_calls: [],
      },
    ]);
  });
});

// ---------- numbering, superseded decisions, invalid outputs ----------

const pad = (step: number) => String(step).padStart(4, '0');
const aidG = (step: number, generation: number) => `step-${pad(step)}-action-g${generation}`;
const at = (generation: number, metadata?: Record<string, unknown>) => ({ ...T, generation, metadata });
const page = (step: number, generation = 0) => ({
  url: `http://site/${step}${generation ? `?g${generation}` : ''}`,
  screenshot_path: `screenshot_${step}${generation ? `_g${generation}` : ''}_pre.png`,
});
const decide = (step: number, generation: number, name = 'left_click', metadata?: Record<string, unknown>) =>
  actionEvent(
    step,
    { action_name: name, content: { action: name, arguments: { thoughts: `${name} at ${step}` } } },
    at(generation, metadata),
  );

/** A whole step: pre, action, tool output, post. */
function fullStep(step: number, generation = 0, name = 'left_click'): Event[] {
  const id = aidG(step, generation);
  return [
    preObservation(step, page(step, generation), at(generation)),
    decide(step, generation, name),
    toolOutput(step, id, { output: `did ${name}` }, at(generation)),
    postObservation(step, id, { screenshot_path: `screenshot_${step}_post.png` }, at(generation)),
  ];
}

/** Step 3 decided in generation 0, the worker lost (after `acted` events), re-observed and re-decided in 1. */
function redecidedRun(acted: 'nothing' | 'tool'): Event[] {
  const lost = aidG(3, 0);
  return [
    taskMessage('go', T),
    ...fullStep(1),
    ...fullStep(2),
    preObservation(3, page(3), T),
    decide(3, 0, 'left_click'),
    ...(acted === 'tool' ? [toolOutput(3, lost, { output: 'clicked' }, T)] : []),
    sessionRestored(3, 'The browser session was lost and restored.', at(1)),
    ...fullStep(3, 1, 'scroll'),
    ...fullStep(4, 0, 'terminate'),
  ];
}

/** The same stream with the ids of the original (uuids): foreign, so numbered by counting. */
function foreign(events: readonly Event[]): Event[] {
  const uuid = (id: string) => `0f1e2d3c-${id.replace(/[^0-9a-z]/g, '').slice(-12)}`;
  return events.map((e): Event => {
    if (e.type === 'action') return { ...e, id: uuid(e.id) };
    return { ...e, id: uuid(e.id), action_id: e.action_id === null ? null : uuid(e.action_id) };
  });
}

function withMetadata(action: Action, metadata: Record<string, unknown>): Action {
  return { ...action, metadata };
}

const columns = (events: readonly Event[]) =>
  stepSummaries(events).map((r) => [r.step, r.generation, r.superseded, r.action_name] as const);

describe('stepSummaries numbers steps as the run folder does', () => {
  it.each([
    [
      'a plain run of ours: from the ids',
      [...fullStep(1), ...fullStep(2), ...fullStep(3, 0, 'terminate')],
      [
        [1, 0, false, 'left_click'],
        [2, 0, false, 'left_click'],
        [3, 0, false, 'terminate'],
      ],
    ],
    [
      'step 3 decided, worker lost before acting, re-decided in generation 1',
      redecidedRun('nothing'),
      [
        [1, 0, false, 'left_click'],
        [2, 0, false, 'left_click'],
        [3, 0, true, 'left_click'],
        [3, 1, false, 'scroll'],
        [4, 0, false, 'terminate'],
      ],
    ],
    [
      'step 3 acted (tool output written), worker lost before the post observation, re-decided',
      redecidedRun('tool'),
      [
        [1, 0, false, 'left_click'],
        [2, 0, false, 'left_click'],
        [3, 0, true, 'left_click'],
        [3, 1, false, 'scroll'],
        [4, 0, false, 'terminate'],
      ],
    ],
    [
      'a step lost twice: generations 0 and 1 are both superseded by 2',
      [
        ...fullStep(1),
        preObservation(2, page(2), T),
        decide(2, 0),
        sessionRestored(2, 'restored', at(1)),
        preObservation(2, page(2, 1), at(1)),
        decide(2, 1),
        sessionRestored(2, 'restored', at(2)),
        ...fullStep(2, 2, 'terminate'),
      ],
      [
        [1, 0, false, 'left_click'],
        [2, 0, true, 'left_click'],
        [2, 1, true, 'left_click'],
        [2, 2, false, 'terminate'],
      ],
    ],
    [
      'foreign ids (the original): by counting actions, generation 0',
      foreign([...fullStep(1), ...fullStep(2), ...fullStep(5, 0, 'terminate')]),
      [
        [1, 0, false, 'left_click'],
        [2, 0, false, 'left_click'],
        [3, 0, false, 'terminate'],
      ],
    ],
  ] as const)('%s', (_what, events, expected) => {
    expect(columns(events)).toEqual(expected);
  });

  it('a later generation of another step supersedes nothing', () => {
    const events = [...fullStep(1, 1), ...fullStep(2)];
    expect(columns(events)).toEqual([
      [1, 1, false, 'left_click'],
      [2, 0, false, 'left_click'],
    ]);
  });

  it('metadata.supersedes marks the named action as superseded, also with foreign ids', () => {
    // Step 1's result never came (tool and post left out); the next decision re-decides it and says so.
    const [pre1, act1, , , pre2, act2, ...rest] = foreign([
      ...fullStep(1),
      ...fullStep(2),
      ...fullStep(3, 0, 'terminate'),
    ]);
    if (!pre1 || !pre2 || act1?.type !== 'action' || act2?.type !== 'action') throw new Error('bad fixture');
    const events: Event[] = [pre1, act1, pre2, withMetadata(act2, { supersedes: act1.id }), ...rest];
    expect(columns(events)).toEqual([
      [1, 0, true, 'left_click'],
      [1, 0, false, 'left_click'],
      [2, 0, false, 'terminate'],
    ]);
  });

  it.each([
    ['before acting', 'nothing', ''],
    ['after acting', 'tool', 'clicked'],
  ] as const)(
    'a superseded decision (lost %s) keeps its own text, and no screenshot of the restored session',
    (_when, acted, text) => {
      const rows = stepSummaries(redecidedRun(acted));
      expect(rows[2]).toMatchObject({ step: 3, superseded: true, screenshot: '', text_observation: text });
      expect(rows[2]?.url).toBe('http://site/3');
      // The re-decision saw the restored session.
      expect(rows[3]).toMatchObject({ step: 3, generation: 1, url: 'http://site/3?g1' });
      expect(rows[3]?.screenshot).toBe('screenshot_3_post.png');
    },
  );
});

describe('invalid outputs', () => {
  const error = "the output has no tool call: expected <tool_call>{'name': …}</tool_call>";
  const invalidStep = (name: string, invalidOutput: unknown): Event[] => {
    const id = aidG(2, 0);
    const pre = preObservation(2, page(2), T);
    return [
      pre,
      actionEvent(2, { action_name: name, content: { action: name } }, at(0, { invalid_reply: invalidOutput })),
      toolOutput(2, id, { output: '', error }, T),
      postObservation(2, id, { screenshot_path: pre.screenshot_path, url: pre.url }, T),
    ];
  };

  it.each([
    ['with the action name the model wrote', 'click', { error, error_type: 'ActionParseError' }, error],
    ['without one', 'invalid_reply', { error, error_type: 'ToolCallNotFound' }, error],
    ['only the error type', 'click', { error_type: 'ActionParseError' }, 'ActionParseError'],
    ['a malformed mark still marks it', 'click', 'yes', 'invalid output'],
  ])('%s: a real step, marked invalid', (_what, name, invalidOutput, expected) => {
    const rows = stepSummaries([...fullStep(1), ...invalidStep(name, invalidOutput), ...fullStep(3, 0, 'terminate')]);
    expect(rows.map((r) => [r.step, r.superseded, r.invalid])).toEqual([
      [1, false, null],
      [2, false, expected],
      [3, false, null],
    ]);
    expect(rows[1]).toMatchObject({ action_name: name, text_observation: `error: ${error}` });
  });

  it('a null mark is no mark', () => {
    const rows = stepSummaries(invalidStep('click', null));
    expect(rows[0]?.invalid).toBeNull();
  });
});

describe('stepSummaries of a desktop run', () => {
  it('gives one row per tool call, the calls of a step under the step number, none superseded', () => {
    const call = (step: number, n: number, generation = 0) => {
      const name = `tool_${step}_${n}`;
      const fields = { action_name: name, content: { action: name, arguments: {} } };
      const id = `${aidG(step, generation)}${n ? `-c${n}` : ''}`;
      return [
        actionEvent(step, fields, { ...T, generation, call: n }),
        toolOutput(step, id, { output: `ran ${name}` }, { ...T, generation, call: n }),
      ];
    };
    const events: Event[] = [
      preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }, T),
      ...call(1, 0),
      ...call(1, 1),
      ...call(1, 2),
      postObservation(1, `${aidG(1, 0)}-c2`, { screenshot_path: 'screenshot_1_post.png' }, T),
      preObservation(2, {}, T),
      ...call(2, 0),
      ...call(2, 1),
      sessionRestored(2, 'A new desktop was started.', at(1)),
      preObservation(2, {}, at(1)),
      ...call(2, 0, 1),
    ];
    expect(stepSummaries(events).map((r) => [r.step, r.generation, r.superseded, r.text_observation])).toEqual([
      [1, 0, false, 'ran tool_1_0'],
      [1, 0, false, 'ran tool_1_1'],
      [1, 0, false, 'ran tool_1_2'],
      [2, 0, true, 'ran tool_2_0'],
      [2, 0, true, 'ran tool_2_1'],
      [2, 1, false, 'ran tool_2_0'],
    ]);
  });
});

describe('cua show lines', () => {
  it('lists a superseded decision under its step number, marked, above the re-decision', () => {
    const lines = stepSummaries(redecidedRun('tool')).map(stepLine);
    expect(lines).toHaveLength(5);
    expect(lines[2]).toMatch(
      /^ {3}3 {2}\(superseded\) left_click +http:\/\/site\/3 +effect unknown, worker lost; re-decided below$/,
    );
    expect(lines[3]).toMatch(/^ {3}3 {2}scroll +http:\/\/site\/3\?g1 +scroll at 3$/);
    expect(lines[4]).toMatch(/^ {3}4 {2}terminate /);
  });

  it('marks an invalid output in the action column and shows its error', () => {
    const line = stepLine({ ...stepSummaries(fullStep(2))[0]!, action_name: 'click', invalid: 'no tool call\nat all' });
    expect(line).toMatch(/^ {3}2 {2}click \(invalid\) +http:\/\/site\/2 +invalid output: no tool call at all$/);
  });
});
