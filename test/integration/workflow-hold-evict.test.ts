// A held browser gives its slot up when the pool is needed (issue 25): on a worker with one browser, task A fills a
// field and asks (its browser held); task B starts and its open finds the pool full of held browsers, so A's page is
// saved and its browser closed. B runs to its end; A's reply re-opens a browser, restores the page, and the typed
// value is still submitted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyToTask } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { routeOrderPages } from '../fixtures/browser/order-pages';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

let h: Harness;
let pages: FixtureServer;
const logLines: string[] = [];
const orders: string[] = [];

beforeAll(async () => {
  h = await startHarness({
    env: { CUA_HOLD_WHILE_WAITING_SECONDS: '600', CUA_MAX_SESSIONS: '1' },
    log: (line) => logLines.push(line),
  });
  pages = await startFixtureServer();
  routeOrderPages(pages, { placed: (qty) => orders.push(qty) });
}, 120_000);

afterAll(async () => {
  await pages?.close();
  await h?.close();
});

describe('a pool full of held browsers', () => {
  it("an open takes the held browser's slot (its page saved); the held task's reply restores it", async () => {
    const a = await h.start({ script: 'fill-ask-order', instruction: 'Order 3.', startUrl: pages.url('/order') });
    await untilWaiting(a, 60_000);
    await eventually(async () => h.worker?.pool.held === 1, 10_000, "A's browser to be held");

    const b = await h.start({ script: 'click-then-finish', instruction: 'Click, then finish.' });
    expect((await b.result()) as TaskResult).toMatchObject({ status: 'complete' });
    expect(logLines.some((l) => l.includes(a.workflowId) && l.includes('hold ended (pool_needed)'))).toBe(true);

    await replyToTask(h.client, a.workflowId, 'yes');
    expect((await a.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'ordered' });
    expect(orders).toEqual(['3']);
  }, 180_000);
});
