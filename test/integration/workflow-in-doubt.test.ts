// A form post in doubt after a lost worker is never sent twice (issue 25): the worker is killed -9 while the order's
// POST is in flight (the shop has it, no answer yet). The new worker restores the page and tells the model the click
// may or may not have taken effect; the model clicks the button again, the same POST is held back, and the runtime
// asks the user instead. After the reply the task completes, and the shop saw exactly one order.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyToTask } from '../../client/tasks';
import { parseJournal } from '../../src/browser/request-journal';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

const ROOT = path.resolve(__dirname, '../..');
const READER = path.join(ROOT, 'test/fixtures/format-reader/reader.py');

let h: Harness;
let shop: FixtureServer;
const workers = new WorkerProcesses(() => h);
/** The bodies of the orders the shop received, oldest first. */
const orders: string[] = [];
/** Orders the shop never answers (the first worker dies waiting). */
const pending: ServerResponse[] = [];

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  shop = await startFixtureServer();
  shop.route('/shop', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Shop</title><body style="margin:0"><form method="post" action="/order">' +
        '<input type="hidden" name="item" value="kettle"><input type="hidden" name="qty" value="3">' +
        '<button style="display:block;width:100%;height:300px">Place the order</button></form>',
    );
  });
  shop.route('/order', (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      orders.push(`${req.method} ${body}`);
      pending.push(res); // the shop is slow: no answer while the test runs
    });
  });
}, 120_000);

afterAll(async () => {
  workers.killAll();
  for (const res of pending) res.destroy();
  await shop?.close();
  await h?.close();
});

describe('a worker killed -9 while a form POST is in flight', () => {
  it('the POST reaches the shop once: the resend is held back and the user asked; the task completes', async () => {
    const first = workers.spawn();
    const handle = await h.start({
      script: 'order-in-doubt',
      instruction: 'Order the kettle.',
      startUrl: shop.url('/shop'),
      // A deny rule makes the URL policy intercept: the journal's entry is written before the POST leaves.
      urlPolicy: { denyHosts: ['blocked.invalid'] },
    });
    await eventually(async () => orders.length > 0, 60_000, 'the shop to receive the order');
    const runDir = h.runDir(handle.workflowId);
    const journalFile = path.join(runDir, 'requests.jsonl');
    expect(parseJournal(fs.readFileSync(journalFile, 'utf8'))).toEqual([
      expect.objectContaining({ kind: 'start', method: 'POST', body_preview: 'item=kettle&qty=3', step: 1 }),
    ]);
    await workers.kill(first);
    const second = workers.spawn();
    try {
      const status = await untilWaiting(handle, 90_000);
      expect(status.question?.text).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/order \(item=kettle&qty=3\), sent at/);
      // Asked, not sent: the shop still has the one order.
      expect(orders).toEqual(['POST item=kettle&qty=3']);
      await replyToTask(h.client, handle.workflowId, 'Do not send it again; I will look at my orders myself.');
      expect((await handle.result()) as TaskResult).toMatchObject({
        status: 'complete',
        answer: 'left for the user to check',
      });
    } finally {
      const stopped = new Promise<number | null>((r) => second.once('exit', (code) => r(code)));
      second.kill('SIGTERM');
      await stopped;
    }
    expect(orders).toEqual(['POST item=kettle&qty=3']);

    const run = await readRun(runDir);
    // The note the model read with the step's new observation: the click and the POST in doubt, and the page.
    const note = run.events.find((e) => (e.metadata as { note?: string } | undefined)?.note === 'session_restored');
    expect(note?.metadata).toMatchObject({
      in_doubt: {
        action: 'left_click (500, 150)',
        requests: [{ method: 'POST', body_preview: 'item=kettle&qty=3' }],
        page: { title: 'Shop' },
      },
    });
    const redecided = h.model.requests.filter((r) => r.script === 'order-in-doubt' && !r.subcall)[1];
    expect(redecided?.lastUserText).toMatch(/left_click \(500, 150\), started at .* may or may not have taken effect/);
    // The runtime's question: an ask_user_question of its own, with no model call, then the user's reply.
    const asked = run.events.find((e) => e.type === 'action' && e.action_name === 'ask_user_question');
    expect(asked).toMatchObject({
      metadata: { asked_by: 'runtime' },
      llm_conversation: { messages: [] },
    });
    const after = run.events.slice(run.events.indexOf(asked!) + 1);
    expect(after[0]).toMatchObject({ observation_type: 'user_message', message_type: 'critical_point_response' });
    // The model read the question and the reply with its next step.
    expect(h.model.requests.filter((r) => r.script === 'order-in-doubt').at(-1)?.lastUserText).toMatch(
      /The runtime asked me: .*POST.*\nMy reply: Do not send it again/s,
    );
    // The journal: the start, no end (the worker died), the held-back resend, the user's resolution.
    const kinds = parseJournal(fs.readFileSync(journalFile, 'utf8')).map((l) => l.kind);
    expect(kinds).toEqual(['start', 'held', 'resolved']);
    // The run folder, the runtime's question included, loads in the reader written from the field contract alone
    // (docs/architecture.md#the-run-folder-format).
    const read = spawnSync(path.join(ROOT, '.tools/venv/bin/python'), [READER, runDir], { encoding: 'utf8' });
    expect(JSON.parse(read.stdout)).toMatchObject({ ok: true, errors: [] });
  }, 300_000);
});
