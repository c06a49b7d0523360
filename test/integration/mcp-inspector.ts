// The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector --cli`), a client this project does not write, for the
// test that it works against `cua mcp --http`. Not a dependency of the package: the pinned version is installed on
// first use into the cache outside the clone (CUA_CACHE_DIR, default ~/.cache/durable-cua), into a folder of its own
// that is renamed into place only once complete, and reused after that.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheDir } from '../../src/infra/build-cache';

const run = promisify(execFile);

/** Version 1's CLI mode speaks Streamable HTTP with headers, without the heavier 2.x (vite, react). */
export const INSPECTOR_VERSION = '1.0.3';

const PACKAGE = '@modelcontextprotocol/inspector';

/** The Inspector's command (its package's bin), installed first if the cache lacks it. */
export async function inspectorBin(): Promise<string> {
  const dir = path.join(cacheDir(), `mcp-inspector-${INSPECTOR_VERSION}`);
  const bin = path.join(dir, 'node_modules', ...PACKAGE.split('/'), 'cli', 'build', 'cli.js');
  if (fs.existsSync(bin)) return bin;
  const partial = `${dir}.partial-${process.pid}`;
  console.log(`[mcp-inspector] installing ${PACKAGE}@${INSPECTOR_VERSION} into ${dir} (once, about 20 s)`);
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(partial, { recursive: true });
  const args = ['install', '--prefix', partial, `${PACKAGE}@${INSPECTOR_VERSION}`];
  await run('npm', [...args, '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
    timeout: 300_000,
  });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(partial, dir);
  return bin;
}

/**
 * Runs the Inspector's CLI mode against the MCP server at `url` (Streamable HTTP, with the bearer token) and returns
 * its JSON output; `args` name the method and its arguments, e.g. `['--method', 'tools/list']`.
 */
export async function inspect(url: string, token: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const bin = await inspectorBin();
  const cli = ['--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args];
  const { stdout } = await run(process.execPath, [bin, ...cli], { timeout: 60_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}
