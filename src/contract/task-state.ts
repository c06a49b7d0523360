// Task states: a task's lifecycle values, as its status query, its result and the run folder's metadata give them
// (how each is written into the Fara files' SolverStatus is src/trajectory/status.ts). Pure, and imports nothing.
export const TASK_STATES = [
  'running',
  'complete',
  'waiting_for_user',
  'max_rounds',
  'failed',
  'cancelled',
  'paused',
  'taken_over',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** True once a task can no longer continue. */
export function isTerminal(status: TaskState): boolean {
  return !['running', 'waiting_for_user', 'paused', 'taken_over'].includes(status);
}

export function isTaskState(value: unknown): value is TaskState {
  return typeof value === 'string' && (TASK_STATES as readonly string[]).includes(value);
}
