// Command-line options of `npm run bench`: which sections to run, whether to keep the temp dir and write results.
import { SECTIONS } from './report';
import type { SectionName } from './report';

export interface BenchOptions {
  only: SectionName[];
  keep: boolean;
  write: boolean;
  help: boolean;
}

export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export const USAGE = `usage: npm run bench -- [--only ${SECTIONS.join(',')}] [--keep] [--no-write]
  --only      run only these sections (comma-separated), in the usual order
  --keep      keep the temp dir (SQLite file, run folders, logs) and print its path
  --no-write  print the tables but do not write bench/results/*.json`;

const isSection = (s: string): s is SectionName => (SECTIONS as readonly string[]).includes(s);

export function parseOptions(argv: readonly string[]): BenchOptions {
  const options: BenchOptions = { only: [...SECTIONS], keep: false, write: true, help: false };
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
    } else if (flag === '--keep') options.keep = true;
    else if (flag === '--no-write') options.write = false;
    else if (flag === '--help' || flag === '-h') options.help = true;
    else throw new BenchUsageError(`unknown option ${arg}`);
  }
  return options;
}
