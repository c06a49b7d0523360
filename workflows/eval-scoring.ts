// How an evaluation (and best of N, fork-branches.ts) scores a run and records a trial: the rules' activity, the LLM
// judge's, the score they give together, and the record of a trial's last attempt. A scoring or judging failure
// leaves the trial unscored with the reason; it never fails the workflow. Deterministic.
import { proxyActivities } from '@temporalio/workflow';
import { upToLongestStoreWait } from './activity-proxies';
import type { Activities } from './activity-proxies';
import { attemptKind } from '../src/eval/records';
import type { AttemptOutcome, EvalRecord, JudgeRecord, TaskSetRef } from '../src/eval/records';
import type { JudgeSettings } from '../src/eval/judge';

/** What the rules' scoring of a run gives (scoreEvalRun's result). */
export type RulesScore = Awaited<ReturnType<Activities['scoreEvalRun']>>;

/** An activity failure's own message (its cause's, when Temporal wrapped it). */
function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? err.cause.message : err.message;
}

const { scoreEvalRun } = proxyActivities<Activities>({
  startToCloseTimeout: upToLongestStoreWait(2),
  heartbeatTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});
/** The judge's model calls: heartbeating, retried with backoff on 5xx and network errors (4xx is recorded, not thrown). */
const { judgeEvalRun } = proxyActivities<Activities>({
  startToCloseTimeout: upToLongestStoreWait(20),
  heartbeatTimeout: '60s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['ModelRequestError', 'TaskSetError'],
  },
});

/**
 * Scores a run by the rules of task `index` of `taskSet`; a scoring failure gives no score (with the reason) rather
 * than failing the workflow. Also says whether the run goes to the judge (evaluation and best of N alike).
 */
export async function scoreAttempt(
  taskSet: TaskSetRef,
  judge: JudgeSettings | undefined,
  index: number,
  taskId: string,
  outcome: AttemptOutcome,
): Promise<RulesScore> {
  try {
    return await scoreEvalRun({ taskSet, index, runId: taskId, outcome, ...(judge ? { judge } : {}) });
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
  taskId: string,
  outcome: AttemptOutcome,
): Promise<JudgeRecord> {
  try {
    return await judgeEvalRun({ taskSet, index, runId: taskId, outcome, kind, ...(settings ? { settings } : {}) });
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
  taskId: string,
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
    runId: taskId,
    attempts,
    site: s.site,
    level: s.level,
    tags: s.tags,
    ...(judge ? { judge } : {}),
    ...(scoredBy ? { scoredBy } : {}),
  };
}

/** Who a trial is and what it is scored by. */
export interface TrialRef {
  taskSet: TaskSetRef;
  judge: JudgeSettings | undefined;
  index: number;
  setTaskId: string;
  trial: number;
}

/** The record of a trial's last attempt: a run that ended by itself is scored (and judged), the rest are aborted. */
export async function trialRecord(
  t: TrialRef,
  taskId: string,
  outcome: AttemptOutcome,
  attempts: string[],
): Promise<EvalRecord> {
  const { taskSet, judge: settings, index } = t;
  const kind = attemptKind(outcome.endReason);
  const base = { index, taskId: t.setTaskId, trial: t.trial, endReason: outcome.endReason, steps: outcome.steps };
  const answer = outcome.answer === null ? null : outcome.answer.slice(0, 500);
  if (kind === 'scored') {
    const s = await scoreAttempt(taskSet, settings, index, taskId, outcome);
    // Evaluations started before the judge existed get no `judge` here: their command sequence is unchanged.
    const judge = s.judge ? await judgeAttempt(taskSet, settings, s.judge, index, taskId, outcome) : null;
    return scoredRecord(base, answer, taskId, attempts, s, judge);
  }
  const why = kind === 'abort' ? 'not retried' : `after ${attempts.length} attempt(s)`;
  return {
    ...base,
    outcome: 'aborted',
    score: null,
    answer,
    reasoning: `aborted ${why}: ${outcome.endReason}${outcome.error ? ` (${outcome.error.slice(0, 300)})` : ''}`,
    runId: taskId,
    attempts,
    site: null,
    level: null,
    tags: [],
  };
}
