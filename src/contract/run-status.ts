// Run statuses: a task's lifecycle values, as its status query, its result and the run folder's metadata give them
// (how each is written into the Fara files' SolverStatus is src/trajectory/status.ts). Pure, and imports nothing.
export const RUN_STATUSES = [
  'running',
  'complete',
  'waiting_for_user',
  'max_rounds',
  'failed',
  'cancelled',
  'paused',
  'taken_over',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** True once a run can no longer continue. */
export function isTerminal(status: RunStatus): boolean {
  return !['running', 'waiting_for_user', 'paused', 'taken_over'].includes(status);
}

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && (RUN_STATUSES as readonly string[]).includes(value);
}
