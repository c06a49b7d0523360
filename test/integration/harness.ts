// Test harness for workflow integration tests: a real Temporal dev server (the pinned CLI), the scripted model
// server, the fixture site, and an in-process worker with a real browser pool. One per test file. No vitest import
// here, so scripts (scripts/record-histories.ts) can start a harness too; `useHarness` is in use-harness.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { DevServerError, startDevServer, freePort, waitForNamespace } from '../../src/infra/devserver';
import type { DevServer } from '../../src/infra/devserver';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { bundleWorkflows, createWorkerRuntime, installWorkerLogging } from '../../worker/main';
import { dataConverterFor } from '../../src/codec/data-converter';
import type { WorkerOptions, WorkerRuntime } from '../../worker/main';
import { startTask, validateTaskInput } from '../../client/tasks';
import { statusQuery } from '../../workflows/messages';
import type { TaskInputArgs, TaskStatus } from '../../src/contract/task';
import { startFixtureSite } from '../fixtures/site/server';
import type { FixtureSite } from '../fixtures/site/server';

// Workers log their state changes at INFO; tests only want warnings and errors.
installWorkerLogging();

export const SCRIPTS_DIR = path.resolve(__dirname, '../fixtures/scripts');

const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();
/**
 * The workflow bundle, built once per test process (and once more for a configuration with encryption, or with
 * tracing: its workflow interceptors).
 */
export function workflowBundle(
  config: Pick<Config, 'encryption' | 'telemetry'> = {},
): Promise<WorkflowBundleWithSourceMap> {
  const key = `${!!config.encryption}-${!!config.telemetry?.traces}`;
  const bundle = bundles.get(key) ?? bundleWorkflows(config);
  bundles.set(key, bundle);
  return bundle;
}

/** Fast timings for tests: a lost worker is noticed in seconds, model retries start after 1 s. */
export const FAST_TIMING = {
  sessionScheduleToStartSeconds: 4,
  heartbeatSeconds: 3,
  modelRetryInitialSeconds: 1,
  modelRetryMaxSeconds: 2,
  modelRetryAttempts: 5,
};

export interface Harness {
  dir: string;
  server: DevServer;
  dbFile: string;
  port: number;
  client: Client;
  model: ScriptedModelServer;
  site: FixtureSite;
  config: Config;
  worker: WorkerRuntime | null;
  startWorker(): Promise<WorkerRuntime>;
  stopWorker(): Promise<void>;
  start(
    args: Partial<TaskInputArgs> & { script: string; instruction?: string },
  ): Promise<WorkflowHandleWithFirstExecutionRunId>;
  runDir(taskId: string): string;
  /** Stops the dev server and starts it again on the same port and SQLite file (running `whileDown` in between). */
  restartServer(whileDown?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;

export interface HarnessOptions {
  worker?: boolean;
  env?: Record<string, string>;
  /** Start the dev server with its Web UI on a free port (server.uiUrl); headless by default. */
  ui?: boolean;
  /** With `ui`: the Web UI decodes payloads through this codec server. */
  uiCodecEndpoint?: string;
  /** Test hook passed to the worker's activities (see ActivityDeps.checkpoint). */
  checkpoint?: WorkerOptions['checkpoint'];
  /** The worker's own log lines (what `cua worker` prints); default: dropped. */
  log?: (line: string) => void;
}

/**
 * Starts a dev server on free ports. A port another process took between the pick and the server's bind (seen when
 * other test files start servers at the same time) is picked again, twice at most; any other failure is final.
 */
async function startOnFreePorts(
  start: (port: number, uiPort: number) => Promise<DevServer>,
): Promise<{ server: DevServer; port: number; uiPort: number }> {
  for (let attempt = 0; ; attempt++) {
    const [port, uiPort] = [await freePort(), await freePort()];
    try {
      return { server: await start(port, uiPort), port, uiPort };
    } catch (err) {
      if (attempt >= 2 || !(err instanceof DevServerError) || !/address already in use/.test(err.message)) throw err;
      console.warn(`${err.message}; starting the Temporal dev server again on other ports`);
    }
  }
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-it-'));
  const dbFile = path.join(dir, 'temporal.sqlite');
  const displayOn = (uiPort: number) =>
    opts.ui ? { headless: false, uiPort, uiCodecEndpoint: opts.uiCodecEndpoint } : { headless: true };
  const { server, port, uiPort } = await startOnFreePorts((p, ui) =>
    startDevServer({
      dbFile,
      port: p,
      ...displayOn(ui),
      output: path.join(dir, 'server.log'),
      onRetry: (l) => console.warn(l),
    }),
  );
  const display = displayOn(uiPort);
  const config = loadConfig({
    env: {
      TEMPORAL_ADDRESS: server.address,
      CUA_RUNS_DIR: path.join(dir, 'runs'),
      CUA_TASK_QUEUE: `it-${process.pid}`,
      // A question releases the browser (as before browser.holdWhileWaitingSeconds), unless a test holds it.
      CUA_HOLD_WHILE_WAITING_SECONDS: '0',
      ...opts.env,
    },
  });
  const connection = await Connection.connect({ address: server.address });
  // With `encryption` in the configuration (opts.env), the client encrypts like `cua` clients do.
  const dataConverter = dataConverterFor(config, { acceptPlaintext: true });
  const client = new Client({ connection, ...(dataConverter ? { dataConverter } : {}) });
  await waitForNamespace(client);
  const model = await startScriptedModelServer({ scriptsDir: SCRIPTS_DIR });
  const site = await startFixtureSite();
  const h: Harness = {
    dir,
    server,
    dbFile,
    port,
    client,
    model,
    site,
    config,
    worker: null,
    async startWorker() {
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      const runtime = await createWorkerRuntime(config, {
        workflowBundle: await workflowBundle(config),
        connection: nativeConnection,
        ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}),
        ...(opts.log ? { log: opts.log } : {}),
      });
      const running = runtime.run().finally(() => nativeConnection.close());
      h.worker = Object.assign(runtime, { running });
      return runtime;
    },
    async stopWorker() {
      const w = h.worker as (WorkerRuntime & { running?: Promise<void> }) | null;
      h.worker = null;
      if (!w) return;
      await w.shutdown();
      await w.running;
    },
    async start(args) {
      const { script, ...rest } = args;
      const input = validateTaskInput({
        runId: `it-${Date.now().toString(36)}-${++counter}`,
        instruction: 'Find the nightly price of the first hotel in Lisbon.',
        startUrl: `${site.url}/`,
        timing: FAST_TIMING,
        ...rest,
        model: { endpoint: 'default', baseUrl: model.url, model: script },
      });
      return startTask(client, config.taskQueue, input);
    },
    runDir: (taskId) => path.join(config.runsDir, taskId),
    async restartServer(whileDown) {
      await h.server.stop();
      await whileDown?.();
      h.server = await startDevServer({
        dbFile,
        port,
        ...display,
        output: path.join(dir, 'server.log'),
        onRetry: (l) => console.warn(l),
      });
      await waitForNamespace(client);
    },
    async close() {
      await h.stopWorker().catch(() => undefined);
      await connection.close().catch(() => undefined);
      await h.server.stop();
      await model.close();
      await site.close();
    },
  };
  if (opts.worker ?? true) await h.startWorker();
  return h;
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The error a promise (a workflow result) rejects with; fails the test when it resolves instead. */
export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the workflow to fail, but it succeeded');
}

/** Waits until a task asks the user (status `waiting_for_user`) and returns that status. */
export function untilWaiting(handle: WorkflowHandle, timeoutMs = 30_000): Promise<TaskStatus> {
  return eventually(
    async () => {
      const s = await handle.query(statusQuery);
      return s.status === 'waiting_for_user' ? s : undefined;
    },
    timeoutMs,
    'the task to ask',
  );
}
