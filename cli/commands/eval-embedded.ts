// Where `cua eval` runs its evaluation: the configured Temporal server with its workers, or (embedded) a dev server
// and a worker started in this process for the evaluation and stopped at its end, as `cua demo` does.
// The choice: nothing listening at a local configured address → embedded (dev server + worker); a server that
// answers but has no worker polling the task queue → a worker in this process; `--embedded` → always our own worker
// (and our own server when none listens). A remote address that does not answer is an error: we never start a
// server in place of someone else's.
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { canConnect, freePort, startDevServer, waitForNamespace } from '../../src/infra/devserver';
import type { DevServer } from '../../src/infra/devserver';
import { ensureTools } from '../../src/infra/tools';
import type { Config } from '../../src/runtime/config';
import { connectClient, TemporalUnreachableError } from '../../src/runtime/connect';
import { createWorkerRuntime, installWorkerLogging } from '../../worker/main';
import type { WorkerRuntime } from '../../worker/main';

export interface BackendOptions {
  config: Config;
  /** `--embedded`: run a worker in this process even when the server has one. */
  embedded: boolean;
  print: (line: string) => void;
  /** Where an embedded server keeps its SQLite file and log (default: the project's data folder). */
  dataDir: string;
  /** The embedded server's Web UI port (taken: a free one); null: no UI (tests). */
  uiPort: number | null;
  /** A prebuilt workflow bundle (tests); default: bundled at start. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** The local files (task set, answers) a worker started here must read; store:KEY sources are not listed. */
  localSources: string[];
}

export interface EvalBackend {
  client: Client;
  /** The Web UI of a server this process started (null: none, or the configured server's, not known here). */
  uiUrl: string | null;
  /** What this process started, in words (for the closing lines). */
  started: string[];
  close(): Promise<void>;
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0']);

function hostPort(address: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(address);
  return { host: m?.[1] ?? address, port: m?.[2] ? Number(m[2]) : 7233 };
}

/** Whether any worker polls the task queue's workflow tasks now. */
async function hasWorker(client: Client, config: Config): Promise<boolean> {
  try {
    const res = await client.workflowService.describeTaskQueue({
      namespace: config.temporal.namespace,
      taskQueue: { name: config.taskQueue },
      taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
    });
    return (res.pollers ?? []).length > 0;
  } catch {
    return true; // Cannot tell (permissions): assume the operator runs workers.
  }
}

/** Connects to the configured server, starting a dev server and a worker in this process where needed (see above). */
export async function evalBackend(opts: BackendOptions): Promise<EvalBackend> {
  const { config, print } = opts;
  const { host, port } = hostPort(config.temporal.address);
  let server: DevServer | undefined;
  let worker: { runtime: WorkerRuntime; running: Promise<void> } | undefined;
  let client: Client | undefined;
  const started: string[] = [];
  const dbFile = path.join(opts.dataDir, 'temporal.sqlite');
  const close = async () => {
    if (worker) {
      await worker.runtime.shutdown().catch(() => undefined);
      await worker.running.catch(() => undefined);
    }
    await client?.connection.close().catch(() => undefined);
    if (started.length) {
      const where = server ? ` (the history stays in ${dbFile}; \`npx cua server\` serves it again)` : '';
      print(`[eval] stopping ${started.join(' and ')} started for the evaluation${where}`);
    }
    await server?.stop();
  };
  try {
    if (!(await canConnect(host.replace(/^\[|\]$/g, ''), port))) {
      if (!LOCAL_HOSTS.has(host)) throw new TemporalUnreachableError(config.temporal.address, 'no answer');
      ensureTools((l) => print(`[eval] ${l}`), ['demo']);
      let uiPort = opts.uiPort;
      if (uiPort !== null && (await canConnect('127.0.0.1', uiPort))) uiPort = await freePort();
      print(`[eval] no Temporal server at ${config.temporal.address}: starting one in this process (SQLite ${dbFile})`);
      server = await startDevServer({
        dbFile,
        port,
        ...(uiPort === null ? { headless: true } : { uiPort }),
        output: path.join(opts.dataDir, 'temporal-server.log'),
        onRetry: (l) => print(`[eval] ${l}`),
      });
      started.push('a Temporal dev server');
    }
    client = await connectClient(config);
    await waitForNamespace(client, config.temporal.namespace, server ? 30_000 : 5_000);
    const why = server
      ? 'for the evaluation'
      : opts.embedded
        ? '(--embedded)'
        : (await hasWorker(client, config))
          ? null
          : `(no worker polls the task queue ${config.taskQueue})`;
    if (why !== null) {
      print(`[eval] starting a worker in this process ${why}; bundling the workflow code takes a few seconds`);
      installWorkerLogging('ERROR');
      // With a Temporal server of its own, only this evaluation starts tasks there: its page_js checks may run.
      // It reads the set (and answers) the command was given, wherever they are.
      const setDirs = opts.localSources.map((f) => path.dirname(path.resolve(f)));
      const evaluation = { taskSetDirs: [...config.evaluation.taskSetDirs, ...setDirs] };
      const workerConfig = {
        ...config,
        evaluation,
        ...(server ? { browser: { ...config.browser, pageProbes: true } } : {}),
      };
      const runtime = await createWorkerRuntime(
        workerConfig,
        opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : {},
      );
      worker = { runtime, running: runtime.run() };
      started.push('a worker');
    }
    return { client, uiUrl: server?.uiUrl ?? null, started, close };
  } catch (err) {
    await close();
    throw err;
  }
}
