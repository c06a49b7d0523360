// A person's controls over a running task (issue 26), on the real dev server and Chromium with worker processes: a
// pause survives a worker killed -9 and a server restart, and the resumed task finds its page as it was (URL, a
// cookie its script set, the typed value) and completes; a message said while it was paused is read at the next step;
// a follow-up goes on in the same run, on the page the last step left; stale and bad requests are refused in one line.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { continueTask, handBackTask, pauseTask, resumeTask, sayToTask } from '../../client/control';
import { ControlRefusedError, InvalidTaskInputError } from '../../client/errors';
import { statusQuery } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { routeOrderPages } from '../fixtures/browser/order-pages';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

let h: Harness;
let pages: FixtureServer;
const workers = new WorkerProcesses(() => h);
/** Orders placed: the quantity and the cookie they came with. */
const orders: string[] = [];

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  pages = await startFixtureServer();
  routeOrderPages(pages, { placed: (qty, cookie) => orders.push(`${qty} ${cookie}`) });
}, 120_000);

afterAll(async () => {
  workers.killAll();
  await pages?.close();
  await h?.close();
});

const refusal = async (work: Promise<unknown>): Promise<string> => {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ControlRefusedError);
  const message = (err as Error).message;
  expect(message.split('\n')).toHaveLength(1);
  return message;
};

describe('pause, say, resume, continue', () => {
  it('a pause survives kill -9 and a server restart; the resumed task has its page and reads the message', async () => {
    let worker = workers.spawn();
    const handle = await h.start({ script: 'pause-order', instruction: 'Order 3.', startUrl: pages.url('/order') });
    const id = handle.workflowId;
    await eventually(async () => (await handle.query(statusQuery)).step === 2, 60_000, 'step 2 (a slow decision)');
    expect(await refusal(resumeTask(h.client, id))).toBe(`task ${id} is not paused (status: running)`);

    const paused = await pauseTask(h.client, id);
    expect(paused).toMatchObject({ status: 'paused', step: 2 });
    expect(await refusal(pauseTask(h.client, id))).toMatch(/is already paused: resume it with `cua resume/);
    expect(await refusal(handBackTask(h.client, id))).toBe(`task ${id} is not taken over (status: paused)`);
    const runDir = h.runDir(id);
    const status = JSON.parse(fs.readFileSync(path.join(runDir, 'solver_log/status.json'), 'utf8'));
    expect(status).toMatchObject({ status: 'running', run_status: 'paused' });
    const said = await sayToTask(h.client, id, 'The quantity is right; go ahead.');
    expect(said).toMatchObject({ status: 'paused', step: 2 });
    await expect(sayToTask(h.client, id, '   ')).rejects.toBeInstanceOf(InvalidTaskInputError);
    expect((await handle.query(statusQuery)).unreadMessages).toBe(1);

    await workers.kill(worker);
    await h.restartServer();
    worker = workers.spawn();
    try {
      expect(await resumeTask(h.client, id)).toMatchObject({ accepted: true, step: 2 });
      expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
      // The restored page: the typed value and the cookie the page's script set, on the same URL.
      expect(orders).toEqual(['3 typed=yes']);
      const step3 = h.model.requests.filter((r) => r.script === 'pause-order' && !r.subcall).at(-2);
      expect(step3?.lastUserText).toContain('The user says: The quantity is right; go ahead.');
      const run = await readRun(runDir);
      const message = run.events.find((e) => e.id === 'user-0003-followup-g0-c1');
      expect(message).toMatchObject({ message_type: 'followup_task', metadata: { kind: 'steer' } });

      // A follow-up in the same run: its first step sees the page the last one left.
      expect(await refusal(pauseTask(h.client, id))).toMatch(/has ended \(completed\)/);
      await continueTask(h.client, id, 'Is the order page still open?');
      const next = h.client.workflow.getHandle(id);
      expect((await next.result()) as TaskResult).toMatchObject({
        status: 'complete',
        answer: 'the order page is still open',
        steps: 5,
      });
      const followUp = h.model.requests.filter((r) => r.script === 'pause-order' && !r.subcall).at(-1);
      expect(followUp?.lastUserText).toMatch(/placed\nNew task from the user: Is the order page still open\?/);
      const events = (await readRun(runDir)).events;
      expect(events.find((e) => e.id === 'user-0005-followup-g0')).toMatchObject({ message_type: 'followup_task' });
    } finally {
      const stopped = new Promise<number | null>((r) => worker.once('exit', (code) => r(code)));
      worker.kill('SIGTERM');
      await stopped;
    }
  }, 300_000);
});
