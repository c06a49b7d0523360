// The captcha gate's three-level policy, driven by a page that announces a solve that never finishes, on a worker whose
// gate listens to the solving messages (browser.captchaSignals, as for a remote browser that solves captchas).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskResult } from '../../src/contract/task';
import { startHarness } from './harness';
import type { Harness } from './harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  h.config.browser.captchaSignals = true;
  await h.startWorker();
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('captcha gate', () => {
  it('fails the task on the first timeout by default (raise)', async () => {
    const handle = await h.start({
      script: 'captcha-wait',
      startUrl: `${h.site.url}/captcha`,
      captcha: { waitSeconds: 1, raiseOnTimeout: true, timeoutLimit: 2 },
    });
    await expect(handle.result()).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/captcha was not solved within 1s/) },
    });
    // The model was never asked: the step stopped at the gate.
    expect(h.model.requests.filter((r) => r.script === 'captcha-wait')).toHaveLength(0);
  }, 120_000);

  it('goes on unsolved, then stops waiting after the timeout limit', async () => {
    const handle = await h.start({
      script: 'captcha-wait',
      startUrl: `${h.site.url}/captcha`,
      captcha: { waitSeconds: 1, raiseOnTimeout: false, timeoutLimit: 2 },
    });
    const started = Date.now();
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 3 });
    // Two steps waited for the gate and timed out; then the gate was switched off and the third did not wait.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    const events = (await handle.fetchHistory()).events ?? [];
    // Each step's observation: an observe's result, or (once the gate is off) the one the act before it took.
    const scheduled = new Map(
      events
        .filter((e) => ['observe', 'act'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
        .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name]),
    );
    type Observed = { captchaTimedOut: boolean };
    const timedOut = events.flatMap((e) => {
      const name = scheduled.get(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? ''));
      if (!name) return [];
      const data = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
      const result = JSON.parse(Buffer.from(data ?? '').toString('utf8')) as Observed & { next?: Observed };
      const observed = name === 'observe' ? result : result.next;
      return observed ? [observed.captchaTimedOut] : [];
    });
    expect(timedOut).toEqual([true, true, false]);
  }, 120_000);
});

describe('a worker whose browser is launched here (captchaSignals absent)', () => {
  it('never closes the gate: a page announcing a solve cannot hold or fail the task', async () => {
    await h.stopWorker();
    delete h.config.browser.captchaSignals;
    await h.startWorker();
    const handle = await h.start({
      script: 'captcha-wait',
      startUrl: `${h.site.url}/captcha`,
      captcha: { waitSeconds: 30, raiseOnTimeout: true, timeoutLimit: 2 },
    });
    const started = Date.now();
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 3 });
    // No step waited out the 30 s gate.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 120_000);
});
