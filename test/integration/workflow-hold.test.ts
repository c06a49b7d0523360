// A question keeps the live browser (browser.holdWhileWaitingSeconds, issue 25): fill a field, ask, and a quick
// reply goes on on the same page (no re-open, the page loaded once) and the typed value is submitted; a reply after
// the hold, or after the worker shut down during it, finds the browser saved and closed, and the restored page
// submits the value all the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyToTask } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { routeOrderPages } from '../fixtures/browser/order-pages';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const HOLD_SECONDS = 4;

let h: Harness;
let pages: FixtureServer;
const logLines: string[] = [];
/** Per page path: how often it was loaded, and the quantities orders arrived with. */
const loads: string[] = [];
const orders: string[] = [];

beforeAll(async () => {
  h = await startHarness({
    env: { CUA_HOLD_WHILE_WAITING_SECONDS: String(HOLD_SECONDS) },
    log: (line) => logLines.push(line),
  });
  pages = await startFixtureServer();
  routeOrderPages(pages, { loaded: () => loads.push('/order'), placed: (qty) => orders.push(qty) });
}, 120_000);

afterAll(async () => {
  await pages?.close();
  await h?.close();
});

/** The activity types the task's history scheduled, in order. */
async function scheduled(handle: Awaited<ReturnType<Harness['start']>>): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

describe('a question holds the live browser', () => {
  it('a reply within the hold goes on on the same page: nothing re-opened, the typed value submitted', async () => {
    loads.length = 0;
    orders.length = 0;
    const handle = await h.start({ script: 'fill-ask-order', instruction: 'Order 3.', startUrl: pages.url('/order') });
    await untilWaiting(handle, 60_000);
    await eventually(async () => h.worker?.pool.held === 1, 10_000, 'the session to be held');
    expect(h.worker?.pool.size).toBe(1);
    await replyToTask(h.client, handle.workflowId, 'yes');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
    expect(orders).toEqual(['3']);
    expect(loads).toEqual(['/order']); // the page was never loaded again
    const activities = await scheduled(handle);
    expect(activities.filter((a) => a === 'openSession')).toHaveLength(1);
    expect(activities).toEqual(expect.arrayContaining(['holdSession', 'reclaimSession']));
    expect(logLines.some((l) => l.includes('hold ended'))).toBe(false);
    await eventually(async () => h.worker?.pool.size === 0, 10_000, 'the session to be released at the end');
  }, 120_000);

  it('a reply after the hold: the browser was saved and closed; the restored page submits the value', async () => {
    loads.length = 0;
    orders.length = 0;
    const handle = await h.start({ script: 'fill-ask-order', instruction: 'Order 3.', startUrl: pages.url('/order') });
    await untilWaiting(handle, 60_000);
    await eventually(
      async () => logLines.some((l) => l.includes(handle.workflowId) && l.includes('hold ended (expired)')),
      30_000,
      'the hold to end',
    );
    await eventually(async () => h.worker?.pool.size === 0, 10_000, 'the held session to be closed');
    await replyToTask(h.client, handle.workflowId, 'yes');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
    expect(orders).toEqual(['3']);
    expect(loads).toEqual(['/order', '/order']); // loaded again by the restore
    const activities = await scheduled(handle);
    expect(activities.filter((a) => a === 'openSession')).toHaveLength(2);
  }, 120_000);

  it('the worker shuts down during the hold: the page is saved; the reply finds the session gone and restores it', async () => {
    loads.length = 0;
    orders.length = 0;
    const handle = await h.start({ script: 'fill-ask-order', instruction: 'Order 3.', startUrl: pages.url('/order') });
    await untilWaiting(handle, 60_000);
    await eventually(async () => h.worker?.pool.held === 1, 10_000, 'the session to be held');
    await h.stopWorker();
    expect(logLines.some((l) => l.includes(handle.workflowId) && l.includes('hold ended (shutdown)'))).toBe(true);
    await h.startWorker();
    // The reclaim goes to the stopped worker's queue: no one takes it (schedule-to-start timeout), a lost session.
    await replyToTask(h.client, handle.workflowId, 'yes');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
    expect(orders).toEqual(['3']);
    expect(loads).toEqual(['/order', '/order']);
    const activities = await scheduled(handle);
    expect(activities.filter((a) => a === 'openSession')).toHaveLength(2);
    expect(activities).toContain('reclaimSession');
  }, 120_000);
});
