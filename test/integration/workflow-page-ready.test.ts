// The page-ready wait inside a task: an act whose page holds DOMContentLoaded far longer than the activity heartbeat
// timeout (but less than the worker's page-ready cap) keeps heartbeating, completes, and sees the loaded page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRun } from '../../src/trajectory/reader';
import type { TaskResult } from '../../src/contract/task';
import { FAST_TIMING, startHarness } from './harness';
import type { Harness } from './harness';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

/** How long the held page's parser-blocking script is held: well past the 3 s heartbeat timeout of FAST_TIMING. */
const HOLD_MS = 12_000;
const READY_CAP_SECONDS = 30;

let h: Harness;
let pages: FixtureServer;
/** What became of each held script request: served after the hold, or dropped by the browser first. */
const held: string[] = [];

beforeAll(async () => {
  pages = await startFixtureServer();
  // A link over the whole viewport (any click follows it) to a page whose DOMContentLoaded waits for the held script.
  pages.route('/start', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Start</title>' +
        `<a href="/held" style="position:fixed;inset:0;display:block">open the slow page</a>`,
    );
  });
  pages.route('/held', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Held</title><script src="/held-script"></script><p id="after">after</p>');
  });
  pages.route('/held-script', (_req, res) => {
    const timer = setTimeout(() => {
      held.push('served');
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end("document.title = 'loaded';");
    }, HOLD_MS);
    res.on('close', () => {
      if (!res.writableEnded) held.push('dropped');
      clearTimeout(timer);
    });
  });
  h = await startHarness({ worker: false });
  h.config.browser.pageReadyTimeoutSeconds = READY_CAP_SECONDS;
  await h.startWorker();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await pages?.close();
});

describe('page ready in a task', () => {
  it('an act waiting for a held DOMContentLoaded keeps heartbeating past the heartbeat timeout and completes', async () => {
    const handle = await h.start({ script: 'click-then-finish', startUrl: pages.url('/start') });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'clicked' });

    const events = (await handle.fetchHistory()).events ?? [];
    const ms = (e: (typeof events)[number] | undefined) =>
      Number(e?.eventTime?.seconds ?? 0) * 1000 + (e?.eventTime?.nanos ?? 0) / 1e6;
    const act = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'act');
    const done = events.find(
      (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(act?.eventId),
    );
    expect(done).toBeDefined();
    // The click's act lasted the whole hold, several heartbeat timeouts, in one attempt with no timeout.
    expect(ms(done) - ms(act)).toBeGreaterThan(HOLD_MS - 500);
    expect(ms(done) - ms(act)).toBeGreaterThan(3 * FAST_TIMING.heartbeatSeconds * 1000);
    expect(events.filter((e) => e.activityTaskTimedOutEventAttributes || e.activityTaskFailedEventAttributes)).toEqual(
      [],
    );
    // The wait ended with DOMContentLoaded (the script was served), not with the cap stopping the load.
    expect(held).toEqual(['served']);
    const posts = (await readRun(h.runDir(handle.workflowId))).events.filter(
      (e) => e.type === 'observation' && e.observation_type === 'environment' && e.id.includes('post'),
    );
    // The click's post observation (the first) is of the loaded page.
    const first = posts[0];
    expect(first?.type === 'observation' && first.observation_type === 'environment' && first.url).toBe(
      pages.url('/held'),
    );
  }, 120_000);
});
