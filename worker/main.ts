// The worker process: one shared-queue worker (workflows, model calls, run-folder work) and one worker on this
// process's own session queue (observe/act in the browsers it owns), a browser pool, and a clean shutdown.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/worker';
import type { WorkflowBundleOption } from '@temporalio/worker';
import type { Browser } from 'playwright';
import { createActivities } from '../activities/catalog';
import type { ActivityDeps } from '../activities/catalog';
import type { BrowserPool } from '../src/browser/pool';
import type { DesktopPool } from '../src/desktop';
import { connectionOptions, TemporalUnreachableError, untilReachable } from '../src/runtime/connect';
import { dataConverterFor, encryptionSummary, workflowBundleConverterOptions } from '../src/codec/data-converter';
import { ConfigError } from '../src/common/config-error';
import type { Config } from '../src/runtime/config';
import { describeLimits } from '../src/runtime/limits';
import { controlPlaneSummary } from '../src/runtime/control-plane';
import { checkPromptFiles } from '../src/runtime/prompt-checks';
import { webhookSummary, webhookTarget } from '../src/notify/config';
import { DEFAULT_URL_POLICY, remoteBrowserGaps } from '../src/contract/url-policy';
import { isPoolFullType } from '../src/agent/failure-types';
import { browserOpenQueue } from '../src/contract/queues';
import { freeSlotSupplier } from './open-slots';
import type { FreeSlotSupplier } from './open-slots';
import { browserPoolFor, desktopPoolFor } from './pools';
import { toolListLines } from './tool-lists';
import { CustomSessions, environmentRegistry } from '../src/environments/plugin';
import type { CustomEnvironment } from '../src/environments/plugin';
import type { WorkerLimits } from '../src/runtime/limits';
import { Client } from '@temporalio/client';
import { HISTOGRAM_BUCKETS, installMetrics } from '../src/common/metrics';
import { startMetricsSampler } from './metrics-sampler';
import { checkSearchAttributes } from './search-attributes';
import { workerTracing, workflowInterceptorModules } from './tracing';
import type { WorkerTracing } from './tracing';

/**
 * The workflow code the worker bundles: workflows/index.ts when this file runs as TypeScript (the repo, through tsx
 * or vitest), the compiled dist/workflows/index.js when it runs from the built package.
 */
export const WORKFLOWS_PATH = path.resolve(__dirname, '..', 'workflows', `index${path.extname(__filename)}`);

export interface WorkerRuntime {
  sessionQueue: string;
  pool: BrowserPool;
  /** The desktops this worker opens (absent when desktop support is off or its programs are missing). */
  desktops?: DesktopPool;
  /** Resolves when both workers have stopped. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface WorkerOptions {
  log?: (line: string) => void;
  /**
   * A prebuilt workflow bundle (tests build it once); default: bundle workflows/ at start. With `encryption`
   * configured, build it with `bundleWorkflows(config)` so failures raised in workflows are encrypted too.
   */
  workflowBundle?: WorkflowBundleOption;
  connection?: NativeConnection;
  /**
   * A Playwright browser the sessions open their contexts in (a remote browser, one launched with the application's
   * own options) instead of the one `config.browser` describes; the worker never closes it.
   */
  browser?: Browser;
  /** Test hook passed to the activities (see ActivityDeps.checkpoint). */
  checkpoint?: ActivityDeps['checkpoint'];
  /** Environments beside the browser and the desktop (src/environments/plugin.ts); tasks name them in `environment`. */
  environments?: readonly CustomEnvironment[];
  /**
   * The application's own activities, registered beside ours on the shared task queue and this worker's session
   * queue (for the application's workflows; a name of ours is refused).
   */
  activities?: Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;
  /**
   * Wait for a Temporal server that is not reachable yet (process managers start services in any order): retry the
   * connection with backoff, saying so once, until it answers or `signal` aborts. Default: fail at once with
   * TemporalUnreachableError.
   */
  waitForServer?: boolean | { signal?: AbortSignal };
}

const noop = () => undefined;
/** The bundler's webpack report is noise for a user starting a worker; errors still throw. */
export const quietBundler = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

async function connectWorker(config: Config): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(connectionOptions(config) as Parameters<typeof NativeConnection.connect>[0]);
  } catch (err) {
    throw new TemporalUnreachableError(config.temporal.address, err);
  }
}

/** Connects, waiting while the server is unreachable as every long-running command does (untilReachable). */
export async function connectWhenReachable(
  config: Config,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<NativeConnection> {
  return untilReachable(config.temporal.address, () => connectWorker(config), log, signal);
}

/**
 * The workflow bundle for this configuration (with encryption: the failure converter that encodes messages; with
 * `telemetry.traces`: the OpenTelemetry workflow interceptors).
 */
export function bundleWorkflows(
  config: Pick<Config, 'encryption' | 'telemetry'>,
): ReturnType<typeof bundleWorkflowCode> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quietBundler,
    workflowInterceptorModules: workflowInterceptorModules(config),
    ...workflowBundleConverterOptions(config),
  });
}

/** Our activities and the application's, whose names must not take one of ours. */
function withOwnActivities<T extends object>(ours: T, theirs: WorkerOptions['activities']): T {
  if (!theirs) return ours;
  for (const [name, fn] of Object.entries(theirs)) {
    if (name in ours) throw new ConfigError(`activity '${name}' is one of the agent's own; give yours another name`);
    if (typeof fn !== 'function') throw new ConfigError(`activity '${name}' is not a function`);
  }
  return { ...theirs, ...ours };
}

const limitsOf = (config: Config): WorkerLimits => ({ slots: config.browser.slots, ...config.worker });

/** The connection the options give, or one to the configured server (waiting until it answers when asked to). */
async function connectionFor(
  config: Config,
  opts: WorkerOptions,
  log: (line: string) => void,
): Promise<NativeConnection> {
  if (opts.connection) return opts.connection;
  const wait = opts.waitForServer;
  return wait
    ? await connectWhenReachable(config, log, typeof wait === 'object' ? wait.signal : undefined)
    : await connectWorker(config);
}

/** The application's environments by name; a bad list is a ConfigError. */
function environmentsFor(opts: WorkerOptions): ReadonlyMap<string, CustomEnvironment> {
  try {
    return environmentRegistry(opts.environments);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** How long a workflow task waits for the worker that has the task cached (see createWorkers). */
export const STICKY_SCHEDULE_TO_START = '500ms';

/** What the three workers share: the connection, the converter, every activity and the activities' tracing. */
function commonWorkerOptions(
  config: Config,
  connection: NativeConnection,
  dataConverter: ReturnType<typeof dataConverterFor>,
  activities: object,
  tracing: WorkerTracing | undefined,
) {
  return {
    connection,
    namespace: config.temporal.namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(tracing ? { interceptors: tracing.interceptors } : {}),
    activities,
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
    shutdownGraceTime: '5s' as const,
  };
}

interface Workers {
  /** Shared queue, session queue, browser opens. */
  workers: Worker[];
  openQueue: string;
  openSlots: FreeSlotSupplier;
}

/**
 * The shared-queue worker (workflows, model calls, run-folder work), the session-queue one (this process's
 * browsers) and the one taking browser session opens, polled only while the pool has a free slot.
 */
async function createWorkers(
  config: Config,
  opts: WorkerOptions,
  common: ReturnType<typeof commonWorkerOptions>,
  sessionQueue: string,
  pool: BrowserPool,
  tracing: WorkerTracing | undefined,
): Promise<Workers> {
  const shared = await Worker.create({
    ...common,
    ...(tracing ? { sinks: tracing.sinks } : {}),
    taskQueue: config.taskQueue,
    // A workflow task waits this long on the sticky queue of the worker that ran the task's last one before any
    // worker may take it. The server believes in a killed worker for 10 s (fixed), so the task's next workflow task
    // after a lost activity would wait the SDK's default 10 s here; a live worker takes its own in milliseconds.
    // (Below a second only with the server's timer shift lowered as well: see SERVER_DYNAMIC_CONFIG.)
    stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START,
    workflowBundle: opts.workflowBundle ?? (await bundleWorkflows(config)),
    maxConcurrentWorkflowTaskExecutions: config.worker.maxConcurrentWorkflowTasks,
  });
  const session = await Worker.create({ ...common, taskQueue: sessionQueue });
  // Browser session opens: polled only while the pool has a free slot (see worker/open-slots.ts).
  const openQueue = browserOpenQueue(config.taskQueue);
  const openSlots = freeSlotSupplier(pool);
  const { maxConcurrentActivityTaskExecutions: _bySlots, ...openCommon } = common;
  const opens = await Worker.create({
    ...openCommon,
    taskQueue: openQueue,
    tuner: {
      activityTaskSlotSupplier: openSlots,
      workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
      localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
      nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
    },
  });
  return { workers: [shared, session, opens], openQueue, openSlots };
}

/** The start's report: queues, limits, tools, encryption, and what a remote browser leaves unchecked. */
function logReady(
  config: Config,
  log: (line: string) => void,
  ready: { sessionQueue: string; openQueue: string; desktop: boolean; environments: string[] },
): void {
  const limits = describeLimits(limitsOf(config), config.limits.derived, config.limits.machine);
  log(
    `worker ready: shared queue ${config.taskQueue}, session queue ${ready.sessionQueue}, opens on ${ready.openQueue} ` +
      `while the pool has a free slot, runs in ${config.runsDir}; ${limits}`,
  );
  for (const line of toolListLines({ desktop: ready.desktop, environments: ready.environments })) {
    log(line);
  }
  if (config.encryption) log(encryptionSummary(config.encryption));
  const webhook = webhookTarget(config.notifications, process.env);
  if (webhook) log(webhookSummary(webhook));
  log(controlPlaneSummary(config));
  const remote =
    config.browser.provider === 'browserbase' ? 'a Browserbase session' : config.browser.cdpUrl && 'cdpUrl';
  const gaps = remote ? remoteBrowserGaps(config.urlPolicy ?? DEFAULT_URL_POLICY, remote) : null;
  if (gaps) log(`warning: ${gaps}`);
}

/** What a runtime holds and closes, in this order, once its workers have stopped. */
interface RuntimeParts extends Workers {
  sessionQueue: string;
  pool: BrowserPool;
  desktops: DesktopPool | undefined;
  customSessions: CustomSessions;
  /** The connection, when the worker opened it (one passed in is the caller's to close). */
  ownConnection: NativeConnection | undefined;
  /** Stops the metrics sampler (metrics-sampler.ts), when metrics are on. */
  stopSampler: () => void;
  /** Flushed and released last, so the spans of the shutdown itself are sent. */
  tracing: WorkerTracing | undefined;
}

/** Runs the workers; shutdown (once, however often called) stops them and closes everything the worker opened. */
function runtimeOf(parts: RuntimeParts): WorkerRuntime {
  const { workers, openSlots, pool, desktops, customSessions, ownConnection, stopSampler, tracing } = parts;
  let stopping: Promise<void> | undefined;
  const runs = Promise.all(workers.map((w) => w.run())).then(() => undefined);
  const shutdown = () =>
    (stopping ??= (async () => {
      for (const w of workers) {
        if (w.getState() === 'RUNNING') w.shutdown();
      }
      await runs.catch(() => undefined);
      stopSampler();
      openSlots.dispose();
      await pool.shutdown();
      await desktops?.closeAll();
      await customSessions.closeAll();
      if (ownConnection) await ownConnection.close();
      await tracing?.release();
    })());
  return {
    sessionQueue: parts.sessionQueue,
    pool,
    ...(desktops ? { desktops } : {}),
    run: async () => {
      try {
        await runs;
      } finally {
        await shutdown();
      }
    },
    shutdown,
  };
}

export async function createWorkerRuntime(config: Config, opts: WorkerOptions = {}): Promise<WorkerRuntime> {
  const log = opts.log ?? (() => undefined);
  const dataConverter = dataConverterFor(config); // first: a key error stops the start before anything opens
  for (const line of await checkPromptFiles(config.models)) log(line); // a prompt file that cannot serve stops it
  const connection = await connectionFor(config, opts, log);
  await checkSearchAttributes(connection, config.temporal.namespace).catch(async (err: unknown) => {
    if (!opts.connection) await connection.close();
    throw err;
  });
  const sessionQueue = `${config.taskQueue}-session-${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const pool = browserPoolFor(config, opts.browser, log);
  const desktops = desktopPoolFor(config, log);
  const environments = environmentsFor(opts);
  const customSessions = new CustomSessions();
  const ours = createActivities({
    config,
    pool,
    ...(desktops ? { desktops } : {}),
    ...(environments.size ? { environments, customSessions } : {}),
    sessionQueue,
    log,
    checkpoint: opts.checkpoint,
  });
  const activities = withOwnActivities(ours, opts.activities);
  const tracing = workerTracing(config);
  const common = commonWorkerOptions(config, connection, dataConverter, activities, tracing);
  const workers = await createWorkers(config, opts, common, sessionQueue, pool, tracing).catch(async (err: unknown) => {
    await tracing?.release();
    throw err;
  });
  const { openQueue } = workers;
  logReady(config, log, {
    sessionQueue,
    openQueue,
    desktop: desktops !== undefined,
    environments: [...environments.keys()],
  });
  pool.warmUp((err) => log(`warning: the browser did not start (the first session tries again): ${String(err)}`));
  const stopSampler = startMetrics(config, connection, { pool, desktops, log });
  const ownConnection = opts.connection ? undefined : connection;
  if (tracing) log(`tracing: spans go to ${config.telemetry?.traces?.otlpEndpoint} (OTLP/HTTP)`);
  return runtimeOf({ ...workers, sessionQueue, pool, desktops, customSessions, ownConnection, stopSampler, tracing });
}

/** The Prometheus endpoint this process's runtime serves (installed by installWorkerLogging), if any. */
let servedPrometheus: string | undefined;

/**
 * The agent's metrics go to this process's Temporal runtime (its exporter: ours, or the application's); with
 * `telemetry.metrics` set, the gauges are sampled too. Returns what stops the sampler.
 */
function startMetrics(
  config: Config,
  connection: NativeConnection,
  from: { pool: BrowserPool; desktops: DesktopPool | undefined; log: (line: string) => void },
): () => void {
  installMetrics(Runtime.instance().metricMeter);
  const metrics = config.telemetry?.metrics;
  if (!metrics) return () => undefined;
  const { log } = from;
  if (metrics.prometheus && metrics.prometheus === servedPrometheus) {
    log(`metrics: Prometheus endpoint http://${metrics.prometheus}/metrics`);
  } else if (metrics.prometheus) {
    log(
      `warning: telemetry.metrics.prometheus (${metrics.prometheus}) is not served: this process's Temporal runtime ` +
        'was installed before the worker, without it; metrics go where that runtime sends them',
    );
  }
  return startMetricsSampler({
    pool: from.pool,
    ...(from.desktops ? { desktops: from.desktops } : {}),
    client: new Client({ connection, namespace: config.temporal.namespace }),
    taskQueue: config.taskQueue,
    waitingCountMs: metrics.waitingCountSeconds * 1000,
    log,
  });
}

/** The runtime's telemetry options for the configured metrics (none: the SDK's default, no metrics exported). */
function telemetryOptionsFor(telemetry: Config['telemetry']) {
  const bindAddress = telemetry?.metrics?.prometheus;
  if (!bindAddress) return {};
  return {
    telemetryOptions: {
      metrics: { prometheus: { bindAddress, histogramBucketOverrides: HISTOGRAM_BUCKETS } },
    },
  };
}

/**
 * The SDK logs every worker state change at INFO; a person running a worker wants warnings and errors.
 * `CUA_LOG_LEVEL` (TRACE, DEBUG, INFO, WARN, ERROR) overrides. Once per process: later calls change nothing.
 */
const LOG_LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

export function installWorkerLogging(level: LogLevel = 'WARN', telemetry?: Config['telemetry']): void {
  const fromEnv = process.env.CUA_LOG_LEVEL?.toUpperCase();
  if (fromEnv !== undefined && !LOG_LEVELS.includes(fromEnv as LogLevel)) {
    throw new ConfigError(`CUA_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${process.env.CUA_LOG_LEVEL}'`);
  }
  const wanted = (fromEnv as LogLevel | undefined) ?? level;
  const logger = new DefaultLogger(wanted, (entry) => {
    // The session worker has activities only, by design: its "no workflows registered" notice is expected.
    if (entry.message.includes('No workflows registered')) return;
    const error = entry.meta?.error;
    // A full pool is a task queueing for a browser (its status says so), not a failure worth a line per retry.
    if (error instanceof Error && isPoolFullType(error.name) && !LOG_LEVELS.slice(0, 2).includes(wanted)) return;
    const detail = error instanceof Error ? `: ${error.name}: ${error.message}` : '';
    console.error(`[temporal] ${entry.level} ${entry.message}${detail}`);
  });
  if (Runtime._instance) return; // a runtime is already installed in this process
  try {
    Runtime.install({ logger, ...telemetryOptionsFor(telemetry) });
  } catch (err) {
    const address = telemetry?.metrics?.prometheus;
    if (!address) throw err;
    throw new ConfigError(
      `telemetry.metrics.prometheus ${address}: cannot serve metrics there: ${(err as Error).message}`,
    );
  }
  servedPrometheus = telemetry?.metrics?.prometheus;
}

/**
 * `cua worker`: wait for the Temporal server if it is not up yet, run until SIGINT/SIGTERM, then drain and close
 * every browser. A signal while waiting for the server stops the wait.
 */
export async function runWorkerUntilSignal(config: Config, log: (line: string) => void): Promise<void> {
  installWorkerLogging('WARN', config.telemetry);
  const stop = new AbortController();
  let runtime: WorkerRuntime | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: shutting down (finishing running activities, closing browsers)`);
    stop.abort();
    void runtime?.shutdown();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    runtime = await createWorkerRuntime(config, { log, waitForServer: { signal: stop.signal } });
  } catch (err) {
    if (stop.signal.aborted) return log('worker stopped before the Temporal server was reachable');
    throw err;
  }
  if (stop.signal.aborted) await runtime.shutdown();
  await runtime.run();
  log('worker stopped');
}
