// The evaluation's records between its workflow, its activities and the client: input, per-trial records, progress
// and the eval activities' inputs and outputs. Pure (the query and search-attribute definitions are one layer up, in
// workflows/eval-messages.ts).
import type { JudgeKind, JudgeSettings } from './judge';
import type { TaskSetFormat, TaskFilter } from './task-set';
import type { TaskInputArgs, TaskResult } from '../contract/task';

export const EVALUATION_WORKFLOW = 'evaluation';

/**
 * The task set travels by reference, never its contents (payload and history limits): a file the workers can read,
 * or `store:KEY`, an object in the run store (src/eval/task-source.ts), which workers on other machines read too.
 */
export interface TaskSetRef {
  /** An absolute file path, or `store:KEY` (e.g. `store:evalsets/web.tasks`). */
  path: string;
  format?: TaskSetFormat;
  /** WebVoyager's reference-answers file (a path or `store:KEY`, as `path`). */
  answers?: string;
  filter?: TaskFilter;
  /** Base URLs for `{{name}}` placeholders in start and check URLs. */
  sites?: Record<string, string>;
}

export interface EvaluationInput {
  evalId: string;
  taskSet: TaskSetRef;
  /** Task runs at a time (default 4). */
  concurrency?: number;
  /** Runs of each task (default 1); pass@k and the mean are over these. */
  trials?: number;
  /** New runs of a task after an environment error (default 5, as Fara's webeval). */
  maxRetries?: number;
  /** The model of tasks that name none (and the endpoint base URL of those that name only a model). */
  model?: { endpoint?: string; baseUrl?: string; model?: string };
  /** Step budget of tasks that name none (default: the task input's default). */
  maxSteps?: number;
  /**
   * The LLM judge (`--judge`, `--judge-base-url`, `--judge-model`): which tasks it judges and on which endpoint.
   * Absent: as `{ kind: 'auto' }` (tasks without rule checks, when the worker config has a `models.judge` endpoint).
   */
  judge?: JudgeSettings;
  /** Task inputs fetched per activity call (default 25). */
  pageSize?: number;
  /** Extra task-input fields for every task (e.g. `timing` in tests). */
  taskDefaults?: Partial<TaskInputArgs>;
  /** Tag tasks with the CuaEvaluation/CuaStatus/CuaStep search attributes (registered on the server; default true). */
  searchAttributes?: boolean;
  /** Test hook: continue-as-new after this many task runs ended in one workflow run. */
  continueAsNewAfter?: number;
}

/** What the page activity hands the workflow per task: its id in the task set and its input (without a task id). */
export interface EvalTaskSpec {
  index: number;
  /** The task's id in the task set (not a task id: each attempt has its own, attemptTaskId); wire name. */
  taskId: string;
  input: Omit<TaskInputArgs, 'runId'>;
}

/**
 * How one attempt of a task ended, whether awaited as a child or (after continue-as-new) through the client.
 * `endReason` is the task's own (src/contract/end-reason.ts), or `terminated`/`timed_out` for a workflow ended from
 * outside.
 */
export interface AttemptOutcome {
  endReason: string;
  answer: string | null;
  steps: number;
  error: string | null;
}

/** The end reasons of a task that ran to its own end: scored (an agent failure scores 0; a budget or loop stop too). */
export const SCORED_END_REASONS = [
  'complete',
  'max_rounds',
  'invalid_replies',
  'ask_timeout',
  'budget',
  'loop',
] as const;
/** End reasons that are no verdict on the agent: the environment failed; the task is run again (a new run). */
export const RETRIED_END_REASONS = [
  'browser',
  'desktop',
  'model_endpoint',
  'captcha',
  'internal',
  'run_folder',
  'terminated',
  'timed_out',
] as const;

export type AttemptKind = 'scored' | 'retry' | 'abort';

/** Scored, retried (environment), or aborted at once (bad input, cancelled: another run would end the same way). */
export function attemptKind(endReason: string): AttemptKind {
  if ((SCORED_END_REASONS as readonly string[]).includes(endReason)) return 'scored';
  if ((RETRIED_END_REASONS as readonly string[]).includes(endReason)) return 'retry';
  return 'abort';
}

/** The LLM judge's verdict on a trial's run (also in its run folder's verification.jsonl under `verifier`). */
export interface JudgeRecord {
  verifier: string;
  /** 1/0 (webjudge), 0–1 (rubric); null: no verdict (an unreadable output, a refused request; see `error`). */
  score: number | null;
  reasoning: string;
  error: string | null;
}

/** One trial of one task, once it is settled. */
export interface EvalRecord {
  index: number;
  /** The task's id in the task set (not a task id: `runId` is the attempt's); wire name (histories, results files). */
  taskId: string;
  trial: number;
  /** `scored`: the agent ran to its own end; `aborted`: environment errors past the retries (not in the denominator). */
  outcome: 'scored' | 'aborted';
  endReason: string;
  /** 1/0 from the task's checks; null when nothing could score it. */
  score: number | null;
  steps: number;
  answer: string | null;
  reasoning: string;
  /** The task id of the attempt that counts (the last); wire name, kept so histories and results files still read. */
  runId: string;
  /** Every attempt's task id, in order (earlier ones ended in environment errors). */
  attempts: string[];
  site: string | null;
  level: string | null;
  tags: string[];
  /**
   * The judge's verdict when the task was judged. It is the trial's score when the task has no rule checks; with
   * rules, the rules score the trial and the verdict is kept beside them (the report shows how often they agree).
   */
  judge?: JudgeRecord | null;
  /** What gave the score: the task's rules or the judge (absent: unscored, or a record from before the judge). */
  scoredBy?: 'rules' | 'judge';
}

export interface EvalProgress {
  evalId: string;
  /** Task × trial runs in all. */
  total: number;
  done: number;
  running: number;
  left: number;
  scored: number;
  passed: number;
  aborted: number;
  /** Passed / scored with a score so far (null before the first). */
  passRate: number | null;
}

export interface EvaluationResult {
  evalId: string;
  progress: EvalProgress;
  records: EvalRecord[];
}

/** An attempt's task id (also its run folder's name): `<evalId>-<setTaskId>-t<trial>-a<attempt>`. */
export function attemptTaskId(evalId: string, setTaskId: string, trial: number, attempt: number): string {
  return `${evalId}-${setTaskId}-t${trial}-a${attempt}`;
}

export function outcomeOfResult(result: TaskResult): AttemptOutcome {
  return { endReason: result.endReason, answer: result.answer, steps: result.steps, error: result.error };
}

export interface ScoreRunInput {
  taskSet: TaskSetRef;
  index: number;
  /** The attempt's task id; wire name, kept so activities scheduled before an upgrade still run. */
  runId: string;
  outcome: AttemptOutcome;
  /** The evaluation's judge settings (to tell whether this task is judged). */
  judge?: JudgeSettings;
}

export interface ScoreRunResult {
  score: number | null;
  reasoning: string;
  site: string | null;
  level: string | null;
  tags: string[];
  /** The judge this run gets next (only a run that ended with an answer is judged), or null. */
  judge?: Exclude<JudgeKind, 'none'> | null;
}

export interface JudgeRunInput {
  taskSet: TaskSetRef;
  index: number;
  /** The attempt's task id; wire name, kept so activities scheduled before an upgrade still run. */
  runId: string;
  outcome: AttemptOutcome;
  kind: Exclude<JudgeKind, 'none'>;
  settings?: JudgeSettings;
}

/** The evaluation's defaults a task spec takes. */
export type SpecOptions = Pick<EvaluationInput, 'model' | 'maxSteps' | 'taskDefaults'>;

/** The evaluation workflow's activities, as it calls them (activities/eval/ implements them). */
export interface EvalActivities {
  evalTaskCount(req: { taskSet: TaskSetRef; options: SpecOptions }): Promise<number>;
  evalTaskPage(req: {
    taskSet: TaskSetRef;
    options: SpecOptions;
    offset: number;
    limit: number;
  }): Promise<EvalTaskSpec[]>;
  scoreEvalRun(req: ScoreRunInput): Promise<ScoreRunResult>;
  judgeEvalRun(req: JudgeRunInput): Promise<JudgeRecord>;
  awaitEvalChild(req: { workflowId: string }): Promise<AttemptOutcome>;
}
