// The pieces built or installed once into a cache outside the clone (CUA_CACHE_DIR, default ~/.cache/durable-cua),
// or found on the machine, that only the shared run store's tests, the cluster test and bench, and `npm run cluster`
// use: rclone (scripts/rclone.sh), the Temporal server built from Go (scripts/temporal-server.sh) and PostgreSQL; and
// Jaeger (scripts/jaeger.sh), the trace receiver only the traces test uses.
// Only lookups here (no process is started), so a check for them costs nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolNotFoundError } from './paths';

export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const RCLONE_VERSION = 'v1.76.0';
export const JAEGER_VERSION = 'v1.76.0';

/** The cache scripts/rclone.sh and scripts/temporal-server.sh build into. */
export function cacheDir(): string {
  return process.env.CUA_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'durable-cua');
}

/** The built server, its SQL tool, schema files and config folder (CUA_TEMPORAL_SERVER_DIR, else the build cache). */
export function temporalServerDir(): string {
  const dir =
    process.env.CUA_TEMPORAL_SERVER_DIR ?? path.join(cacheDir(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  const needed = ['bin/temporal-server', 'bin/temporal-sql-tool', 'schema/postgresql/v12/temporal/versioned'];
  if (!needed.every((f) => fs.existsSync(path.join(dir, f)))) {
    throw new ToolNotFoundError(
      `The Temporal server ${TEMPORAL_SERVER_VERSION} (${dir})`,
      'Run `bash scripts/temporal-server.sh` (builds it with Go, about 10 min once).',
    );
  }
  return dir;
}

/** rclone v1.76.0 (`serve s3` needs ≥ 1.65; Debian's is 1.60): CUA_RCLONE_BIN, else the build cache. */
export function rclonePath(): string {
  const candidates = [process.env.CUA_RCLONE_BIN, path.join(cacheDir(), 'bin', `rclone-${RCLONE_VERSION}`, 'rclone')];
  const found = candidates.find((c): c is string => !!c && fs.existsSync(c));
  if (!found)
    throw new ToolNotFoundError(`rclone ${RCLONE_VERSION}`, 'Run `bash scripts/rclone.sh` (or set CUA_RCLONE_BIN).');
  return found;
}

/** Jaeger's all-in-one (cmd/jaeger of v1.76.0): CUA_JAEGER_BIN, else the build cache. */
export function jaegerPath(): string {
  const candidates = [process.env.CUA_JAEGER_BIN, path.join(cacheDir(), 'bin', `jaeger-${JAEGER_VERSION}`, 'jaeger')];
  const found = candidates.find((c): c is string => !!c && fs.existsSync(c));
  if (!found) {
    throw new ToolNotFoundError(
      `Jaeger ${JAEGER_VERSION}`,
      'Run `bash scripts/setup.sh traces` (builds it with Go, about 10 min once; or set CUA_JAEGER_BIN).',
    );
  }
  return found;
}

/** PostgreSQL's server programs: CUA_PG_BIN, else Debian's newest /usr/lib/postgresql/<n>/bin, else PATH. */
export function postgresBinDir(): string {
  const candidates: string[] = [];
  if (process.env.CUA_PG_BIN) candidates.push(process.env.CUA_PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs
      .readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, 'bin')));
  }
  candidates.push(...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean));
  const found = candidates.find(
    (d) => fs.existsSync(path.join(d, 'initdb')) && fs.existsSync(path.join(d, 'postgres')),
  );
  if (!found) {
    throw new ToolNotFoundError(
      'PostgreSQL (initdb, postgres)',
      'Install it: sudo apt-get install -y postgresql (or set CUA_PG_BIN to its bin folder).',
    );
  }
  return found;
}
