// How the task loop reads an activity's failure: a session whose worker is gone, a run store that cannot be used,
// and the end reason a failure gives the task. The failure types themselves are src/agent/failure-types.ts.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { endReasonOfFailure, FAILURE_TYPES, isFailureType, isSessionLostType } from '../src/agent/failure-types';
import type { EndReason, TaskInput } from '../src/contract/task';

/** A session activity failed in a way that means its worker (or its browser/desktop) is gone. */
export function isSessionLost(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  return cause instanceof ApplicationFailure && isSessionLostType(cause.type);
}

/** An activity failed because the run store could not be used (full, unreachable, refused): see failure-types. */
export function isStoreFailure(err: unknown): boolean {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) return false;
  const type = err.cause.type;
  return isFailureType(type) && FAILURE_TYPES[type] === 'run_folder';
}

/** Why a failure ended the task: the failure type of the activity error, or a lost session worker. */
export function endReasonOf(err: unknown, input: TaskInput): EndReason {
  if (!(err instanceof ActivityFailure)) {
    return endReasonOfFailure({ type: err instanceof ApplicationFailure ? err.type : undefined });
  }
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return endReasonOfFailure({ sessionTimeout: input.environment });
  return endReasonOfFailure({ type: cause instanceof ApplicationFailure ? cause.type : undefined });
}
