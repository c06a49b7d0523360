// Command-line options of `npm run bench`: which sections to run, how long a measurement may repeat until it is
// stable, whether to keep the temp dir and write results.
import { SECTIONS } from './report';
import type { SectionName } from './report';

export interface BenchOptions {
  only: SectionName[];
  /** The time a repeated measurement (the step section; each concurrency level) may take to settle; 0: one run. */
  repeatCapSeconds: number;
  /** The concurrency section's levels (tasks started at once). */
  levels: number[];
  keep: boolean;
  write: boolean;
  /** Before each section, wait (up to QUIET_WAIT_CAP_SECONDS) for the 1-minute load average to fall below this; 0: no wait. */
  quietLoad: number;
  help: boolean;
}

export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export const DEFAULT_REPEAT_CAP_SECONDS = 90;
export const DEFAULT_LEVELS = [1, 4, 8, 16, 32];
/** The load a section should start under (issue 46's figures are of sections started below 1.0 on 2 cores). */
export const DEFAULT_QUIET_LOAD = 1;
/** The longest wait for that load before a section starts anyway (its load at start is reported either way). */
export const QUIET_WAIT_CAP_SECONDS = 300;

export const USAGE = `usage: npm run bench -- [--only ${SECTIONS.join(',')}] [--repeat-cap SECONDS] [--levels N,…] [--quiet-load L]
                        [--keep] [--no-write]
  --only        run only these sections (comma-separated), in the usual order
  --repeat-cap  how long the step measurement and each concurrency level repeat until two consecutive runs'
                medians agree within 5% (default ${DEFAULT_REPEAT_CAP_SECONDS}; 0: one run each)
  --levels      the concurrency section's levels, tasks started at once (default ${DEFAULT_LEVELS.join(',')})
  --quiet-load  before each section wait (at most ${QUIET_WAIT_CAP_SECONDS} s) for the 1-minute load average to fall
                below L (default ${DEFAULT_QUIET_LOAD}; 0: start at once)
  --keep        keep the temp dir (SQLite file, run folders, logs) and print its path
  --no-write    print the tables but do not write bench/results/*.json`;

const isSection = (s: string): s is SectionName => (SECTIONS as readonly string[]).includes(s);

/** A flag's number, 0 or more; anything else is the usage error `message`. */
function nonNegative(value: string | undefined, message: string): number {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(n) || n < 0) throw new BenchUsageError(message);
  return n;
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  const options: BenchOptions = {
    only: [...SECTIONS],
    repeatCapSeconds: DEFAULT_REPEAT_CAP_SECONDS,
    levels: [...DEFAULT_LEVELS],
    keep: false,
    write: true,
    quietLoad: DEFAULT_QUIET_LOAD,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s) : [arg, undefined];
    if (flag === '--only') {
      const value = inline ?? argv[++i];
      if (!value) throw new BenchUsageError('--only needs a list of sections');
      const names = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = names.filter((n) => !isSection(n));
      if (unknown.length > 0) throw new BenchUsageError(`unknown section(s): ${unknown.join(', ')}`);
      options.only = SECTIONS.filter((s) => names.includes(s));
    } else if (flag === '--repeat-cap') {
      options.repeatCapSeconds = nonNegative(inline ?? argv[++i], '--repeat-cap needs a number of seconds (0 or more)');
    } else if (flag === '--levels') {
      const value = inline ?? argv[++i] ?? '';
      const levels = value.split(',').map((v) => Number(v.trim()));
      if (!value || levels.some((n) => !Number.isInteger(n) || n < 1 || n > 256)) {
        throw new BenchUsageError('--levels needs a comma-separated list of task counts (1–256), e.g. 1,4,8,16,32');
      }
      options.levels = [...new Set(levels)].sort((a, b) => a - b);
    } else if (flag === '--quiet-load') {
      options.quietLoad = nonNegative(inline ?? argv[++i], '--quiet-load needs a load average (0 or more; 0: no wait)');
    } else if (flag === '--keep') options.keep = true;
    else if (flag === '--no-write') options.write = false;
    else if (flag === '--help' || flag === '-h') options.help = true;
    else throw new BenchUsageError(`unknown option ${arg}`);
  }
  return options;
}
