// A takeover outlives the worker that granted it (issue 26): the worker holding the leased browser is killed -9; at
// its next check of the lease the workflow re-opens the session on another worker (the page restored from its
// checkpoint) and grants the same lease there, at a new address the status query shows; a person connects to it, and
// the handback goes on as usual.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handBackTask, takeOverTask } from '../../client/control';
import { statusQuery } from '../../workflows/messages';
import type { TakeoverLease, TaskResult } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { FAST_TIMING, eventually, startHarness } from './harness';
import type { Harness } from './harness';
import { Viewer, isFrame } from './takeover-viewer';
import { WorkerProcesses } from './worker-processes';
import type { ServerMessage } from '../../src/browser/takeover/protocol';

type Frame = Extract<ServerMessage, { type: 'frame' }>;

let h: Harness;
let pages: FixtureServer;
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  pages = await startFixtureServer();
  pages.route('/search', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<title>Search form</title><form action="/results"><input id="q" name="q"></form>');
  });
}, 120_000);

afterAll(async () => {
  workers.killAll();
  await pages?.close();
  await h?.close();
});

const socketOf = (lease: TakeoverLease) => lease.url.replace(/^http/, 'ws').replace('?token=', '/ws?token=');

describe('a takeover whose worker is lost', () => {
  it('the same lease is granted again on a new worker, with the page restored', async () => {
    const first = workers.spawn();
    const handle = await h.start({
      script: 'takeover-search',
      instruction: 'Search for kettles.',
      startUrl: pages.url('/search'),
      timing: { ...FAST_TIMING, leaseCheckSeconds: 2 },
    });
    await eventually(async () => (await handle.query(statusQuery)).step === 1, 60_000, 'step 1');
    const lease = await takeOverTask(h.client, handle.workflowId);
    const viewer = await Viewer.open(socketOf(lease));
    await viewer.next(isFrame);
    await workers.kill(first);
    const second = workers.spawn();
    try {
      const moved = await eventually(
        async () => {
          const s = await handle.query(statusQuery);
          const now = s.takeover && 'url' in s.takeover ? s.takeover : undefined;
          return now && now.url !== lease.url ? now : undefined;
        },
        90_000,
        'the lease to be granted again',
      );
      expect(moved).toMatchObject({ leaseId: lease.leaseId, since: lease.since });
      expect((await handle.query(statusQuery)).status).toBe('taken_over');
      const again = await Viewer.open(socketOf(moved));
      // The restored page (the screencast's frames carry its URL and title).
      const frame = await again.next((m): m is Frame => isFrame(m) && m.title !== '');
      expect(frame).toMatchObject({ title: 'Search form', url: pages.url('/search') });
      await again.close();
      await handBackTask(h.client, handle.workflowId, { note: 'Nothing to do.' });
      expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'searched' });
      const prompt = h.model.requests.filter((r) => r.script === 'takeover-search').at(-1)?.lastUserText;
      expect(prompt).toContain('Their note: Nothing to do.');
    } finally {
      const stopped = new Promise<number | null>((r) => second.once('exit', (code) => r(code)));
      second.kill('SIGTERM');
      await stopped;
    }
  }, 240_000);
});
