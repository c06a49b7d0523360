// How much a decide step's history read costs from the S3 store compared with the folder store (issue 16's target:
// ≤ 30 ms more at p50). Against a real `rclone serve s3` on this machine (scripts/rclone.sh builds it).
//
// What is timed is what the decide activity reads before it calls the model: the task's input (run_state.json), the
// event stream (events.jsonl, rebuilt from the event objects for S3) and the newest screenshot. Between two timed
// reads another writer (the observe/act activities, on another worker) appends a step, so every read has new events
// to fetch, as in a real run. The reading side is a long-lived RunFiles (a worker's cached writer and store cache).
//
//   npx tsx scripts/bench-store.ts [--steps 40] [--warmup 5]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { RunFiles } from '../activities/support';
import { startS3Server } from '../src/infra/rclone';
import { actionEvent, postObservation, preObservation, taskMessage, toolOutput } from '../src/trajectory/events';
import { S3RunStore } from '../src/trajectory/s3-store';
import { LocalRunStore } from '../src/trajectory/store';
import type { RunStore } from '../src/trajectory/store';
import { TrajectoryWriter } from '../src/trajectory/writer';

const { values } = parseArgs({ options: { steps: { type: 'string' }, warmup: { type: 'string' } } });
const STEPS = Number(values.steps ?? 40);
const WARMUP = Number(values.warmup ?? 5);
const SCREENSHOT = Buffer.alloc(150_000, 7); // about a 1440×900 PNG of a web page

/** Another worker's activities: one step's screenshot and events (pre, action, tool output, post). */
async function writeStep(w: TrajectoryWriter, step: number): Promise<void> {
  const pre = await w.saveScreenshot(step, 'pre', SCREENSHOT);
  await w.appendEvent(preObservation(step, { screenshot_path: pre, url: `https://example.test/${step}` }));
  const content = { action: 'left_click', coordinate: [step, step], thoughts: 'x'.repeat(400) };
  const action = actionEvent(step, { action_name: 'left_click', content });
  await w.appendEvent(action);
  await w.appendEvent(toolOutput(step, action.id, { output: `clicked at ${step}` }));
  const post = await w.saveScreenshot(step, 'post', SCREENSHOT);
  await w.appendEvent(postObservation(step, action.id, { screenshot_path: post }));
}

async function measure(name: string, writerStore: RunStore, readerStore: RunStore): Promise<number[]> {
  const runId = `bench-${name}-${Date.now()}`;
  const writer = await TrajectoryWriter.create(writerStore, runId, { task_id: runId, instruction: 'bench' });
  await writer.writeRunState({ input: { runId, instruction: 'bench' } });
  await writer.appendEvent(taskMessage('bench'));
  const files = new RunFiles(os.tmpdir(), readerStore);
  const times: number[] = [];
  for (let step = 1; step <= STEPS + WARMUP; step++) {
    await writeStep(writer, step);
    const started = performance.now();
    await files.input(runId);
    const events = await (await files.writer(runId)).events();
    const shot = events.findLast((e) => e.type === 'observation' && e.observation_type === 'environment');
    if (shot?.type === 'observation' && shot.observation_type === 'environment' && shot.screenshot_path) {
      await files.readBytes(runId, shot.screenshot_path);
    }
    if (step > WARMUP) times.push(performance.now() - started);
  }
  return times;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? NaN;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-bench-store-'));
  const server = await startS3Server();
  try {
    const bucket = await server.createBucket('runs');
    const s3 = () =>
      new S3RunStore({
        bucket,
        prefix: 'bench',
        endpoint: server.endpoint,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      });
    const folder = await measure('folder', new LocalRunStore(dir), new LocalRunStore(dir));
    const bucketTimes = await measure('s3', s3(), s3());
    const row = (label: string, xs: number[]) =>
      `${label.padEnd(8)} p50 ${p50(xs).toFixed(1).padStart(6)} ms   p90 ${p90(xs).toFixed(1).padStart(6)} ms`;
    console.log(
      `decide step's history read, ${STEPS} steps (after ${WARMUP} warm-up), 4 events + 2 screenshots a step`,
    );
    console.log(row('folder', folder));
    console.log(row('s3', bucketTimes));
    const extra = p50(bucketTimes) - p50(folder);
    console.log(`s3 − folder at p50: ${extra.toFixed(1)} ms (target ≤ 30 ms: ${extra <= 30 ? 'met' : 'NOT met'})`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
