// Approvals the runtime enforces (issue 43): a rule holds a shop's checkout POST before it leaves the browser until
// a person says yes. Against the real dev server, Chromium and the scripted model, on worker processes whose config
// holds POSTs to the shop's /checkout: a kill -9 while the request is held ends with one order after the approval and
// no second question; the client's approval (after an unclear reply is refused) sends it once, under a rule the task
// adds; autoReply does not approve, and a denial aborts it with the note read by the model; a changed body asks again.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyToTask } from '../../client/tasks';
import { parseJournal } from '../../src/browser/request-journal';
import type { TaskResult } from '../../src/contract/task';
import { statusQuery } from '../../workflows/messages';
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
let configFile: string;
const workers = new WorkerProcesses(() => h);
let worker: ReturnType<WorkerProcesses['spawn']> | undefined;
/** The orders the shop received: `<path> <body>`, oldest first. */
const orders: string[] = [];

/** The shop's page: a big quantity field over a big button; the form posts to `to` with a card number. */
function shopPage(to: string): string {
  return (
    '<!doctype html><title>Shop</title><body style="margin:0">' +
    `<form method="post" action="${to}"><input type="hidden" name="item" value="kettle">` +
    '<input type="hidden" name="card" value="4111111111111111">' +
    '<input id="qty" name="qty" style="display:block;box-sizing:border-box;width:100%;height:200px;font-size:48px">' +
    '<button style="display:block;width:100%;height:200px">Place the order</button></form>'
  );
}

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  shop = await startFixtureServer();
  shop.route('/shop', (_req, res, url) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(shopPage(url.searchParams.get('to') ?? '/checkout'));
  });
  for (const to of ['/checkout', '/donate']) {
    shop.route(to, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        orders.push(`${to} ${body}`);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><title>Placed</title><p>Order ${orders.length} placed.</p>`);
      });
    });
  }
  configFile = path.join(h.dir, 'approvals.config.json');
  const rule = { hosts: [`127.0.0.1:${shop.port}`], methods: ['POST'], path: '/checkout*', label: 'payment' };
  fs.writeFileSync(configFile, JSON.stringify({ approvals: [rule] }));
}, 120_000);

afterAll(async () => {
  workers.killAll();
  await shop?.close();
  await h?.close();
});

/** `cua reply <task id> <text>` as a person types it, against this harness's server and task queue. */
function cuaReply(taskId: string, text: string): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: h.server.address,
    CUA_RUNS_DIR: h.config.runsDir,
    CUA_TASK_QUEUE: h.config.taskQueue,
  };
  for (const key of ['CUA_CONFIG', 'NODE_OPTIONS']) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/cua.js'), 'reply', taskId, text], { cwd: ROOT, env });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The run's journal lines, by kind. */
function journalKinds(taskId: string): string[] {
  const text = fs.readFileSync(path.join(h.runDir(taskId), 'requests.jsonl'), 'utf8');
  return parseJournal(text).map((l) => l.kind);
}

/** The runtime's questions the run recorded. */
async function runtimeQuestions(taskId: string): Promise<number> {
  const run = await readRun(h.runDir(taskId));
  return run.events.filter(
    (e) => e.type === 'action' && (e.metadata as Record<string, unknown>)['asked_by'] === 'runtime',
  ).length;
}

/** The worker process the cases after the first run on (started by the first, else here). */
function ensureWorker(): void {
  worker ??= workers.spawn({ CUA_CONFIG: configFile });
}

/** What the model read in its `back`-th latest call of the script (1: the latest). */
const modelText = (script: string, back = 1) =>
  h.model.requests.filter((r) => r.script === script && !r.subcall).at(-back)?.lastUserText ?? '';

describe('approvals', () => {
  it('a worker killed -9 while the POST is held: after the approval one order, and no second question', async () => {
    orders.length = 0;
    const first = workers.spawn({ CUA_CONFIG: configFile });
    const handle = await h.start({
      script: 'approval-order',
      instruction: 'Order the kettle.',
      startUrl: shop.url('/shop'),
    });
    const asked = await untilWaiting(handle, 90_000);
    expect(asked.question).toMatchObject({ kind: 'approval' });
    expect(asked.question?.text).toMatch(
      new RegExp(
        `^The agent is about to send POST /checkout to 127\\.0\\.0\\.1:${shop.port} \\(label: payment\\)\\. ` +
          'Fields: item=kettle&card=\\*\\*\\*&qty=\\. Approve\\? Reply yes or no',
      ),
    );
    expect(orders).toEqual([]);
    await workers.kill(first);
    worker = workers.spawn({ CUA_CONFIG: configFile });
    // A person approves from the terminal: `cua reply`.
    const replied = await cuaReply(handle.workflowId, 'yes');
    expect(replied.code, replied.output).toBe(0);
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
    expect(orders).toEqual(['/checkout item=kettle&card=4111111111111111&qty=']);
    expect(await runtimeQuestions(handle.workflowId)).toBe(1);
    expect(journalKinds(handle.workflowId)).toEqual(['held', 'approved', 'start', 'end']);
    // The model read the question, the reply and that the same request will now go through.
    expect(modelText('approval-order', 2)).toMatch(
      /The runtime asked me: The agent is about to send POST.*\nMy reply: yes\nThe person approved it/s,
    );
    const read = spawnSync(path.join(ROOT, '.tools/venv/bin/python'), [READER, h.runDir(handle.workflowId)], {
      encoding: 'utf8',
    });
    expect(JSON.parse(read.stdout)).toMatchObject({ ok: true, errors: [] });
  }, 240_000);

  it("the client's yes sends it once under a rule the task adds; an unclear reply is refused", async () => {
    orders.length = 0;
    ensureWorker();
    const handle = await h.start({
      script: 'approval-order',
      instruction: 'Order the kettle.',
      startUrl: shop.url('/shop?to=/donate'),
      approvals: [{ hosts: ['127.0.0.1'], methods: ['POST'], path: '/donate', label: 'donation' }],
    });
    const asked = await untilWaiting(handle, 60_000);
    expect(asked.question?.text).toMatch(/POST \/donate to .* \(label: donation\)/);
    await expect(replyToTask(h.client, handle.workflowId, 'maybe later')).rejects.toThrow(/reply yes or no/);
    await replyToTask(h.client, handle.workflowId, 'Yes, go ahead');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
    expect(orders).toEqual(['/donate item=kettle&card=4111111111111111&qty=']);
    expect(modelText('approval-order', 2)).toMatch(/My reply: Yes, go ahead\nThe person approved it/);
  }, 120_000);

  it('autoReply does not approve: the task waits; a denial aborts the order and the model reads the note', async () => {
    orders.length = 0;
    ensureWorker();
    const handle = await h.start({
      script: 'approval-denied',
      instruction: 'Order the kettle.',
      startUrl: shop.url('/shop'),
      autoReply: true,
    });
    const asked = await untilWaiting(handle, 60_000);
    expect(asked.question?.kind).toBe('approval');
    await replyToTask(h.client, handle.workflowId, 'no: we have a kettle');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'not ordered' });
    expect(orders).toEqual([]);
    expect(modelText('approval-denied')).toMatch(
      /The person said no: we have a kettle\. The request was not sent; do not send it again\./,
    );
    expect(journalKinds(handle.workflowId)).toEqual(['held', 'denied']);
  }, 120_000);

  it('a changed body asks again', async () => {
    orders.length = 0;
    ensureWorker();
    const handle = await h.start({
      script: 'approval-changed',
      instruction: 'Order 5 kettles.',
      startUrl: shop.url('/shop'),
    });
    await untilWaiting(handle, 60_000);
    await replyToTask(h.client, handle.workflowId, 'yes');
    const again = await eventually(
      async () => {
        const s = await handle.query(statusQuery);
        return s.status === 'waiting_for_user' && s.question?.id !== 'q1' ? s : undefined;
      },
      60_000,
      'the second question',
    );
    expect(again.question?.text).toMatch(/Fields: item=kettle&card=\*\*\*&qty=5\./);
    expect(orders).toEqual([]);
    await replyToTask(h.client, handle.workflowId, 'yes');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered 5' });
    expect(orders).toEqual(['/checkout item=kettle&card=4111111111111111&qty=5']);
    expect(await runtimeQuestions(handle.workflowId)).toBe(2);
  }, 120_000);
});
