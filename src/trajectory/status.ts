// Run statuses: our precise lifecycle values, and how each is written into the Fara files' SolverStatus.
import type { SolverStatus } from './schema';

export const RUN_STATUSES = ['running', 'complete', 'waiting_for_user', 'max_rounds', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const FILE_STATUS: Record<RunStatus, SolverStatus> = {
  running: 'running',
  complete: 'complete',
  waiting_for_user: 'waiting_for_user',
  max_rounds: 'max_rounds',
  failed: 'aborted',
  cancelled: 'aborted',
};

/** The value written to status.json / data_point.json: `failed` and `cancelled` become `aborted`. */
export function toFileStatus(status: RunStatus): SolverStatus {
  return FILE_STATUS[status];
}

/** True once a run can no longer continue. */
export function isTerminal(status: RunStatus): boolean {
  return status !== 'running' && status !== 'waiting_for_user';
}

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && (RUN_STATUSES as readonly string[]).includes(value);
}

/**
 * Our status from a status.json: the precise `run_status` extra when we wrote it, else the file value
 * (`aborted` from a foreign writer reads as `failed`, the closest we have).
 */
export function fromFileStatus(fileStatus: SolverStatus, runStatus?: unknown): RunStatus {
  if (isRunStatus(runStatus) && toFileStatus(runStatus) === fileStatus) return runStatus;
  return fileStatus === 'aborted' ? 'failed' : fileStatus;
}
