// `npm run cluster`: a self-hosted Temporal cluster on this machine (the Temporal server v1.29.1 on a private
// PostgreSQL), for running workers on several machines against one server the way operators do. Builds the server
// once (scripts/temporal-server.sh), keeps its database in --dir between runs, and stops on Ctrl-C.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureTemporalServer, startCluster } from '../src/infra/cluster';
import { dataDir } from '../src/infra/paths';

const USAGE = `usage: npm run cluster -- [--dir DIR] [--port PORT] [--postgres-port PORT] [--namespace NAME]

Starts PostgreSQL and the Temporal server ${'v1.29.1'} on it, creates the namespace with the search attributes the
agent's workflows set, and serves until Ctrl-C. Workers and clients on any machine that reaches it:
  TEMPORAL_ADDRESS=<host:port> npx cua worker      (with config store.kind "s3": see docs/scale-out.md)

  --dir DIR             the cluster's folder: database, config, logs (default: data/cluster; as root
                        /var/lib/durable-cua/cluster, a folder the postgres user can reach)
  --port PORT           the frontend's port (default 7233)
  --postgres-port PORT  PostgreSQL's port (default: a free one)
  --namespace NAME      default: default`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        dir: { type: 'string' },
        port: { type: 'string' },
        'postgres-port': { type: 'string' },
        namespace: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const port = (name: string, v: string | undefined, fallback?: number): number | undefined => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--${name} must be a port number (1-65535)`);
    return n;
  };
  let frontend: number | undefined;
  let postgresPort: number | undefined;
  try {
    frontend = port('port', values.port, 7233);
    postgresPort = port('postgres-port', values['postgres-port']);
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const dir = path.resolve(
    values.dir ?? (process.getuid?.() === 0 ? '/var/lib/durable-cua/cluster' : path.join(dataDir(), 'cluster')),
  );
  const log = (line: string) => console.log(`[cluster] ${line}`);
  ensureTemporalServer(log);
  const cluster = await startCluster({
    dir,
    ...(frontend ? { port: frontend } : {}),
    ...(postgresPort ? { postgresPort } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
    log,
  });
  log(`ready: TEMPORAL_ADDRESS=${cluster.address} (namespace ${cluster.namespace}); logs in ${cluster.dir}`);
  log('Ctrl-C stops the server and PostgreSQL (the database stays in the folder)');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    cluster.server.once('exit', (code, signal) => {
      log(`the Temporal server exited (${signal ?? `code ${code}`}); see ${cluster.serverLog}`);
      resolve();
    });
  });
  log('stopping');
  await cluster.stop();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`[cluster] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
