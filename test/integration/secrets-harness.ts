// Helpers the secrets tests share: a worker of their own config on the harness's dev server, a scripted model whose
// scripts a test writes (they name the fixture sites' ports), and every text a task left behind (run folder, history).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { startTask, validateTaskInput } from '../../client/tasks';
import type { Config } from '../../src/runtime/config';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { createWorkerRuntime } from '../../worker/main';
import { FAST_TIMING, workflowBundle } from './harness';
import type { Harness } from './harness';

/** A worker with its own config on its own task queue, sharing the harness's dev server and runs folder. */
export async function startWorkerWith(config: Config): Promise<{ stop(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const runtime = await createWorkerRuntime(config, { workflowBundle: await workflowBundle(), connection });
  const running = runtime.run().finally(() => connection.close());
  return {
    stop: async () => {
      await runtime.shutdown();
      await running;
    },
  };
}

export type Entry = { thoughts: string; action: Record<string, unknown> };

/** A scripted model answering from scripts written now: name → entries. */
export async function scriptedModel(scripts: Record<string, Entry[]>): Promise<ScriptedModelServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-secret-scripts-'));
  for (const [name, entries] of Object.entries(scripts)) {
    fs.writeFileSync(
      path.join(dir, `${name}.json`),
      JSON.stringify({ description: `${name} (secrets tests)`, entries }),
    );
  }
  return startScriptedModelServer({ scriptsDir: dir });
}

let counter = 0;
/** Starts a task on `queue` driven by `script` of `model`, starting at `startUrl`. */
export function startScripted(
  h: Harness,
  queue: string,
  model: ScriptedModelServer,
  script: string,
  startUrl: string,
  maxSteps = 30,
) {
  const input = validateTaskInput({
    maxSteps,
    runId: `secrets-${Date.now().toString(36)}-${++counter}`,
    instruction: 'Sign in and carry on.',
    startUrl,
    timing: FAST_TIMING,
    model: { endpoint: 'default', baseUrl: model.url, model: script },
  });
  return startTask(h.client, queue, input);
}

/** Every file of a run folder as text (screenshots skipped). */
export function runFolderText(h: Harness, taskId: string): string {
  const dir = h.runDir(taskId);
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => !f.endsWith('.png'));
  return files
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
}

/** A workflow history as text, with every payload decoded (fetchHistory gives payload data as base64). */
export async function historyText(handle: WorkflowHandle): Promise<string> {
  return JSON.stringify(await handle.fetchHistory(), (key, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    if (key === 'data' && typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8');
    return v;
  });
}

export const clickField: Entry = {
  thoughts: 'Click the field.',
  action: { action: 'left_click', coordinate: [35, 28] },
};
export const typeAndEnter = (text: string): Entry => ({
  thoughts: 'Type it and press Enter.',
  action: { action: 'type', text, press_enter: true },
});
export const visit = (url: string): Entry => ({ thoughts: `Open ${url}.`, action: { action: 'visit_url', url } });
export const terminate = (answer: string): Entry => ({ thoughts: 'Done.', action: { action: 'terminate', answer } });
