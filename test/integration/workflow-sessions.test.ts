// Browser sessions as a shared resource: a full pool makes a task wait in line for a slot instead of failing, and a
// start page that cannot be loaded fails the task at once with a clear error.
import { describe, expect, it } from 'vitest';
import { viewTask } from '../../client/tasks';
import { readRun } from '../../src/trajectory/reader';
import type { TaskResult } from '../../src/contract/task';
import { useHarness } from './use-harness';
import { eventually } from './harness';
import type { Harness } from './harness';

let h: Harness;
useHarness((x) => (h = x), { env: { CUA_MAX_SESSIONS: '1' } });

describe('browser sessions', () => {
  it('two tasks on a worker with one browser slot both complete, one after the other', async () => {
    const [a, b] = await Promise.all([h.start({ script: 'book-lisbon' }), h.start({ script: 'book-lisbon' })]);
    const results = (await Promise.all([a.result(), b.result()])) as TaskResult[];
    expect(results.map((r) => r.status)).toEqual(['complete', 'complete']);
    expect(h.worker?.pool.size).toBe(0);
    // One of them found the pool full and waited in line: its first open attempt got the browser the other released
    // (handed over, not raced for by a retry). Told by the order of the server's event times, not by durations: it
    // began to wait before the other task's release was scheduled and got its browser only after that.
    const timeline = await Promise.all(
      [a, b].map(async (handle) => {
        const events = (await handle.fetchHistory()).events ?? [];
        const ms = (e: (typeof events)[number] | undefined) =>
          Number(e?.eventTime?.seconds ?? 0) * 1000 + (e?.eventTime?.nanos ?? 0) / 1e6;
        const scheduled = (type: string) =>
          events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
        const open = scheduled('openSession');
        const openStarted = events.find(
          (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '') === String(open?.eventId),
        );
        const openDone = events.find(
          (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(open?.eventId),
        );
        return {
          attempts: openStarted?.activityTaskStartedEventAttributes?.attempt ?? 0,
          openAt: ms(open),
          openDoneAt: ms(openDone),
          releaseAt: ms(scheduled('releaseSession')),
        };
      }),
    );
    const [first, second] = [...timeline].sort((x, y) => x.openDoneAt - y.openDoneAt);
    expect(second!.openAt).toBeLessThan(first!.releaseAt); // waiting while the other ran
    expect(second!.openDoneAt).toBeGreaterThanOrEqual(first!.releaseAt); // the browser came with the release
    expect(timeline.every((t) => t.attempts === 1)).toBe(true);
  }, 180_000);

  it('a task beyond the session limit waits as long as it takes, and its status says it is queued', async () => {
    const a = await h.start({ script: 'book-lisbon-slow' });
    await eventually(async () => (h.worker?.pool.size ?? 0) === 1, 30_000, 'the first task to hold the browser');
    const b = await h.start({ script: 'book-lisbon' });
    // Queued, not failing: its open waits in line while the pool is full, and the view says so.
    const waiting = await eventually(
      async () => (await viewTask(h.client, b.workflowId)).waitingForSession ?? undefined,
      30_000,
      'the second task to report waiting for a session',
    );
    expect(waiting.attempts).toBeGreaterThanOrEqual(1);
    expect(waiting.since).not.toBeNull();
    const results = (await Promise.all([a.result(), b.result()])) as TaskResult[];
    expect(results.map((r) => r.status)).toEqual(['complete', 'complete']);
    expect((await viewTask(h.client, b.workflowId)).waitingForSession).toBeNull();
  }, 180_000);

  it('a start page that cannot be loaded fails the task with a clear error', async () => {
    const handle = await h.start({ script: 'book-lisbon', startUrl: 'http://127.0.0.1:9/' });
    await expect(handle.result()).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/127\.0\.0\.1:9/) },
    });
    const run = await readRun(h.runDir(handle.workflowId));
    expect(run.status).toBe('failed');
  }, 120_000);
});
