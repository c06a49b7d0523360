// Schedules and monitors on the real dev server (issue 45): a schedule every few seconds runs a task against a local
// page whose price the test changes; its monitor sends exactly one monitor_changed notification, with the old and
// new price, although a worker is killed -9 and the server restarted in between. A condition notifies when it
// becomes true, not while it stays true. A backfill runs the times the schedule missed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../client/client';
import type { NewTask } from '../../client/client';
import { readRun } from '../../src/trajectory/reader';
import { WebhookReceiver } from '../fixtures/webhook/server';
import { FAST_TIMING, eventually, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

describe('schedules and their monitors (dev server)', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  let agent: AgentClient;
  const processes = new WorkerProcesses(() => h);
  let price = 120;
  let page: http.Server;
  let pageUrl = '';
  let worker: ReturnType<WorkerProcesses['spawn']>;
  const webhookEnv = () => ({ CUA_WEBHOOK_URL: receiver.url, CUA_WEBHOOK_SECRET: receiver.secret });

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    h = await startHarness({ worker: false, env: webhookEnv() });
    await processes.prepare();
    worker = processes.spawn(webhookEnv());
    agent = new AgentClient(h.client, h.config.taskQueue);
    page = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<html><body><h1>Harbor View</h1><p>Price: <span id="price">${price}</span> EUR</p></body></html>`);
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  }, 120_000);
  afterAll(async () => {
    processes.killAll();
    await h?.close();
    await receiver?.close();
    page?.close();
  });

  const task = (over: Partial<NewTask> = {}): Omit<NewTask, 'id'> => ({
    instruction: 'Read the nightly price.',
    startUrl: pageUrl,
    timing: FAST_TIMING,
    model: { endpoint: 'default', baseUrl: h.model.url, model: 'read-price' },
    ...over,
  });
  const monitorReports = (name: string, n: number) =>
    eventually(
      async () => {
        const m = (await agent.describeSchedule(name)).monitor;
        return m !== null && m.reports >= n && m;
      },
      60_000,
      `${n} report(s) to the monitor of ${name}`,
    );
  const deliveries = (event: string, prefix: string) => [
    ...new Set(
      receiver.received
        .filter((r) => r.body.event === event && r.body.task_id.startsWith(prefix))
        .map((r) => r.body.delivery_id),
    ),
  ];

  it('changed: three runs, the price changed once: one notification with old and new, across a kill -9 and a restart', async () => {
    const name = `prices-${Date.now().toString(36)}`;
    const schema = { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] };
    await agent.createSchedule(name, task({ outputSchema: schema }), { every: '4s', notifyWhen: 'changed' });
    await monitorReports(name, 1);
    price = 95;
    await processes.kill(worker);
    worker = processes.spawn(webhookEnv());
    await monitorReports(name, 2);
    await h.restartServer();
    const m = await monitorReports(name, 3);
    await agent.pauseSchedule(name);

    expect(m.notifications).toHaveLength(1);
    const [n] = m.notifications;
    expect(n).toMatchObject({ old: { price: 120 }, new: { price: 95 } });
    const sent = await eventually(
      async () =>
        deliveries('monitor_changed', name).length > 0 &&
        receiver.received.filter((r) => r.body.event === 'monitor_changed' && r.body.task_id.startsWith(name)),
      30_000,
      'the notification',
    );
    expect(deliveries('monitor_changed', name)).toEqual([n!.deliveryId]);
    expect(sent[0]?.verified.ok).toBe(true);
    expect(sent[0]?.body).toMatchObject({
      event: 'monitor_changed',
      task_id: n!.taskId,
      schedule: name,
      condition: 'changed',
      old_value: { price: 120 },
      new_value: { price: 95 },
    });
    // Each run is an ordinary task named by its schedule, with the CuaSchedule search attribute.
    const d = await agent.describeSchedule(name);
    expect(d.runs.length).toBeGreaterThanOrEqual(3);
    for (const r of d.runs) expect(r.id).toMatch(new RegExp(`^${name}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
    expect(d.runs.find((r) => r.id === n!.taskId)).toMatchObject({
      status: 'complete',
      output: { value: { price: 95 } },
    });
    const desc = await h.client.workflow.getHandle(n!.taskId).describe();
    expect(desc.searchAttributes.CuaSchedule).toEqual([name]);
    // The notification is noted in the run's folder.
    const run = await readRun(h.runDir(n!.taskId));
    expect(run.events.find((e) => e.id.includes('-monitor-'))).toMatchObject({ metadata: { note: 'monitor' } });
    // The run's own `completed` webhook carries its output.
    const completed = await eventually(
      async () => receiver.received.find((r) => r.body.event === 'completed' && r.body.task_id === n!.taskId),
      30_000,
      "the run's completed notification",
    );
    expect(completed.body).toMatchObject({ output: { price: 95 }, output_partial: false });
    await agent.deleteSchedule(name);
  }, 90_000);

  it('a condition notifies when it becomes true, not while it stays true', async () => {
    const name = `done-${Date.now().toString(36)}`;
    await agent.createSchedule(name, task(), { every: '3s', notifyWhen: 'status == "complete"' });
    const m = await monitorReports(name, 2);
    await agent.deleteSchedule(name);
    expect(m.runs.map((r) => r.verdict).slice(0, 2)).toEqual(['became_true', 'still_true']);
    expect(m.notifications).toHaveLength(1);
    await eventually(async () => deliveries('monitor_changed', name).length === 1, 30_000, 'the notification');
    const sent = receiver.received.find((r) => r.body.event === 'monitor_changed' && r.body.task_id.startsWith(name));
    expect(sent?.body).toMatchObject({
      task_id: m.notifications[0]?.taskId,
      event: 'monitor_changed',
      old_value: null,
      new_value: 'Read the price.',
    });
  }, 60_000);

  it('a backfill runs the missed times, one after another', async () => {
    const name = `missed-${Date.now().toString(36)}`;
    await agent.createSchedule(name, task(), { every: '1h', paused: true });
    await agent.backfillSchedule(name, '2025-01-01T09:30:00Z', '2025-01-01T12:30:00Z');
    const ids = ['10', '11', '12'].map((hh) => `${name}-2025-01-01T${hh}:00:00Z`);
    const results = await Promise.all(ids.map((id) => eventually(async () => agent.result(id), 60_000, id)));
    expect(results.map((r) => r.status)).toEqual(['complete', 'complete', 'complete']);
    await agent.deleteSchedule(name);
  }, 80_000);
});
