// Repeating a measurement until it is stable: run it, take its medians, and run it again until two consecutive runs'
// medians agree within a tolerance (5%), or until another run would end past the measurement's time cap
// (`--repeat-cap`, counted from the measurement's start; the next run is predicted to take as long as the last one).
// A run is never cut short, and the first one always runs, so one run longer than the cap is reported as such.
import { fmtMs } from './stats';

/** Two medians agree when they differ by at most this fraction of their mean. */
export const AGREE_WITHIN = 0.05;

export interface Stability {
  runs: number;
  settled: boolean;
  capSeconds: number;
  seconds: number;
  /** Each metric's median, one per run, in run order. */
  medians: Record<string, number[]>;
  /** "settled after 3 runs" or "did not settle in 95 s (cap 90 s): medians …". */
  summary: string;
}

export interface RepeatOptions {
  capSeconds: number;
  log: (line: string) => void;
  /** For the log lines: "step", "concurrency 8". */
  label: string;
  /** How a metric's median is shown (default: as milliseconds). */
  format?: (metric: string, value: number) => string;
}

export function agree(a: number, b: number, tolerance = AGREE_WITHIN): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const mean = (Math.abs(a) + Math.abs(b)) / 2;
  return mean === 0 || Math.abs(a - b) <= tolerance * mean;
}

function describe(medians: Record<string, number[]>, format: (metric: string, value: number) => string): string {
  return Object.entries(medians)
    .map(([metric, values]) => `${metric} ${values.map((v) => format(metric, v)).join(', ')}`)
    .join('; ');
}

/**
 * Runs `measure` (run index from 1) until the last two runs' medians (every metric of `mediansOf`) agree within 5%,
 * or the cap is reached (a cap of 0: one run). Returns every run's result and how it went.
 */
export async function repeatUntilStable<T>(
  opts: RepeatOptions,
  measure: (run: number) => Promise<T>,
  mediansOf: (result: T) => Record<string, number>,
): Promise<{ results: T[]; stability: Stability }> {
  const format = opts.format ?? ((_metric: string, v: number) => fmtMs(v));
  const began = Date.now();
  const results: T[] = [];
  const medians: Record<string, number[]> = {};
  let settled = false;
  let lastRunSeconds = 0;
  for (let run = 1; ; run++) {
    const runBegan = Date.now();
    const result = await measure(run);
    lastRunSeconds = (Date.now() - runBegan) / 1000;
    results.push(result);
    for (const [metric, value] of Object.entries(mediansOf(result))) (medians[metric] ??= []).push(value);
    const seconds = (Date.now() - began) / 1000;
    settled =
      run >= 2 &&
      Object.values(medians).every((values) =>
        agree(values[values.length - 1] ?? NaN, values[values.length - 2] ?? NaN),
      );
    const now = Object.entries(medians)
      .map(([metric, values]) => `${metric} ${format(metric, values[values.length - 1] ?? NaN)}`)
      .join(', ');
    if (settled) {
      opts.log(`[bench] ${opts.label}: run ${run}: ${now} — settled (within ${AGREE_WITHIN * 100}% of run ${run - 1})`);
      break;
    }
    const atCap = seconds + lastRunSeconds > opts.capSeconds;
    opts.log(
      `[bench] ${opts.label}: run ${run}: ${now}` +
        (atCap
          ? ` — not settled; stopping after ${seconds.toFixed(0)} s (another run of ~${lastRunSeconds.toFixed(0)} s ` +
            `would pass the ${opts.capSeconds} s cap)`
          : ' — not settled, repeating'),
    );
    if (atCap) break;
  }
  const seconds = Math.round((Date.now() - began) / 100) / 10;
  const runs = results.length;
  const summary = settled
    ? `settled after ${runs} runs (${Math.round(seconds)} s)`
    : opts.capSeconds <= 0
      ? `1 run (not repeated: cap 0 s)`
      : runs === 1
        ? `not repeated: one run took ${Math.round(seconds)} s, a second would pass the ${opts.capSeconds} s cap`
        : `did not settle in ${Math.round(seconds)} s (cap ${opts.capSeconds} s, ${runs} runs): medians ` +
          describe(medians, format);
  return { results, stability: { runs, settled, capSeconds: opts.capSeconds, seconds, medians, summary } };
}

/** The results the figures are taken from: the last two runs (the pair that agreed, or the latest when unsettled). */
export function lastTwo<T>(results: readonly T[]): T[] {
  return results.slice(-2);
}
