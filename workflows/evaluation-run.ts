// The evaluation workflow's run as a class, one method per phase: count the task set and page it in, start trials
// (at most `concurrency` at a time, each attempt a child `agentTask`), settle an attempt (retry an environment error
// or record the trial), score and judge, drain for continue-as-new, the result. State lives in fields: what a
// continued run carries over (EvaluationState) and what only this run knows (the live trials and their phases).
// evaluation.ts only wires it. Deterministic: only @temporalio/workflow and pure modules.
import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  proxyActivities,
  setCurrentDetails,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from './activity-proxies';
import { AGENT_WORKFLOW } from '../src/contract/task';
import { STATUS_SEARCH_ATTRIBUTE, STEP_SEARCH_ATTRIBUTE } from './messages';
import type { TaskInputArgs, TaskResult } from '../src/contract/task';
import { MAX_STORE_FAULT_WAIT_MINUTES } from '../src/trajectory/store-wait';
import { EVALUATION_SEARCH_ATTRIBUTE, outcomeOfFailure } from './eval-messages';
import { attemptKind, attemptRunId, outcomeOfResult } from '../src/eval/records';
import type {
  AttemptOutcome,
  EvalProgress,
  EvalRecord,
  EvalTaskSpec,
  EvaluationInput,
  EvaluationResult,
  JudgeRecord,
  TaskSetRef,
} from '../src/eval/records';
import type { JudgeSettings } from '../src/eval/judge';

/** A trial whose current attempt is running (carried across continue-as-new so the next run waits for it). */
interface RunningAttempt {
  slot: number;
  attempt: number;
  workflowId: string;
  attempts: string[];
}

/** A trial to (re)start: a fresh one, or the next attempt after an environment error. */
interface PendingAttempt {
  slot: number;
  attempt: number;
  attempts: string[];
}

/** What a continued run carries over from the one before. */
export interface EvaluationState {
  total: number;
  nextSlot: number;
  records: EvalRecord[];
  running: RunningAttempt[];
  retries: PendingAttempt[];
}

/** How a run ends: the evaluation's result, or the state to continue as new with. */
export type EvaluationEnd = { result: EvaluationResult } | { carry: EvaluationState };

/** What the rules' scoring of a run gives (scoreEvalRun's result). */
export type RulesScore = Awaited<ReturnType<Activities['scoreEvalRun']>>;

type Phase = 'starting' | 'waiting' | 'settling';

/** An activity failure's own message (its cause's, when Temporal wrapped it). */
function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? err.cause.message : err.message;
}

/**
 * Reading task sets and recording verdicts may wait for an unusable run store (as long as the worker's
 * store.faultWaitMinutes, heartbeating): their time limits make room for the longest such wait any worker may have.
 */
const upTo = (ownMinutes: number) => (ownMinutes + MAX_STORE_FAULT_WAIT_MINUTES) * 60_000;
const { evalTaskCount, evalTaskPage, scoreEvalRun } = proxyActivities<Activities>({
  startToCloseTimeout: upTo(2),
  heartbeatTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});
/** The judge's model calls: heartbeating, retried with backoff on 5xx and network errors (4xx is recorded, not thrown). */
const { judgeEvalRun } = proxyActivities<Activities>({
  startToCloseTimeout: upTo(20),
  heartbeatTimeout: '60s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['ModelRequestError', 'TaskSetError'],
  },
});
const { awaitEvalChild } = proxyActivities<Activities>({
  startToCloseTimeout: '7 days',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** The evaluation's settings, its defaults applied. */
function settingsOf(input: EvaluationInput) {
  return {
    concurrency: Math.max(1, input.concurrency ?? 4),
    trials: Math.max(1, input.trials ?? 1),
    maxRetries: Math.max(0, input.maxRetries ?? 5),
    pageSize: Math.max(1, input.pageSize ?? 25),
    /** The evaluation and its tasks carry the CuaEvaluation search attribute. */
    tagRuns: input.searchAttributes ?? true,
    /** What the task set's activities apply to every task. */
    options: { model: input.model, maxSteps: input.maxSteps, taskDefaults: input.taskDefaults },
  };
}

export class EvaluationRun {
  private readonly settings: ReturnType<typeof settingsOf>;
  private readonly phases = new Map<number, Phase>();
  private readonly live = new Map<number, RunningAttempt>();
  /** The task set's pages read so far (a few are kept). */
  private readonly pages = new Map<number, Promise<EvalTaskSpec[]>>();
  /** Attempts that ended in this run (for continueAsNewAfter and the main loop's wait). */
  private endedThisRun = 0;
  /** Going to continue as new: no trial starts, retries wait for the next run. */
  private draining = false;
  /** The first error a trial failed with (it fails the evaluation). */
  private failure: unknown;

  private constructor(
    private readonly input: EvaluationInput,
    private readonly state: EvaluationState,
  ) {
    this.settings = settingsOf(input);
  }

  /** The run: it continues an earlier one's state, or counts the task set (× trials) to start afresh. */
  static async open(input: EvaluationInput, carried: EvaluationState | undefined): Promise<EvaluationRun> {
    const { trials, options } = settingsOf(input);
    const state = carried ?? {
      total: (await evalTaskCount({ taskSet: input.taskSet, options })) * trials,
      nextSlot: 0,
      records: [],
      running: [],
      retries: [],
    };
    return new EvaluationRun(input, state);
  }

  /** The settled records so far. */
  records(): EvalRecord[] {
    return this.state.records;
  }

  progress(): EvalProgress {
    const { state, live } = this;
    const scored = state.records.filter((r) => r.outcome === 'scored');
    const withScore = scored.filter((r) => r.score !== null);
    const passed = withScore.filter((r) => (r.score ?? 0) >= 0.5).length;
    const done = state.records.length;
    return {
      evalId: this.input.evalId,
      total: state.total,
      done,
      running: live.size,
      left: state.total - done - live.size,
      scored: scored.length,
      passed,
      aborted: done - scored.length,
      passRate: withScore.length ? passed / withScore.length : null,
    };
  }

  /** Tags the evaluation itself with its id (when its runs are tagged). */
  tag(): void {
    if (this.settings.tagRuns) upsertSearchAttributes([{ key: EVALUATION_SEARCH_ATTRIBUTE, value: this.input.evalId }]);
  }

  /**
   * Waits again for the children an earlier run started, then keeps `concurrency` trials going until every one is
   * recorded (the result), or until every live trial is waiting on its child after a continue-as-new was called for.
   */
  async run(): Promise<EvaluationEnd> {
    const { state, live } = this;
    this.resume();
    for (;;) {
      this.startTrials();
      if (live.size === 0 && state.retries.length === 0 && state.nextSlot >= state.total) {
        return { result: this.result() };
      }
      const ended = this.endedThisRun;
      const size = live.size;
      await condition(
        () =>
          this.failure !== undefined ||
          live.size !== size ||
          this.endedThisRun !== ended ||
          (this.draining && this.allWaiting()),
      );
      if (this.failure !== undefined) throw this.failure;
      if (!this.draining && this.dueToContinue()) this.draining = true;
      if (this.draining && this.allWaiting()) return { carry: this.carry() };
    }
  }

  /** Trials whose children an earlier run started: waits for them by id. */
  private resume(): void {
    const { state } = this;
    for (const r of state.running) {
      this.launch({ slot: r.slot, attempt: r.attempt, attempts: r.attempts }, r.workflowId);
    }
    state.running = [];
    this.showProgress();
  }

  /** Continue as new when Temporal suggests it, or once continueAsNewAfter attempts ended in this run. */
  private dueToContinue(): boolean {
    const limit = this.input.continueAsNewAfter;
    return workflowInfo().continueAsNewSuggested || (limit !== undefined && this.endedThisRun >= limit);
  }

  /** Every live trial is waiting on its child (none is starting one or settling): the run may continue as new. */
  private allWaiting(): boolean {
    return [...this.phases.values()].every((p) => p === 'waiting');
  }

  /** The state the next run continues with: the trials waiting on their children go with it. */
  private carry(): EvaluationState {
    const { state, phases } = this;
    state.running = [...this.live.values()].filter((r) => phases.get(r.slot) === 'waiting');
    return state;
  }

  /** The evaluation's result: its progress and the records in task order. */
  private result(): EvaluationResult {
    this.showProgress();
    return {
      evalId: this.input.evalId,
      progress: this.progress(),
      records: [...this.state.records].sort((a, b) => a.index - b.index || a.trial - b.trial),
    };
  }

  /** The evaluation's current details in the Temporal UI. */
  private showProgress(): void {
    const p = this.progress();
    const rate = p.passRate === null ? '–' : `${Math.round(p.passRate * 100)}%`;
    setCurrentDetails(
      `**${p.done}/${p.total} done** · ${p.running} running · ${p.left} left\n\n` +
        `passed ${p.passed} of ${p.scored} scored (${rate}) · aborted ${p.aborted}`,
    );
  }

  /** Starts trials while there is room (and no continue-as-new is pending): retries first, then fresh ones. */
  private startTrials(): void {
    const { state } = this;
    while (!this.draining && this.live.size < this.settings.concurrency) {
      const next =
        state.retries.shift() ??
        (state.nextSlot < state.total ? { slot: state.nextSlot++, attempt: 1, attempts: [] } : undefined);
      if (!next) break;
      this.launch(next);
    }
  }

  /** The task at `index` of the task set, from its page (read once; a slot's retries come back to its page). */
  private specOf(index: number): Promise<EvalTaskSpec> {
    const { pages } = this;
    const { pageSize, options } = this.settings;
    const page = Math.floor(index / pageSize);
    let p = pages.get(page);
    if (!p) {
      p = evalTaskPage({ taskSet: this.input.taskSet, options, offset: page * pageSize, limit: pageSize });
      pages.set(page, p);
      // Keep a few pages: a slot's retries come back to its page, later slots move on.
      for (const key of pages.keys()) if (key < page - 2) pages.delete(key);
    }
    return p.then((list) => {
      const spec = list[index - page * pageSize];
      if (!spec) throw new Error(`task #${index} is missing from its page (the task set changed?)`);
      return spec;
    });
  }

  /** Runs a trial in the background; it leaves the live set when it is recorded (or fails the evaluation). */
  private launch(pending: PendingAttempt, already?: string): void {
    this.live.set(pending.slot, {
      slot: pending.slot,
      attempt: pending.attempt,
      workflowId: already ?? '',
      attempts: pending.attempts,
    });
    this.trial(pending, already)
      .catch((err: unknown) => {
        this.failure ??= err;
      })
      .finally(() => {
        this.live.delete(pending.slot);
        this.phases.delete(pending.slot);
        this.showProgress();
      });
  }

  /**
   * One trial from its current attempt to its record: waits for an attempt an earlier run started (`already`) or
   * starts the next; an environment error starts another attempt (up to maxRetries; while draining, the next run
   * does), any other end settles the trial.
   */
  private async trial(pending: PendingAttempt, already?: string): Promise<void> {
    const { slot } = pending;
    let { attempt } = pending;
    const attempts = [...pending.attempts];
    const index = Math.floor(slot / this.settings.trials);
    const trial = slot % this.settings.trials;
    let startedId = already;
    for (;;) {
      let outcome: AttemptOutcome;
      let workflowId: string;
      if (startedId !== undefined) {
        workflowId = startedId;
        startedId = undefined;
        this.live.set(slot, { slot, attempt, workflowId, attempts });
        this.phases.set(slot, 'waiting');
        outcome = await awaitEvalChild({ workflowId });
      } else {
        this.phases.set(slot, 'starting');
        const spec = await this.specOf(index);
        workflowId = attemptRunId(this.input.evalId, spec.taskId, trial, attempt);
        attempts.push(workflowId);
        this.live.set(slot, { slot, attempt, workflowId, attempts });
        outcome = await this.runChild(spec, workflowId, slot);
      }
      this.phases.set(slot, 'settling');
      this.endedThisRun++;
      if (attemptKind(outcome.endReason) === 'retry' && attempt <= this.settings.maxRetries) {
        attempt++;
        if (this.draining) {
          this.state.retries.push({ slot, attempt, attempts });
          return;
        }
        continue;
      }
      return this.settle(slot, workflowId, outcome, attempts);
    }
  }

  /** Starts one attempt as a child and waits for it; an id started before (a replayed start) is awaited by id. */
  private async runChild(spec: EvalTaskSpec, workflowId: string, slot: number): Promise<AttemptOutcome> {
    const { input } = this;
    const args: TaskInputArgs = { ...spec.input, runId: workflowId };
    const trial = slot % this.settings.trials;
    let handle;
    try {
      handle = await startChild(AGENT_WORKFLOW, {
        workflowId,
        args: [args],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `${input.evalId} · ${spec.taskId} · trial ${trial}: ${spec.input.instruction}`.slice(0, 400),
        typedSearchAttributes: this.settings.tagRuns
          ? [
              { key: EVALUATION_SEARCH_ATTRIBUTE, value: input.evalId },
              { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
              { key: STEP_SEARCH_ATTRIBUTE, value: 0 },
            ]
          : [],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      this.phases.set(slot, 'waiting');
      return awaitEvalChild({ workflowId });
    }
    this.phases.set(slot, 'waiting');
    try {
      return outcomeOfResult((await handle.result()) as TaskResult);
    } catch (err) {
      return outcomeOfFailure(err);
    }
  }

  /** Records a trial's last attempt: a run that ended by itself is scored (and judged), the rest are aborted. */
  private async settle(slot: number, workflowId: string, outcome: AttemptOutcome, attempts: string[]): Promise<void> {
    const index = Math.floor(slot / this.settings.trials);
    const trial = slot % this.settings.trials;
    const kind = attemptKind(outcome.endReason);
    const spec = await this.specOf(index);
    const base = { index, taskId: spec.taskId, trial, endReason: outcome.endReason, steps: outcome.steps };
    const answer = outcome.answer === null ? null : outcome.answer.slice(0, 500);
    if (kind === 'scored') {
      const s = await this.score(index, workflowId, outcome);
      // Evaluations started before the judge existed get no `judge` here: their command sequence is unchanged.
      const judge = s.judge ? await this.judge(s.judge, index, workflowId, outcome) : null;
      this.state.records.push(scoredRecord(base, answer, workflowId, attempts, s, judge));
    } else {
      const why = kind === 'abort' ? 'not retried' : `after ${attempts.length} attempt(s)`;
      this.state.records.push({
        ...base,
        outcome: 'aborted',
        score: null,
        answer,
        reasoning: `aborted ${why}: ${outcome.endReason}${outcome.error ? ` (${outcome.error.slice(0, 300)})` : ''}`,
        runId: workflowId,
        attempts,
        site: null,
        level: null,
        tags: [],
      });
    }
  }

  /** Scores a run; a scoring failure leaves the trial unscored (with the reason) rather than failing the evaluation. */
  private score(index: number, runId: string, outcome: AttemptOutcome): Promise<RulesScore> {
    return scoreAttempt(this.input.taskSet, this.input.judge, index, runId, outcome);
  }

  /** The judge's verdict; a judge that keeps failing leaves the verdict empty with the reason (not a pass). */
  private judge(kind: 'webjudge' | 'rubric', index: number, runId: string, outcome: AttemptOutcome) {
    return judgeAttempt(this.input.taskSet, this.input.judge, kind, index, runId, outcome);
  }
}

/**
 * Scores a run by the rules of task `index` of `taskSet`; a scoring failure gives no score (with the reason) rather
 * than failing the workflow. Also says whether the run goes to the judge (evaluation and best of N alike).
 */
export async function scoreAttempt(
  taskSet: TaskSetRef,
  judge: JudgeSettings | undefined,
  index: number,
  runId: string,
  outcome: AttemptOutcome,
): Promise<RulesScore> {
  try {
    return await scoreEvalRun({ taskSet, index, runId, outcome, ...(judge ? { judge } : {}) });
  } catch (err) {
    const reasoning = `scoring failed: ${messageOf(err)}`;
    return { score: null, reasoning, site: null, level: null, tags: [] as string[], judge: null };
  }
}

/** The judge's verdict on a run; a judge that keeps failing leaves the verdict empty with the reason (not a pass). */
export async function judgeAttempt(
  taskSet: TaskSetRef,
  settings: JudgeSettings | undefined,
  kind: 'webjudge' | 'rubric',
  index: number,
  runId: string,
  outcome: AttemptOutcome,
): Promise<JudgeRecord> {
  try {
    return await judgeEvalRun({ taskSet, index, runId, outcome, kind, ...(settings ? { settings } : {}) });
  } catch (err) {
    const verifier = kind === 'webjudge' ? 'webjudge' : 'rubric_judge';
    return { verifier, score: null, reasoning: `judge error: ${messageOf(err)}`, error: 'judge_failed' };
  }
}

/** A run's score: the rules', else the judge's (when the rules have none), with its reasoning and who gave it. */
export function scoreOf(
  s: Pick<RulesScore, 'score' | 'reasoning'>,
  judge: JudgeRecord | null,
): { score: number | null; reasoning: string; scoredBy?: 'rules' | 'judge' } {
  const byJudge = s.score === null && judge !== null;
  return {
    score: byJudge ? judge.score : s.score,
    reasoning: byJudge ? `${judge.verifier}: ${judge.reasoning}` : s.reasoning,
    ...(s.score !== null
      ? { scoredBy: 'rules' as const }
      : judge?.score !== null && judge?.score !== undefined
        ? { scoredBy: 'judge' as const }
        : {}),
  };
}

/** A scored trial's record: its score (scoreOf) and what it was scored on. */
function scoredRecord(
  base: Pick<EvalRecord, 'index' | 'taskId' | 'trial' | 'endReason' | 'steps'>,
  answer: string | null,
  runId: string,
  attempts: string[],
  s: RulesScore,
  judge: JudgeRecord | null,
): EvalRecord {
  const { score, reasoning, scoredBy } = scoreOf(s, judge);
  return {
    ...base,
    outcome: 'scored',
    score,
    answer,
    reasoning,
    runId,
    attempts,
    site: s.site,
    level: s.level,
    tags: s.tags,
    ...(judge ? { judge } : {}),
    ...(scoredBy ? { scoredBy } : {}),
  };
}
