// A worker's desktop settings, on the real parts: the workflow on the dev server, workers with real desktops (Xvfb,
// openbox in a bubblewrap sandbox) started by the test with the settings under test, and the scripted model.
// desktop.endOnNoCall: a reply that calls no tool ends the task with its text as the answer, or (off) is invalid.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeConnection } from '@temporalio/worker';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import type { Config } from '../../src/runtime/config';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import type { TaskInputArgs, TaskResult } from '../../workflows/contract';
import { startTask, validateTaskInput } from '../../client/tasks';
import { createWorkerRuntime } from '../../worker/main';
import type { WorkerRuntime } from '../../worker/main';
import { FAST_TIMING, startHarness, workflowBundle } from './harness';
import type { Harness } from './harness';

let h: Harness;
let model: ScriptedModelServer;
let scriptsDir: string;

type Call = { name: string; arguments: Record<string, unknown> };
/** A reply with tool calls (native), or a plain text reply (`raw`). */
type Entry = { content?: string; tool_calls: Call[] } | { raw: string };

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
async function startWorker(desktop: Partial<Config['desktop']>): Promise<TestWorker> {
  const queue = `desk-worker-${process.pid}-${++workerCount}`;
  const config: Config = { ...h.config, taskQueue: queue, desktop: { ...h.config.desktop, apps: [], ...desktop } };
  const connection = await NativeConnection.connect({ address: h.server.address });
  const lines: string[] = [];
  const runtime = await createWorkerRuntime(config, {
    connection,
    workflowBundle: await workflowBundle(),
    log: (line) => lines.push(line),
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

let taskCount = 0;
function start(worker: TestWorker, scriptName: string, args: Partial<TaskInputArgs> = {}) {
  const input = validateTaskInput({
    runId: `desk-worker-${Date.now().toString(36)}-${++taskCount}`,
    instruction: 'Count the lines of n.txt.',
    environment: 'desktop',
    timing: FAST_TIMING,
    maxSteps: 6,
    ...args,
    model: { endpoint: 'default', baseUrl: model.url, model: scriptName },
  });
  return startTask(h.client, worker.queue, input);
}

const actionRequests = (name: string) => model.requests.filter((r) => r.script === name && r.call === 'action');

beforeAll(async () => {
  h = await startHarness({ worker: false });
  scriptsDir = fs.mkdtempSync(path.join(h.dir, 'scripts-'));
  model = await startScriptedModelServer({ scriptsDir });
}, 120_000);

afterAll(async () => {
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
      expect(asked[2]?.allText).toContain('Your reply was empty');
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

  it('off: a reply with no call is an invalid reply the model is told about, and the task goes on', async () => {
    const worker = await startWorker({ endOnNoCall: false });
    try {
      const name = script('no-call-invalid', entries);
      const result = (await (await start(worker, name)).result()) as TaskResult;
      expect(result).toMatchObject({ status: 'complete', answer: 'stopped with stop', steps: 4 });
      const asked = actionRequests(name);
      expect(asked).toHaveLength(4);
      expect(asked[3]?.allText).toContain('Your reply did not call any tool');
    } finally {
      await worker.stop();
    }
  }, 120_000);
});
