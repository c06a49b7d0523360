// A worker started before the Temporal server (process managers start services in any order) waits for it instead
// of exiting: it says so once, connects when the server comes up, and runs tasks. A server that goes away later (a
// restart with a long gap) is waited out the same way. This is the real `cua worker` command in its own process.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/infra/paths';
import type { TaskResult } from '../../src/contract/task';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';

let h: Harness;
let worker: ChildProcess | undefined;
let out = '';

beforeAll(async () => {
  h = await startHarness({ worker: false });
}, 120_000);

afterAll(async () => {
  worker?.kill('SIGKILL');
  await h?.close();
});

const lines = (pattern: RegExp) => out.split('\n').filter((l) => pattern.test(l));

describe('a worker started before the Temporal server', () => {
  it('waits for the server, says so once, then runs tasks; a later outage is waited out too', async () => {
    await h.restartServer(async () => {
      worker = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'cua.js'), 'worker'], {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: h.server.address,
          CUA_RUNS_DIR: h.config.runsDir,
          CUA_TASK_QUEUE: h.config.taskQueue,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const collect = (chunk: Buffer) => (out += chunk.toString('utf8'));
      worker.stdout?.on('data', collect);
      worker.stderr?.on('data', collect);
      await eventually(async () => lines(/not reachable yet/).length > 0, 60_000, 'the worker to say it waits');
      // Several attempts later (1 s, 2 s, 4 s apart) it is still waiting, has said so only once, and has not exited.
      await new Promise((r) => setTimeout(r, 8_000));
      expect(worker.exitCode).toBeNull();
      expect(lines(/not reachable yet/)).toHaveLength(1);
      expect(lines(/worker ready/)).toHaveLength(0);
    });
    await eventually(async () => lines(/worker ready/).length > 0, 60_000, 'the worker to connect and start');
    expect(lines(/connected to the Temporal server at .* after \d+s/)).toHaveLength(1);
    const first = (await (await h.start({ script: 'book-lisbon' })).result()) as TaskResult;
    expect(first.status).toBe('complete');

    // The server goes away for a while and comes back: the same worker process carries on.
    await h.restartServer(() => new Promise((r) => setTimeout(r, 12_000)));
    const second = (await (await h.start({ script: 'book-lisbon' })).result()) as TaskResult;
    expect(second.status).toBe('complete');
    expect(worker?.exitCode).toBeNull();

    const stopped = new Promise<number | null>((r) => worker?.once('exit', (code) => r(code)));
    worker?.kill('SIGTERM');
    expect(await stopped).toBe(0);
    expect(out).toContain('worker stopped');
  }, 240_000);
});
