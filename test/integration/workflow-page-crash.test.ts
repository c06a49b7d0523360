// A worker killed -9 while the model decides the step after a sign-in: the new worker's browser is still signed in,
// because every act leaves a page checkpoint (cookies included) in the run folder and a re-open restores the last
// one — not only what a question saved (issue 25).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRun } from '../../src/trajectory/reader';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

let h: Harness;
let pages: FixtureServer;
const workers = new WorkerProcesses(() => h);
/** The session cookie each GET of the sign-in page arrived with ('' for none), oldest first. */
const seen: string[] = [];

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  pages = await startFixtureServer();
  pages.route('/signin', (req, res) => {
    const session = /(?:^|;\s*)session=([^;]*)/.exec(req.headers.cookie ?? '')?.[1] ?? '';
    seen.push(session);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Sign in</title><body style="margin:0">' +
        '<button id="signin" style="display:block;width:100%;height:400px">Sign in</button><p id="who"></p>' +
        '<script>const who = () => (document.getElementById("who").textContent = ' +
        '/session=ada/.test(document.cookie) ? "Signed in as ada" : "Signed out"); who();' +
        'document.getElementById("signin").onclick = () => { document.cookie = "session=ada; path=/"; who(); };' +
        '</script>',
    );
  });
}, 120_000);

afterAll(async () => {
  workers.killAll();
  await pages?.close();
  await h?.close();
});

describe('kill -9 of the worker while it decides the step after a sign-in', () => {
  it('the new worker restores the last step checkpoint: still signed in', async () => {
    const marker = path.join(h.dir, 'marker-signin');
    const first = workers.spawn({ CUA_TEST_HOLD: 'decide:2', CUA_TEST_MARKER: marker });
    const handle = await h.start({ script: 'sign-in', instruction: 'Sign in.', startUrl: pages.url('/signin') });
    await eventually(async () => fs.existsSync(marker), 60_000, 'the worker to reach decide of step 2');
    const runDir = h.runDir(handle.workflowId);
    expect(JSON.parse(fs.readFileSync(path.join(runDir, 'checkpoints/latest.json'), 'utf8'))).toMatchObject({
      step: 1,
    });
    await workers.kill(first);
    const second = workers.spawn();
    try {
      expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'signed in' });
    } finally {
      const stopped = new Promise<number | null>((r) => second.once('exit', (code) => r(code)));
      second.kill('SIGTERM');
      await stopped;
    }
    // The first load had no cookie; the restored session's load of the same page came with it.
    expect(seen[0]).toBe('');
    expect(seen.at(-1)).toBe('ada');
    const run = await readRun(runDir);
    const note = run.events.find((e) => (e.metadata as { note?: string } | undefined)?.note === 'session_restored');
    expect(note?.metadata).toMatchObject({
      restored_from: 'the checkpoint after step 1',
      restored: expect.arrayContaining(['cookies']),
    });
  }, 240_000);
});
