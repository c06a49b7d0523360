// `cua server | worker | dev | scripted-model`: the long-running processes.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from '../../src/infra/paths';
import { startDevServer } from '../../src/infra/devserver';
import { startScriptedModelServer } from '../../src/scripted/server';
import { loadConfig } from '../../src/runtime/config';
import { withControlPlane } from '../../src/runtime/control-plane';
import { runWorkerUntilSignal } from '../../worker/main';
import { intFlag, parse, UsageError } from '../args';

const help = { help: { type: 'boolean', short: 'h' } } as const;

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

export const SERVER_USAGE =
  'npx cua server [--port 7233] [--ui-port 8233] [--db FILE] [--headless] [--ui-codec-endpoint URL] [--sync-every-commit]';
export async function serverCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      ...help,
      port: { type: 'string' },
      'ui-port': { type: 'string' },
      db: { type: 'string' },
      headless: { type: 'boolean' },
      'ui-codec-endpoint': { type: 'string' },
      'sync-every-commit': { type: 'boolean' },
    },
    SERVER_USAGE,
  );
  if (values.help) return (console.log(`usage: ${SERVER_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${SERVER_USAGE}`);
  const dbFile = path.resolve(values.db ?? path.join(dataDir(), 'temporal.sqlite'));
  const server = await startDevServer({
    dbFile,
    port: intFlag(values.port, 'port') ?? 7233,
    uiPort: intFlag(values['ui-port'], 'ui-port') ?? 8233,
    headless: !!values.headless,
    syncEveryCommit: !!values['sync-every-commit'],
    ...(values['ui-codec-endpoint'] ? { uiCodecEndpoint: values['ui-codec-endpoint'] } : {}),
    output: path.join(dataDir(), 'temporal-server.log'),
    onRetry: (l) => console.log(l),
  });
  const commits = values['sync-every-commit'] ? 'each commit flushed to the disk' : 'write-ahead log';
  console.log(`Temporal dev server on ${server.address} (SQLite: ${dbFile}, ${commits})`);
  if (server.uiUrl) console.log(`Web UI: ${server.uiUrl}`);
  if (server.uiUrl && values['ui-codec-endpoint'])
    console.log(`the UI decodes payloads via ${values['ui-codec-endpoint']}`);
  console.log('search attributes CuaStatus (Keyword) and CuaStep (Int) registered; Ctrl-C stops the server');
  await Promise.race([waitForSignal(), new Promise((r) => server.process.once('exit', r))]);
  await server.stop();
  return 0;
}

export const WORKER_USAGE = 'npx cua worker [--config FILE]';
export async function workerCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...help, config: { type: 'string' } }, WORKER_USAGE);
  if (values.help) return (console.log(`usage: ${WORKER_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${WORKER_USAGE}`);
  await runWorkerUntilSignal(loadConfig({ file: values.config }), (l) => console.log(l));
  return 0;
}

export const DEV_USAGE =
  'npx cua dev [--config FILE] [--ui-codec-endpoint URL]   (dev server with UI on :8233 + a worker)';
export async function devCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(
    argv,
    { ...help, config: { type: 'string' }, 'ui-codec-endpoint': { type: 'string' } },
    DEV_USAGE,
  );
  if (values.help) return (console.log(`usage: ${DEV_USAGE}`), 0);
  const config = loadConfig({ file: values.config });
  const dbFile = path.join(dataDir(), 'temporal.sqlite');
  const [host, port] = config.temporal.address.split(':');
  const server = await startDevServer({
    dbFile,
    ip: host,
    port: Number(port),
    uiPort: Number(port) + 1000,
    ...(values['ui-codec-endpoint'] ? { uiCodecEndpoint: values['ui-codec-endpoint'] } : {}),
    output: path.join(dataDir(), 'temporal-server.log'),
    onRetry: (l) => console.log(l),
  });
  console.log(`Temporal dev server on ${server.address}; Web UI: ${server.uiUrl}`);
  try {
    // What this command started is the worker's control plane too: its browsers may not open the UI or the codec.
    const started = [server.uiUrl, values['ui-codec-endpoint']].filter((a): a is string => !!a);
    await runWorkerUntilSignal(withControlPlane(config, started), (l) => console.log(l));
  } finally {
    await server.stop();
  }
  return 0;
}

/** The script names (file names without .json) in a folder, or undefined when it is not a readable folder. */
function scriptNames(dir: string): string[] | undefined {
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  } catch {
    return undefined;
  }
}

export const SCRIPTED_USAGE = 'npx cua scripted-model --scripts DIR [--port P]   (a TEST DOUBLE, not a model)';
export async function scriptedModelCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...help, port: { type: 'string' }, scripts: { type: 'string' } }, SCRIPTED_USAGE);
  if (values.help) return (console.log(`usage: ${SCRIPTED_USAGE}`), 0);
  if (!values.scripts) throw new UsageError(`--scripts DIR is required\nusage: ${SCRIPTED_USAGE}`);
  const scriptsDir = path.resolve(values.scripts);
  const scripts = scriptNames(scriptsDir);
  if (scripts === undefined) throw new UsageError(`--scripts ${values.scripts}: no such folder (${scriptsDir})`);
  if (scripts.length === 0) throw new UsageError(`--scripts ${values.scripts}: the folder has no *.json scripts`);
  const server = await startScriptedModelServer({
    scriptsDir,
    port: intFlag(values.port, 'port', 0) ?? 0,
    log: (l) => console.log(l),
  });
  console.log(
    `scripted model (test double) on ${server.url}; the request's "model" names a script in ${values.scripts} (${scripts.length}: ${scripts.slice(0, 5).join(', ')}${scripts.length > 5 ? ', …' : ''})`,
  );
  await waitForSignal();
  await server.close();
  return 0;
}
