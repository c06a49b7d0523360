// Result shapes shared by the sections, the final measured-vs-target table, and the JSON files written to
// bench/results/ (latest.json plus a timestamped copy for a full run; a file named after the sections for a part).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { table } from './stats';

export const SECTIONS = [
  'settle',
  'checkpoint',
  'element',
  'persistence',
  'step',
  'kinds',
  'history',
  'replay',
  'concurrency',
  'resume',
  'scale-out',
  'egress',
] as const;
export type SectionName = (typeof SECTIONS)[number];

export type Verdict = 'PASS' | 'MISS' | 'info';

export interface Row {
  section: SectionName;
  metric: string;
  measured: string;
  target: string;
  verdict: Verdict;
}

export interface SectionResult {
  name: SectionName;
  rows: Row[];
  /** Raw figures for the JSON file. */
  data: Record<string, unknown>;
  seconds: number;
  /** The machine's 1-minute load average (os.loadavg()[0]) when the section started and when it ended. */
  load: { start: number; end: number };
}

/** What a section's runner returns; run.ts adds the time it took and the load average. */
export type SectionOutput = Omit<SectionResult, 'seconds' | 'load'>;

/** The machine's 1-minute load average, to two decimals. */
export function loadNow(): number {
  return Math.round((os.loadavg()[0] ?? 0) * 100) / 100;
}

/** The row every section ends with: its load average at start and end, against the machine's cores. */
export function loadRow(section: SectionName, load: SectionResult['load']): Row {
  return row(
    section,
    `load average (1 min), section start → end (${os.cpus().length} cores)`,
    `${load.start.toFixed(2)} → ${load.end.toFixed(2)}`,
  );
}

/** A table row; with `pass` it is judged against its target, without it it is information. */
export function row(section: SectionName, metric: string, measured: string, target = '—', pass?: boolean): Row {
  return { section, metric, measured, target, verdict: pass === undefined ? 'info' : pass ? 'PASS' : 'MISS' };
}

export function finalTable(rows: readonly Row[]): string {
  return table([
    ['section', 'metric', 'measured', 'target', 'verdict'],
    ...rows.map((r) => [r.section, r.metric, r.measured, r.target, r.verdict]),
  ]);
}

export interface ResultsFile {
  startedAt: string;
  totalSeconds: number;
  machine: { cpus: number; node: string; platform: string; loadavg: number[] };
  options: { only: SectionName[]; repeatCapSeconds: number; levels: number[] };
  sections: SectionResult[];
  failures: { section: SectionName; error: string; load: SectionResult['load'] }[];
}

/**
 * Writes bench/results/<timestamp>.json, and latest.json when every section ran (a run of some sections, `--only`,
 * is named after them, <sections>-<timestamp>.json, and leaves latest.json to the last full run); returns the paths.
 */
export function writeResults(results: ResultsFile, dir = path.resolve(__dirname, 'results')): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const stamp = results.startedAt.replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  const full = SECTIONS.every((s) => results.options.only.includes(s));
  const files = full
    ? [path.join(dir, `${stamp}.json`), path.join(dir, 'latest.json')]
    : [path.join(dir, `${results.options.only.join('+')}-${stamp}.json`)];
  for (const file of files) {
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  }
  return files;
}

export function machineInfo(): ResultsFile['machine'] {
  return {
    cpus: os.cpus().length,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadavg: os.loadavg(),
  };
}
