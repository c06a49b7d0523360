// Specification of the start page (step 0): written once by step 1's first observe, before step 1's own pre
// observation, as the original writes it; and read the same way as a folder without one (an older run, or the
// original's own) by step reconstruction, `cua show`'s rows, the viewer and the model's rebuilt history.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { recordStartPage } from '../../activities/step-records';
import { historyForStep, memorizedFacts } from '../../src/agent/history';
import {
  actionEvent,
  postObservation,
  preObservation,
  sessionRestored,
  startObservation,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import type { RunRecord } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import { TaskSchema } from '../../src/trajectory/schema';
import { buildSteps, stepSummaries } from '../../src/trajectory/steps';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { renderTrajectoryHtml } from '../../src/viewer/html';
import { preScreenshots } from '../../src/viewer/decisions';
import { buildTrajectoryView } from '../../src/viewer/model';

const T = { timestamp: '2026-07-20T10:00:00.000Z' };
const PNG = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
const seen = { png: PNG, url: 'http://site/', pageInfo: 'top of page' };

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'start-page-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function newRun(): Promise<TrajectoryWriter> {
  const w = await TrajectoryWriter.create(root, 'run-1', { task_id: 'run-1', instruction: 'go' });
  await w.appendEvent(taskMessage('go', T));
  return w;
}

const ids = async (w: TrajectoryWriter) => (await w.events()).map((e) => e.id);

describe('recordStartPage', () => {
  it('writes screenshot_0_pre.png, its _post copy and one observation with no action, right after the task', async () => {
    const w = await newRun();
    await recordStartPage(w, seen);
    const events = await w.events();
    expect(events.map((e) => e.id)).toEqual(['user-0000-task-g0', 'step-0000-pre-g0']);
    expect(events[1]).toMatchObject({
      type: 'observation',
      observation_type: 'environment',
      action_id: null,
      screenshot_path: 'screenshot_0_pre.png',
      url: 'http://site/',
      page_info: 'top of page',
    });
    for (const file of ['screenshot_0_pre.png', 'screenshot_0_post.png']) {
      expect(new Uint8Array(await fs.readFile(path.join(root, 'run-1', file)))).toEqual(PNG);
    }
  });

  it('is written once: a retried observe (another process, another generation) finds it', async () => {
    const w = await newRun();
    await recordStartPage(w, seen);
    await recordStartPage(await TrajectoryWriter.open(root, 'run-1'), { ...seen, url: 'http://site/later' });
    expect(await ids(w)).toEqual(['user-0000-task-g0', 'step-0000-pre-g0']);
    expect((await w.events())[1]).toMatchObject({ url: 'http://site/' });
  });

  it.each([
    ['a run an older worker began without one', preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }, T)],
    [
      'a run whose session was lost before its first observe',
      sessionRestored(1, 'The browser session was lost and restored.', { ...T, generation: 1 }),
    ],
  ])('is not added to %s: only right after the task message', async (_what, first) => {
    const w = await newRun();
    await w.appendEvent(first);
    await recordStartPage(w, seen);
    expect(await ids(w)).toEqual(['user-0000-task-g0', first.id]);
    await expect(fs.access(path.join(root, 'run-1', 'screenshot_0_pre.png'))).rejects.toThrow();
  });
});

// ---------- reading a folder with and without the start page ----------

const aid = (step: number, generation = 0) => `step-${String(step).padStart(4, '0')}-action-g${generation}`;
const act = (step: number, name: string, args: Record<string, unknown> = {}, generation = 0) =>
  actionEvent(
    step,
    {
      action_name: name,
      content: { action: name, arguments: { thoughts: `step ${step}`, ...args } },
      llm_conversation: {
        messages: [
          {
            raw_response: `reply ${step}`,
            reasoning: '',
            finish_reason: 'stop',
            usage: { prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 },
          },
        ],
      },
    },
    { ...T, generation },
  );
const page = (step: number, url: string) => ({ screenshot_path: `screenshot_${step}_pre.png`, url });

/** Two steps, a question answered in between; with the start page, or as older folders are (without). */
function run(withStart: boolean): Event[] {
  return [
    taskMessage('Find the price.', T),
    ...(withStart ? [startObservation({ screenshot_path: 'screenshot_0_pre.png', url: 'http://site/' }, T)] : []),
    preObservation(1, page(1, 'http://site/'), T),
    act(1, 'ask_user_question', { question: 'Which city?' }),
    toolOutput(1, aid(1), { output: 'Which city?' }, T),
    postObservation(1, aid(1), { screenshot_path: 'screenshot_1_post.png', url: 'http://site/' }, T),
    userReply(1, 'Lisbon', T),
    preObservation(2, page(2, 'http://site/?q=Lisbon'), T),
    act(2, 'pause_and_memorize_fact', { fact: '€120' }),
    toolOutput(2, aid(2), { output: 'Memorized.' }, T),
    postObservation(2, aid(2), { screenshot_path: 'screenshot_2_post.png' }, T),
    preObservation(3, page(3, 'http://site/?q=Lisbon'), T),
  ];
}

describe('a folder with the start page reads as one without it', () => {
  it('the start page is the first step’s pre observation, before step 1’s own', () => {
    const steps = buildSteps(run(true));
    expect(steps[0]?.pre.map((o) => o.id)).toEqual(['user-0000-task-g0', 'step-0000-pre-g0', 'step-0001-pre-g0']);
    expect(steps.map((s) => s.action?.id ?? null)).toEqual([aid(1), aid(2), null]);
  });

  it.each([true, false])('with the start page %s: the same step rows, URLs and screenshots', (withStart) => {
    const rows = stepSummaries(run(withStart));
    expect(rows.map((r) => [r.step, r.action_name, r.url, r.screenshot])).toEqual([
      [1, 'ask_user_question', 'http://site/', 'screenshot_1_post.png'],
      [2, 'pause_and_memorize_fact', 'http://site/?q=Lisbon', 'screenshot_2_post.png'],
    ]);
    expect(rows[0]?.user_messages).toEqual([{ message_type: 'task', content: 'Find the price.' }]);
    expect(rows[1]?.user_messages).toEqual([{ message_type: 'critical_point_response', content: 'Lisbon' }]);
    // The viewer shows the screenshot each decision was made on: step 1's own, not the start page.
    expect(preScreenshots(run(withStart))).toEqual(['screenshot_1_pre.png', 'screenshot_2_pre.png']);
  });

  it('the HTML report (cua view) shows the same steps with or without it', () => {
    const record = (events: Event[]): RunRecord => ({
      taskId: 'run-1',
      location: '/tmp/run-1',
      task: TaskSchema.parse({
        task_id: 'run-1',
        instruction: 'Find the price.',
        environment_config: { start_url: 'http://site/', viewport: { width: 1440, height: 900 } },
        metadata: { profile: 'fara-1.5' },
      }),
      events,
      status: 'running',
      fileStatus: 'running',
      outcome: null,
      verification: {},
      metadata: { stats: {}, run_id: 'run-1', created_at: T.timestamp },
      runState: {},
      warnings: [],
    });
    const page = (withStart: boolean) => {
      const view = buildTrajectoryView(record(run(withStart)), () => undefined);
      return { view, html: renderTrajectoryHtml(view, new Map()) };
    };
    expect(page(true).view.steps.map((s) => [s.number, s.actionName, s.screenshot])).toEqual([
      [1, 'ask_user_question', 'screenshot_1_pre.png'],
      [2, 'pause_and_memorize_fact', 'screenshot_2_pre.png'],
    ]);
    expect(page(true)).toEqual(page(false));
  });

  it('the model’s rebuilt history and memorised facts are the same with or without it', () => {
    for (const step of [1, 2, 3])
      expect(historyForStep(run(true), step, 0)).toEqual(historyForStep(run(false), step, 0));
    // Step 1's own screenshot goes with the task, not the start page's.
    expect(historyForStep(run(true), 1, 0)).toEqual([
      { kind: 'task', text: 'Find the price.', screenshot: 'screenshot_1_pre.png' },
    ]);
    expect(memorizedFacts(run(true))).toEqual(['€120']);
  });
});
