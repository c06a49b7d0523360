// Task queue names derived from the configured one (pure: workflows import it too).

/**
 * Where a browser task's session opens are scheduled: every worker polls it only while its browser pool has room (a
 * slot supplier, worker/open-slots.ts), so an open goes to a worker that can take it at once and, when every pool is
 * full, waits in Temporal's queue (first come, first served) rather than in one worker's line.
 */
export function browserOpenQueue(taskQueue: string): string {
  return `${taskQueue}-open-browser`;
}
