// Section: a replayed step (`cua replay`, issue 28) against a decided one, on real Chromium through the workflow on
// the dev server. A short run on the hotel site (click, type and search, open a result, scroll down and up, answer)
// is recorded with the scripted model, then replayed (client/replay.ts replayTask) on the unchanged site. A step's time
// is its run folder's pre event → its post event (the decision and the act with its settle; a final answer has no
// post: its action event ends it); the whole run's is the first event to the last, as `cua replay` prints it. The
// replay check's own cost is the replayStep activity (start → close in the history) against the recording's decide,
// and one screenshot distance timed alone. The scripted model answers at once, so a decided step here costs what a
// replayed one does plus a model call of ~0 ms: the same run is recorded once more with `delay_ms` on every entry
// to show a decided step with a model of that latency.
import fs from 'node:fs/promises';
import path from 'node:path';
import { replayTask } from '../../client/replay';
import type { TaskResult } from '../../src/contract/task';
import { screenDistance } from '../../src/image/distance';
import { replayHowOf, tallyOf } from '../../src/replay/summary';
import { parseEventId } from '../../src/trajectory/ids';
import { readRunFromStore } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import { LocalRunStore } from '../../src/trajectory/store';
import type { Bench } from '../context';
import { activityRecords, fetchChain } from '../history';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { replayEntries, writeScript } from '../scripts';
import { fmtMs, round, summarize, table } from '../stats';
import type { Summary } from '../stats';

/** The emulated model latency of the second recording (per call). */
const MODEL_DELAY_MS = 1500;
/** Record-and-replay rounds at full speed (the first also warms the worker, the browser and the site). */
const ROUNDS = 2;
/** Screenshot distances timed alone. */
const DISTANCE_SAMPLES = 20;

type How = 'decided' | 'replayed' | 'healed';

interface StepTime {
  step: number;
  action: string;
  how: How;
  ms: number;
}

interface RunTimes {
  id: string;
  steps: StepTime[];
  /** First event → last event of the run folder (what `cua replay` prints). */
  runMs: number;
  /** Per step: the decide (recording) or replayStep (replay) activity, start → close (server clock). */
  checkMs: number[];
  decideMs: number[];
  modelCalls: number;
  status: string;
}

const timeOf = (e: Event) => Date.parse(e.timestamp);

/** Each step's pre → post time (a final answer: pre → its action) and how it was decided, from the run's events. */
export function stepTimes(events: readonly Event[]): StepTime[] {
  const byStep = new Map<number, { pre?: number; post?: number; action?: Event }>();
  for (const e of events) {
    const id = parseEventId(e.id);
    if (!id || id.generation !== 0 || id.call !== undefined) continue;
    const s = byStep.get(id.step) ?? {};
    if (id.kind === 'pre') s.pre ??= timeOf(e);
    else if (id.kind === 'post') s.post = timeOf(e);
    else if (id.kind === 'action') s.action = e;
    byStep.set(id.step, s);
  }
  return [...byStep]
    .sort(([a], [b]) => a - b)
    .flatMap(([step, s]) => {
      const action = s.action;
      if (s.pre === undefined || action?.type !== 'action') return [];
      const end = s.post ?? timeOf(action);
      return [{ step, action: action.action_name, how: replayHowOf(action) ?? 'decided', ms: end - s.pre }];
    });
}

async function runTimes(b: Bench, id: string, firstTemporalRunId: string, result: TaskResult): Promise<RunTimes> {
  const { client } = await b.temporal();
  const { timer } = await b.model();
  const run = await readRunFromStore(new LocalRunStore(b.runsDir), id);
  const records = (await fetchChain(client, id, firstTemporalRunId)).flatMap((r) => activityRecords(r.events));
  const exec = (name: string) =>
    records
      .filter((r) => r.name === name && r.startedAt !== null && r.closedAt !== null)
      .map((r) => (r.closedAt as number) - (r.startedAt as number));
  return {
    id,
    steps: stepTimes(run.events),
    runMs: tallyOf(run.events).durationMs,
    checkMs: exec('replayStep'),
    decideMs: exec('decide'),
    modelCalls: timer.durations(id).length,
    status: `${result.status} (${result.endReason})`,
  };
}

async function record(b: Bench, name: string, delayMs: number): Promise<RunTimes> {
  const script = writeScript(b.scriptsDir, `replay-${delayMs}`, replayEntries(delayMs));
  const taskId = `${name}-${Date.now().toString(36)}`;
  b.log(`[bench] replay: recording ${taskId}${delayMs ? ` (model delay ${delayMs} ms per call)` : ''}`);
  const handle = await b.startTask({
    taskId,
    script,
    instruction: 'Benchmark: search Lisbon, open the first hotel, scroll, answer.',
  });
  const result = (await handle.result()) as TaskResult;
  return runTimes(b, taskId, handle.firstExecutionRunId, result);
}

async function replay(b: Bench, recording: string): Promise<RunTimes> {
  const { client, config } = await b.temporal();
  const { timer } = await b.model();
  const before = timer.durations(recording).length;
  const started = await replayTask(client, config.taskQueue, recording);
  b.log(`[bench] replay: replaying ${recording} as ${started.id}`);
  const handle = client.workflow.getHandle(started.id);
  const result = (await handle.result()) as TaskResult;
  const { runId: temporalRunId } = await handle.describe(); // a replay this short does not continue as new
  const times = await runTimes(b, started.id, temporalRunId, result);
  // The replay calls the model at the recording's base URL (its calls are filed under the recording's tag).
  return { ...times, modelCalls: timer.durations(recording).length - before };
}

/** Times screenDistance alone on a recorded and a replayed pre screenshot of the same step. */
async function distanceMs(b: Bench, recording: string, replayed: string): Promise<number[]> {
  const shot = (id: string) => fs.readFile(path.join(b.runDir(id), 'screenshot_1_pre.png'));
  const [x, y] = await Promise.all([shot(recording), shot(replayed)]);
  await screenDistance(x, y); // sharp's first call loads its pipeline
  const ms: number[] = [];
  for (let i = 0; i < DISTANCE_SAMPLES; i++) {
    const t0 = performance.now();
    await screenDistance(x, y);
    ms.push(performance.now() - t0);
  }
  return ms;
}

const pp = (s: Summary) => `${fmtMs(s.p50)} / ${fmtMs(s.p95)}`;
const brief = (s: Summary) => ({ n: s.n, p50: round(s.p50), p95: round(s.p95), max: round(s.max) });
const stepsOf = (runs: readonly RunTimes[], how: How) =>
  runs.flatMap((r) => r.steps.filter((s) => s.how === how).map((s) => s.ms));

export async function benchReplay(b: Bench): Promise<SectionOutput> {
  const recordings: RunTimes[] = [];
  const replays: RunTimes[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const recorded = await record(b, `replay-rec${round}`, 0);
    recordings.push(recorded);
    replays.push(await replay(b, recorded.id));
  }
  const slow = await record(b, 'replay-slow', MODEL_DELAY_MS);
  const first = recordings[0] as RunTimes;
  const distance = summarize(await distanceMs(b, first.id, (replays[0] as RunTimes).id));

  const decided = summarize(stepsOf(recordings, 'decided'));
  const replayed = summarize([...stepsOf(replays, 'replayed'), ...stepsOf(replays, 'healed')]);
  const decidedSlow = summarize(stepsOf([slow], 'decided'));
  const fellBack = summarize(stepsOf(replays, 'decided'));
  const check = summarize(replays.flatMap((r) => r.checkMs));
  const decide = summarize(recordings.flatMap((r) => r.decideMs));
  const decideSlow = summarize(slow.decideMs);
  const runMs = (runs: readonly RunTimes[]) => summarize(runs.map((r) => r.runMs)).p50;
  const tally = replays.map((r) => {
    const count = (how: How) => r.steps.filter((s) => s.how === how).length;
    return `${count('replayed')} replayed, ${count('healed')} healed, ${count('decided')} decided`;
  });

  const lines = [['run', 'status', 'steps (ms, pre → post)', 'run time', 'model calls']];
  for (const r of [...recordings, ...replays, slow]) {
    const steps = r.steps.map((s) => `${s.step}:${s.how[0]}${Math.round(s.ms)}`).join(' ');
    lines.push([r.id, r.status, steps, fmtMs(r.runMs), `${r.modelCalls}`]);
  }
  b.log(table(lines));
  b.log('[bench] replay: d = decided by the model, r = replayed, h = healed');

  const rows: Row[] = [
    row('replay', `decided step (scripted model, ~0 ms), p50 / p95 (n=${decided.n})`, pp(decided)),
    row('replay', `replayed step, p50 / p95 (n=${replayed.n})`, pp(replayed)),
    row('replay', `decided step, model delay ${MODEL_DELAY_MS} ms, p50 / p95 (n=${decidedSlow.n})`, pp(decidedSlow)),
    row(
      'replay',
      'whole run (6 steps): recording / replay / recording with the delayed model',
      `${fmtMs(runMs(recordings))} / ${fmtMs(runMs(replays))} / ${fmtMs(slow.runMs)}`,
    ),
    row('replay', 'replay check (replayStep activity), p50 / p95', pp(check)),
    row(
      'replay',
      'decide activity: scripted model / delayed model, p50',
      `${fmtMs(decide.p50)} / ${fmtMs(decideSlow.p50)}`,
    ),
    row('replay', '  of the check: screenshot distance (sharp, one pair), p50', fmtMs(distance.p50)),
    row('replay', 'replays: steps', tally.join('; ')),
    row(
      'replay',
      'replays: model calls (the recordings made)',
      `${replays.map((r) => r.modelCalls).join(', ')} (${recordings.map((r) => r.modelCalls).join(', ')})`,
    ),
  ];
  if (fellBack.n > 0)
    rows.push(row('replay', `  replay steps the model decided, p50 (n=${fellBack.n})`, fmtMs(fellBack.p50)));
  b.log(
    `[bench] replay: a real model adds its latency to every decided step (here ~0 ms; with ${MODEL_DELAY_MS} ms ` +
      `per call a decided step takes ${fmtMs(decidedSlow.p50)} p50); a replayed step pays the check instead`,
  );
  return {
    name: 'replay',
    rows,
    data: {
      modelDelayMs: MODEL_DELAY_MS,
      decidedMs: brief(decided),
      replayedMs: brief(replayed),
      decidedSlowMs: brief(decidedSlow),
      replayStepMs: brief(check),
      decideMs: brief(decide),
      decideSlowMs: brief(decideSlow),
      distanceMs: brief(distance),
      runs: [...recordings, ...replays, slow].map((r) => ({ ...r, runMs: round(r.runMs) })),
    },
  };
}
