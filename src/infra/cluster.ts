// A self-hosted Temporal cluster on one machine, set up the way operators run Temporal: the Temporal server itself
// (go.temporal.io/server's cmd/server, built by scripts/temporal-server.sh into a cache outside the clone) on a private
// PostgreSQL instance (Debian's `postgresql`), schemas applied with the server's own SQL tool and schema files. Used by
// the scale-out test and bench, and by `npm run cluster` (scripts/cluster.ts) for trying workers on several machines.
// Not a production deployment (one process runs all four services, one PostgreSQL without replicas): see
// docs/scale-out.md for what a real one scales with.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { canConnect, freePort, SEARCH_ATTRIBUTE_FLAGS } from './devserver';
import { postgresBinDir, temporalServerDir, TEMPORAL_SERVER_VERSION } from './build-cache';
import { PROJECT_ROOT, ToolNotFoundError } from './paths';

/** The database user the server connects as (trust authentication on 127.0.0.1 only). */
const DB_USER = 'temporal';

export class ClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

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

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` system user. */
function postgresIdentity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid || !gid) {
    throw new ClusterError('running as root, PostgreSQL needs the `postgres` system user (apt-get install postgresql)');
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/** Every folder above `dir` must let other users through (the `postgres` user reaches its data folder). */
function checkTraversable(dir: string): void {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) {
      throw new ClusterError(
        `the cluster folder ${dir} is inside ${d}, which the postgres user cannot enter: ` +
          'choose a folder outside it (e.g. under /var/lib or /tmp)',
      );
    }
    if (d === path.dirname(d)) return;
  }
}

function run(cmd: string, args: string[], opts: { uid?: number; gid?: number; cwd?: string } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-4).join(' | ');
    throw new ClusterError(`${path.basename(cmd)} ${args.join(' ')} failed (exit ${r.status}): ${out || r.error}`);
  }
  return r.stdout;
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

interface Ports {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: [number, number, number, number];
}

/** Whether 127.0.0.1:port can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Ports for the services. Membership ports are stored in a smallint column (cluster_membership.rpc_port), so they
 * must stay below 32768, under the range the kernel hands out for "any free port": they are drawn at random there.
 */
async function pickPorts(frontend: number | undefined): Promise<Ports> {
  const taken = new Set<number>(frontend ? [frontend] : []);
  const next = async (low?: boolean): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      const p = low ? 20_000 + Math.floor(Math.random() * 12_000) : await freePort();
      if (!taken.has(p) && (!low || (await canListen(p)))) {
        taken.add(p);
        return p;
      }
      if (attempt > 200) throw new ClusterError('cannot find free ports for the Temporal server');
    }
  };
  return {
    frontend: frontend ?? (await next()),
    frontendHttp: await next(),
    history: await next(),
    matching: await next(),
    worker: await next(),
    membership: [await next(true), await next(true), await next(true), await next(true)],
  };
}

/** The server's static config: PostgreSQL for both stores, every service on 127.0.0.1 on its own port. */
function serverConfig(ports: Ports, pgPort: number, dynamicConfig: string): string {
  const store = (db: string, conns: number) => `
      sql:
        pluginName: "postgres12"
        databaseName: "${db}"
        connectAddr: "127.0.0.1:${pgPort}"
        connectProtocol: "tcp"
        user: "${DB_USER}"
        password: "${DB_USER}"
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `# Written by src/infra/cluster.ts: a one-machine Temporal cluster on PostgreSQL.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${store('temporal', 20)}
    postgres-visibility:${store('temporal_visibility', 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
services:
  frontend:${service(ports.frontend, ports.membership[0], ports.frontendHttp)}
  history:${service(ports.history, ports.membership[1])}
  matching:${service(ports.matching, ports.membership[2])}
  worker:${service(ports.worker, ports.membership[3])}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.frontend}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${dynamicConfig}"
  pollInterval: "10s"
`;
}

/** What our workflows use, switched on explicitly (updates carry replies; search attributes are seen at once). */
const DYNAMIC_CONFIG = `# Written by src/infra/cluster.ts
frontend.enableUpdateWorkflowExecution:
  - value: true
frontend.enableExecuteMultiOperation:
  - value: true
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
limit.maxIDLength:
  - value: 255
`;

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const INT = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT;

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

function tail(file: string, lines = 4): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ');
  } catch {
    return '';
  }
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
  fs.mkdirSync(dir, { recursive: true });
  const pgUser = postgresIdentity();
  if (pgUser) {
    checkTraversable(dir);
    fs.chmodSync(dir, 0o711);
  }
  const pgData = path.join(dir, 'postgres');
  const pgSockets = path.join(dir, 'postgres-sockets');
  const children: ChildProcess[] = [];
  const killAllOnExit = () => children.forEach((c) => c.kill('SIGKILL'));
  process.once('exit', killAllOnExit);

  // 1. PostgreSQL: a private instance (its own data folder and port), trust authentication on 127.0.0.1.
  if (!fs.existsSync(path.join(pgData, 'PG_VERSION'))) {
    log(`initialising PostgreSQL in ${pgData}`);
    for (const d of [pgData, pgSockets]) {
      fs.mkdirSync(d, { recursive: true, mode: 0o700 });
      if (pgUser) fs.chownSync(d, pgUser.uid, pgUser.gid);
    }
    run(
      path.join(pgBin, 'initdb'),
      ['-D', pgData, '-U', DB_USER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...pgUser, cwd: dir },
    );
  }
  const postgresPort = opts.postgresPort ?? (await freePort());
  const pgLog = path.join(dir, 'postgres.log');
  const pgFd = fs.openSync(pgLog, 'a');
  if (pgUser) fs.fchownSync(pgFd, pgUser.uid, pgUser.gid);
  const postgres = spawn(
    path.join(pgBin, 'postgres'),
    [
      ...['-D', pgData, '-p', String(postgresPort), '-k', pgSockets],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'synchronous_commit=off', '-c', 'max_connections=200'],
    ],
    { ...pgUser, cwd: dir, stdio: ['ignore', pgFd, pgFd] },
  );
  fs.closeSync(pgFd);
  children.push(postgres);
  const pgDeadline = Date.now() + 30_000;
  while (!(await canConnect('127.0.0.1', postgresPort))) {
    if (postgres.exitCode !== null || Date.now() > pgDeadline) {
      killAllOnExit();
      throw new ClusterError(`PostgreSQL did not start on 127.0.0.1:${postgresPort}: ${tail(pgLog)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`PostgreSQL ${path.basename(path.dirname(pgBin))} serving on 127.0.0.1:${postgresPort}`);

  // 2. Schemas, with the server's own SQL tool and schema files (once per folder).
  const schemaDone = path.join(dir, `schema-${TEMPORAL_SERVER_VERSION}.done`);
  if (!fs.existsSync(schemaDone)) {
    const sqlTool = path.join(serverDir, 'bin', 'temporal-sql-tool');
    for (const [db, schema] of [
      ['temporal', 'temporal'],
      ['temporal_visibility', 'visibility'],
    ] as const) {
      log(`applying the ${schema} schema to database ${db}`);
      const common = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(postgresPort)];
      const as = ['-u', DB_USER, '--pw', DB_USER, '--db', db];
      for (let attempt = 1; ; attempt++) {
        try {
          run(sqlTool, [...common, ...as, 'create-database']);
          break;
        } catch (err) {
          // Accepting connections a moment before it accepts logins.
          if (attempt >= 20 || /already exists/.test(String(err))) {
            if (/already exists/.test(String(err))) break;
            throw err;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      run(sqlTool, [...common, ...as, 'setup-schema', '-v', '0.0']);
      const versioned = path.join(serverDir, 'schema', 'postgresql', 'v12', schema, 'versioned');
      run(sqlTool, [...common, ...as, 'update-schema', '-d', versioned]);
    }
    fs.writeFileSync(schemaDone, `${new Date().toISOString()}\n`);
  }

  // 3. The server: all four services in one process, on ports of their own.
  const ports = await pickPorts(opts.port);
  if (await canConnect('127.0.0.1', ports.frontend)) {
    killAllOnExit();
    throw new ClusterError(`port 127.0.0.1:${ports.frontend} is already in use (is a Temporal server running?)`);
  }
  const configDir = path.join(dir, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  const dynamicConfig = path.join(configDir, 'dynamicconfig.yaml');
  fs.writeFileSync(dynamicConfig, DYNAMIC_CONFIG);
  fs.writeFileSync(path.join(configDir, 'cluster.yaml'), serverConfig(ports, postgresPort, dynamicConfig));
  const serverLog = path.join(dir, 'temporal-server.log');
  const address = `127.0.0.1:${ports.frontend}`;
  const startServer = (): ChildProcess => {
    const fd = fs.openSync(serverLog, 'a');
    const child = spawn(
      path.join(serverDir, 'bin', 'temporal-server'),
      ['--root', dir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
      { cwd: dir, stdio: ['ignore', fd, fd] },
    );
    fs.closeSync(fd);
    children.push(child);
    child.once('exit', () => children.splice(children.indexOf(child), 1));
    return child;
  };

  let connection: Connection | undefined;
  /** Until the frontend answers and the namespace serves (a restarted history service takes a few seconds). */
  const waitServing = async (child: ChildProcess, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      if (child.exitCode !== null) {
        throw new ClusterError(
          `the Temporal server exited during ${what} (code ${child.exitCode}): ${tail(serverLog)}`,
        );
      }
      try {
        if (await canConnect('127.0.0.1', ports.frontend)) {
          connection ??= await Connection.connect({ address, connectTimeout: 2_000 });
          const client = new Client({ connection, namespace });
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
  };

  let server = startServer();
  try {
    log(`starting the Temporal server ${TEMPORAL_SERVER_VERSION} (frontend ${address})`);
    const frontDeadline = Date.now() + 60_000;
    while (!(await canConnect('127.0.0.1', ports.frontend))) {
      if (server.exitCode !== null) {
        throw new ClusterError(`the Temporal server exited during start (code ${server.exitCode}): ${tail(serverLog)}`);
      }
      if (Date.now() > frontDeadline) throw new ClusterError(`the Temporal server did not start: ${tail(serverLog)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    connection = await Connection.connect({ address });
    // 4. The namespace and the search attributes our workflows set (CuaStatus, CuaStep, CuaEvaluation).
    const nsDeadline = Date.now() + 60_000;
    for (;;) {
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs('7 days'),
        });
        log(`namespace ${namespace} created`);
        break;
      } catch (err) {
        if (isAlreadyExists(err)) break;
        if (Date.now() > nsDeadline) throw new ClusterError(`cannot create namespace ${namespace}: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const searchAttributes = Object.fromEntries(
      SEARCH_ATTRIBUTE_FLAGS.map((f) => f.split('=')).map(([name, type]) => [name, type === 'Int' ? INT : KEYWORD]),
    );
    const saDeadline = Date.now() + 60_000;
    for (;;) {
      try {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
        break;
      } catch (err) {
        if (isAlreadyExists(err)) break;
        if (Date.now() > saDeadline) throw new ClusterError(`cannot add the search attributes: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await waitServing(server, 60_000, 'start');
    log(`the Temporal cluster serves namespace ${namespace} at ${address}`);
  } catch (err) {
    connection?.close().catch(() => undefined);
    const exited = server.exitCode !== null && !(err instanceof ClusterError);
    const why = exited ? `the Temporal server exited during start (code ${server.exitCode}): ${tail(serverLog)}` : '';
    await stopChild(server, 'SIGKILL');
    await stopChild(postgres, 'SIGINT');
    process.off('exit', killAllOnExit);
    if (temp) fs.rmSync(dir, { recursive: true, force: true });
    throw exited ? new ClusterError(why) : err;
  }

  const cluster: TemporalCluster = {
    address,
    namespace,
    dir,
    postgresPort,
    server,
    serverLog,
    async restartServer(restart = {}) {
      await stopChild(server, restart.signal ?? 'SIGKILL');
      await restart.whileDown?.();
      server = startServer();
      cluster.server = server;
      await waitServing(server, 90_000, 'restart');
    },
    async stop() {
      await connection?.close().catch(() => undefined);
      await stopChild(server, 'SIGTERM');
      await stopChild(postgres, 'SIGINT');
      process.off('exit', killAllOnExit);
      if (temp) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}
