// Small statistics and formatting helpers for the benchmark: percentiles, summaries, human-readable units.

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

/** The p-th percentile (0–100) by linear interpolation between closest ranks; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] ?? Number.NaN;
  const b = sorted[hi] ?? Number.NaN;
  return a + (b - a) * (rank - lo);
}

export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  return {
    n,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    mean: n === 0 ? Number.NaN : values.reduce((s, v) => s + v, 0) / n,
    min: n === 0 ? Number.NaN : Math.min(...values),
    max: n === 0 ? Number.NaN : Math.max(...values),
  };
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) >= 100) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  if (Math.abs(bytes) >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(2)} MB`;
  if (Math.abs(bytes) >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${Math.round(bytes)} B`;
}

/** Pads cells into aligned columns; the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  if (!head) return '';
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
