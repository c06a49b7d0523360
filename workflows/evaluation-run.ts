// The evaluation workflow's run as a class, one method per phase: count the task set and page it in, start trials
// (at most `concurrency` at a time, each attempt a child `agentTask`), settle an attempt (retry an environment error
// or record the trial), score and judge, drain for continue-as-new, the result. State lives in fields: what a
// continued run carries over (EvaluationState) and what only this run knows (the live trials and their phases).
// evaluation.ts only wires it. Deterministic: only @temporalio/workflow and pure modules.
import { condition, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { EVALUATION_SEARCH_ATTRIBUTE } from './eval-messages';
import { attemptKind, attemptTaskId } from '../src/eval/records';
import type { AttemptOutcome, EvalProgress, EvalRecord, EvaluationInput, EvaluationResult } from '../src/eval/records';
import { awaitEvalChild, evalTaskCount, runChild, TaskPages } from './eval-children';
import { trialRecord } from './eval-scoring';

/** A trial whose current attempt is running (carried across continue-as-new so the next run waits for it). */
interface RunningAttempt {
  slot: number;
  attempt: number;
  /** The attempt's task id; wire name (carried across continue-as-new), kept so running evaluations continue. */
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

type Phase = 'starting' | 'waiting' | 'settling';

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
  private readonly pages: TaskPages;
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
    this.pages = new TaskPages(input, this.settings.pageSize, this.settings.options);
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
      let taskId: string;
      if (startedId !== undefined) {
        taskId = startedId;
        startedId = undefined;
        this.live.set(slot, { slot, attempt, workflowId: taskId, attempts });
        this.phases.set(slot, 'waiting');
        outcome = await awaitEvalChild({ workflowId: taskId });
      } else {
        this.phases.set(slot, 'starting');
        const spec = await this.pages.specOf(index);
        taskId = attemptTaskId(this.input.evalId, spec.taskId, trial, attempt);
        attempts.push(taskId);
        this.live.set(slot, { slot, attempt, workflowId: taskId, attempts });
        const started = { input: this.input, spec, taskId, trial, tagRuns: this.settings.tagRuns };
        outcome = await runChild(started, () => this.phases.set(slot, 'waiting'));
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
      return this.settle(slot, taskId, outcome, attempts);
    }
  }

  /** Records a trial's last attempt: a run that ended by itself is scored (and judged), the rest are aborted. */
  private async settle(slot: number, taskId: string, outcome: AttemptOutcome, attempts: string[]): Promise<void> {
    const index = Math.floor(slot / this.settings.trials);
    const spec = await this.pages.specOf(index);
    const { taskSet, judge } = this.input;
    const trial = { taskSet, judge, index, setTaskId: spec.taskId, trial: slot % this.settings.trials };
    this.state.records.push(await trialRecord(trial, taskId, outcome, attempts));
  }
}
