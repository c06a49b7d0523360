// A desktop fork starts with step N's home (issue 27): a desktop task writes one.txt at step 1 and two.txt at step 2;
// its fork at step 1 runs in a home that has one.txt and not two.txt (the archive step 1 left), and the source's
// home is not changed. On the real parts: the dev server, a worker with a desktop pool, the scripted model.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkTask } from '../../client/fork';
import type { TaskResult } from '../../src/contract/task';
import { desktopSupport } from '../../src/desktop';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { startDesktopTask, writeDesktopScript } from './desktop-tasks';
import type { DesktopCall } from './desktop-tasks';
import { startHarness } from './harness';
import type { Harness } from './harness';

const support = desktopSupport();

let h: Harness;
let model: ScriptedModelServer;
let scriptsDir: string;

type Call = DesktopCall;
const run = (command: string): Call => ({ name: 'run_command', arguments: { command } });
const stop: Call = { name: 'stop', arguments: { answer: 'done' } };

const script = (name: string, steps: Call[][]): string => writeDesktopScript(scriptsDir, name, steps);

beforeAll(async () => {
  h = await startHarness({ worker: false });
  scriptsDir = fs.mkdtempSync(path.join(h.dir, 'scripts-'));
  model = await startScriptedModelServer({ scriptsDir });
  if (support.ok) await h.startWorker();
}, 120_000);

afterAll(async () => {
  await model?.close();
  await h?.close();
});

describe.skipIf(!support.ok)('a desktop fork', () => {
  it("starts with step N's home: the files of step N, not of later steps", async () => {
    const source = script('desktop-fork-source', [[run('echo one > one.txt')], [run('echo two > two.txt')], [stop]]);
    // Whichever entry the fork's first decision gets, it lists its home and stops.
    const listing = [run('ls > listing.txt'), stop];
    const other = script('desktop-fork-other', [listing, listing, listing]);
    const to = { client: h.client, taskQueue: h.config.taskQueue, modelUrl: model.url, prefix: 'desk-fork' };
    const handle = await startDesktopTask(to, source);
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete' });
    const sourceHome = path.join(h.runDir(handle.workflowId), 'home');
    const files = (dir: string) =>
      fs
        .readdirSync(dir)
        .filter((f) => !f.startsWith('.'))
        .sort();
    expect(files(sourceHome)).toEqual(['one.txt', 'two.txt']);

    const fork = await forkTask(h.client, handle.workflowId, { step: 1, model: other });
    const result = (await h.client.workflow.getHandle(fork.id).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'done' });
    const forkHome = path.join(h.runDir(fork.id), 'home');
    expect(fs.readFileSync(path.join(forkHome, 'listing.txt'), 'utf8').split('\n').filter(Boolean)).toEqual([
      'listing.txt',
      'one.txt',
    ]);
    expect(files(sourceHome)).toEqual(['one.txt', 'two.txt']);
  }, 240_000);
});
