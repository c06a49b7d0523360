// A task's snapshot: where it is, running or ended, in one shape, from the client's view of it (its status query, its
// result, or how its workflow closed). AgentClient.status returns it; the CLI's `status`, the console and MCP show it.
import type { PendingQuestion, TaskOutput, TaskResult, TaskStatus } from '../src/contract/task';
import type { TaskView } from './tasks';

/** Where a task is, running or ended, in one shape (a snapshot taken when asked). */
export interface TaskSnapshot {
  id: string;
  /** running, waiting_for_user, or how it ended: complete, max_rounds, failed, cancelled. */
  status: TaskStatus['status'];
  /** True once the task has ended (`result` is then set, unless its workflow was terminated). */
  closed: boolean;
  step: number;
  /** The question the task waits on (status waiting_for_user); reply with its `id` as `questionId`. */
  question: PendingQuestion | null;
  answer: string | null;
  error: string | null;
  endReason: TaskResult['endReason'] | null;
  /** The workflow's own status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT. */
  workflowStatus: string;
  /** While it runs: the workflow's full status (URL, last action, …). */
  progress: TaskStatus | null;
  /** Once it has ended: its result. */
  result: TaskResult | null;
  /** The message of the workflow's failure, when it failed or was cancelled. */
  failure: string | null;
  /**
   * A task with an output schema, once ended (docs/output.md): its output (the JSON the schema validated; `partial`
   * at a step or cost budget), null when it has none (`outputError` says why). Absent for a task without a schema.
   */
  output?: TaskOutput | null;
  outputError?: string;
  /** Every worker's sessions were in use at the task's last attempt to open one; it starts when one frees up. */
  waitingForSession: TaskView['waitingForSession'];
  /** The step's model call is slow or being retried: which try, how long so far, the last try's error. */
  waitingForModel: TaskView['waitingForModel'];
  /**
   * The run store is full, read-only or unreachable and an activity waits for it (up to the worker's
   * store.faultWaitMinutes): the kind, since when, until when, the last error.
   */
  waitingForStore: TaskView['waitingForStore'];
}

/** @deprecated Renamed {@link TaskSnapshot} (the contract's TaskState is a task's state: running, waiting, …). */
export type TaskState = TaskSnapshot;

/** The state of a task from the client's view of it (exported for the CLI's `status`). */
export function taskSnapshot(id: string, view: TaskView): TaskSnapshot {
  const p = view.status;
  const r = view.result;
  return {
    id,
    status: p?.status ?? r?.status ?? (view.workflowStatus === 'CANCELLED' ? 'cancelled' : 'failed'),
    closed: p === null,
    step: p?.step ?? r?.steps ?? 0,
    question: p?.question ?? null,
    answer: p?.answer ?? r?.answer ?? null,
    error: p?.error ?? r?.error ?? view.failure,
    endReason: p ? p.endReason : (r?.endReason ?? null),
    workflowStatus: view.workflowStatus,
    progress: p,
    result: r,
    failure: view.failure,
    ...outputOf(r ?? p),
    waitingForSession: view.waitingForSession,
    waitingForModel: view.waitingForModel,
    waitingForStore: view.waitingForStore,
  };
}

/** The output fields of a result (or an ended task's status), as the snapshot carries them. */
function outputOf(
  from: Pick<TaskResult, 'output' | 'outputError'> | null,
): Pick<TaskSnapshot, 'output' | 'outputError'> {
  if (from?.output === undefined) return {};
  return { output: from.output, ...(from.outputError ? { outputError: from.outputError } : {}) };
}

/** @deprecated Renamed {@link taskSnapshot}. */
export const taskState = taskSnapshot;
