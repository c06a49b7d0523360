// How each run status (src/contract/task-state.ts) is written into the Fara files' SolverStatus, and read back.
import { isTaskState } from '../contract/task-state';
import type { TaskState } from '../contract/task-state';
import type { SolverStatus } from './schema';

const FILE_STATUS: Record<TaskState, SolverStatus> = {
  running: 'running',
  complete: 'complete',
  waiting_for_user: 'waiting_for_user',
  max_rounds: 'max_rounds',
  failed: 'aborted',
  cancelled: 'aborted',
  // A person stopped the agent (a pause) or drives its browser (a takeover): the run goes on, as far as the files go.
  paused: 'running',
  taken_over: 'running',
};

/**
 * The value written to status.json / data_point.json: `failed` and `cancelled` become `aborted`, `paused` and
 * `taken_over` `running` (the precise value is kept in metadata.stats.run_status).
 */
export function toFileStatus(status: TaskState): SolverStatus {
  return FILE_STATUS[status];
}

/** How a file status reads when we know nothing more precise (a foreign writer, or extras lost in a rewrite). */
const FROM_FILE: Record<SolverStatus, TaskState> = {
  running: 'running',
  complete: 'complete',
  waiting_for_user: 'waiting_for_user',
  max_rounds: 'max_rounds',
  aborted: 'failed',
  timed_out: 'failed',
};

/**
 * Our status from a status.json: the precise `run_status` extra when we wrote it and it agrees with the file value,
 * else the file value (`aborted` and the Fara-1.5 reader's `timed_out`, which we never write, read as `failed`).
 */
export function fromFileStatus(fileStatus: SolverStatus, state?: unknown): TaskState {
  return agreesWith(state, fileStatus) ? state : FROM_FILE[fileStatus];
}

/** True when `state` is one of ours and is written as `fileStatus`: the two describe the same state. */
export function agreesWith(state: unknown, fileStatus: SolverStatus): state is TaskState {
  return isTaskState(state) && toFileStatus(state) === fileStatus;
}

/** The end reason a file status implies by itself: `timed_out` for a run the original timed out, else none. */
export function fileEndReason(fileStatus: SolverStatus): string | undefined {
  return fileStatus === 'timed_out' ? 'timed_out' : undefined;
}
