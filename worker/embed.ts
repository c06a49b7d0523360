// `durable-cua/worker`: host an agent worker inside an application's own process, with its own configuration object
// (no file needed), its own model-endpoint resolver and, optionally, its own Playwright browser, environments of its
// own beside the browser and the desktop, and activities of its own. The same worker as
// `cua worker`: workflows and model calls on the shared task queue, browsers and desktops on its own session queue.
import type { NativeConnection } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/worker';
import type { Browser } from 'playwright';
import type { ModelEndpoint } from '../src/model/client';
import type { ModelEndpointRequest, ModelEndpointResolver } from '../src/model/endpoint-policy';
import { ConfigError } from '../src/common/config-error';
import { configFromObject, loadConfig } from '../src/runtime/config';
import type { Config, ConfigInput } from '../src/runtime/config';
import { TemporalUnreachableError } from '../src/runtime/connect';
import { createWorkerRuntime, installWorkerLogging } from './main';
import type { ActionTarget } from '../src/actions/target';
import { EnvironmentSessionLostError } from '../src/environments/plugin';
import type { CustomEnvironment, EnvironmentOpenRequest, EnvironmentSession } from '../src/environments/plugin';

import { registerFamily } from '../src/families/registry';
import type { ModelFamily } from '../src/families/family';

export { ConfigError, EnvironmentSessionLostError, TemporalUnreachableError };
/** A model family of the application's own: register it before the worker starts (and where tasks are started). */
export { registerFamily };
export type { ModelFamily };
export type { Config, ModelEndpoint, ModelEndpointRequest, ModelEndpointResolver };
export type { ActionTarget, CustomEnvironment, EnvironmentOpenRequest, EnvironmentSession };
/** The worker's configuration as an object: the shape of cua.config.json, every field optional. */
export type AgentWorkerConfig = ConfigInput;

export interface AgentWorkerOptions {
  /** The configuration (temporal, taskQueue, runsDir, models, browser, urlPolicy, encryption, …). Default: all defaults. */
  config?: AgentWorkerConfig;
  /** Read the configuration from this file instead, with environment overrides, as `cua worker --config` does. */
  configFile?: string;
  /**
   * Environment overrides for `config` applied as the CLI applies them (TEMPORAL_ADDRESS, CUA_MODEL_BASE_URL,
   * CUA_ENCRYPTION_KEYS, …); pass `process.env` to honour them. Default: none.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Where named model endpoints come from, in place of `config.models`: called at each model call with the endpoint
   * name and the task; returns the endpoint (base URL, model, key) or undefined for the config's entry. Its keys obey
   * the same rule as configured ones: sent only to the base URL returned with them (see ModelEndpointResolver).
   */
  modelEndpoints?: ModelEndpointResolver;
  /** A Playwright browser (remote, or launched your way) for the browser sessions; the worker never closes it. */
  browser?: Browser;
  /**
   * Environments beside the browser and the desktop: each a name tasks give in `environment` and an `open()` that
   * returns a session taking the browser agent's actions (CustomEnvironment, EnvironmentSession). Every worker on
   * the task queue must host the environments its tasks name.
   */
  environments?: readonly CustomEnvironment[];
  /**
   * The application's own activities, registered beside the agent's on the shared task queue (for workflows of the
   * application's that run there, e.g. one starting agent tasks as children); a name of the agent's is refused.
   */
  activities?: Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;
  /** The worker's own lines (ready, sessions opened, desktop support). Default: none. */
  log?: (line: string) => void;
  /**
   * The Temporal SDK's log level for this process (default WARN; CUA_LOG_LEVEL overrides). `false` leaves the
   * process's Temporal runtime as the application installed it: the agent's metrics then go to that runtime's
   * exporter, and `telemetry.metrics.prometheus` is not served (docs/observability.md).
   */
  logLevel?: LogLevel | false;
  /** An existing connection to Temporal (then not closed by the worker); default: one from `config.temporal`. */
  connection?: NativeConnection;
  /**
   * When the Temporal server is not reachable yet: wait for it, retrying with backoff and saying so once through
   * `log` (true, or `{ signal }` to be able to stop waiting), or throw TemporalUnreachableError at once (false).
   * Default: false for createAgentWorker, true for runAgentWorker (a service a process manager may start first).
   */
  waitForServer?: boolean | { signal?: AbortSignal };
}

export interface AgentWorker {
  /** The configuration in effect (defaults and derived limits filled in). */
  readonly config: Config;
  /** The shared task queue tasks are started on. */
  readonly taskQueue: string;
  /** This process's own queue: the observe/act of the sessions it owns go there. */
  readonly sessionQueue: string;
  /** Polls until shutdown() (or a fatal error); resolves once every browser and desktop is closed. */
  run(): Promise<void>;
  /** Stops polling, lets running activities finish (up to 5 s), closes its browsers and desktops. */
  shutdown(): Promise<void>;
}

function configOf(options: AgentWorkerOptions): Config {
  if (options.configFile !== undefined && options.config !== undefined) {
    throw new ConfigError('give the worker config or configFile, not both');
  }
  const config =
    options.configFile !== undefined
      ? loadConfig({ file: options.configFile, ...(options.env ? { env: options.env } : {}) })
      : configFromObject(options.config ?? {}, { env: options.env ?? {} });
  return options.modelEndpoints ? { ...config, modelEndpointResolver: options.modelEndpoints } : config;
}

/**
 * Connects to Temporal, bundles the workflow code and creates the worker; call `run()` to start polling. Throws
 * ConfigError for a configuration that is wrong and TemporalUnreachableError when the server does not answer.
 */
export async function createAgentWorker(options: AgentWorkerOptions = {}): Promise<AgentWorker> {
  const config = configOf(options);
  if (options.logLevel !== false) installWorkerLogging(options.logLevel ?? 'WARN', config.telemetry);
  const runtime = await createWorkerRuntime(config, {
    ...(options.log ? { log: options.log } : {}),
    ...(options.connection ? { connection: options.connection } : {}),
    ...(options.browser ? { browser: options.browser } : {}),
    ...(options.environments ? { environments: options.environments } : {}),
    ...(options.activities ? { activities: options.activities } : {}),
    ...(options.waitForServer ? { waitForServer: options.waitForServer } : {}),
  });
  return {
    config,
    taskQueue: config.taskQueue,
    sessionQueue: runtime.sessionQueue,
    run: () => runtime.run(),
    shutdown: () => runtime.shutdown(),
  };
}

export interface RunAgentWorkerOptions extends AgentWorkerOptions {
  /** Shut down when this signal aborts. */
  signal?: AbortSignal;
  /** Shut down on SIGINT and SIGTERM (default true). */
  handleSignals?: boolean;
}

/** Creates a worker and runs it until `signal` aborts, SIGINT/SIGTERM, or a fatal error; resolves once it stopped. */
export async function runAgentWorker(options: RunAgentWorkerOptions = {}): Promise<void> {
  const waiting = new AbortController();
  let worker: AgentWorker | undefined;
  const stop = () => {
    waiting.abort();
    void worker?.shutdown();
  };
  const signals: NodeJS.Signals[] = options.handleSignals === false ? [] : ['SIGINT', 'SIGTERM'];
  for (const s of signals) process.once(s, stop);
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();
  try {
    const wait = options.waitForServer ?? true;
    worker = await createAgentWorker({ ...options, waitForServer: wait === true ? { signal: waiting.signal } : wait });
    if (waiting.signal.aborted) await worker.shutdown();
    await worker.run();
  } finally {
    for (const s of signals) process.removeListener(s, stop);
    options.signal?.removeEventListener('abort', stop);
  }
}
