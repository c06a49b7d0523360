// Where the project's tools and data live: the Temporal CLI from .tools/, Chromium from PATH, data under data/.
import fs from 'node:fs';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

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

/** The project's data folder (dev server SQLite file, runs), overridable with CUA_DATA_DIR. */
export function dataDir(): string {
  return process.env.CUA_DATA_DIR ?? path.join(PROJECT_ROOT, 'data');
}
