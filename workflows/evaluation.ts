// The evaluation workflow: one child `agentTask` per task × trial, at most `concurrency` at a time. A run that ends
// by itself is scored (an activity checks its rules and records them in its run folder); an environment error starts
// the task again under a new run id, up to `maxRetries` times, then the trial is aborted (reported, not counted).
// A run that ended with an answer and whose task is judged then goes to the LLM judge (another activity, which reads
// the screenshots from the run folder): its verdict scores a task without rule checks and is kept beside the rules'.
// Long evaluations continue-as-new: children keep running (parent-close policy ABANDON) and the next run waits for
// them by id through an activity. The task set stays on disk; only a page of task inputs is in memory at a time.
// Deterministic: only @temporalio/workflow and pure modules.
import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
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
import { EVALUATION_SEARCH_ATTRIBUTE, evalProgressQuery, evalRecordsQuery, outcomeOfFailure } from './eval-messages';
import { attemptKind, attemptRunId, outcomeOfResult } from '../src/eval/records';
import type {
  AttemptOutcome,
  EvalProgress,
  EvalRecord,
  EvalTaskSpec,
  EvaluationInput,
  EvaluationResult,
  JudgeRecord,
} from '../src/eval/records';

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

export interface EvaluationState {
  total: number;
  nextSlot: number;
  records: EvalRecord[];
  running: RunningAttempt[];
  retries: PendingAttempt[];
}

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

type Phase = 'starting' | 'waiting' | 'settling';

export async function evaluation(input: EvaluationInput, carried?: EvaluationState): Promise<EvaluationResult> {
  const concurrency = Math.max(1, input.concurrency ?? 4);
  const trials = Math.max(1, input.trials ?? 1);
  const maxRetries = Math.max(0, input.maxRetries ?? 5);
  const pageSize = Math.max(1, input.pageSize ?? 25);
  const tagRuns = input.searchAttributes ?? true;
  const options = { model: input.model, maxSteps: input.maxSteps, taskDefaults: input.taskDefaults };
  const state: EvaluationState = carried ?? {
    total: (await evalTaskCount({ taskSet: input.taskSet, options })) * trials,
    nextSlot: 0,
    records: [],
    running: [],
    retries: [],
  };
  const phases = new Map<number, Phase>();
  const live = new Map<number, RunningAttempt>();
  const pages = new Map<number, Promise<EvalTaskSpec[]>>();
  let endedThisRun = 0;
  let draining = false;
  let failure: unknown;

  const progress = (): EvalProgress => {
    const scored = state.records.filter((r) => r.outcome === 'scored');
    const withScore = scored.filter((r) => r.score !== null);
    const passed = withScore.filter((r) => (r.score ?? 0) >= 0.5).length;
    const done = state.records.length;
    return {
      evalId: input.evalId,
      total: state.total,
      done,
      running: live.size,
      left: state.total - done - live.size,
      scored: scored.length,
      passed,
      aborted: done - scored.length,
      passRate: withScore.length ? passed / withScore.length : null,
    };
  };
  setHandler(evalProgressQuery, progress);
  setHandler(evalRecordsQuery, () => state.records);
  /** The evaluation's current details in the Temporal UI. */
  const showProgress = () => {
    const p = progress();
    const rate = p.passRate === null ? '–' : `${Math.round(p.passRate * 100)}%`;
    setCurrentDetails(
      `**${p.done}/${p.total} done** · ${p.running} running · ${p.left} left\n\n` +
        `passed ${p.passed} of ${p.scored} scored (${rate}) · aborted ${p.aborted}`,
    );
  };
  if (tagRuns) upsertSearchAttributes([{ key: EVALUATION_SEARCH_ATTRIBUTE, value: input.evalId }]);

  const specOf = (index: number): Promise<EvalTaskSpec> => {
    const page = Math.floor(index / pageSize);
    let p = pages.get(page);
    if (!p) {
      p = evalTaskPage({ taskSet: input.taskSet, options, offset: page * pageSize, limit: pageSize });
      pages.set(page, p);
      // Keep a few pages: a slot's retries come back to its page, later slots move on.
      for (const key of pages.keys()) if (key < page - 2) pages.delete(key);
    }
    return p.then((list) => {
      const spec = list[index - page * pageSize];
      if (!spec) throw new Error(`task #${index} is missing from its page (the task set changed?)`);
      return spec;
    });
  };

  /** Starts one attempt as a child and waits for it; an id started before (a replayed start) is awaited by id. */
  const runChild = async (spec: EvalTaskSpec, workflowId: string, slot: number): Promise<AttemptOutcome> => {
    const args: TaskInputArgs = { ...spec.input, runId: workflowId };
    const trial = slot % trials;
    let handle;
    try {
      handle = await startChild(AGENT_WORKFLOW, {
        workflowId,
        args: [args],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `${input.evalId} · ${spec.taskId} · trial ${trial}: ${spec.input.instruction}`.slice(0, 400),
        typedSearchAttributes: tagRuns
          ? [
              { key: EVALUATION_SEARCH_ATTRIBUTE, value: input.evalId },
              { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
              { key: STEP_SEARCH_ATTRIBUTE, value: 0 },
            ]
          : [],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      phases.set(slot, 'waiting');
      return awaitEvalChild({ workflowId });
    }
    phases.set(slot, 'waiting');
    try {
      return outcomeOfResult((await handle.result()) as TaskResult);
    } catch (err) {
      return outcomeOfFailure(err);
    }
  };

  /** Scores a run; a scoring failure leaves the trial unscored (with the reason) rather than failing the evaluation. */
  const score = async (index: number, runId: string, outcome: AttemptOutcome) => {
    try {
      return await scoreEvalRun({
        taskSet: input.taskSet,
        index,
        runId,
        outcome,
        ...(input.judge ? { judge: input.judge } : {}),
      });
    } catch (err) {
      const reasoning = `scoring failed: ${messageOf(err)}`;
      return { score: null, reasoning, site: null, level: null, tags: [] as string[], judge: null };
    }
  };

  /** The judge's verdict; a judge that keeps failing leaves the verdict empty with the reason (not a pass). */
  const judgeOf = async (
    kind: 'webjudge' | 'rubric',
    index: number,
    runId: string,
    outcome: AttemptOutcome,
  ): Promise<JudgeRecord> => {
    try {
      return await judgeEvalRun({
        taskSet: input.taskSet,
        index,
        runId,
        outcome,
        kind,
        ...(input.judge ? { settings: input.judge } : {}),
      });
    } catch (err) {
      const verifier = kind === 'webjudge' ? 'webjudge' : 'rubric_judge';
      return { verifier, score: null, reasoning: `judge error: ${messageOf(err)}`, error: 'judge_failed' };
    }
  };

  /** One trial from its current attempt to its record: retries environment errors, scores the rest. */
  const lane = async (pending: PendingAttempt, already?: string): Promise<void> => {
    const { slot } = pending;
    let { attempt } = pending;
    const attempts = [...pending.attempts];
    const index = Math.floor(slot / trials);
    const trial = slot % trials;
    let startedId = already;
    for (;;) {
      let outcome: AttemptOutcome;
      let workflowId: string;
      if (startedId !== undefined) {
        workflowId = startedId;
        startedId = undefined;
        live.set(slot, { slot, attempt, workflowId, attempts });
        phases.set(slot, 'waiting');
        outcome = await awaitEvalChild({ workflowId });
      } else {
        phases.set(slot, 'starting');
        const spec = await specOf(index);
        workflowId = attemptRunId(input.evalId, spec.taskId, trial, attempt);
        attempts.push(workflowId);
        live.set(slot, { slot, attempt, workflowId, attempts });
        outcome = await runChild(spec, workflowId, slot);
      }
      phases.set(slot, 'settling');
      endedThisRun++;
      const kind = attemptKind(outcome.endReason);
      if (kind === 'retry' && attempt <= maxRetries) {
        attempt++;
        if (draining) {
          state.retries.push({ slot, attempt, attempts });
          return;
        }
        continue;
      }
      const spec = await specOf(index);
      const base = { index, taskId: spec.taskId, trial, endReason: outcome.endReason, steps: outcome.steps };
      const answer = outcome.answer === null ? null : outcome.answer.slice(0, 500);
      if (kind === 'scored') {
        const s = await score(index, workflowId, outcome);
        // Evaluations started before the judge existed get no `judge` here: their command sequence is unchanged.
        const judge = s.judge ? await judgeOf(s.judge, index, workflowId, outcome) : null;
        const byJudge = s.score === null && judge !== null;
        state.records.push({
          ...base,
          outcome: 'scored',
          score: byJudge ? judge.score : s.score,
          answer,
          reasoning: byJudge ? `${judge.verifier}: ${judge.reasoning}` : s.reasoning,
          runId: workflowId,
          attempts,
          site: s.site,
          level: s.level,
          tags: s.tags,
          ...(judge ? { judge } : {}),
          ...(s.score !== null
            ? { scoredBy: 'rules' as const }
            : judge?.score !== null && judge?.score !== undefined
              ? { scoredBy: 'judge' as const }
              : {}),
        });
      } else {
        const why = kind === 'abort' ? 'not retried' : `after ${attempts.length} attempt(s)`;
        state.records.push({
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
      return;
    }
  };

  const launch = (pending: PendingAttempt, already?: string) => {
    live.set(pending.slot, {
      slot: pending.slot,
      attempt: pending.attempt,
      workflowId: already ?? '',
      attempts: pending.attempts,
    });
    lane(pending, already)
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => {
        live.delete(pending.slot);
        phases.delete(pending.slot);
        showProgress();
      });
  };

  // Children an earlier run started: wait for them by id.
  for (const r of state.running) launch({ slot: r.slot, attempt: r.attempt, attempts: r.attempts }, r.workflowId);
  state.running = [];
  showProgress();

  for (;;) {
    while (!draining && live.size < concurrency) {
      const next =
        state.retries.shift() ??
        (state.nextSlot < state.total ? { slot: state.nextSlot++, attempt: 1, attempts: [] } : undefined);
      if (!next) break;
      launch(next);
    }
    if (live.size === 0 && state.retries.length === 0 && state.nextSlot >= state.total) break;
    const ended = endedThisRun;
    const size = live.size;
    await condition(
      () =>
        failure !== undefined ||
        live.size !== size ||
        endedThisRun !== ended ||
        (draining && [...phases.values()].every((p) => p === 'waiting')),
    );
    if (failure !== undefined) throw failure;
    const limit = input.continueAsNewAfter;
    if (!draining && (workflowInfo().continueAsNewSuggested || (limit !== undefined && endedThisRun >= limit))) {
      draining = true;
    }
    if (draining && [...phases.values()].every((p) => p === 'waiting')) {
      state.running = [...live.values()].filter((r) => phases.get(r.slot) === 'waiting');
      await continueAsNew<typeof evaluation>(input, state);
    }
  }
  showProgress();
  return {
    evalId: input.evalId,
    progress: progress(),
    records: [...state.records].sort((a, b) => a.index - b.index || a.trial - b.trial),
  };
}
