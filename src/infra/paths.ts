// Where the project's tools and data live: the Temporal CLI from .tools/, Chromium from PATH, data under data/.
import fs from 'node:fs';
import path from 'node:path';

/** The package's root: the nearest folder above this file with a package.json (src/infra/ here, dist/src/infra/ built). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}

export const PROJECT_ROOT = packageRoot(__dirname);

/** Installed as a dependency (node_modules/durable-cua) rather than a checkout of this project. */
const INSTALLED = PROJECT_ROOT.split(path.sep).includes('node_modules');

function firstExisting(candidates: readonly (string | undefined)[]): string | undefined {
  return candidates.find((c): c is string => !!c && fs.existsSync(c));
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && fs.existsSync(p)) return p;
  }
  return undefined;
}

export class ToolNotFoundError extends Error {
  constructor(
    readonly tool: string,
    hint: string,
  ) {
    super(`${tool} not found. ${hint}`);
    this.name = new.target.name;
  }
}

/** The Temporal CLI (dev server + Web UI), installed by scripts/setup.sh into .tools/bin. */
export function temporalCliPath(): string {
  const found = firstExisting([process.env.CUA_TEMPORAL_BIN, path.join(PROJECT_ROOT, '.tools', 'bin', 'temporal')]);
  const p = found ?? onPath('temporal');
  if (!p) throw new ToolNotFoundError('The Temporal CLI', 'Run `npm run setup` (or set CUA_TEMPORAL_BIN).');
  return p;
}

/** The Java time-skipping test server, installed by scripts/setup.sh into .tools/bin. */
export function testServerPath(): string {
  const found = firstExisting([
    process.env.CUA_TEST_SERVER_BIN,
    path.join(PROJECT_ROOT, '.tools', 'bin', 'temporal-test-server'),
  ]);
  const p = found ?? onPath('temporal-test-server');
  if (!p) throw new ToolNotFoundError('The Temporal test server', 'Run `npm run setup` (or set CUA_TEST_SERVER_BIN).');
  return p;
}

/** Debian's Chromium (Playwright cannot download its own browser here). */
export function chromiumPath(): string {
  const p = firstExisting([process.env.CUA_CHROMIUM]) ?? onPath('chromium') ?? onPath('chromium-browser');
  if (!p) throw new ToolNotFoundError('Chromium', 'Run `sudo apt-get install -y chromium` (or set CUA_CHROMIUM).');
  return p;
}

/**
 * The data folder (dev server SQLite file, runs), overridable with CUA_DATA_DIR: data/ of the checkout, or, for the
 * installed package, data/ of the working directory (never inside node_modules, which a reinstall wipes).
 */
export function dataDir(): string {
  return process.env.CUA_DATA_DIR ?? path.join(INSTALLED ? process.cwd() : PROJECT_ROOT, 'data');
}
