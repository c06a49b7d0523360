// The desktop agent end to end on the real parts: the workflow on the dev server, a worker with a desktop pool (Xvfb,
// openbox, xterm in a bubblewrap sandbox), and the scripted model serving the describe, action and grounding calls.
// Each script is written by the test, so it can name the real paths and ports it probes.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { readRun } from '../../src/trajectory/reader';
import { usageTotals } from '../../src/trajectory/usage';
import { stepSummaries } from '../../src/trajectory/steps';
import type { Event } from '../../src/trajectory/schema';
import type { TaskInputArgs, TaskResult } from '../../src/contract/task';
import { failedResult, replyToTask } from '../../client/tasks';
import { startDesktopTask } from './desktop-tasks';
import { eventually, failureOf, startHarness, untilWaiting } from './harness';
import { WorkerProcesses } from './worker-processes';
import type { Harness } from './harness';
import { childRectangles } from '../fixtures/desktop/helpers';

const SECRET = 'sk-desktop-it-secret-4f1c';
let h: Harness;
let model: ScriptedModelServer;
let scriptsDir: string;
let configFile: string;
let listener: net.Server;
let listenerPort: number;
let connections = 0;
const workers = new WorkerProcesses(() => h);

type Call = { name: string; arguments: Record<string, unknown> };
type Entry = { describe?: string; content?: string; tool_calls: Call[]; ground?: string | string[] };

function script(name: string, entries: Entry[]): string {
  fs.writeFileSync(path.join(scriptsDir, `${name}.json`), JSON.stringify({ entries }, null, 2));
  return name;
}

function start(scriptName: string, args: Partial<TaskInputArgs> = {}) {
  const to = { client: h.client, taskQueue: h.config.taskQueue, modelUrl: model.url, prefix: 'desk-it' };
  return startDesktopTask(to, scriptName, args);
}

const events = async (taskId: string): Promise<Event[]> => (await readRun(h.runDir(taskId))).events;
const homeFile = (taskId: string, name: string) => path.join(h.runDir(taskId), 'home', name);
const toolOutputs = async (taskId: string) =>
  (await events(taskId)).flatMap((e) =>
    e.type === 'observation' && e.observation_type === 'tool_output' && e.action_id ? [e] : [],
  );

beforeAll(async () => {
  h = await startHarness({ worker: false });
  scriptsDir = fs.mkdtempSync(path.join(h.dir, 'scripts-'));
  model = await startScriptedModelServer({ scriptsDir });
  // The worker's configuration file, with an API key the sandbox must not be able to read.
  configFile = path.join(h.dir, 'worker-config.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({ models: { default: { baseUrl: model.url, model: 'x', apiKey: SECRET } } }),
  );
  listener = net.createServer((s) => {
    connections += 1;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenerPort = (listener.address() as net.AddressInfo).port;
  await h.startWorker();
}, 120_000);

afterAll(async () => {
  workers.killAll();
  await model?.close();
  await new Promise((r) => listener?.close(r));
  await h?.close();
});

describe('the desktop agent', () => {
  it('types into the xterm, runs several tools in one step, reads unknown tools as observations, asks, and stops', async () => {
    const name = script('desktop-xterm', [
      {
        content: 'I will type into the terminal, then check the file with a command.',
        tool_calls: [
          { name: 'type_text', arguments: { text: 'echo typed-by-agent > typed.txt\n' } },
          {
            name: 'run_command',
            arguments: {
              command: 'for i in $(seq 1 50); do [ -s typed.txt ] && break; sleep 0.1; done; cat typed.txt',
            },
          },
          { name: 'frobnicate', arguments: { level: 11 } },
        ],
      },
      {
        content: "Can I reach the worker's files or the network?",
        tool_calls: [
          {
            name: 'run_command',
            arguments: {
              command: `cat ${configFile} 2>&1; env | grep -c CUA_ ; bash -c 'echo hi > /dev/tcp/127.0.0.1/${listenerPort}' 2>&1 || echo no-network`,
            },
          },
          { name: 'type_text', arguments: { text: `cat ${configFile} > leaked.txt 2>&1\n` } },
        ],
      },
      { content: 'I need the word.', tool_calls: [{ name: 'ask_user', arguments: { question: 'Which word?' } }] },
      {
        content: "Writing the user's word.",
        tool_calls: [
          { name: 'run_command', arguments: { command: "printf '%s' '{{reply}}' > note.txt && cat note.txt" } },
          { name: 'stop', arguments: { answer: 'note.txt holds {{reply}}' } },
        ],
      },
    ]);
    const handle = await start(name);
    const waiting = await untilWaiting(handle, 90_000);
    expect(waiting.question?.text).toBe('Which word?');
    await replyToTask(h.client, handle.workflowId, 'lighthouse', waiting.question?.id);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', endReason: 'complete', answer: 'note.txt holds lighthouse' });
    const taskId = handle.workflowId;

    // Typed into the real xterm, and read back by a command in the same step.
    expect(fs.readFileSync(homeFile(taskId, 'typed.txt'), 'utf8')).toBe('typed-by-agent\n');
    const outputs = await toolOutputs(taskId);
    expect(outputs[1]?.output).toContain('typed-by-agent');
    // The unknown tool became the seed agent's observation (seed 004 §1.6).
    expect(outputs[2]?.error).toBe('Function not implemented.');
    // Neither a command nor the terminal reads the worker's config; no network by default.
    expect(outputs[3]?.output).not.toContain(SECRET);
    expect(outputs[3]?.output).toContain('No such file');
    expect(outputs[3]?.output).toContain('no-network');
    expect(connections).toBe(0);
    await eventually(
      async () => fs.existsSync(homeFile(taskId, 'leaked.txt')),
      10_000,
      'the xterm to write leaked.txt',
    );
    const leaked = fs.readFileSync(homeFile(taskId, 'leaked.txt'), 'utf8');
    expect(leaked).not.toContain(SECRET);
    expect(leaked).toContain('No such file');
    expect(fs.readFileSync(homeFile(taskId, 'note.txt'), 'utf8')).toBe('lighthouse');

    // The run folder: one action + tool_output per call, alternating; screenshots per step; valid in our reader.
    const all = await events(taskId);
    const actionIds = all.filter((e) => e.type === 'action').map((e) => e.id);
    expect(actionIds).toEqual([
      'step-0001-action-g0',
      'step-0001-action-g0-c1',
      'step-0001-action-g0-c2',
      'step-0002-action-g0',
      'step-0002-action-g0-c1',
      'step-0003-action-g0',
      // The reply reopened the desktop: the step after it is in session generation 1.
      'step-0004-action-g1',
      'step-0004-action-g1-c1',
    ]);
    expect((await readRun(h.runDir(taskId))).warnings).toEqual([]);
    const shots = fs.readdirSync(h.runDir(taskId)).filter((f) => f.endsWith('.png'));
    expect(shots).toEqual(
      expect.arrayContaining([
        'screenshot_0_pre.png',
        'screenshot_0_post.png',
        'screenshot_1_pre.png',
        'screenshot_1_post.png',
      ]),
    );
    // The desktop as the step loop first saw it, before step 1: the start page, as a browser run has.
    expect(all.slice(0, 3).map((e) => e.id)).toEqual(['user-0000-task-g0', 'step-0000-pre-g0', 'step-0001-pre-g0']);
    // After the pause a new desktop was started; the model was told what was lost.
    expect(
      all.some(
        (e) =>
          e.type === 'observation' && e.observation_type === 'tool_output' && e.metadata?.note === 'session_restored',
      ),
    ).toBe(true);
    // The action model read the observations of earlier calls (its memory is rebuilt from the run folder).
    const actionCalls = model.requests.filter((r) => r.script === name && r.call === 'action');
    expect(actionCalls).toHaveLength(4);
    expect(actionCalls[1]?.allText).toContain('typed-by-agent');
    expect(actionCalls[3]?.allText).toContain('lighthouse');
    // Step table (cua show / view) lists every call.
    expect(stepSummaries(all).map((s) => s.action_name)).toEqual([
      'type_text',
      'run_command',
      'frobnicate',
      'run_command',
      'type_text',
      'ask_user',
      'run_command',
      'stop',
    ]);
  }, 180_000);

  it('clicks a real button located by its description through the grounding endpoint', async () => {
    // xmessage at a fixed place; the grounding reply points at its button (found on the real screen by the test).
    const name = script('desktop-click', [
      {
        content: 'Open the dialog.',
        tool_calls: [
          {
            name: 'run_background_command',
            arguments: { command: "xmessage -print -buttons Proceed:0 -geometry +400+300 'Press Proceed'" },
          },
        ],
      },
      {
        content: 'Click the button.',
        tool_calls: [{ name: 'click', arguments: { query: 'the Proceed button' } }],
        ground: '(0, 0)',
      },
      {
        content: 'Check what the dialog printed.',
        tool_calls: [
          {
            name: 'run_command',
            arguments: {
              command:
                'for i in $(seq 1 30); do grep -qs Proceed .background/*.log && break; sleep 0.1; done; cat .background/*.log',
            },
          },
          { name: 'stop', arguments: { answer: 'done' } },
        ],
      },
    ]);
    // Replace the grounding reply with the button's real centre once the dialog is up (the script is read per request).
    const handle = await start(name);
    const taskId = handle.workflowId;
    const point = await eventually(async () => buttonCentre(), 60_000, 'the xmessage window');
    script(name, [
      ...JSON.parse(fs.readFileSync(path.join(scriptsDir, `${name}.json`), 'utf8')).entries.slice(0, 1),
      {
        content: 'Click the button.',
        tool_calls: [{ name: 'click', arguments: { query: 'the Proceed button' } }],
        ground: `(${point.x}, ${point.y})`,
      },
      ...JSON.parse(fs.readFileSync(path.join(scriptsDir, `${name}.json`), 'utf8')).entries.slice(2),
    ]);
    const result = (await handle.result()) as TaskResult;
    expect(result.status).toBe('complete');
    const outputs = await toolOutputs(taskId);
    expect(outputs.find((o) => o.output.startsWith('Clicked'))?.output).toContain(`(${point.x}, ${point.y})`);
    expect(outputs.at(-2)?.output).toContain('Proceed');
    const grounding = model.requests.filter((r) => r.script === name && r.call === 'ground');
    expect(grounding).toHaveLength(1);
    expect(grounding[0]?.imageCount).toBe(1);
    expect(grounding[0]?.allText).toContain('the Proceed button');

    // Every model call counts in the task's usage (issue 30): each step's describe and action calls, and the
    // grounding call, recorded with the click's tool output (its action was recorded before the call was made).
    const { events } = await readRun(h.runDir(taskId));
    const clicked = events.find(
      (e) => e.type === 'observation' && e.observation_type === 'tool_output' && e.output.startsWith('Clicked'),
    );
    const subCalls = (clicked?.metadata as { tool_sub_calls?: unknown[] } | undefined)?.tool_sub_calls;
    expect(subCalls).toMatchObject([{ tool: 'ground', model: name, reply: `(${point.x}, ${point.y})`, error: '' }]);
    expect(subCalls).toMatchObject([{ messages: [{ usage: { prompt_tokens: expect.any(Number) } }] }]);
    const modelCalls = model.requests.filter((r) => r.script === name && r.call !== 'ground').length;
    expect(modelCalls).toBe(6); // three steps: describe and action each
    expect(usageTotals(events).calls).toBe(modelCalls + 1);
    expect(usageTotals(events.filter((e) => e !== clicked)).calls).toBe(modelCalls);
  }, 180_000);
});

/** The centre of xmessage's button on the worker's (only) desktop: the lowest of the dialog's inner windows. */
async function buttonCentre(): Promise<{ x: number; y: number } | undefined> {
  const desktops = h.worker?.desktops;
  const id = desktops?.sessionIds()[0];
  if (!desktops || !id) return undefined;
  const session = desktops.get(id);
  const dialog = (await session.windows()).find((w) => w.title === 'xmessage');
  if (!dialog) return undefined;
  const inner = await childRectangles(session.display, dialog.id);
  if (inner.length === 0) return undefined;
  const button = inner.reduce((low, r) => (r.y > low.y ? r : low));
  return { x: button.x + Math.floor(button.width / 2), y: button.y + Math.floor(button.height / 2) };
}

describe('a desktop task on a worker killed with kill -9', () => {
  it('continues on a new worker in a new sandbox with the same home directory', async () => {
    await h.stopWorker();
    await workers.prepare();
    const name = script('desktop-crash', [
      {
        content: 'Write a file.',
        tool_calls: [{ name: 'run_command', arguments: { command: 'echo kept > kept.txt' } }],
      },
      { content: 'Read it back.', tool_calls: [{ name: 'run_command', arguments: { command: 'cat kept.txt' } }] },
      { content: 'Done.', tool_calls: [{ name: 'stop', arguments: { answer: 'kept' } }] },
    ]);
    const marker = path.join(h.dir, 'desktop-marker');
    const first = workers.spawn({ CUA_TEST_HOLD: 'act:2', CUA_TEST_MARKER: marker });
    const handle = await start(name);
    await eventually(async () => fs.existsSync(marker), 90_000, 'the worker to reach act of step 2');
    await workers.kill(first);
    const second = workers.spawn();
    try {
      const result = (await handle.result()) as TaskResult;
      expect(result).toMatchObject({ status: 'complete', answer: 'kept' });
      const taskId = handle.workflowId;
      expect(fs.readFileSync(homeFile(taskId, 'kept.txt'), 'utf8')).toBe('kept\n');
      const all = await events(taskId);
      const restored = all.find(
        (e) =>
          e.type === 'observation' && e.observation_type === 'tool_output' && e.metadata?.note === 'session_restored',
      );
      expect(restored && 'output' in restored ? restored.output : '').toMatch(/windows and background processes/);
      // Step 2 was re-observed and re-decided in generation 1, and its command read the file the first sandbox wrote.
      const reread = (await toolOutputs(taskId)).find((o) => o.action_id === 'step-0002-action-g1');
      expect(reread?.output).toContain('kept');
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    } finally {
      second.kill('SIGTERM');
      await new Promise((r) => second.once('exit', r));
    }
  }, 240_000);
});

describe('a desktop task on a worker without desktops', () => {
  it('fails at once with end reason desktop and a message saying why', async () => {
    const config = path.join(h.dir, 'no-desktop.json');
    fs.writeFileSync(config, JSON.stringify({ desktop: { maxSessions: 0 } }));
    const worker = workers.spawn({ CUA_CONFIG: config });
    try {
      const name = script('desktop-unreachable', [{ content: 'x', tool_calls: [{ name: 'stop', arguments: {} }] }]);
      const handle = await start(name);
      const failure = await failureOf(handle.result());
      const result = failedResult(failure);
      expect(result).toMatchObject({ status: 'failed', endReason: 'desktop', steps: 1 });
      expect(result?.error).toMatch(/no desktop support/);
      // Nothing was asked of the model: the task failed before its first observation.
      expect(model.requests.filter((r) => r.script === name)).toHaveLength(0);
    } finally {
      await workers.kill(worker);
    }
  }, 120_000);
});
