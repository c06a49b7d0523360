// An evaluation's figures from its per-trial records: success rate over scored runs (aborted ones are reported, not
// counted), pass@k and the mean over trials per task, success within step budgets, and the same by site, level and
// tag; the LLM judge's verdicts (how many, how many readable, and how often it agrees with the rules where both
// scored a run); plus the comparison of two results (tasks that flipped). Pure.
import type { EvalRecord } from './records';

export const DEFAULT_STEP_BUDGETS = [15, 30, 100];

export interface Rate {
  runs: number;
  /** Runs with a score (scored and not unscorable). */
  scored: number;
  passed: number;
  /** passed / scored; null when nothing was scored. */
  rate: number | null;
}

export interface TaskSummary {
  /** The task's id in the task set (not a task id: its trials' `runId`s are); wire name (results files, `--json`). */
  taskId: string;
  site: string | null;
  level: string | null;
  tags: string[];
  trials: EvalRecord[];
  /** At least one trial passed (over trials with a score; null when none had one). */
  passAtK: boolean | null;
  /** Mean score over trials with a score. */
  mean: number | null;
}

export interface EvalSummary {
  runs: number;
  scored: number;
  aborted: number;
  unscored: number;
  passed: number;
  successRate: number | null;
  trials: number;
  tasks: number;
  /** Tasks with at least one passing trial / tasks with a scored trial. */
  passAtK: number | null;
  /** Mean over tasks of each task's mean score. */
  meanScore: number | null;
  /** Budget → share of scored runs that passed within that many steps. */
  stepBudgets: Record<string, number | null>;
  bySite: Record<string, Rate>;
  byLevel: Record<string, Rate>;
  byTag: Record<string, Rate>;
  /** Absent in results written before the judge. */
  judge?: JudgeFigures;
}

export interface JudgeFigures {
  /** Runs the judge was asked about. */
  judged: number;
  /** Of those, with a verdict ≥ 0.5. */
  passed: number;
  /** No verdict (unreadable reply, refused request, endpoint down). */
  errors: number;
  /** Runs scored by both the rules and the judge, and how many of them the two agree on (pass vs fail). */
  withRules: number;
  agreeWithRules: number;
}

export interface EvalResultsFile {
  evalId: string;
  createdAt: string;
  taskSet: string;
  options: Record<string, unknown>;
  summary: EvalSummary;
  tasks: TaskSummary[];
  /**
   * The model calls its runs made, and the steps they took from the action cache (`--cache`) without one: without
   * the cache, those steps would have been model calls too. Absent in results written before it was counted.
   */
  modelCalls?: {
    made: number;
    fromCache: number;
    /** Model calls the cache saved: its steps, and the page answers reused with them. */
    saved?: number;
    cache: string | null;
    /** Tokens of the calls made, and their cost in US dollars where their endpoint had a price. */
    tokens?: number;
    costUsd?: number;
    unpricedCalls?: number;
    /** Cost per passed run (null: none passed, or nothing was priced). */
    costPerSuccess?: number | null;
  };
}

const passed = (r: EvalRecord) => r.outcome === 'scored' && r.score !== null && r.score >= 0.5;
const hasScore = (r: EvalRecord) => r.outcome === 'scored' && r.score !== null;

function rateOf(records: EvalRecord[]): Rate {
  const scored = records.filter(hasScore).length;
  const ok = records.filter(passed).length;
  return { runs: records.length, scored, passed: ok, rate: scored ? ok / scored : null };
}

function groupBy(records: EvalRecord[], keys: (r: EvalRecord) => string[]): Record<string, Rate> {
  const groups = new Map<string, EvalRecord[]>();
  for (const r of records) for (const k of keys(r)) groups.set(k, [...(groups.get(k) ?? []), r]);
  return Object.fromEntries(
    [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, rateOf(v)]),
  );
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

export function summarizeTasks(records: EvalRecord[]): TaskSummary[] {
  const byTask = new Map<string, EvalRecord[]>();
  for (const r of [...records].sort((a, b) => a.index - b.index || a.trial - b.trial)) {
    byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
  }
  return [...byTask.entries()].map(([setTaskId, trials]) => {
    const scored = trials.filter(hasScore);
    const first = trials.find((t) => t.outcome === 'scored') ?? trials[0];
    return {
      taskId: setTaskId,
      site: first?.site ?? null,
      level: first?.level ?? null,
      tags: first?.tags ?? [],
      trials,
      passAtK: scored.length ? scored.some(passed) : null,
      mean: mean(scored.map((t) => t.score ?? 0)),
    };
  });
}

function judgeFigures(records: EvalRecord[]): JudgeFigures {
  const judged = records.filter((r) => r.judge);
  const both = judged.filter((r) => r.judge?.score != null && r.scoredBy === 'rules' && r.score !== null);
  return {
    judged: judged.length,
    passed: judged.filter((r) => (r.judge?.score ?? 0) >= 0.5 && r.judge?.score != null).length,
    errors: judged.filter((r) => r.judge?.score == null).length,
    withRules: both.length,
    agreeWithRules: both.filter((r) => (r.judge?.score ?? 0) >= 0.5 === (r.score ?? 0) >= 0.5).length,
  };
}

export function summarize(records: EvalRecord[], budgets: number[] = DEFAULT_STEP_BUDGETS): EvalSummary {
  const tasks = summarizeTasks(records);
  const scored = records.filter(hasScore);
  const ok = records.filter(passed);
  const withK = tasks.filter((t) => t.passAtK !== null);
  const means = tasks.map((t) => t.mean).filter((m): m is number => m !== null);
  return {
    runs: records.length,
    scored: scored.length,
    aborted: records.filter((r) => r.outcome === 'aborted').length,
    unscored: records.filter((r) => r.outcome === 'scored' && r.score === null).length,
    passed: ok.length,
    successRate: scored.length ? ok.length / scored.length : null,
    trials: Math.max(0, ...records.map((r) => r.trial + 1)),
    tasks: tasks.length,
    passAtK: withK.length ? withK.filter((t) => t.passAtK).length / withK.length : null,
    meanScore: mean(means),
    stepBudgets: Object.fromEntries(
      budgets.map((b) => [String(b), scored.length ? ok.filter((r) => r.steps <= b).length / scored.length : null]),
    ),
    bySite: groupBy(records, (r) => (r.site ? [r.site] : [])),
    byLevel: groupBy(records, (r) => (r.level ? [r.level] : [])),
    byTag: groupBy(records, (r) => r.tags),
    judge: judgeFigures(records),
  };
}

export interface Flip {
  /** The task's id in the task set; wire name (`--json`). */
  taskId: string;
  before: boolean | null;
  after: boolean | null;
}

/** Tasks whose pass@k changed between two results (absent in one of them: null on that side). */
export function compareResults(a: EvalResultsFile, b: EvalResultsFile): Flip[] {
  const before = new Map(a.tasks.map((t) => [t.taskId, t.passAtK]));
  const after = new Map(b.tasks.map((t) => [t.taskId, t.passAtK]));
  const ids = [...new Set([...before.keys(), ...after.keys()])].sort();
  return ids
    .map((setTaskId) => ({
      taskId: setTaskId,
      before: before.get(setTaskId) ?? null,
      after: after.get(setTaskId) ?? null,
    }))
    .filter((f) => f.before !== f.after);
}
