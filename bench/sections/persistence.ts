// Section 3, persistence growth: what each step writes to the run folder (2 screenshots + 4 events appended to
// events.jsonl, as observe/decide/act write them) and how long it takes, at steps 10, 50, 100 and 200 of one long
// run, next to rewriting a whole data_point.json every step (the original's way; simulated with writeDataPoint)
// and to decide's per-step re-read of events.jsonl. Drives the TrajectoryWriter directly with real screenshots:
// a 200-step run through the browser and the workflow would take minutes, and neither changes what is written.
import fs from 'node:fs';
import path from 'node:path';
import { screenOf } from '../../activities/support';
import { describeAction } from '../../src/actions/describe';
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
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { SectionOutput } from '../report';
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
  const key = `${w.runId}-datapoint-sim/data_point.json`;
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
  const pool = new BrowserPool({ maxSessions: 1 });
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

export async function benchPersistence(b: Bench): Promise<SectionOutput> {
  const shots = await realScreenshots(b);
  const runId = `persist-${Date.now().toString(36)}`;
  const input = TaskInputSchema.parse({ runId, instruction: 'Benchmark: a long run.', maxSteps: STEPS });
  const { profile, resized } = screenOf(input);
  const systemPrompt = buildSystemPrompt({ profile, screen: resized });
  const w = await TrajectoryWriter.create(b.runsDir, runId, { task_id: runId, instruction: input.instruction });
  await w.appendEvent(taskMessage(input.instruction));
  const dir = path.join(b.runsDir, runId);
  const eventsFile = path.join(dir, 'solver_log', 'events.jsonl');
  const size = (file: string) => fs.statSync(file).size;
  const page = { url: 'http://127.0.0.1/', page_info: 'Current URL: http://127.0.0.1/ (top of the page)' };
  const costs: StepCost[] = [];
  b.log(`[bench] persistence: ${STEPS} steps through the run-folder writer`);
  for (let step = 1; step <= STEPS; step++) {
    const id = (kind: 'pre' | 'action' | 'post') => eventId({ step, kind });
    const pre = shots[step % 2] as Buffer;
    const post = shots[(step + 1) % 2] as Buffer;
    const action = ACTIONS[step % 2] as AgentAction;
    const eventsBefore = size(eventsFile);
    let persistMs = 0;
    const timed = async <T>(work: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const value = await work();
      persistMs += performance.now() - t0;
      return value;
    };
    // observe
    await timed(async () => {
      await w.hasEvent(id('pre'));
      const shot = await w.saveScreenshot(step, 'pre', pre);
      await w.appendEvent(preObservation(step, { screenshot_path: shot, ...page }));
    });
    // decide: the O(n) re-read, then (at the checkpoints) the whole context build with its 3 images
    let t0 = performance.now();
    const events = await w.events();
    const rereadMs = performance.now() - t0;
    let contextMs: number | null = null;
    if (CHECKPOINTS.some((k) => step > k - WINDOW && step <= k)) {
      t0 = performance.now();
      const all = await w.events();
      memorizedFacts(all);
      await buildChatMessages(historyForStep(all, step, 0), {
        systemPrompt,
        maxImages: input.imagesKept,
        loadImage: async (ref) => {
          const shot = await resizeScreenshot(await fs.promises.readFile(path.join(dir, ref)), profile.resizeFactor);
          return toDataUrl(shot.data, shot.mime);
        },
      });
      contextMs = performance.now() - t0;
    }
    const thoughts = 'Click the search box to start a search for hotels in the city.';
    await timed(() =>
      w.appendEvent(
        actionEvent(
          step,
          decisionFields({
            action,
            thoughts,
            profile,
            facts: memorizedFacts(events),
            completion: {
              text: renderToolCall(thoughts, action),
              reasoning: null,
              finishReason: 'stop',
              usage: { prompt_tokens: 0, completion_tokens: 40, reasoning_tokens: 0 },
            },
          }),
        ),
      ),
    );
    // act
    await timed(async () => {
      await w.hasEvent(id('post'));
      await w.appendEvent(toolOutput(step, id('action'), { output: describeAction(action), error: '' }));
      const shot = await w.saveScreenshot(step, 'post', post);
      await w.appendEvent(postObservation(step, id('action'), { screenshot_path: shot, ...page }));
    });
    const eventsBytes = size(eventsFile) - eventsBefore;
    costs.push({
      step,
      persistMs,
      persistBytes: eventsBytes + pre.length + post.length,
      eventsBytes,
      rereadMs,
      contextMs,
    });
    if (step % 50 === 0) b.log(`[bench] persistence: step ${step}/${STEPS}`);
  }
  const rewrites = await simulateDataPointRewrites(b, w);

  const at = (k: number) => {
    const inWindow = (c: { step: number }) => c.step > k - WINDOW && c.step <= k;
    const window = costs.filter(inWindow);
    const sims = rewrites.filter(inWindow);
    const median = <T>(xs: T[], f: (x: T) => number) => percentile(xs.map(f), 50);
    return {
      step: k,
      persistMs: round(
        median(window, (c) => c.persistMs),
        2,
      ),
      persistBytes: Math.round(median(window, (c) => c.persistBytes)),
      eventsBytes: Math.round(median(window, (c) => c.eventsBytes)),
      rereadMs: round(
        median(window, (c) => c.rereadMs),
        2,
      ),
      contextMs: round(
        median(window, (c) => c.contextMs ?? 0),
        2,
      ),
      dataPointMs: round(
        median(sims, (r) => r.ms),
        2,
      ),
      dataPointBytes: Math.round(median(sims, (r) => r.bytes)),
    };
  };
  const points = CHECKPOINTS.map(at);
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
  const first = points[0] as ReturnType<typeof at>;
  const last = points[points.length - 1] as ReturnType<typeof at>;
  // Flatness is judged on wide windows (steps 11–60 vs 151–200): a single fsync can double a 10-step median.
  const span = (from: number, to: number, f: (c: StepCost) => number) =>
    percentile(costs.filter((c) => c.step >= from && c.step <= to).map(f), 50);
  const early = { ms: span(11, 60, (c) => c.persistMs), bytes: span(11, 60, (c) => c.persistBytes) };
  const late = { ms: span(151, 200, (c) => c.persistMs), bytes: span(151, 200, (c) => c.persistBytes) };
  const timeGrowth = late.ms / early.ms;
  const bytesGrowth = late.bytes / early.bytes;
  const rows = [
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
  return {
    name: 'persistence',
    rows,
    data: {
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
    },
  };
}
