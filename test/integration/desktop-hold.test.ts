// A question keeps the live desktop (browser.holdWhileWaitingSeconds, issue 25), on the real parts: the workflow on the
// dev server, a worker with a desktop pool (Xvfb, openbox, xterm in a bubblewrap sandbox), the scripted model. A
// quick reply goes on in the same X session: one open, every call on the same desktop, the window the task opened
// still there. A reply after a short hold finds the desktop closed (its home saved at the hold's end) and a new one
// with the same files. Each step that changed the home leaves its step's archive, which unpacks to that step's files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { homeArchiveAt, unpackHome } from '../../activities/environments/desktop-home';
import { replyToTask } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { desktopSupport } from '../../src/desktop';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { LocalRunStore } from '../../src/trajectory/store';
import { readRun } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import { startDesktopTask, writeDesktopScript } from './desktop-tasks';
import type { DesktopCall } from './desktop-tasks';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const support = desktopSupport();
/** The title of the window the tasks open before they ask. */
const WINDOW = 'held-window';

let h: Harness;
let model: ScriptedModelServer;
let scriptsDir: string;
const logLines: string[] = [];

type Call = DesktopCall;

const script = (name: string, steps: Call[][]): string => writeDesktopScript(scriptsDir, name, steps);

const run = (command: string): Call => ({ name: 'run_command', arguments: { command } });
const background = (command: string): Call => ({ name: 'run_background_command', arguments: { command } });
const ask: Call = { name: 'ask_user', arguments: { question: 'Go on?' } };
const stop: Call = { name: 'stop', arguments: { answer: 'done {{reply}}' } };
/** Opens a window titled WINDOW (waiting until it is there), and writes one.txt. */
const openWindow = [
  background(`xmessage -title ${WINDOW} -geometry +300+200 'still here'`),
  run(`for i in $(seq 1 50); do xprop -name ${WINDOW} >/dev/null 2>&1 && break; sleep 0.1; done; echo one > one.txt`),
];

function start(scriptName: string) {
  const to = { client: h.client, taskQueue: h.config.taskQueue, modelUrl: model.url, prefix: 'desk-hold' };
  return startDesktopTask(to, scriptName, { instruction: 'Open a window, ask, go on.' });
}

beforeAll(async () => {
  h = await startHarness({ worker: false, log: (line) => logLines.push(line) });
  scriptsDir = fs.mkdtempSync(path.join(h.dir, 'scripts-'));
  model = await startScriptedModelServer({ scriptsDir });
  if (support.ok) await h.startWorker();
}, 120_000);

afterAll(async () => {
  await model?.close();
  await h?.close();
});

/** The activities the task's history scheduled, in order, each with its input. */
async function scheduled(handle: WorkflowHandle): Promise<{ name: string; input: Record<string, unknown> }[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    const name = a?.activityType?.name;
    const data = a?.input?.payloads?.[0]?.data;
    if (!name) return [];
    return [{ name, input: data ? (JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>) : {} }];
  });
}

const events = async (taskId: string): Promise<Event[]> => (await readRun(h.runDir(taskId))).events;
/** The windows line of a step's pre observation ("Windows: xterm | held-window"). */
async function windowsBefore(taskId: string, step: number): Promise<string> {
  const pre = (await events(taskId)).find((e) => e.id === `step-${String(step).padStart(4, '0')}-pre-g0`);
  return pre?.type === 'observation' && pre.observation_type === 'environment' ? String(pre.page_info) : '';
}
const restoredNotes = async (taskId: string) =>
  (await events(taskId)).filter(
    (e) => e.type === 'observation' && e.observation_type === 'tool_output' && e.metadata?.note === 'session_restored',
  );

describe.skipIf(!support.ok)('a question holds the live desktop', () => {
  it('a reply within the hold goes on in the same X session: one open, the window still there', async () => {
    h.config.browser.holdWhileWaitingSeconds = 600;
    const name = script('desktop-hold-quick', [openWindow, [ask], [run('cat one.txt'), stop]]);
    const handle = await start(name);
    await untilWaiting(handle, 90_000);
    await eventually(async () => h.worker?.desktops?.held === 1, 20_000, 'the desktop to be held');
    const [heldId] = h.worker?.desktops?.sessionIds() ?? [];
    await replyToTask(h.client, handle.workflowId, 'quick');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'done quick' });
    const taskId = handle.workflowId;

    const activities = await scheduled(handle);
    expect(activities.filter((a) => a.name === 'openSession')).toHaveLength(1);
    expect(activities.map((a) => a.name)).toEqual(expect.arrayContaining(['holdSession', 'reclaimSession']));
    // Every call of every step, before and after the reply, ran on the desktop that was held.
    const acted = new Set(activities.filter((a) => a.name === 'act').map((a) => a.input.sessionId));
    expect([...acted]).toEqual([heldId]);
    // The window opened before the question is still open after the reply; nothing was restored.
    expect(await windowsBefore(taskId, 2)).toContain(WINDOW);
    expect(await windowsBefore(taskId, 3)).toContain(WINDOW);
    expect(await restoredNotes(taskId)).toEqual([]);
    expect(logLines.some((l) => l.includes(taskId) && l.includes('hold ended'))).toBe(false);
    await eventually(async () => h.worker?.desktops?.size === 0, 10_000, 'the desktop to be released at the end');
  }, 180_000);

  it('a reply after the hold: the desktop was closed and its home saved; a new desktop has the files', async () => {
    h.config.browser.holdWhileWaitingSeconds = 6;
    const name = script('desktop-hold-late', [
      openWindow,
      // Written during the hold (after the home was saved at the question): the hold's end saves it.
      [background('sleep 3; echo late > late.txt'), ask],
      [run('cat one.txt late.txt'), stop],
    ]);
    const handle = await start(name);
    const taskId = handle.workflowId;
    await untilWaiting(handle, 90_000);
    await eventually(
      async () => logLines.some((l) => l.includes(taskId) && l.includes('hold ended (expired)')),
      30_000,
      'the hold to end',
    );
    await eventually(async () => h.worker?.desktops?.size === 0, 10_000, 'the held desktop to be closed');
    // Then the hold's end archived the home as the question's step left it, late.txt included.
    const saved = await eventually(
      async () => {
        const at = await filesAt(taskId, 2);
        return at.files.includes('late.txt') && at;
      },
      10_000,
      "the hold's end to archive the home",
    );
    expect(saved).toEqual({ step: 2, files: ['late.txt', 'one.txt'] });

    await replyToTask(h.client, handle.workflowId, 'late');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'done late' });
    const activities = await scheduled(handle);
    expect(activities.filter((a) => a.name === 'openSession')).toHaveLength(2);
    expect(await restoredNotes(taskId)).toHaveLength(1);
    // A new X session: the window is gone, the files are there.
    const output = (await events(taskId)).find((e) => e.id === 'step-0003-tool-g1');
    expect(output?.type === 'observation' && output.observation_type === 'tool_output' ? output.output : '').toMatch(
      /one\s+late/,
    );
    expect(await windowsBefore(taskId, 2)).toContain(WINDOW);
    const pre3 = (await events(taskId)).find((e) => e.id === 'step-0003-pre-g1');
    expect(pre3?.type === 'observation' && pre3.observation_type === 'environment' ? pre3.page_info : '').not.toContain(
      WINDOW,
    );
  }, 180_000);
});

describe.skipIf(!support.ok)("a desktop run's home archives", () => {
  it('keeps one for each step that changed the home; the archive for step N unpacks to step N’s files', async () => {
    h.config.browser.holdWhileWaitingSeconds = 0;
    const name = script('desktop-home-steps', [
      [run('echo first > a.txt')],
      [run('cat a.txt')],
      [run('echo second > b.txt && rm a.txt')],
      [stop],
    ]);
    const handle = await start(name);
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete' });
    const taskId = handle.workflowId;
    const record = (await new LocalRunStore(h.config.runsDir).readText(`${taskId}/checkpoints/home-latest.json`)) ?? '';
    expect(JSON.parse(record)).toMatchObject({ step: 3, steps: [1, 3] });
    expect(await filesAt(taskId, 1)).toEqual({ step: 1, files: ['a.txt'] });
    expect(await filesAt(taskId, 2)).toEqual({ step: 1, files: ['a.txt'] });
    expect(await filesAt(taskId, 4)).toEqual({ step: 3, files: ['b.txt'] });
  }, 180_000);
});

/** The archive for a step of the run (the largest archived step ≤ it) and the files it unpacks to (dot files aside). */
async function filesAt(taskId: string, step: number): Promise<{ step?: number; files: string[] }> {
  const store = new LocalRunStore(h.config.runsDir);
  const archive = await homeArchiveAt(store, taskId, step);
  if (!archive) return { files: [] };
  const dir = fs.mkdtempSync(path.join(h.dir, `${taskId}-at-${step}-`));
  await unpackHome(store, `${taskId}/${archive.file}`, dir);
  return {
    step: archive.step,
    files: fs
      .readdirSync(dir)
      .filter((f) => !f.startsWith('.'))
      .sort(),
  };
}
