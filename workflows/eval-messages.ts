// The evaluation workflow's (and best of N's) queries and search attribute, and how a failed task workflow reads as an attempt's
// outcome. One layer above the pure records (src/eval/records.ts) because they come from the Temporal SDK.
import { defineQuery } from '@temporalio/workflow';
import {
  ApplicationFailure,
  CancelledFailure,
  TerminatedFailure,
  TimeoutFailure,
  defineSearchAttributeKey,
} from '@temporalio/common';
import { outcomeOfResult } from '../src/eval/records';
import type { AttemptOutcome, EvalProgress, EvalRecord } from '../src/eval/records';
import type { TaskResult } from '../src/contract/task';
import type { BranchesRecord } from '../src/eval/branches';

/** Set on every task an evaluation starts (and on the evaluation itself): `CuaEvaluation = "<evalId>"`. */
export const EVALUATION_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaEvaluation', 'KEYWORD');

export const evalProgressQuery = defineQuery<EvalProgress>('evalProgress');
/** The settled records so far (the whole list; for reports and the UI while it runs). */
export const evalRecordsQuery = defineQuery<EvalRecord[]>('evalRecords');
/** Best of N's record so far (workflows/fork-branches.ts): each branch's state and score, and the winner. */
export const branchesQuery = defineQuery<BranchesRecord>('branches');

/**
 * The outcome of a task workflow that failed (a child's ChildWorkflowFailure, or the client's WorkflowFailedError):
 * the TaskResult a task carries in its failure details, else what ended it from outside.
 */
export function outcomeOfFailure(err: unknown): AttemptOutcome {
  let message = String(err);
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    message = e.message || message;
    if (e instanceof TerminatedFailure) return { endReason: 'terminated', answer: null, steps: 0, error: message };
    if (e instanceof TimeoutFailure) return { endReason: 'timed_out', answer: null, steps: 0, error: message };
    if (e instanceof CancelledFailure) return { endReason: 'cancelled', answer: null, steps: 0, error: message };
    if (e instanceof ApplicationFailure) {
      const first: unknown = e.details?.[0];
      if (first && typeof first === 'object' && 'endReason' in first && 'status' in first) {
        return outcomeOfResult(first as TaskResult);
      }
    }
  }
  return { endReason: 'internal', answer: null, steps: 0, error: message };
}
