// A run folder's disk that fills up mid-task (a small tmpfs as the worker's runsDir): the task waits, its status
// saying so (waitingForStore, kind full, read from the waiting act's heartbeat details), and completes once space is
// freed, with every event recorded once and the action not repeated; with a short store.faultWaitMinutes and no
// space freed it ends run_folder with a one-line reason, and nothing recorded is half-written. Plus the folder
// store's own promises on a full disk: an append is whole or absent (tmpfs takes what fits in a file's last page
// and reports no error), a lock file is never left behind. Real dev server, real Chromium, the scripted model.
// Mounting a tmpfs needs root: without it these tests are skipped, saying why.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelTask, failedResult, startTask, storeWaitLine, validateTaskInput, viewTask } from '../../client/tasks';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import type { Event } from '../../src/trajectory/schema';
import { LocalRunStore } from '../../src/trajectory/store';
import { loadVerification } from '../../src/trajectory/reader';
import { StoreFaultPolicy } from '../../src/trajectory/store-faults';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import type { StoreWait } from '../../src/trajectory/store-wait';
import type { TaskResult } from '../../src/contract/task';
import { createWorkerRuntime } from '../../worker/main';
import type { WorkerOptions } from '../../worker/main';
import { eventually, failureOf, FAST_TIMING, startHarness, workflowBundle } from './harness';
import type { Harness } from './harness';

const TMPFS_SIZE = '4m';
const mounts: string[] = [];

/** A fresh tmpfs of `size` on a temp folder (unmounted after the file's tests). */
function mountTmpfs(size: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  mounts.push(dir);
  return dir;
}

/** Why no tmpfs can be mounted here (null: it can). */
function whyNoTmpfs(): string | null {
  if (process.getuid?.() !== 0) return `mounting a tmpfs needs root (this runs as uid ${process.getuid?.() ?? '?'})`;
  try {
    mountTmpfs('64k');
    return null;
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return `mount -t tmpfs failed: ${stderr || String(err)}`;
  }
}

/** Fills the file system of `dir` to the last page with one file; returns it (delete it to free the space). */
function fill(dir: string): string {
  const file = path.join(dir, `filler-${mounts.length}-${Date.now()}`);
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

const noTmpfs = whyNoTmpfs();

afterAll(() => {
  for (const dir of mounts.reverse()) {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Every file under `dir`, relative. */
const filesUnder = (dir: string) =>
  (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
    fs.statSync(path.join(dir, f)).isFile(),
  );

/** events.jsonl, checked line by line: every line whole (ends with '\n', valid JSON), no id twice. */
function eventsOf(runDir: string): Event[] {
  const text = fs.readFileSync(path.join(runDir, 'solver_log/events.jsonl'), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const events = text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Event);
  const ids = events.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
  return events;
}

/** Nothing half-written: no temp, lock or torn-tail file, and every screenshot an event names is a whole PNG. */
function expectNothingHalfWritten(runDir: string, events: readonly Event[]): void {
  expect(filesUnder(runDir).filter((f) => /\.tmp-|\.lock$|\.torn$/.test(f))).toEqual([]);
  for (const e of events) {
    if (e.type !== 'observation' || e.observation_type !== 'environment' || !e.screenshot_path) continue;
    const png = fs.readFileSync(path.join(runDir, e.screenshot_path));
    expect(png.subarray(0, 8).toString('hex'), e.screenshot_path).toBe('89504e470d0a1a0a');
    expect(png.subarray(-8, -4).toString('latin1'), e.screenshot_path).toBe('IEND');
  }
}

describe.skipIf(noTmpfs !== null)('a run folder whose disk fills up mid-task', () => {
  let h: Harness;
  const workers: { stop(): Promise<void> }[] = [];
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  }, 120_000);
  afterAll(async () => {
    for (const w of workers) await w.stop().catch(() => undefined);
    await h?.close();
  });

  let counter = 0;
  /** A worker of its own (its own queue, its runsDir on `runsDir`, its store.faultWaitMinutes), logging to `logs`. */
  async function startWorker(
    runsDir: string,
    faultWaitMinutes: number,
    checkpoint: WorkerOptions['checkpoint'],
    logs: string[],
  ): Promise<{ config: Config; pool: () => number }> {
    const queue = `full-${process.pid}-${++counter}`;
    const configFile = path.join(h.dir, `${queue}.config.json`);
    fs.writeFileSync(configFile, JSON.stringify({ store: { kind: 'folder', faultWaitMinutes } }));
    const config = loadConfig({
      env: { TEMPORAL_ADDRESS: h.server.address, CUA_RUNS_DIR: runsDir, CUA_TASK_QUEUE: queue, CUA_CONFIG: configFile },
    });
    const connection = await NativeConnection.connect({ address: h.server.address });
    const runtime = await createWorkerRuntime(config, {
      workflowBundle: await workflowBundle(),
      connection,
      checkpoint,
      log: (line) => logs.push(line),
    });
    const running = runtime.run().finally(() => connection.close());
    workers.push({ stop: () => runtime.shutdown().then(() => running) });
    return { config, pool: () => runtime.pool.size };
  }

  function start(config: Config, taskId: string) {
    const input = validateTaskInput({
      runId: taskId,
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default', baseUrl: h.model.url, model: 'book-lisbon' },
    });
    return startTask(h.client, config.taskQueue, input);
  }

  const untilStoreWait = (taskId: string) =>
    eventually(async () => (await viewTask(h.client, taskId)).waitingForStore ?? undefined, 90_000, 'a store wait');

  it('waits, saying the store is full, and completes once space is freed, every event once', async () => {
    const runsDir = mountTmpfs(TMPFS_SIZE);
    const taskId = `full-wait-${Date.now().toString(36)}`;
    let filler: string | undefined;
    let actsAtStep3 = 0;
    const logs: string[] = [];
    const { config } = await startWorker(
      runsDir,
      30,
      async (point, req) => {
        // Step 3's act has clicked the first hotel: the disk fills before anything of it is recorded.
        if (point !== 'act' || req.runId !== taskId || req.step !== 3) return;
        actsAtStep3++;
        filler = fill(runsDir);
      },
      logs,
    );
    const handle = await start(config, taskId);

    const wait: StoreWait = await untilStoreWait(taskId);
    expect(wait.kind).toBe('full');
    expect(wait.lastError).toMatch(/^ENOSPC: no space left on device/);
    expect(Date.parse(wait.until) - Date.parse(wait.since)).toBe(30 * 60_000);
    expect(storeWaitLine(wait)).toMatch(
      /^waiting for the run store: the run store is full: ENOSPC: .* since \d\d:\d\d:\d\d UTC \(\d+ min\); the task goes on when it is back, or ends \(run_folder\) at \d\d:\d\d:\d\d UTC$/,
    );
    // The waiting activity is the act (its heartbeat details carry the wait, which the Temporal UI shows too).
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    expect(pending.map((a) => a.activityType?.name)).toEqual(['act']);
    // It keeps waiting well past its heartbeat timeout (3 s) and a few retries, still running.
    await eventually(
      async () => {
        const view = await viewTask(h.client, taskId);
        expect(view.workflowStatus).toBe('RUNNING');
        return (view.waitingForStore && Date.now() - Date.parse(view.waitingForStore.since) > 8_000) || undefined;
      },
      30_000,
      'a wait of 8 s',
    );

    fs.rmSync(filler ?? '');
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 5, answer: 'Harbor View Lisbon costs €120 per night.' });
    expect((await viewTask(h.client, taskId)).waitingForStore).toBeNull();

    const runDir = path.join(runsDir, taskId);
    const events = eventsOf(runDir);
    expect(events.filter((e) => e.type === 'action')).toHaveLength(5);
    // The click ran once: one tool output for step 3, and the session was never lost and reopened.
    expect(actsAtStep3).toBe(1);
    expect(events.filter((e) => e.id.startsWith('step-0003-tool'))).toHaveLength(1);
    expect(events.some((e) => JSON.stringify(e).includes('session_restored'))).toBe(false);
    const dataPoint = JSON.parse(fs.readFileSync(path.join(runDir, 'data_point.json'), 'utf8')) as {
      solver_log: { events: Event[]; status: string };
    };
    expect(dataPoint.solver_log.events.map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(dataPoint.solver_log.status).toBe('complete');
    expectNothingHalfWritten(runDir, events);
    // The worker said so: once when the store filled up, once when it was back (not a line per retry).
    expect(logs.filter((l) => /^the run store is full: ENOSPC.*tasks wait for it/.test(l))).toHaveLength(1);
    expect(logs.filter((l) => /^the run store is back \(.*\) after \d+ s; it was full: ENOSPC/.test(l))).toHaveLength(
      1,
    );
  }, 180_000);

  it('ends run_folder with a one-line reason after a short store.faultWaitMinutes when space is never freed', async () => {
    const runsDir = mountTmpfs(TMPFS_SIZE);
    const taskId = `full-gives-up-${Date.now().toString(36)}`;
    let filler: string | undefined;
    const logs: string[] = [];
    const { config, pool } = await startWorker(
      runsDir,
      0.2,
      async (point, req) => {
        if (point === 'act' && req.runId === taskId && req.step === 2) filler = fill(runsDir);
      },
      logs,
    );
    const started = Date.now();
    const handle = await start(config, taskId);
    expect((await untilStoreWait(taskId)).kind).toBe('full');

    const result = failedResult(await failureOf(handle.result()));
    const elapsed = (Date.now() - started) / 1000;
    expect(result).toMatchObject({ status: 'failed', endReason: 'run_folder', steps: 2 });
    expect(result?.error).toMatch(
      /^the run store is full: ENOSPC: no space left on device.*; gave up after 1[2-9] s \(store\.faultWaitMinutes: 12 s\)$/,
    );
    expect(result?.error).not.toContain('\n');
    expect(elapsed).toBeLessThan(90);
    const view = await viewTask(h.client, taskId);
    expect(view.result).toMatchObject({ endReason: 'run_folder' });
    expect(pool()).toBe(0); // the browser was closed all the same

    // What was recorded before the disk filled is intact; the step that met it left nothing half-written.
    fs.rmSync(filler ?? '');
    const runDir = path.join(runsDir, taskId);
    const events = eventsOf(runDir);
    expect(events.some((e) => e.id === 'step-0001-post-g0')).toBe(true);
    expect(events.some((e) => e.id.startsWith('step-0002-tool'))).toBe(false);
    expectNothingHalfWritten(runDir, events);
    JSON.parse(fs.readFileSync(path.join(runDir, 'solver_log/status.json'), 'utf8'));
    expect(logs.some((l) => l.startsWith('gave up waiting for the run store'))).toBe(true);
  }, 180_000);

  it('a task cancelled while it waits ends at once, cancelled, its browser closed', async () => {
    const runsDir = mountTmpfs(TMPFS_SIZE);
    const taskId = `full-cancel-${Date.now().toString(36)}`;
    let filler: string | undefined;
    const logs: string[] = [];
    const { config, pool } = await startWorker(
      runsDir,
      30,
      async (point, req) => {
        if (point === 'act' && req.runId === taskId && req.step === 2) filler = fill(runsDir);
      },
      logs,
    );
    await start(config, taskId);
    expect((await untilStoreWait(taskId)).kind).toBe('full');
    const asked = Date.now();
    await cancelTask(h.client, taskId);
    expect(Date.now() - asked).toBeLessThan(20_000); // not the 30 minutes the store wait allows
    const view = await viewTask(h.client, taskId);
    expect(view.workflowStatus).toBe('CANCELLED');
    expect(view.result).toMatchObject({ status: 'cancelled', endReason: 'cancelled' });
    expect(pool()).toBe(0);
    // The waiting act hears of the cancellation at its next heartbeat and stops: freeing space then writes nothing.
    await eventually(
      async () => logs.some((l) => l.startsWith('stopped waiting for the run store')),
      30_000,
      'the act',
    );
    const runDir = path.join(runsDir, taskId);
    const before = eventsOf(runDir).map((e) => e.id);
    fs.rmSync(filler ?? '');
    expect(before.some((id) => id.startsWith('step-0002-tool'))).toBe(false);
    expect(eventsOf(runDir).map((e) => e.id)).toEqual(before);
    expectNothingHalfWritten(runDir, eventsOf(runDir));
  }, 120_000);
});

describe.skipIf(noTmpfs !== null)('the folder store on a full disk', () => {
  it('an append that meets a full disk leaves the file as it was, and waits to go in whole', async () => {
    const dir = mountTmpfs('64k');
    const key = 'run-1/solver_log/events.jsonl';
    const file = path.join(dir, key);
    const store = new LocalRunStore(dir);
    await store.appendLine(key, '{"id":"a"}');
    const filler = fill(dir);
    // Longer than the room left in the file's last page: the first write takes what fits and reports no error.
    const big = JSON.stringify({ id: 'b', text: 'x'.repeat(20_000) });
    await expect(store.appendLine(key, big)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"id":"a"}\n');
    // A lock whose pid could not be written is not left behind to block every writer after.
    await expect(store.withLock(key, async () => 'in')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
    // An atomic write fails whole too: no temp file stays.
    await expect(store.writeAtomic('run-1/screenshot_1_pre.png', Buffer.alloc(50_000))).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(filesUnder(dir).filter((f) => f.includes('.tmp-') || f.endsWith('.png'))).toEqual([]);

    // The same append through the fault policy waits, and goes in once, whole, when space is freed.
    const waits: unknown[] = [];
    const faults = new StoreFaultPolicy({
      where: dir,
      limitMs: 60_000,
      initialDelayMs: 50,
      maxDelayMs: 200,
      hooks: { onWait: (w) => waits.push(w) },
    });
    const patient = new LocalRunStore(dir, { faults });
    const appended = patient.appendLine(key, big);
    await eventually(async () => waits.length >= 2, 10_000, 'two retries');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"id":"a"}\n');
    fs.rmSync(filler);
    await appended;
    expect(fs.readFileSync(file, 'utf8')).toBe(`{"id":"a"}\n${big}\n`);
    expect(waits.at(-1)).toBeNull();
  });
});

describe.skipIf(noTmpfs !== null)("an evaluation's verdict on a full disk", () => {
  it('waits for space and is recorded once, whole', async () => {
    const dir = mountTmpfs('256k');
    const waits: unknown[] = [];
    const faults = new StoreFaultPolicy({
      where: dir,
      limitMs: 60_000,
      initialDelayMs: 50,
      maxDelayMs: 200,
      hooks: { onWait: (w) => waits.push(w) },
    });
    const store = new LocalRunStore(dir, { faults });
    const writer = await TrajectoryWriter.create(store, 'run-v', { task_id: 'run-v', instruction: 'score it' });
    const filler = fill(dir);
    const reasoning = `the answer matches: ${'x'.repeat(8_000)}`;
    const verdict = writer.appendVerification({ verifier_name: 'eval_rules', score: 1, reasoning });
    await eventually(async () => waits.length >= 2, 10_000, 'the verdict waiting');
    fs.rmSync(filler);
    expect(await verdict).toBe('eval_rules');
    const text = fs.readFileSync(path.join(dir, 'run-v/verification.jsonl'), 'utf8');
    expect(text.split('\n')).toHaveLength(2); // one line and its newline
    expect((await loadVerification(store, 'run-v')).eval_rules).toMatchObject({ score: 1, reasoning });
  });
});

// Only where no tmpfs can be mounted: one skipped line that says why (where one can, nothing is skipped).
if (noTmpfs !== null) {
  describe('a run folder whose disk fills up (no tmpfs here)', () => {
    it.skip(`skipped: ${noTmpfs}`, () => undefined);
  });
}
