// Tasks on a worker configured with browser.provider "browserbase", against a local stand-in of Browserbase's
// sessions API that hands out local Chromiums over CDP: each task gets a session of its own, released when the task
// ends (complete or failed); the captcha gate follows the console signals in its pages; the API key and connect URL
// reach neither the workflow history nor the run folder.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTCHA_SOLVING_FINISHED, CAPTCHA_SOLVING_STARTED } from '../../src/browser';
import { failedResult } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { FAST_TIMING, failureOf, startHarness } from './harness';
import type { Harness } from './harness';
import { startBrowserbaseStandIn } from '../fixtures/browserbase/server';
import type { BrowserbaseStandIn } from '../fixtures/browserbase/server';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

let h: Harness;
let bb: BrowserbaseStandIn;
let pages: FixtureServer;

beforeAll(async () => {
  [bb, pages] = await Promise.all([startBrowserbaseStandIn(), startFixtureServer()]);
  // Any click starts a captcha solve that finishes a second later (as Browserbase's solver announces it).
  pages.route('/solve-on-click', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Protected</title><p>Protected page</p><script>' +
        `addEventListener('click', () => { console.log('${CAPTCHA_SOLVING_STARTED}'); ` +
        `setTimeout(() => console.log('${CAPTCHA_SOLVING_FINISHED}'), 1000); });</script>`,
    );
  });
  h = await startHarness({ worker: false });
  h.config.browser.provider = 'browserbase';
  h.config.browser.browserbase = { apiKey: bb.apiKey, projectId: bb.projectId, baseUrl: bb.url };
  await h.startWorker();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await bb?.close();
  await pages?.close();
});

/** Every file of a run folder, as text. */
function runFolderText(taskId: string): string {
  const dir = h.runDir(taskId);
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => fs.readFileSync(f, 'latin1'))
    .join('\n');
}

describe('a worker on Browserbase', () => {
  it('runs a task in a session of its own, released when the task completes; no credential is recorded', async () => {
    const before = bb.sessions.length;
    const handle = await h.start({ script: 'book-lisbon' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'Harbor View Lisbon costs €120 per night.' });
    expect(bb.sessions.slice(before).map((s) => s.status)).toEqual(['COMPLETED']);
    expect(bb.running()).toEqual([]);
    expect(h.worker?.pool.size).toBe(0);
    const history = JSON.stringify(await handle.fetchHistory());
    const recorded = `${history}\n${runFolderText(handle.workflowId)}`;
    expect(recorded).not.toContain(bb.apiKey);
    expect(recorded).not.toContain('signingKey');
  }, 120_000);

  it('a release slower than the heartbeat timeout does not fail the task', async () => {
    const before = bb.sessions.length;
    bb.holdReleases(FAST_TIMING.heartbeatSeconds * 1000 + 2_000);
    try {
      const handle = await h.start({ script: 'click-then-finish' });
      expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'clicked' });
    } finally {
      bb.holdReleases(0);
    }
    expect(bb.sessions.slice(before).map((s) => s.status)).toEqual(['COMPLETED']);
  }, 120_000);

  it('releases the session of a task that fails', async () => {
    const before = bb.sessions.length;
    const handle = await h.start({ script: 'faults-400' });
    expect(failedResult(await failureOf(handle.result()))).toMatchObject({
      status: 'failed',
      endReason: 'model_endpoint',
    });
    expect(bb.sessions.slice(before).map((s) => s.status)).toEqual(['COMPLETED']);
    expect(bb.running()).toEqual([]);
  }, 120_000);

  it("waits at the gate while a page's captcha is solved, then goes on", async () => {
    const handle = await h.start({ script: 'click-then-finish', startUrl: pages.url('/solve-on-click') });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'clicked' });
    // The click started a solve, so the act did not observe for step 2; step 2's own observe waited at the gate:
    // the 1 s solve, then the 3 s resume delay.
    const events = (await handle.fetchHistory()).events ?? [];
    const ms = (e: (typeof events)[number] | undefined) =>
      Number(e?.eventTime?.seconds ?? 0) * 1000 + (e?.eventTime?.nanos ?? 0) / 1e6;
    const observes = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'observe');
    expect(observes).toHaveLength(2);
    const second = observes[1];
    const done = events.find(
      (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(second?.eventId),
    );
    expect(ms(done) - ms(second)).toBeGreaterThanOrEqual(3_500);
    const observed = JSON.parse(
      Buffer.from(done?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data ?? '').toString('utf8'),
    ) as { captchaTimedOut: boolean };
    expect(observed.captchaTimedOut).toBe(false);
    expect(bb.running()).toEqual([]);
  }, 120_000);
});
