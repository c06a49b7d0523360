// Notifications (issue 26): a worker with a webhook tells a local receiver when a task waits for a reply, completes,
// fails or is cancelled; the receiver verifies every request's signature with the exported verifyWebhookSignature.
// A notification is a child workflow the task does not wait for: a 500 is retried, a 4xx is not, and a receiver that
// is down does not delay the task. Neither the secret nor the URL enters workflow history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { continueTask, pauseTask, resumeTask } from '../../client/control';
import { cancelTask, replyToTask } from '../../client/tasks';
import { statusQuery } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import type { WebhookBody } from '../../src/notify/body';
import { postWebhook, WebhookDeliveryError, WebhookRefusedError } from '../../src/notify/send';
import { NOTIFY_PATCH } from '../../workflows/notify';
import { startFixtureServer } from '../fixtures/browser/server';
import { routeKettleShop } from '../fixtures/browser/order-pages';
import { WebhookReceiver } from '../fixtures/webhook/server';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const BODY: WebhookBody = {
  event: 'completed',
  delivery_id: 'send-test-notify-completed-1',
  task_id: 'send-test',
  status: 'complete',
  step: 2,
  answer: 'done',
  at: '2026-11-30T10:00:00.000Z',
  instruction: 'Do it.',
};

describe('postWebhook: what an answer means for a retry (a local receiver)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
  });
  const target = () => ({ url: receiver.url, secret: receiver.secret, timeoutMs: 2000 });

  it.each([200, 202, 204])('%d: delivered, with a signature the receiver verifies', async (status) => {
    receiver.respond = () => status;
    await expect(postWebhook(target(), BODY)).resolves.toBe(status);
    expect(receiver.received.at(-1)?.verified.ok).toBe(true);
    expect(receiver.received.at(-1)?.body).toEqual(BODY);
  });

  it.each([500, 502, 503, 408, 429])('%d: may pass, so it is retried (WebhookDeliveryError)', async (status) => {
    receiver.respond = () => status;
    const err = await postWebhook(target(), BODY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookDeliveryError);
    expect(String(err)).toMatch(new RegExp(`webhook http://127\\.0\\.0\\.1:\\d+ answered ${status}`));
  });

  it.each([400, 401, 404, 410, 302])('%d: refused, not retried (WebhookRefusedError)', async (status) => {
    receiver.respond = () => status;
    const err = await postWebhook(target(), BODY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookRefusedError);
    expect((err as Error).name).toBe('WebhookRefusedError');
    if (status === 302) expect(String(err)).toMatch(/redirects are not followed/);
  });

  it('no answer within the timeout: retried', async () => {
    receiver.respond = () => null;
    const err = await postWebhook({ ...target(), timeoutMs: 300 }, BODY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookDeliveryError);
    expect(String(err)).toMatch(/no answer within 0\.3 s/);
  });

  it("a port that refuses connections: retried; the message names the URL's origin, never its path", async () => {
    const down = await WebhookReceiver.start();
    await down.close();
    const err = await postWebhook({ url: down.url, secret: down.secret, timeoutMs: 2000 }, BODY).catch((e) => e);
    expect(err).toBeInstanceOf(WebhookDeliveryError);
    expect(String(err)).toMatch(/ECONNREFUSED/);
    expect(String(err)).not.toMatch(/private-path/);
  });
});

describe('notifications of a task (dev server)', () => {
  let h: Harness;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    h = await startHarness({ env: { CUA_WEBHOOK_URL: receiver.url, CUA_WEBHOOK_SECRET: receiver.secret } });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  /** The verified notifications of a task's event, once `count` of them arrived. */
  const received = (taskId: string, event: string, count = 1) =>
    eventually(
      async () => {
        const got = receiver.of(taskId).filter((r) => r.body.event === event);
        return got.length >= count && got;
      },
      30_000,
      `${count} ${event} notification(s) of ${taskId}`,
    );

  /** A workflow's history as bytes (payloads are JSON inside), to look for what must not be there. */
  const historyText = async (handle: WorkflowHandle) =>
    Buffer.from(temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish()).toString('latin1');

  it('a task that asks, then completes: waiting (the question, the reply command), then completed (the answer)', async () => {
    receiver.respond = () => 200;
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    const id = handle.workflowId;
    await untilWaiting(handle);
    const [waiting] = await received(id, 'waiting');
    expect(waiting?.verified.ok).toBe(true);
    expect(waiting?.headers['x-cua-event']).toBe('waiting');
    expect(waiting?.headers['x-cua-delivery']).toBe(`${id}-notify-waiting-1`);
    expect(waiting?.body).toEqual({
      event: 'waiting',
      delivery_id: `${id}-notify-waiting-1`,
      task_id: id,
      status: 'waiting_for_user',
      step: 1,
      question: 'Which city should I search in?',
      question_id: 'q1',
      question_kind: 'model',
      reply_command: `npx cua reply ${id} "<your reply>" --question q1`,
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      instruction: 'Search hotels in the city I want.',
    });

    // Answer the way the reply command says (its task id and question id).
    const [, taskId, questionId] = /^npx cua reply (\S+) ".*" --question (\S+)$/.exec(waiting!.body.reply_command!)!;
    await replyToTask(h.client, taskId!, 'Lisbon', questionId);
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'Searched Lisbon as you asked.' });
    const [completed] = await received(id, 'completed');
    expect(completed?.verified.ok).toBe(true);
    expect(completed?.body).toMatchObject({
      event: 'completed',
      delivery_id: `${id}-notify-completed-2`,
      status: 'complete',
      step: 4,
      answer: 'Searched Lisbon as you asked.',
      end_reason: 'complete',
    });
    expect(completed?.body).not.toHaveProperty('question');
    expect(receiver.of(id)).toHaveLength(2);

    // The notifications were child workflows, done; the task's history holds the patch marker, and neither it nor a
    // notification's history holds the secret or the webhook's URL.
    const child = h.client.workflow.getHandle(`${id}-notify-completed-2`);
    await expect(child.result()).resolves.toBeUndefined();
    for (const text of [await historyText(handle), await historyText(child)]) {
      expect(text).not.toContain(receiver.secret);
      expect(text).not.toContain('private-path');
    }
    expect(await historyText(handle)).toContain(NOTIFY_PATCH);
  });

  it('a request held for approval: waiting, with the question kind `approval`; the yes sends it', async () => {
    receiver.respond = () => 200;
    const orders: string[] = [];
    const shop = await startFixtureServer();
    try {
      routeKettleShop(shop, ({ method }) => orders.push(method));
      const handle = await h.start({
        script: 'approval-order',
        instruction: 'Order the kettle.',
        startUrl: shop.url('/shop'),
        approvals: [{ hosts: ['127.0.0.1'], methods: ['POST'], path: '/checkout', label: 'payment' }],
      });
      const id = handle.workflowId;
      const asked = await untilWaiting(handle);
      const [waiting] = await received(id, 'waiting');
      expect(waiting?.verified.ok).toBe(true);
      expect(waiting?.body).toMatchObject({
        event: 'waiting',
        status: 'waiting_for_user',
        question: asked.question?.text,
        question_id: asked.question?.id,
        question_kind: 'approval',
      });
      expect(waiting?.body.question).toMatch(
        /^The agent is about to send POST \/checkout to 127\.0\.0\.1:\d+ \(label: payment\)/,
      );
      expect(orders).toEqual([]);
      await replyToTask(h.client, id, 'yes', asked.question?.id);
      expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'ordered' });
      expect(orders).toEqual(['POST']);
    } finally {
      await shop.close();
    }
  });

  it('a paused task: paused; its follow-up run notifies apart from the first run', async () => {
    receiver.respond = () => 200;
    const handle = await h.start({ script: 'pause-order', instruction: 'Order 3.' });
    const id = handle.workflowId;
    await eventually(async () => (await handle.query(statusQuery)).step === 2, 60_000, 'step 2');
    await pauseTask(h.client, id);
    const [paused] = await received(id, 'paused');
    expect(paused?.verified.ok).toBe(true);
    expect(paused?.body).toMatchObject({ event: 'paused', status: 'paused', step: 2 });
    await resumeTask(h.client, id);
    await handle.result();
    await received(id, 'completed');
    await continueTask(h.client, id, 'Is the order page still open?');
    await h.client.workflow.getHandle(id).result();
    const [, second] = await received(id, 'completed', 2);
    expect(second?.body).toMatchObject({ delivery_id: `${id}-followup5-notify-completed-1`, step: 5 });
  }, 120_000);

  it('a task whose question times out: failed, with the error and the end reason', async () => {
    const handle = await h.start({ script: 'ask-city', askTimeoutSeconds: 1 });
    await handle.result().catch(() => undefined);
    const [failed] = await received(handle.workflowId, 'failed');
    expect(failed?.verified.ok).toBe(true);
    expect(failed?.body).toMatchObject({
      status: 'failed',
      error: 'no reply within 1s',
      end_reason: 'ask_timeout',
      delivery_id: `${handle.workflowId}-notify-failed-2`,
    });
    expect(failed?.body).not.toHaveProperty('question');
  });

  it('a task cancelled while it waits: cancelled', async () => {
    const handle = await h.start({ script: 'ask-city' });
    await received(handle.workflowId, 'waiting');
    await cancelTask(h.client, handle.workflowId);
    const [cancelled] = await received(handle.workflowId, 'cancelled');
    expect(cancelled?.body).toMatchObject({ status: 'cancelled', end_reason: 'cancelled' });
    expect(cancelled?.body).not.toHaveProperty('reply_command');
  });

  it('a task that continued as new still notifies (the events its worker wants are carried over)', async () => {
    const handle = await h.start({ script: 'click-then-finish', continueAsNewAfterSteps: 1 });
    expect(await handle.result()).toMatchObject({ status: 'complete', steps: 2 });
    expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
    const [completed] = await received(handle.workflowId, 'completed');
    expect(completed?.body).toMatchObject({ delivery_id: `${handle.workflowId}-notify-completed-1`, step: 2 });
  });

  it('a receiver that answers 500 the first time gets the notification again (retried by Temporal)', async () => {
    receiver.respond = (_body, attempt) => (attempt === 1 ? 500 : 200);
    const handle = await h.start({ script: 'click-then-finish' });
    await handle.result();
    const tries = await received(handle.workflowId, 'completed', 2);
    expect(tries.map((r) => [r.status, r.verified.ok, r.body.delivery_id])).toEqual([
      [500, true, `${handle.workflowId}-notify-completed-1`],
      [200, true, `${handle.workflowId}-notify-completed-1`],
    ]);
    await expect(h.client.workflow.getHandle(tries[0]!.body.delivery_id).result()).resolves.toBeUndefined();
  });

  it('a receiver that refuses (400) is not asked again; the task is not affected', async () => {
    receiver.respond = () => 400;
    const handle = await h.start({ script: 'click-then-finish' });
    expect(((await handle.result()) as TaskResult).status).toBe('complete');
    const child = h.client.workflow.getHandle(`${handle.workflowId}-notify-completed-1`);
    const err = await child.result().then(
      () => null,
      (e: unknown) => e,
    );
    // WorkflowFailedError ← ActivityFailure ← the activity's refusal, final on its first attempt.
    const refusal = (err as { cause?: { cause?: unknown } } | null)?.cause?.cause;
    expect(refusal).toMatchObject({ type: 'WebhookRefusedError', nonRetryable: true });
    expect(String(refusal)).toMatch(/answered 400 Bad Request/);
    expect(receiver.of(handle.workflowId)).toHaveLength(1);
  });

  // Last: the receiver stays down from here on.
  it('a receiver that is down does not delay the task: it completes while its notification is still retried', async () => {
    await receiver.close();
    const started = Date.now();
    const handle = await h.start({ script: 'click-then-finish' });
    expect(((await handle.result()) as TaskResult).status).toBe('complete');
    const took = Date.now() - started;
    const child = h.client.workflow.getHandle(`${handle.workflowId}-notify-completed-1`);
    const pending = await eventually(
      async () => {
        const d = await child.describe();
        const activity = d.raw.pendingActivities?.[0];
        return d.status.name === 'RUNNING' && (activity?.attempt ?? 0) >= 2 && activity;
      },
      20_000,
      'the notification to be retried',
    );
    expect(pending.lastFailure?.message).toMatch(/ECONNREFUSED/);
    // Two steps of a scripted model: seconds, with nothing waited for the webhook.
    expect(took).toBeLessThan(20_000);
    await child.terminate('test over');
  });
});
