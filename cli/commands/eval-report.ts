// What `cua eval` leaves behind: eval-results.json and a self-contained HTML report of a finished evaluation (each run
// linked to its trajectory report), the closing lines it prints about them, and `cua eval compare A B`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyRun } from '../../src/trajectory/open-store';
import { readRunFromStore } from '../../src/trajectory/reader';
import { tallyOf } from '../../src/replay/summary';
import { dollars, emptyUsage, usageTotals } from '../../src/trajectory/usage';
import type { UsageTotals } from '../../src/trajectory/usage';
import { LocalRunStore } from '../../src/trajectory/store';
import type { RunStore } from '../../src/trajectory/store';
import { compareResults, DEFAULT_STEP_BUDGETS, summarize, summarizeTasks } from '../../src/eval/results';
import type { EvalResultsFile } from '../../src/eval/results';
import { renderEvalReport } from '../../src/eval/report-html';
import { REPORT_FILE, writeTrajectoryReport } from '../../src/viewer/report';
import type { EvaluationResult } from '../../src/eval/records';
import { UsageError } from '../args';

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);

export interface WrittenReports {
  json: string;
  html: string;
  results: EvalResultsFile;
}

export interface ReportOptions {
  outDir: string;
  /** Where trajectory reports of runs in a shared store go: `<runsDir>/<taskId>/report.html`, as `cua view` does. */
  runsDir: string;
  /** The run store the runs are in (default: the folder store under `runsDir`). */
  store?: RunStore;
  taskSet: string;
  options: Record<string, unknown>;
  uiUrl: string | null;
}

/**
 * The trajectory report of one run, or null when it has none: written beside its run folder in a folder store; a run
 * in a shared store (S3) is copied into a temp folder first and its report goes under `runsDir`.
 */
async function trajectoryReport(store: RunStore, taskId: string, runsDir: string): Promise<string | null> {
  if (!(await store.exists(`${taskId}/task.json`))) return null;
  if (store instanceof LocalRunStore) return (await writeTrajectoryReport(path.join(store.rootDir, taskId))).file;
  const temp = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'cua-eval-run-'));
  try {
    await copyRun(store, taskId, new LocalRunStore(temp));
    return (await writeTrajectoryReport(path.join(temp, taskId), path.join(runsDir, taskId, REPORT_FILE))).file;
  } finally {
    await fs.promises.rm(temp, { recursive: true, force: true });
  }
}

/** The model calls the evaluation's runs made and the steps they took from the action cache (their run folders). */
async function modelCallsOf(
  store: RunStore,
  result: EvaluationResult,
  options: Record<string, unknown>,
): Promise<EvalResultsFile['modelCalls']> {
  const out = { made: 0, fromCache: 0, saved: 0, cache: cacheNameOf(options) };
  const usage = emptyUsage();
  for (const r of result.records) {
    for (const taskId of r.attempts.length ? r.attempts : [r.runId]) {
      const run = await readRunFromStore(store, taskId).catch(() => undefined);
      if (!run) continue;
      const t = tallyOf(run.events);
      out.made += t.modelCalls;
      out.fromCache += t.replayed + t.healed;
      out.saved += t.savedCalls;
      const u = usageTotals(run.events, run.verification);
      for (const key of Object.keys(usage) as (keyof UsageTotals)[]) usage[key] += u[key];
    }
  }
  const passed = result.records.filter((r) => r.outcome === 'scored' && r.score !== null && r.score >= 0.5).length;
  const priced = usage.unpricedCalls < usage.calls;
  return {
    ...out,
    tokens: usage.promptTokens + usage.completionTokens,
    costUsd: usage.costUsd,
    unpricedCalls: usage.unpricedCalls,
    costPerSuccess: priced && passed > 0 ? usage.costUsd / passed : null,
  };
}

function cacheNameOf(options: Record<string, unknown>): string | null {
  const defaults = options['taskDefaults'] as { cache?: { name?: unknown } } | undefined;
  return typeof defaults?.cache?.name === 'string' ? defaults.cache.name : null;
}

/** Writes eval-results.json and report.html (with each run's trajectory report, linked from its row). */
export async function writeEvalReports(result: EvaluationResult, opts: ReportOptions): Promise<WrittenReports> {
  fs.mkdirSync(opts.outDir, { recursive: true });
  const results: EvalResultsFile = {
    evalId: result.evalId,
    createdAt: new Date().toISOString(),
    taskSet: opts.taskSet,
    options: opts.options,
    summary: summarize(result.records, DEFAULT_STEP_BUDGETS),
    tasks: summarizeTasks(result.records),
  };
  const store = opts.store ?? new LocalRunStore(opts.runsDir);
  results.modelCalls = await modelCallsOf(store, result, opts.options);
  const trajectories = new Map<string, string>();
  for (const r of result.records) {
    try {
      const file = await trajectoryReport(store, r.runId, opts.runsDir);
      if (file) trajectories.set(r.runId, path.relative(opts.outDir, file));
    } catch {
      // A run folder the viewer (or the store) cannot read still gets its row, without the link.
    }
  }
  const json = path.join(opts.outDir, 'eval-results.json');
  const html = path.join(opts.outDir, 'report.html');
  fs.writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  const ui = opts.uiUrl?.replace(/\/$/, '');
  fs.writeFileSync(
    html,
    renderEvalReport(results, {
      trajectory: (id) => trajectories.get(id) ?? null,
      temporal: (id) => (ui ? `${ui}/namespaces/default/workflows/${encodeURIComponent(id)}` : null),
    }),
  );
  return { json, html, results };
}

/** The closing lines: the success rates, the judge's figures (when it judged a run), and where the files are. */
export function printWritten(written: WrittenReports, print: (line: string) => void): void {
  const s = written.results.summary;
  print(
    `[eval] success rate ${pct(s.successRate)} (${s.passed}/${s.scored} scored) · aborted ${s.aborted} · ` +
      `pass@${s.trials} ${pct(s.passAtK)} · mean ${s.meanScore === null ? '–' : s.meanScore.toFixed(3)}`,
  );
  print(
    `[eval] within step budgets: ${Object.entries(s.stepBudgets)
      .map(([b, v]) => `≤${b}: ${pct(v)}`)
      .join(' · ')}`,
  );
  const calls = written.results.modelCalls;
  if (calls) {
    const cached = calls.cache ? ` · ${calls.fromCache} step(s) from the cache ${calls.cache}` : '';
    const without = calls.cache ? ` (without the cache: ${calls.made + (calls.saved ?? calls.fromCache)})` : '';
    print(`[eval] model calls: ${calls.made}${cached}${without}`);
    if (calls.costUsd !== undefined && (calls.unpricedCalls ?? 0) < calls.made) {
      const perSuccess = calls.costPerSuccess == null ? '–' : dollars(calls.costPerSuccess);
      const unpriced = calls.unpricedCalls ? ` (+ ${calls.unpricedCalls} unpriced call(s))` : '';
      print(`[eval] cost ${dollars(calls.costUsd)}${unpriced} · per success ${perSuccess}`);
    }
  }
  const j = s.judge;
  if (j && j.judged > 0) {
    print(
      `[eval] judge: ${j.judged} run(s) judged · ${j.passed} pass · ${j.errors} without a verdict` +
        (j.withRules ? ` · agrees with the rules on ${j.agreeWithRules}/${j.withRules}` : ''),
    );
  }
  print(`[eval] results: ${written.json}`);
  print(`[eval] report: ${written.html}`);
}

function readResults(file: string): EvalResultsFile {
  const target = fs.existsSync(file) && fs.statSync(file).isDirectory() ? path.join(file, 'eval-results.json') : file;
  try {
    return JSON.parse(fs.readFileSync(target, 'utf8')) as EvalResultsFile;
  } catch (err) {
    throw new UsageError(`cannot read ${target}: ${(err as Error).message}`);
  }
}

/** `cua eval compare A B`: the tasks whose pass@k differs, and both success rates. */
export function compareCommand(a: string, b: string, print: (line: string) => void = console.log): number {
  const before = readResults(a);
  const after = readResults(b);
  const flips = compareResults(before, after);
  print(
    `A ${before.evalId}: ${pct(before.summary.successRate)} · B ${after.evalId}: ${pct(after.summary.successRate)}`,
  );
  const word = (x: boolean | null) => (x === null ? 'absent' : x ? 'pass' : 'fail');
  for (const f of flips) print(`${f.taskId}: ${word(f.before)} → ${word(f.after)}`);
  print(`${flips.length} task(s) flipped`);
  return 0;
}
