// The benchmark's shared services, each started on first use and stopped through the cleanup registry: a temp dir
// (SQLite file, run folders, scripts), the scripted model, the two fixture sites, and — for the workflow sections —
// a Temporal dev server, a client and an in-process worker (shared queue + session queue + browser pool), wired as
// test/integration/harness.ts wires them (that file imports vitest, so its wiring is repeated here, not imported).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { startTask, validateTaskInput } from '../client/tasks';
import { freePort, startDevServer, waitForNamespace } from '../src/infra/devserver';
import type { DevServer } from '../src/infra/devserver';
import { startScriptedModelServer } from '../src/scripted/server';
import type { ScriptedModelServer } from '../src/scripted/server';
import { startFixtureServer } from '../test/fixtures/browser/server';
import type { FixtureServer } from '../test/fixtures/browser/server';
import { startFixtureSite } from '../test/fixtures/site/server';
import type { FixtureSite } from '../test/fixtures/site/server';
import { loadConfig } from '../src/runtime/config';
import type { Config } from '../src/runtime/config';
import { createWorkerRuntime, installWorkerLogging, quietBundler, WORKFLOWS_PATH } from '../worker/main';
import type { WorkerRuntime } from '../worker/main';
import type { TaskInput, TaskInputArgs } from '../src/contract/task';
import { onCleanup, onExitSync, trackChild } from './cleanup';
import { ModelCallTimer } from './model-calls';

/** History length at which the bench's dev server suggests continue-as-new (Temporal's default: 4096 events). */
export const SUGGEST_CAN_EVENTS = 300;
export const DEFAULT_SUGGEST_CAN_EVENTS = 4096;
export const DEFAULT_SUGGEST_CAN_BYTES = 4 * 1024 * 1024;

export interface TemporalServices {
  server: DevServer;
  client: Client;
  config: Config;
  runtime: WorkerRuntime;
  bundle: WorkflowBundleWithSourceMap;
}

export type TaskArgs = Partial<Omit<TaskInputArgs, 'runId'>> & { taskId: string; script: string };

const memo = <T>(start: () => Promise<T>): (() => Promise<T>) => {
  let value: Promise<T> | undefined;
  return () => (value ??= start());
};

export class Bench {
  readonly dir: string;
  readonly runsDir: string;
  readonly scriptsDir: string;

  constructor(
    readonly log: (line: string) => void,
    keep: boolean,
    /** How long the step measurement and each concurrency level may repeat until stable (`--repeat-cap`). */
    readonly repeatCapSeconds = 90,
    /** The concurrency section's levels (`--levels`). */
    readonly levels: readonly number[] = [1, 4, 8, 16, 32],
  ) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-bench-'));
    this.runsDir = path.join(this.dir, 'runs');
    this.scriptsDir = path.join(this.dir, 'scripts');
    fs.mkdirSync(this.runsDir, { recursive: true });
    if (keep) log(`temp dir kept: ${this.dir}`);
    else onExitSync(() => fs.rmSync(this.dir, { recursive: true, force: true }));
  }

  readonly model = memo(async (): Promise<{ server: ScriptedModelServer; timer: ModelCallTimer }> => {
    const server = await startScriptedModelServer({ scriptsDir: this.scriptsDir });
    const timer = new ModelCallTimer(server.url);
    timer.install();
    onCleanup('scripted model', async () => {
      timer.uninstall();
      await server.close();
    });
    return { server, timer };
  });

  readonly site = memo(async (): Promise<FixtureSite> => {
    const site = await startFixtureSite();
    onCleanup('hotel site', () => site.close());
    return site;
  });

  readonly pages = memo(async (): Promise<FixtureServer> => {
    const pages = await startFixtureServer();
    onCleanup('fixture pages', () => pages.close());
    return pages;
  });

  /**
   * Worker configuration (also for worker child processes, through the same variables). The slots are the worker's
   * own: derived from the machine (src/runtime/limits.ts) unless CUA_SLOTS (or CUA_MAX_SESSIONS) is set for the bench.
   */
  workerEnv(address: string, taskQueue = 'bench'): Record<string, string> {
    return {
      TEMPORAL_ADDRESS: address,
      CUA_RUNS_DIR: this.runsDir,
      CUA_TASK_QUEUE: taskQueue,
      ...(process.env.CUA_SLOTS ? { CUA_SLOTS: process.env.CUA_SLOTS } : {}),
      ...(process.env.CUA_MAX_SESSIONS ? { CUA_MAX_SESSIONS: process.env.CUA_MAX_SESSIONS } : {}),
      ...(process.env.CUA_CHROMIUM ? { CUA_CHROMIUM: process.env.CUA_CHROMIUM } : {}),
    };
  }

  readonly temporal = memo(async (): Promise<TemporalServices> => {
    installWorkerLogging();
    this.log('[bench] starting Temporal dev server, bundling workflows, starting an in-process worker');
    const server = await startDevServer({
      dbFile: path.join(this.dir, 'temporal.sqlite'),
      port: await freePort(),
      headless: true,
      output: path.join(this.dir, 'server.log'),
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_CAN_EVENTS },
    });
    trackChild(server.process);
    onCleanup('dev server', () => server.stop());
    const connection = await Connection.connect({ address: server.address });
    onCleanup('client connection', () => connection.close());
    const client = new Client({ connection });
    await waitForNamespace(client);
    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundler });
    const config = loadConfig({ env: this.workerEnv(server.address) });
    const native = await NativeConnection.connect({ address: server.address });
    const runtime = await createWorkerRuntime(config, { workflowBundle: bundle, connection: native });
    const derived = config.limits.derived.includes('slots');
    this.log(
      `[bench] in-process worker: ${config.browser.slots} browser slots ` +
        `(${derived ? 'derived from the machine' : 'CUA_SLOTS'}), ${config.worker.maxConcurrentActivities} ` +
        `activity slots, ${config.worker.maxConcurrentWorkflowTasks} workflow task slots`,
    );
    const running = runtime.run().finally(() => native.close());
    onCleanup('in-process worker', async () => {
      await runtime.shutdown();
      await running;
    });
    return { server, client, config, runtime, bundle };
  });

  /** A validated task input on the hotel site, its model calls tagged with the task id. */
  async taskInput(args: TaskArgs): Promise<TaskInput> {
    const [{ timer }, site] = await Promise.all([this.model(), this.site()]);
    const { script, taskId, ...rest } = args;
    return validateTaskInput({
      runId: taskId,
      instruction: 'Benchmark: click and scroll on the hotel home page, then finish.',
      startUrl: `${site.url}/`,
      maxSteps: 1000,
      ...rest,
      model: { endpoint: 'default', baseUrl: timer.baseUrl(taskId), model: script },
    });
  }

  /** Starts the task workflow on the in-process worker's queue (or `taskQueue`). */
  async startTask(args: TaskArgs, taskQueue?: string): Promise<WorkflowHandleWithFirstExecutionRunId> {
    const { client, config } = await this.temporal();
    return startTask(client, taskQueue ?? config.taskQueue, await this.taskInput(args));
  }

  runDir(taskId: string): string {
    return path.join(this.runsDir, taskId);
  }
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  what: string,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
