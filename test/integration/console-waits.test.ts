// `cua console` started before the Temporal server (process managers start services in any order) waits for it as
// the worker does, with the worker's words, and serves its page once the server answers. The real command in its own
// process; the harness's dev server is stopped while the console starts.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/infra/devserver';
import { PROJECT_ROOT } from '../../src/infra/paths';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';

let h: Harness;
let consoleProcess: ChildProcess | undefined;
let out = '';

beforeAll(async () => {
  h = await startHarness({ worker: false });
}, 120_000);

afterAll(async () => {
  consoleProcess?.kill('SIGKILL');
  await h?.close();
});

const lines = (pattern: RegExp) => out.split('\n').filter((l) => pattern.test(l));

describe('a console started before the Temporal server', () => {
  it('waits for the server, says so once in the worker words, then serves its page', async () => {
    const port = await freePort();
    await h.restartServer(async () => {
      consoleProcess = spawn(
        process.execPath,
        [path.join(PROJECT_ROOT, 'bin', 'cua.js'), 'console', '--port', String(port)],
        {
          cwd: PROJECT_ROOT,
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: h.server.address,
            CUA_RUNS_DIR: h.config.runsDir,
            CUA_TASK_QUEUE: h.config.taskQueue,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const collect = (chunk: Buffer) => (out += chunk.toString('utf8'));
      consoleProcess.stdout?.on('data', collect);
      consoleProcess.stderr?.on('data', collect);
      await eventually(async () => lines(/not reachable yet/).length > 0, 60_000, 'the console to say it waits');
      await new Promise((r) => setTimeout(r, 4_000)); // a few attempts later: still waiting, said once, not exited
      expect(consoleProcess.exitCode).toBeNull();
      expect(
        lines(/\[console\] the Temporal server at .* is not reachable yet \(.*\); retrying until it is/),
      ).toHaveLength(1);
      expect(lines(/\[console\] open:/)).toHaveLength(0);
    });
    await eventually(async () => lines(/\[console\] open:/).length > 0, 60_000, 'the console to serve its page');
    expect(lines(/\[console\] connected to the Temporal server at .* after \d+s/)).toHaveLength(1);
    const link =
      lines(/\[console\] open:/)[0]
        ?.replace(/^.*open: /, '')
        .trim() ?? '';
    expect(link).toContain(`:${port}`);
    // The link signs in (a cookie, then the page); the task list comes from the server it waited for.
    const signIn = await fetch(link, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await fetch(new URL(signIn.headers.get('location') ?? '/', link), { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);

    const stopped = new Promise<number | null>((r) => consoleProcess?.once('exit', (code) => r(code)));
    consoleProcess?.kill('SIGTERM');
    expect(await stopped).toBe(0);
  }, 180_000);
});
