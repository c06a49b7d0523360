// A worker's desktop settings, on the real parts: the workflow on the dev server, workers with real desktops (Xvfb,
// openbox in a bubblewrap sandbox) started by the test with the settings under test, and the scripted model.
// desktop.endOnNoCall: a reply that calls no tool ends the task with its text as the answer, or (off) is invalid.
// Lifetimes: a desktop unused for desktop.idleTimeoutSeconds is closed and its slot freed; a run opening a new
// desktop gets its older one on this worker closed; so a pool full of desktops left behind no longer hangs tasks.
// At start a worker process prints what the model may do in each environment it hosts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeConnection } from '@temporalio/worker';
import { DesktopClosedError, DesktopPool, DesktopPoolFullError } from '../../src/desktop';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import type { Config } from '../../src/runtime/config';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import type { TaskInputArgs, TaskResult } from '../../src/contract/task';
import { createWorkerRuntime } from '../../worker/main';
import type { WorkerRuntime } from '../../worker/main';
import type { WorkerOptions } from '../../worker/main';
import { processAlive } from '../fixtures/desktop/helpers';
import { startDesktopTask } from './desktop-tasks';
import { eventually, startHarness, workflowBundle } from './harness';
import { READY_LINE } from './worker-process';
import { WorkerProcesses } from './worker-processes';
import type { Harness } from './harness';

let h: Harness;
const processes = new WorkerProcesses(() => h);
let model: ScriptedModelServer;
let scriptsDir: string;

type Call = { name: string; arguments: Record<string, unknown> };
/** A reply with tool calls (native), or a plain text reply (`raw`). */
type Entry = ({ content?: string; tool_calls: Call[] } | { raw: string }) & { delay_ms?: number };

function script(name: string, entries: Entry[]): string {
  fs.writeFileSync(path.join(scriptsDir, `${name}.json`), JSON.stringify({ entries }, null, 2));
  return name;
}

/** A worker of its own (its own task queue) with these desktop settings; `lines` collects what it logs. */
interface TestWorker {
  runtime: WorkerRuntime;
  queue: string;
  lines: string[];
  stop(): Promise<void>;
}

let workerCount = 0;
async function startWorker(
  desktop: Partial<Config['desktop']>,
  opts: Pick<WorkerOptions, 'checkpoint'> = {},
): Promise<TestWorker> {
  const queue = `desk-worker-${process.pid}-${++workerCount}`;
  const config: Config = { ...h.config, taskQueue: queue, desktop: { ...h.config.desktop, apps: [], ...desktop } };
  const connection = await NativeConnection.connect({ address: h.server.address });
  const lines: string[] = [];
  const runtime = await createWorkerRuntime(config, {
    connection,
    workflowBundle: await workflowBundle(),
    log: (line) => lines.push(line),
    ...opts,
  });
  const running = runtime.run().finally(() => connection.close());
  return {
    runtime,
    queue,
    lines,
    stop: async () => {
      await runtime.shutdown();
      await running;
    },
  };
}

function start(worker: TestWorker, scriptName: string, args: Partial<TaskInputArgs> = {}) {
  const to = { client: h.client, taskQueue: worker.queue, modelUrl: model.url, prefix: 'desk-worker' };
  return startDesktopTask(to, scriptName, { instruction: 'Count the lines of n.txt.', maxSteps: 6, ...args });
}

const actionRequests = (name: string) => model.requests.filter((r) => r.script === name && r.call === 'action');

beforeAll(async () => {
  h = await startHarness({ worker: false });
  scriptsDir = fs.mkdtempSync(path.join(h.dir, 'scripts-'));
  model = await startScriptedModelServer({ scriptsDir });
}, 120_000);

afterAll(async () => {
  processes.killAll();
  await model?.close();
  await h?.close();
});

describe('desktop.endOnNoCall', () => {
  const entries: Entry[] = [
    { content: 'Writing the file.', tool_calls: [{ name: 'run_command', arguments: { command: 'seq 1 3 > n.txt' } }] },
    { raw: '' },
    { raw: '<think>wc said 3.</think>\nn.txt has 3 lines.' },
    { content: 'Stopping properly.', tool_calls: [{ name: 'stop', arguments: { answer: 'stopped with stop' } }] },
  ];

  it('on (default): a reply with words and no call ends the task with them as the answer; an empty one is invalid', async () => {
    const worker = await startWorker({});
    try {
      const name = script('no-call-ends', entries);
      const handle = await start(worker, name);
      const result = (await handle.result()) as TaskResult;
      expect(result).toMatchObject({
        status: 'complete',
        endReason: 'complete',
        answer: 'n.txt has 3 lines.',
        steps: 3,
      });
      // The empty reply was told as invalid; the words after it ended the task (the stop entry was never asked).
      const asked = actionRequests(name);
      expect(asked).toHaveLength(3);
      expect(asked[2]?.allText).toContain('Your output was empty');
      const run = await readRun(h.runDir(handle.workflowId));
      expect(run.warnings).toEqual([]);
      expect(run.status).toBe('complete');
      const rows = stepSummaries(run.events);
      expect(rows.map((r) => r.action_name)).toEqual(['run_command', 'invalid_reply', 'stop']);
      expect(rows[1]?.invalid).toMatch(/empty/);
      const last = run.events.filter((e) => e.type === 'action').at(-1);
      expect(last?.metadata).toMatchObject({ final_reply: true, tool_calls: [], read_from: 'none' });
      const output = run.events.at(-2);
      expect(output).toMatchObject({ observation_type: 'tool_output', output: 'n.txt has 3 lines.' });
    } finally {
      await worker.stop();
    }
  }, 120_000);

  it('off: an output with no call is an invalid output the model is told about, and the task goes on', async () => {
    const worker = await startWorker({ endOnNoCall: false });
    try {
      const name = script('no-call-invalid', entries);
      const result = (await (await start(worker, name)).result()) as TaskResult;
      expect(result).toMatchObject({ status: 'complete', answer: 'stopped with stop', steps: 4 });
      const asked = actionRequests(name);
      expect(asked).toHaveLength(4);
      expect(asked[3]?.allText).toContain('Your output did not call any tool');
    } finally {
      await worker.stop();
    }
  }, 120_000);
});

describe('desktop lifetimes: the pool', () => {
  const home = (name: string) => path.join(h.dir, 'pool-homes', name);

  it('closes a desktop unused for the idle timeout (not one busy with a command), and its slot is free again', async () => {
    const lines: string[] = [];
    const pool = new DesktopPool({
      slots: 1,
      idleTimeoutMs: 1000,
      sweepIntervalMs: 50,
      defaults: { apps: [] },
      log: (l) => lines.push(l),
    });
    try {
      const { sessionId, session } = await pool.open({ homeDir: home('idle') });
      const { display } = session.processes();
      // Busy for twice the idle timeout: a running command is use.
      expect((await session.runCommand('sleep 2; echo slept', { timeoutMs: 10_000 })).output).toBe('slept\n');
      expect(pool.has(sessionId)).toBe(true);
      await expect(pool.open({ homeDir: home('next') })).rejects.toBeInstanceOf(DesktopPoolFullError);
      // Then unused: closed by the sweep, its X server gone, its slot free.
      const closed = `[desktop pool] closed ${sessionId} (unused for 1 s)`;
      await eventually(async () => lines.includes(closed), 10_000, 'the idle desktop to be closed');
      expect([pool.size, pool.has(sessionId), session.alive(), processAlive(display)]).toEqual([
        0,
        false,
        false,
        false,
      ]);
      await expect(session.screenshot()).rejects.toBeInstanceOf(DesktopClosedError);
      const next = await pool.open({ homeDir: home('next') });
      expect(pool.sessionIds()).toEqual([next.sessionId]);
    } finally {
      await pool.closeAll();
    }
  }, 60_000);

  it("opening a desktop for a run first closes the run's older one; another run still finds the pool full", async () => {
    const pool = new DesktopPool({ slots: 1, defaults: { apps: [] } });
    try {
      const old = await pool.open({ homeDir: home('run-a') }, { owner: 'run-a' });
      const again = await pool.open({ homeDir: home('run-a') }, { owner: 'run-a' });
      expect([pool.has(old.sessionId), old.session.alive()]).toEqual([false, false]);
      expect(pool.sessionIds()).toEqual([again.sessionId]);
      await expect(pool.open({ homeDir: home('run-b') }, { owner: 'run-b' })).rejects.toBeInstanceOf(
        DesktopPoolFullError,
      );
      expect(again.session.alive()).toBe(true);
    } finally {
      await pool.closeAll();
    }
  }, 60_000);
});

describe('desktop lifetimes: tasks on a worker with one desktop', () => {
  const quick = (answer: string): Entry[] => [
    { content: 'Checking.', tool_calls: [{ name: 'run_command', arguments: { command: 'echo ok' } }] },
    { content: 'Done.', tool_calls: [{ name: 'stop', arguments: { answer } }] },
  ];

  it('a desktop left by a task that was terminated is closed when unused, and the next task gets its slot', async () => {
    const worker = await startWorker({ slots: 1, idleTimeoutSeconds: 2 });
    try {
      const desktops = worker.runtime.desktops as DesktopPool;
      // The first task is terminated while its model thinks: nothing releases its desktop.
      const slow = script('left-behind', [
        quick('never')[0] as Entry,
        { ...(quick('never')[1] as Entry), delay_ms: 60_000 },
      ]);
      const first = await start(worker, slow);
      await eventually(async () => actionRequests(slow).length === 2, 60_000, 'the second step to be asked');
      await first.terminate('the test leaves its desktop behind');
      const [leftBehind] = desktops.sessionIds();
      expect(desktops.size).toBe(1);
      // The pool is full with it; the next task waits for the slot, then gets it.
      const result = (await (
        await start(worker, script('after-left-behind', quick('got a desktop')))
      ).result()) as TaskResult;
      expect(result).toMatchObject({ status: 'complete', answer: 'got a desktop' });
      expect(worker.lines).toContain(`[desktop pool] closed ${leftBehind} (unused for 2 s)`);
    } finally {
      await worker.stop();
    }
  }, 120_000);

  it('a desktop that failed mid-step on a live worker is closed when its run opens a new one', async () => {
    // The first observe of step 2 fails as a desktop gone would, though the worker and the pool still hold it.
    const worker = await startWorker(
      { slots: 1 },
      {
        checkpoint: async (point, req) => {
          if (point === 'observe' && req.step === 2 && req.generation === 0) {
            throw new DesktopClosedError('the test says this desktop is gone');
          }
        },
      },
    );
    try {
      const desktops = worker.runtime.desktops as DesktopPool;
      const handle = await start(worker, script('lost-mid-step', quick('reopened')));
      const first = await eventually(async () => desktops.sessionIds()[0], 60_000, 'the first desktop');
      const result = (await handle.result()) as TaskResult;
      expect(result).toMatchObject({ status: 'complete', answer: 'reopened' });
      expect(worker.lines).toContain(`[desktop pool] closed ${first} (its run opened a new desktop)`);
      const run = await readRun(h.runDir(handle.workflowId));
      expect(run.events.some((e) => (e.metadata as { note?: string }).note === 'session_restored')).toBe(true);
    } finally {
      await worker.stop();
    }
  }, 120_000);
});

describe('the tool lists at start', () => {
  it("a worker process prints each hosted environment's actions and tools before it polls", async () => {
    await processes.prepare();
    const child = processes.spawn();
    const log = () => fs.readFileSync(processes.logFile(child), 'utf8');
    await eventually(async () => log().includes(READY_LINE), 60_000, 'the worker process to poll');
    await processes.kill(child);
    const lines = log().split('\n');
    expect(lines).toContain(
      'desktop tools (10): stop, run_command, run_background_command, send_key, type_text, click, double_click, ' +
        'right_click, drag, ask_user',
    );
    expect(lines.find((l) => l.startsWith('browser actions (fara-1.5, 18): '))).toMatch(/left_click, .*terminate$/);
    expect(lines.find((l) => l.startsWith('browser actions (fara-7b, 11): '))).toMatch(/left_click, .*terminate$/);
    // Printed once each, with the worker's other start lines, before it polls.
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    expect(lines.filter((l) => l.startsWith('desktop tools'))).toHaveLength(1);
    expect(at('worker ready')).toBeLessThan(at('desktop tools'));
    expect(at('desktop tools')).toBeLessThan(at(READY_LINE));
  }, 90_000);
});
