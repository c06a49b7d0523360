// The PostgreSQL half of the one-machine Temporal cluster (src/infra/cluster.ts): the cluster's folder, a private
// PostgreSQL instance in it (run as the `postgres` system user when we are root), and the Temporal schemas applied to
// it with the server's own SQL tool and schema files. Also the cluster's error class and the log helper the other
// cluster modules use (cluster.ts re-exports ClusterError).
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { canConnect } from './devserver';
import { TEMPORAL_SERVER_VERSION } from './build-cache';

/** The database user the server connects as (trust authentication on 127.0.0.1 only). */
export const DB_USER = 'temporal';

export class ClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Who runs PostgreSQL's programs: undefined for ourselves, or the `postgres` system user's ids when we are root. */
export type PostgresUser = { uid: number; gid: number } | undefined;

/** Where one cluster's PostgreSQL lives and runs from. */
export interface PostgresPlace {
  /** The cluster's folder (PostgreSQL's data, sockets and log are inside it). */
  dir: string;
  /** The folder of initdb and postgres. */
  bin: string;
  user: PostgresUser;
}

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` system user. */
function postgresIdentity(): PostgresUser {
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

/** The last lines of a log file, on one line ('' when it cannot be read). */
export function tail(file: string, lines = 4): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ');
  } catch {
    return '';
  }
}

/** Creates the cluster's folder; as root, checks and opens it for the `postgres` user. Returns who runs PostgreSQL. */
export function prepareClusterDir(dir: string): PostgresUser {
  fs.mkdirSync(dir, { recursive: true });
  const user = postgresIdentity();
  if (user) {
    checkTraversable(dir);
    fs.chmodSync(dir, 0o711);
  }
  return user;
}

const dataDir = (pg: PostgresPlace): string => path.join(pg.dir, 'postgres');
const socketsDir = (pg: PostgresPlace): string => path.join(pg.dir, 'postgres-sockets');
const logFile = (pg: PostgresPlace): string => path.join(pg.dir, 'postgres.log');

/** A private instance (its own data folder), trust authentication: initialised unless the folder already has one. */
export function initPostgres(pg: PostgresPlace, log: (line: string) => void): void {
  const pgData = dataDir(pg);
  if (fs.existsSync(path.join(pgData, 'PG_VERSION'))) return;
  log(`initialising PostgreSQL in ${pgData}`);
  for (const d of [pgData, socketsDir(pg)]) {
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    if (pg.user) fs.chownSync(d, pg.user.uid, pg.user.gid);
  }
  run(
    path.join(pg.bin, 'initdb'),
    ['-D', pgData, '-U', DB_USER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    {
      ...pg.user,
      cwd: pg.dir,
    },
  );
}

/** Starts the postgres process on 127.0.0.1:`port` (its own port), its output appended to postgres.log. */
export function spawnPostgres(pg: PostgresPlace, port: number): ChildProcess {
  const pgFd = fs.openSync(logFile(pg), 'a');
  if (pg.user) fs.fchownSync(pgFd, pg.user.uid, pg.user.gid);
  const postgres = spawn(
    path.join(pg.bin, 'postgres'),
    [
      ...['-D', dataDir(pg), '-p', String(port), '-k', socketsDir(pg)],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'synchronous_commit=off', '-c', 'max_connections=200'],
    ],
    { ...pg.user, cwd: pg.dir, stdio: ['ignore', pgFd, pgFd] },
  );
  fs.closeSync(pgFd);
  return postgres;
}

/** Until PostgreSQL accepts connections on `port`; throws when it exits first or takes over 30 s. */
export async function waitPostgres(pg: PostgresPlace, postgres: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await canConnect('127.0.0.1', port))) {
    if (postgres.exitCode !== null || Date.now() > deadline) {
      throw new ClusterError(`PostgreSQL did not start on 127.0.0.1:${port}: ${tail(logFile(pg))}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The temporal-sql-tool arguments that reach database `db` on 127.0.0.1:`port` as DB_USER. */
function sqlToolTarget(port: number, db: string): string[] {
  return [
    ...['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(port)],
    ...['-u', DB_USER, '--pw', DB_USER, '--db', db],
  ];
}

/** Creates database `db`, retrying while PostgreSQL accepts connections but not yet logins; one that exists is kept. */
async function createDatabase(sqlTool: string, target: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      run(sqlTool, [...target, 'create-database']);
      return;
    } catch (err) {
      // Accepting connections a moment before it accepts logins.
      if (attempt >= 20 || /already exists/.test(String(err))) {
        if (/already exists/.test(String(err))) return;
        throw err;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Schemas, with the server's own SQL tool and schema files (once per folder and server version). */
export async function applySchemas(
  dir: string,
  serverDir: string,
  port: number,
  log: (line: string) => void,
): Promise<void> {
  const schemaDone = path.join(dir, `schema-${TEMPORAL_SERVER_VERSION}.done`);
  if (fs.existsSync(schemaDone)) return;
  const sqlTool = path.join(serverDir, 'bin', 'temporal-sql-tool');
  for (const [db, schema] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    log(`applying the ${schema} schema to database ${db}`);
    const target = sqlToolTarget(port, db);
    await createDatabase(sqlTool, target);
    run(sqlTool, [...target, 'setup-schema', '-v', '0.0']);
    const versioned = path.join(serverDir, 'schema', 'postgresql', 'v12', schema, 'versioned');
    run(sqlTool, [...target, 'update-schema', '-d', versioned]);
  }
  fs.writeFileSync(schemaDone, `${new Date().toISOString()}\n`);
}
