// A self-hosted Temporal cluster on one machine, set up the way operators run Temporal: the Temporal server itself
// (go.temporal.io/server's cmd/server, built by scripts/temporal-server.sh into a cache outside the clone) on a private
// PostgreSQL instance (Debian's `postgresql`), schemas applied with the server's own SQL tool and schema files. Used by
// the scale-out test and bench, and by `npm run cluster` (scripts/cluster.ts) for trying workers on several machines.
// Not a production deployment (one process runs all four services, one PostgreSQL without replicas): see
// docs/scale-out.md for what a real one scales with.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { canConnect, freePort, SEARCH_ATTRIBUTE_FLAGS } from './devserver';
import { pickPorts, writeServerConfig } from './cluster-config';
import { postgresBinDir, temporalServerDir, TEMPORAL_SERVER_VERSION } from './build-cache';
import {
  applySchemas,
  ClusterError,
  initPostgres,
  prepareClusterDir,
  spawnPostgres,
  tail,
  waitPostgres,
} from './cluster-postgres';
import type { PostgresPlace } from './cluster-postgres';
import { PROJECT_ROOT, ToolNotFoundError } from './paths';

export { ClusterError } from './cluster-postgres';

/** Builds the Temporal server into the cache when it is missing (scripts/temporal-server.sh prints its progress). */
export function ensureTemporalServer(log: (line: string) => void = (l) => console.log(l)): string {
  try {
    return temporalServerDir();
  } catch (err) {
    if (!(err instanceof ToolNotFoundError)) throw err;
    log(`building the Temporal server ${TEMPORAL_SERVER_VERSION} (scripts/temporal-server.sh, once)`);
    const r = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'temporal-server.sh')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0) throw new ClusterError(`scripts/temporal-server.sh failed (exit ${r.status})`);
    return temporalServerDir();
  }
}

export interface ClusterOptions {
  /** The cluster's folder: PostgreSQL's data, the server's config and logs. Absent: a temp folder, removed by stop(). */
  dir?: string;
  /** The frontend's gRPC port (what workers and clients connect to). Absent: a free port. */
  port?: number;
  /** The PostgreSQL port. Absent: a free port. */
  postgresPort?: number;
  /** The namespace to create (with the search attributes workflows set). Default `default`. */
  namespace?: string;
  /** Progress lines (each step of the set-up). */
  log?: (line: string) => void;
}

export interface TemporalCluster {
  /** host:port of the frontend: TEMPORAL_ADDRESS for workers and clients. */
  address: string;
  namespace: string;
  dir: string;
  postgresPort: number;
  /** The Temporal server process (all four services in one). */
  server: ChildProcess;
  /** The server's log file. */
  serverLog: string;
  /** Kills the server process (SIGKILL by default) and starts it again on the same database; waits until it serves. */
  restartServer(opts?: { signal?: NodeJS.Signals; whileDown?: () => Promise<void> }): Promise<void>;
  /** Stops the server and PostgreSQL; removes the folder when it was a temp folder. */
  stop(): Promise<void>;
}

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const INT = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT;
const DOUBLE = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE;
const INDEXED_TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Int: INT,
  Double: DOUBLE,
  Keyword: KEYWORD,
};

function isAlreadyExists(err: unknown): boolean {
  const e = err as { code?: number; message?: string };
  return e?.code === 6 || /already (exists|registered)/i.test(e?.message ?? '');
}

/** Stops a child: `signal` first, SIGKILL after `graceMs`; resolves once it is gone. */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

/** The cluster's child processes, all SIGKILLed should this Node process exit while they run. */
class Children {
  private readonly running: ChildProcess[] = [];
  readonly killAll = (): void => this.running.forEach((c) => c.kill('SIGKILL'));

  constructor() {
    process.once('exit', this.killAll);
  }

  /** Tracks `child`; with `untilExit`, only until it exits (the server, which restarts). */
  add(child: ChildProcess, untilExit = false): void {
    this.running.push(child);
    if (untilExit) child.once('exit', () => this.running.splice(this.running.indexOf(child), 1));
  }

  /** They were stopped: exiting no longer kills them. */
  release(): void {
    process.off('exit', this.killAll);
  }
}

/** Starts PostgreSQL on `port` and waits until it accepts connections (kills it when it does not). */
async function startPostgres(pg: PostgresPlace, port: number, children: Children): Promise<ChildProcess> {
  const postgres = spawnPostgres(pg, port);
  children.add(postgres);
  try {
    await waitPostgres(pg, postgres, port);
  } catch (err) {
    children.killAll();
    throw err;
  }
  return postgres;
}

/** Where the Temporal server runs from and what it serves. */
interface ServerPlace {
  dir: string;
  serverDir: string;
  serverLog: string;
  /** host:port of the frontend. */
  address: string;
  frontendPort: number;
  namespace: string;
}

/**
 * What a started cluster runs: PostgreSQL, the Temporal server (started again on the same config when restarted) and
 * the one connection used to probe it; and how to shut them down.
 */
class RunningCluster {
  server!: ChildProcess;
  connection: Connection | undefined;

  constructor(
    readonly place: ServerPlace,
    private readonly postgres: ChildProcess,
    private readonly children: Children,
    /** The folder is a temp folder: removed on shut-down. */
    private readonly removeDir: boolean,
  ) {}

  /** All four services in one process, on ports of their own; its output appended to the server log. */
  startServer(): ChildProcess {
    const { dir, serverDir, serverLog } = this.place;
    const fd = fs.openSync(serverLog, 'a');
    const child = spawn(
      path.join(serverDir, 'bin', 'temporal-server'),
      ['--root', dir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
      { cwd: dir, stdio: ['ignore', fd, fd] },
    );
    fs.closeSync(fd);
    this.children.add(child, true);
    this.server = child;
    return child;
  }

  /** Until the frontend's port accepts connections (60 s at most). */
  async waitFrontend(): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!(await canConnect('127.0.0.1', this.place.frontendPort))) {
      if (this.server.exitCode !== null) {
        throw new ClusterError(
          `the Temporal server exited during start (code ${this.server.exitCode}): ${tail(this.place.serverLog)}`,
        );
      }
      if (Date.now() > deadline)
        throw new ClusterError(`the Temporal server did not start: ${tail(this.place.serverLog)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Until the frontend answers and the namespace serves (a restarted history service takes a few seconds). */
  async waitServing(timeoutMs: number, what: string): Promise<void> {
    const { address, frontendPort, namespace, serverLog } = this.place;
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      if (this.server.exitCode !== null) {
        throw new ClusterError(
          `the Temporal server exited during ${what} (code ${this.server.exitCode}): ${tail(serverLog)}`,
        );
      }
      try {
        if (await canConnect('127.0.0.1', frontendPort)) {
          this.connection ??= await Connection.connect({ address, connectTimeout: 2_000 });
          const client = new Client({ connection: this.connection, namespace });
          await client.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
          return;
        }
      } catch (err) {
        last = err;
      }
      if (Date.now() > deadline) {
        throw new ClusterError(
          `the Temporal server did not serve namespace ${namespace} within ${timeoutMs / 1000} s during ${what}: ` +
            `${last ? String(last) : 'no answer'} | ${tail(serverLog)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Stops the server (`signal` first) and PostgreSQL; removes a temp folder. */
  private async shutDown(signal: NodeJS.Signals): Promise<void> {
    await stopChild(this.server, signal);
    await stopChild(this.postgres, 'SIGINT');
    this.children.release();
    if (this.removeDir) fs.rmSync(this.place.dir, { recursive: true, force: true });
  }

  /** After a failed start: shuts everything down; returns the error to throw (why the server exited, if it did). */
  async abortStart(err: unknown): Promise<unknown> {
    this.connection?.close().catch(() => undefined);
    const exited = this.server.exitCode !== null && !(err instanceof ClusterError);
    const why = exited
      ? `the Temporal server exited during start (code ${this.server.exitCode}): ${tail(this.place.serverLog)}`
      : '';
    await this.shutDown('SIGKILL');
    return exited ? new ClusterError(why) : err;
  }

  async stop(): Promise<void> {
    await this.connection?.close().catch(() => undefined);
    await this.shutDown('SIGTERM');
  }
}

/** Retries `attempt` every 500 ms for 60 s; "already exists" counts as done. Returns whether it did the work. */
async function retryUntilExists(attempt: () => Promise<unknown>, failure: string): Promise<boolean> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await attempt();
      return true;
    } catch (err) {
      if (isAlreadyExists(err)) return false;
      if (Date.now() > deadline) throw new ClusterError(`${failure}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The namespace and the search attributes our workflows set (CuaStatus, CuaStep, CuaEvaluation, CuaCost, CuaSchedule). */
async function createNamespace(connection: Connection, namespace: string, log: (line: string) => void): Promise<void> {
  const created = await retryUntilExists(
    () =>
      connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('7 days'),
      }),
    `cannot create namespace ${namespace}`,
  );
  if (created) log(`namespace ${namespace} created`);
  const searchAttributes = Object.fromEntries(
    SEARCH_ATTRIBUTE_FLAGS.map((f) => f.split('=')).map(([name, type]) => [name, INDEXED_TYPES[type ?? ''] ?? KEYWORD]),
  );
  await retryUntilExists(
    () => connection.operatorService.addSearchAttributes({ namespace, searchAttributes }),
    'cannot add the search attributes',
  );
}

/** From the server process just started to a namespace that serves. */
async function bringUp(cluster: RunningCluster, log: (line: string) => void): Promise<void> {
  const { address, namespace } = cluster.place;
  log(`starting the Temporal server ${TEMPORAL_SERVER_VERSION} (frontend ${address})`);
  await cluster.waitFrontend();
  cluster.connection = await Connection.connect({ address });
  await createNamespace(cluster.connection, namespace, log);
  await cluster.waitServing(60_000, 'start');
  log(`the Temporal cluster serves namespace ${namespace} at ${address}`);
}

/** The handle startCluster returns: `server` follows the process a restart starts. */
function clusterHandle(running: RunningCluster, postgresPort: number): TemporalCluster {
  const { address, namespace, dir, serverLog } = running.place;
  const cluster: TemporalCluster = {
    address,
    namespace,
    dir,
    postgresPort,
    server: running.server,
    serverLog,
    async restartServer(restart = {}) {
      await stopChild(running.server, restart.signal ?? 'SIGKILL');
      await restart.whileDown?.();
      cluster.server = running.startServer();
      await running.waitServing(90_000, 'restart');
    },
    stop: () => running.stop(),
  };
  return cluster;
}

/**
 * Starts PostgreSQL and the Temporal server on it, creates the namespace with our search attributes, and resolves
 * once a client can start workflows. A folder used before (its database initialised) is started again as it was.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<TemporalCluster> {
  const log = opts.log ?? (() => undefined);
  const namespace = opts.namespace ?? 'default';
  const serverDir = temporalServerDir();
  const pgBin = postgresBinDir();
  const temp = !opts.dir;
  const dir = path.resolve(opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cua-cluster-')));
  const pg: PostgresPlace = { dir, bin: pgBin, user: prepareClusterDir(dir) };
  const children = new Children();

  // 1. PostgreSQL: a private instance (its own data folder and port), trust authentication on 127.0.0.1.
  initPostgres(pg, log);
  const postgresPort = opts.postgresPort ?? (await freePort());
  const postgres = await startPostgres(pg, postgresPort, children);
  log(`PostgreSQL ${path.basename(path.dirname(pgBin))} serving on 127.0.0.1:${postgresPort}`);

  // 2. Schemas, with the server's own SQL tool and schema files (once per folder).
  await applySchemas(dir, serverDir, postgresPort, log);

  // 3. The server: all four services in one process, on ports of their own.
  const ports = await pickPorts(opts.port);
  if (await canConnect('127.0.0.1', ports.frontend)) {
    children.killAll();
    throw new ClusterError(`port 127.0.0.1:${ports.frontend} is already in use (is a Temporal server running?)`);
  }
  writeServerConfig(dir, ports, postgresPort);
  const address = `127.0.0.1:${ports.frontend}`;
  const serverLog = path.join(dir, 'temporal-server.log');
  const place = { dir, serverDir, serverLog, address, frontendPort: ports.frontend, namespace };
  const running = new RunningCluster(place, postgres, children, temp);
  running.startServer();
  try {
    // 4. The namespace and the search attributes, then until it serves.
    await bringUp(running, log);
  } catch (err) {
    throw await running.abortStart(err);
  }
  return clusterHandle(running, postgresPort);
}
