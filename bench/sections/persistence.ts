// Section 3, persistence growth: what each step writes to the run folder (2 screenshots + 4 events appended to
// events.jsonl, as observe/decide/act write them) and how long it takes, at steps 10, 50, 100 and 200 of one long
// run, next to rewriting a whole data_point.json every step (the original's way; simulated with writeDataPoint)
// and to decide's per-step re-read of events.jsonl. Drives the TrajectoryWriter directly with real screenshots:
// a 200-step run through the browser and the workflow would take minutes, and neither changes what is written.
import fs from 'node:fs';
import path from 'node:path';
import { screenOf } from '../../activities/support';
import { describeAction } from '../../src/actions/describe';
import { faraSpace } from '../../src/families/fara-common/spaces';
import type { AgentAction } from '../../src/actions/schemas';
import { decisionFields } from '../../src/agent/decision';
import { historyForStep, memorizedFacts } from '../../src/agent/history';
import { BrowserPool } from '../../src/browser/pool';
import { resizeScreenshot, toDataUrl } from '../../src/image/screenshot';
import { buildChatMessages } from '../../src/model/context';
import { buildSystemPrompt } from '../../src/model/prompt';
import { renderToolCall } from '../../src/model/toolcall';
import { actionEvent, postObservation, preObservation, taskMessage, toolOutput } from '../../src/trajectory/events';
import { eventId, parseEventId } from '../../src/trajectory/ids';
import { LocalRunStore } from '../../src/trajectory/store';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { TaskInputSchema } from '../../src/contract/task';
import type { TaskInput } from '../../src/contract/task';
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { fmtBytes, fmtMs, percentile, round, table } from '../stats';

const STEPS = 200;
const CHECKPOINTS = [10, 50, 100, 200];
/** Figures at a checkpoint are the median of the steps (k−WINDOW, k]. */
const WINDOW = 10;

interface StepCost {
  step: number;
  persistMs: number;
  persistBytes: number;
  eventsBytes: number;
  rereadMs: number;
  contextMs: number | null;
}

interface Rewrite {
  step: number;
  ms: number;
  bytes: number;
}

/**
 * The original's way, simulated: after every step, the whole trajectory (all events so far) serialized as one
 * pretty JSON document and written atomically (temp file, fsync, rename — as writeDataPoint writes it).
 */
async function simulateDataPointRewrites(b: Bench, w: TrajectoryWriter): Promise<Rewrite[]> {
  b.log(`[bench] persistence: rewriting a growing data_point.json after each of ${STEPS} steps (simulation)`);
  const events = await w.events();
  const store = new LocalRunStore(b.runsDir);
  const key = `${w.taskId}-datapoint-sim/data_point.json`;
  const out: Rewrite[] = [];
  for (let step = 1; step <= STEPS; step++) {
    const upTo = events.filter((e) => {
      const id = parseEventId(e.id);
      return id !== undefined && id.step <= step;
    });
    const t0 = performance.now();
    const text = `${JSON.stringify(
      {
        task: w.task,
        solver_log: { events: upTo, status: 'running', outcome: null },
        verification: {},
        metadata: { stats: { num_events: upTo.length } },
      },
      null,
      2,
    )}\n`;
    await store.writeAtomic(key, text);
    out.push({ step, ms: performance.now() - t0, bytes: Buffer.byteLength(text) });
  }
  return out;
}

async function realScreenshots(b: Bench): Promise<Buffer[]> {
  const site = await b.site();
  const pool = new BrowserPool({ slots: 1 });
  const stop = onCleanup('persistence browser', () => pool.shutdown());
  try {
    const { env } = await pool.openSession({
      viewport: { width: 1440, height: 900 },
      downloadsDir: path.join(b.dir, 'persist-downloads'),
      url: `${site.url}/`,
    });
    const home = await env.screenshot();
    await env.visitUrl(`${site.url}/search?q=lisbon`);
    return [home, await env.screenshot()];
  } finally {
    await stop();
  }
}

const ACTIONS: AgentAction[] = [
  { action: 'left_click', coordinate: [500, 200] },
  { action: 'scroll', pixels: -300 },
] as AgentAction[];

const PAGE = { url: 'http://127.0.0.1/', page_info: 'Current URL: http://127.0.0.1/ (top of the page)' };
const THOUGHTS = 'Click the search box to start a search for hotels in the city.';

/** Adds up the time spent in the work it times (a step's persistence, spread over observe, decide and act). */
class Stopwatch {
  ms = 0;

  async time<T>(work: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const value = await work();
    this.ms += performance.now() - t0;
    return value;
  }
}

/** The long run written step by step: its writer and folder, and what its decide steps build the context with. */
interface LongRun {
  w: TrajectoryWriter;
  dir: string;
  eventsFile: string;
  shots: Buffer[];
  input: TaskInput;
  family: ReturnType<typeof screenOf>['family'];
  systemPrompt: string;
}

async function startLongRun(b: Bench, shots: Buffer[]): Promise<LongRun> {
  const taskId = `persist-${Date.now().toString(36)}`;
  const input = TaskInputSchema.parse({ runId: taskId, instruction: 'Benchmark: a long run.', maxSteps: STEPS });
  const { family, resized } = screenOf(input);
  const systemPrompt = buildSystemPrompt({ family: faraSpace('fara-1.5'), screen: resized });
  const w = await TrajectoryWriter.create(b.runsDir, taskId, { task_id: taskId, instruction: input.instruction });
  await w.appendEvent(taskMessage(input.instruction));
  const dir = path.join(b.runsDir, taskId);
  return { w, dir, eventsFile: path.join(dir, 'solver_log', 'events.jsonl'), shots, input, family, systemPrompt };
}

const stepEventId = (step: number, kind: 'pre' | 'action' | 'post') => eventId({ step, kind });

/** observe: the screenshot before the action and its event. */
async function observe(run: LongRun, step: number, pre: Buffer, watch: Stopwatch): Promise<void> {
  const { w } = run;
  await watch.time(async () => {
    await w.hasEvent(stepEventId(step, 'pre'));
    const shot = await w.saveScreenshot(step, 'pre', pre);
    await w.appendEvent(preObservation(step, { screenshot_path: shot, ...PAGE }));
  });
}

/** The whole context build of a decide step with its 3 images; returns its time (ms). */
async function contextBuildMs(run: LongRun, step: number): Promise<number> {
  const { w, dir, input, family, systemPrompt } = run;
  const t0 = performance.now();
  const all = await w.events();
  memorizedFacts(all);
  await buildChatMessages(historyForStep(all, step, 0), {
    systemPrompt,
    maxImages: input.imagesKept,
    loadImage: async (ref) => {
      const shot = await resizeScreenshot(await fs.promises.readFile(path.join(dir, ref)), family.resizeFactor);
      return toDataUrl(shot.data, shot.mime);
    },
  });
  return performance.now() - t0;
}

/** decide: the O(n) re-read, then (at the checkpoints) the whole context build, then the action event. */
async function decide(
  run: LongRun,
  step: number,
  action: AgentAction,
  watch: Stopwatch,
): Promise<Pick<StepCost, 'rereadMs' | 'contextMs'>> {
  const { w, family } = run;
  const t0 = performance.now();
  const events = await w.events();
  const rereadMs = performance.now() - t0;
  const atCheckpoint = CHECKPOINTS.some((k) => step > k - WINDOW && step <= k);
  const contextMs = atCheckpoint ? await contextBuildMs(run, step) : null;
  await watch.time(() =>
    w.appendEvent(
      actionEvent(
        step,
        decisionFields({
          action,
          thoughts: THOUGHTS,
          family,
          facts: memorizedFacts(events),
          completion: {
            text: renderToolCall(THOUGHTS, action),
            reasoning: null,
            finishReason: 'stop',
            usage: { prompt_tokens: 0, completion_tokens: 40, reasoning_tokens: 0 },
          },
        }),
      ),
    ),
  );
  return { rereadMs, contextMs };
}

/** act: the action's output, the screenshot after it and its event. */
async function act(run: LongRun, step: number, action: AgentAction, post: Buffer, watch: Stopwatch): Promise<void> {
  const { w } = run;
  await watch.time(async () => {
    await w.hasEvent(stepEventId(step, 'post'));
    await w.appendEvent(toolOutput(step, stepEventId(step, 'action'), { output: describeAction(action), error: '' }));
    const shot = await w.saveScreenshot(step, 'post', post);
    await w.appendEvent(postObservation(step, stepEventId(step, 'action'), { screenshot_path: shot, ...PAGE }));
  });
}

/** One step as observe, decide and act write it, and what it cost. */
async function writeStep(run: LongRun, step: number): Promise<StepCost> {
  const size = (file: string) => fs.statSync(file).size;
  const pre = run.shots[step % 2] as Buffer;
  const post = run.shots[(step + 1) % 2] as Buffer;
  const action = ACTIONS[step % 2] as AgentAction;
  const eventsBefore = size(run.eventsFile);
  const watch = new Stopwatch();
  await observe(run, step, pre, watch);
  const { rereadMs, contextMs } = await decide(run, step, action, watch);
  await act(run, step, action, post, watch);
  const eventsBytes = size(run.eventsFile) - eventsBefore;
  return {
    step,
    persistMs: watch.ms,
    persistBytes: eventsBytes + pre.length + post.length,
    eventsBytes,
    rereadMs,
    contextMs,
  };
}

async function writeSteps(b: Bench, run: LongRun): Promise<StepCost[]> {
  const costs: StepCost[] = [];
  b.log(`[bench] persistence: ${STEPS} steps through the run-folder writer`);
  for (let step = 1; step <= STEPS; step++) {
    costs.push(await writeStep(run, step));
    if (step % 50 === 0) b.log(`[bench] persistence: step ${step}/${STEPS}`);
  }
  return costs;
}

/** The figures at checkpoint `k`: medians over the window of steps before it. */
interface Checkpoint {
  step: number;
  persistMs: number;
  persistBytes: number;
  eventsBytes: number;
  rereadMs: number;
  contextMs: number;
  dataPointMs: number;
  dataPointBytes: number;
}

function checkpointAt(costs: StepCost[], rewrites: Rewrite[], k: number): Checkpoint {
  const inWindow = (c: { step: number }) => c.step > k - WINDOW && c.step <= k;
  const window = costs.filter(inWindow);
  const sims = rewrites.filter(inWindow);
  const median = <T>(xs: T[], f: (x: T) => number) => percentile(xs.map(f), 50);
  const ms = <T>(xs: T[], f: (x: T) => number) => round(median(xs, f), 2);
  return {
    step: k,
    persistMs: ms(window, (c) => c.persistMs),
    persistBytes: Math.round(median(window, (c) => c.persistBytes)),
    eventsBytes: Math.round(median(window, (c) => c.eventsBytes)),
    rereadMs: ms(window, (c) => c.rereadMs),
    contextMs: ms(window, (c) => c.contextMs ?? 0),
    dataPointMs: ms(sims, (r) => r.ms),
    dataPointBytes: Math.round(median(sims, (r) => r.bytes)),
  };
}

function logCheckpoints(b: Bench, points: Checkpoint[]): void {
  b.log(
    table([
      [
        'step',
        'persist/step',
        'bytes/step',
        '(events)',
        'decide re-read',
        'decide context',
        'data_point rewrite',
        '(its size)',
      ],
      ...points.map((p) => [
        `${p.step}`,
        fmtMs(p.persistMs),
        fmtBytes(p.persistBytes),
        fmtBytes(p.eventsBytes),
        fmtMs(p.rereadMs),
        fmtMs(p.contextMs),
        fmtMs(p.dataPointMs),
        fmtBytes(p.dataPointBytes),
      ]),
    ]),
  );
}

interface Flatness {
  early: { ms: number; bytes: number };
  late: { ms: number; bytes: number };
  timeGrowth: number;
  bytesGrowth: number;
}

/** Flatness is judged on wide windows (steps 11–60 vs 151–200): a single fsync can double a 10-step median. */
function flatnessOf(costs: StepCost[]): Flatness {
  const span = (from: number, to: number, f: (c: StepCost) => number) =>
    percentile(costs.filter((c) => c.step >= from && c.step <= to).map(f), 50);
  const early = { ms: span(11, 60, (c) => c.persistMs), bytes: span(11, 60, (c) => c.persistBytes) };
  const late = { ms: span(151, 200, (c) => c.persistMs), bytes: span(151, 200, (c) => c.persistBytes) };
  return { early, late, timeGrowth: late.ms / early.ms, bytesGrowth: late.bytes / early.bytes };
}

function persistenceRows(points: Checkpoint[], flat: Flatness): Row[] {
  const first = points[0] as Checkpoint;
  const last = points[points.length - 1] as Checkpoint;
  const { early, late, timeGrowth, bytesGrowth } = flat;
  return [
    row(
      'persistence',
      'persist time/step, median of steps 11–60 → 151–200',
      `${fmtMs(early.ms)} → ${fmtMs(late.ms)} (×${timeGrowth.toFixed(2)})`,
      'flat (≤ ×1.5)',
      timeGrowth <= 1.5,
    ),
    row(
      'persistence',
      'bytes written/step, median of steps 11–60 → 151–200',
      `${fmtBytes(early.bytes)} → ${fmtBytes(late.bytes)} (×${bytesGrowth.toFixed(2)})`,
      'flat (≤ ×1.1)',
      bytesGrowth <= 1.1,
    ),
    row(
      'persistence',
      `data_point rewrite/step (simulated), step ${first.step} → ${last.step}`,
      `${fmtMs(first.dataPointMs)} → ${fmtMs(last.dataPointMs)}, ${fmtBytes(first.dataPointBytes)} → ${fmtBytes(last.dataPointBytes)}`,
    ),
    row(
      'persistence',
      `decide re-read of events.jsonl, step ${first.step} → ${last.step}`,
      `${fmtMs(first.rereadMs)} → ${fmtMs(last.rereadMs)}`,
    ),
    row(
      'persistence',
      `decide context build (re-read + history + 3 images), step ${first.step} → ${last.step}`,
      `${fmtMs(first.contextMs)} → ${fmtMs(last.contextMs)}`,
    ),
  ];
}

function persistenceData(
  shots: Buffer[],
  points: Checkpoint[],
  flat: Flatness,
  costs: StepCost[],
  rewrites: Rewrite[],
): Record<string, unknown> {
  const { early, late, timeGrowth, bytesGrowth } = flat;
  return {
    steps: STEPS,
    window: WINDOW,
    screenshotBytes: shots.map((s) => s.length),
    checkpoints: points,
    flatness: { early, late, timeGrowth: round(timeGrowth, 3), bytesGrowth: round(bytesGrowth, 3) },
    perStepPersistMs: costs.map((c) => round(c.persistMs, 2)),
    perStepRereadMs: costs.map((c) => round(c.rereadMs, 2)),
    dataPointRewriteMs: rewrites.map((r) => round(r.ms, 2)),
    totals: {
      runFolderBytes: costs.reduce((s, c) => s + c.persistBytes, 0),
      persistMsOverRun: round(costs.reduce((s, c) => s + c.persistMs, 0)),
      dataPointBytesIfRewrittenEveryStep: rewrites.reduce((s, r) => s + r.bytes, 0),
      dataPointMsIfRewrittenEveryStep: round(rewrites.reduce((s, r) => s + r.ms, 0)),
      rereadMsOverRun: round(costs.reduce((s, c) => s + c.rereadMs, 0)),
    },
  };
}

export async function benchPersistence(b: Bench): Promise<SectionOutput> {
  const shots = await realScreenshots(b);
  const run = await startLongRun(b, shots);
  const costs = await writeSteps(b, run);
  const rewrites = await simulateDataPointRewrites(b, run.w);
  const points = CHECKPOINTS.map((k) => checkpointAt(costs, rewrites, k));
  logCheckpoints(b, points);
  const flat = flatnessOf(costs);
  return {
    name: 'persistence',
    rows: persistenceRows(points, flat),
    data: persistenceData(shots, points, flat, costs, rewrites),
  };
}
