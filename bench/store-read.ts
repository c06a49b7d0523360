// What a decide step's history read costs from a run store: the task's input (run_state.json), the event stream
// (events.jsonl, rebuilt from the event objects for S3) and the newest screenshot, read by a long-lived RunFiles (a
// worker's cached writer and store cache) while another writer (the observe/act activities, on another worker)
// appends a step between two reads, so every read has new events to fetch, as in a real run. Used by the bench's
// scale-out section and by scripts/bench-store.ts.
import os from 'node:os';
import { RunFiles } from '../activities/support';
import { actionEvent, postObservation, preObservation, taskMessage, toolOutput } from '../src/trajectory/events';
import type { RunStore } from '../src/trajectory/store';
import { TrajectoryWriter } from '../src/trajectory/writer';

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

/**
 * Times the decide activity's history read (task input, event stream, newest screenshot) for `steps` steps after
 * `warmup`, while a writer on `writerStore` appends a step before each read. Returns one time (ms) per timed read.
 */
export async function measureStoreRead(
  name: string,
  writerStore: RunStore,
  readerStore: RunStore,
  steps = 40,
  warmup = 5,
): Promise<number[]> {
  const taskId = `bench-${name}-${Date.now()}`;
  const writer = await TrajectoryWriter.create(writerStore, taskId, { task_id: taskId, instruction: 'bench' });
  await writer.writeRunState({ input: { runId: taskId, instruction: 'bench' } });
  await writer.appendEvent(taskMessage('bench'));
  const files = new RunFiles(os.tmpdir(), readerStore);
  const times: number[] = [];
  for (let step = 1; step <= steps + warmup; step++) {
    await writeStep(writer, step);
    const started = performance.now();
    await files.input(taskId);
    const events = await (await files.writer(taskId)).events();
    const shot = events.findLast((e) => e.type === 'observation' && e.observation_type === 'environment');
    if (shot?.type === 'observation' && shot.observation_type === 'environment' && shot.screenshot_path) {
      await files.readBytes(taskId, shot.screenshot_path);
    }
    if (step > warmup) times.push(performance.now() - started);
  }
  return times;
}

export const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
export const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? NaN;
