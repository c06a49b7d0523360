// Where a bench run's figures go: a full run is latest.json (and a dated copy); a run of some sections gets a file
// named after them and leaves latest.json to the last full run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECTIONS, writeResults } from '../../bench/report';
import type { ResultsFile, SectionName } from '../../bench/report';

const results = (only: SectionName[]): ResultsFile => ({
  startedAt: '2026-12-01T17:15:40.123Z',
  totalSeconds: 1,
  machine: { cpus: 2, node: process.version, platform: 'linux', loadavg: [0, 0, 0] },
  options: { only, repeatCapSeconds: 90, levels: [1] },
  sections: [],
  failures: [],
});

describe('bench results files', () => {
  it('a full run writes latest.json and a dated copy; a partial run writes only its own file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-bench-results-'));
    const full = writeResults(results([...SECTIONS]), dir);
    expect(full.map((f) => path.basename(f))).toEqual(['20261201-171540.json', 'latest.json']);
    const partial = writeResults({ ...results(['scale-out', 'step']), totalSeconds: 2 }, dir);
    expect(partial.map((f) => path.basename(f))).toEqual(['scale-out+step-20261201-171540.json']);
    const latest = JSON.parse(fs.readFileSync(path.join(dir, 'latest.json'), 'utf8')) as ResultsFile;
    expect(latest.totalSeconds).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual([
      '20261201-171540.json',
      'latest.json',
      'scale-out+step-20261201-171540.json',
    ]);
  });
});
