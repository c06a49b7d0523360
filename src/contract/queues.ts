// Task queue names: the default one, and those derived from the configured one (pure: workflows and the config
// import it).

/** The task queue workers and clients use when the config names none. */
export const DEFAULT_TASK_QUEUE = 'cua-agent';

/**
 * Where a browser task's session opens are scheduled: every worker polls it only while its browser pool has a free
 * session slot (a slot supplier, worker/open-slots.ts), so an open goes to a worker that can take it at once and,
 * when every pool is full, waits in Temporal's queue (first come, first served) rather than in one worker's line.
 */
export function browserOpenQueue(taskQueue: string): string {
  return `${taskQueue}-open-browser`;
}
