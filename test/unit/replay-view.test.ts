// A replay run (`cua replay`) in the report and in `cua show`: each step says whether it was replayed, healed (from
// which recorded point) or decided by the model, read from its action's `metadata.replay`; the header says which run
// it replays and how many steps went each way. Runs that are no replay show none of it.
import { describe, expect, it } from 'vitest';
import {
  actionEvent,
  postObservation,
  preObservation,
  runtimeQuestion,
  taskMessage,
  toolOutput,
} from '../../src/trajectory/events';
import type { RunRecord } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import { TaskSchema } from '../../src/trajectory/schema';
import { replayMarkOf } from '../../src/trajectory/steps';
import { renderTrajectoryHtml } from '../../src/viewer/html';
import { replaySummary } from '../../src/viewer/lines';
import { buildTrajectoryView } from '../../src/viewer/model';
import { replayView } from '../../src/viewer/run-settings';

const T = { timestamp: '2026-01-01T00:00:00.000Z' };
const VIEWPORT = { width: 1440, height: 900 };
const RECORDING = 'task-recorded-1';

const replayed = (step: number) => ({ replay: { how: 'replayed', of: { run_id: RECORDING, step }, distance: 0.01 } });
const healed = (step: number, from: [number, number]) => ({
  replay: { how: 'healed', of: { run_id: RECORDING, step }, distance: 0.2, healed_from: from, found_by: 'selector' },
});

/** One step: pre, the action (with `metadata`), its tool output and post. */
function step(n: number, action: string, args: Record<string, unknown>, metadata?: Record<string, unknown>): Event[] {
  const act = actionEvent(n, { action_name: action, content: { action, arguments: args } }, { ...T, metadata });
  return [
    preObservation(n, { screenshot_path: `screenshot_${n}_pre.png`, url: `http://shop/${n}` }, T),
    act,
    toolOutput(n, act.id, { output: `did ${action}` }, T),
    postObservation(n, act.id, { screenshot_path: `screenshot_${n}_post.png` }, T),
  ];
}

/** Replayed, replayed, healed, then the model decides the last step. */
function replayEvents(): Event[] {
  return [
    taskMessage('Buy 3.', T),
    ...step(1, 'left_click', { coordinate: [500, 111] }, replayed(1)),
    ...step(2, 'type', { text: '3' }, replayed(2)),
    ...step(3, 'left_click', { coordinate: [500, 500] }, healed(3, [500, 333])),
    ...step(4, 'terminate', { answer: 'bought 3' }),
  ];
}

function record(events: Event[], metadata: Record<string, unknown>): RunRecord {
  return {
    taskId: 'task-replay-1',
    location: '/tmp/task-replay-1',
    task: TaskSchema.parse({
      task_id: 'task-replay-1',
      instruction: 'Buy 3.',
      environment_config: { start_url: 'http://shop/', viewport: VIEWPORT },
      metadata: { profile: 'fara-1.5', ...metadata },
    }),
    events,
    status: 'complete',
    fileStatus: 'complete',
    outcome: { answer: 'bought 3' },
    verification: {},
    metadata: { stats: {}, run_id: 'task-replay-1', created_at: T.timestamp },
    runState: {},
    warnings: [],
  };
}

const sectionOf = (html: string, n: number) =>
  html.match(new RegExp(`<section [^>]*id="step-${n}"[\\s\\S]*?</section>`))?.[0] ?? '';

describe('how a step of a replay came about, from its action', () => {
  const act = (metadata?: Record<string, unknown>) =>
    actionEvent(1, { action_name: 'left_click', content: { action: 'left_click', arguments: {} } }, { ...T, metadata });
  it.each<[string, Record<string, unknown> | undefined, unknown]>([
    ['no metadata.replay: the model decided it', undefined, { how: 'decided' }],
    ['replayed', replayed(1), { how: 'replayed' }],
    ['healed, with its recorded point', healed(1, [500, 333]), { how: 'healed', from: [500, 333] }],
    ['healed without a readable point', { replay: { how: 'healed', healed_from: 'x' } }, { how: 'healed', from: null }],
    ['an unknown `how`: decided', { replay: { how: 'guessed' } }, { how: 'decided' }],
  ])('%s', (_name, metadata, mark) => {
    expect(replayMarkOf(act(metadata))).toEqual(mark);
  });

  it("the runtime's own question (no model call) is neither: no badge", () => {
    expect(replayMarkOf(runtimeQuestion(1, 'Send it again?', T))).toBeNull();
  });
});

describe('the view of a replay run', () => {
  const run = record(replayEvents(), { replay_of: { run_id: RECORDING } });
  const view = buildTrajectoryView(run, () => VIEWPORT);

  it('marks every step replayed, healed or decided by the model', () => {
    expect(view.steps.map((s) => [s.number, s.actionName, s.replay])).toEqual([
      [1, 'left_click', { how: 'replayed' }],
      [2, 'type', { how: 'replayed' }],
      [3, 'left_click', { how: 'healed', from: [500, 333] }],
      [4, 'terminate', { how: 'decided' }],
    ]);
  });

  it('says which run it replays and counts its steps as `cua replay` does', () => {
    expect(view.replay).toEqual({ of: RECORDING, replayed: 2, healed: 1, decided: 1 });
    expect(replayView(run)).toEqual(view.replay);
    expect(replaySummary(view.replay!)).toBe(`replay of ${RECORDING}: 2 replayed, 1 healed, 1 decided`);
  });

  it('the report shows the header line and a badge on each step', () => {
    const html = renderTrajectoryHtml(view, new Map());
    expect(html).toContain(`<p class="replay-of">replay of ${RECORDING}: 2 replayed, 1 healed, 1 decided</p>`);
    expect(sectionOf(html, 1)).toMatch(/<span class="badge replay replayed" title="[^"]*">replayed<\/span>/);
    expect(sectionOf(html, 3)).toMatch(
      /<span class="badge replay healed" title="[^"]*">healed \(moved from \[500, 333\]\)<\/span>/,
    );
    expect(sectionOf(html, 4)).toMatch(/<span class="badge replay decided" title="[^"]*">decided by the model<\/span>/);
  });
});

describe('a cached run (cua run --cache)', () => {
  it('says which cache its steps came from, and marks them', () => {
    const view = buildTrajectoryView(record(replayEvents(), { cache: { name: 'shop' } }), () => VIEWPORT);
    expect(view.replay).toEqual({ of: '', cache: 'shop', replayed: 2, healed: 1, decided: 1 });
    expect(replaySummary(view.replay!)).toBe('cache shop: 2 from the cache, 1 healed, 1 decided');
    expect(view.steps[2]?.replay).toEqual({ how: 'healed', from: [500, 333] });
  });
});

describe('a run that is no replay', () => {
  it('has no replay header and no replay badges, even with replay marks on its actions', () => {
    const view = buildTrajectoryView(record(replayEvents(), {}), () => VIEWPORT);
    expect(view.replay).toBeNull();
    expect(view.steps.every((s) => s.replay === null)).toBe(true);
    const html = renderTrajectoryHtml(view, new Map());
    expect(html).not.toContain('class="replay-of"');
    expect(html).not.toContain('badge replay');
  });

  it.each([
    ['no replay_of', {}],
    ['replay_of without a run id', { replay_of: { strict: true } }],
    ['replay_of that is no object', { replay_of: 'task-1' }],
  ])('%s: not a replay', (_name, metadata) => {
    expect(replayView(record(replayEvents(), metadata))).toBeNull();
  });
});
