// Names of the files in a run folder (docs/architecture.md#the-run-folder-format), relative to it, with '/' separators.
export const TASK_FILE = 'task.json';
export const METADATA_FILE = 'metadata.json';
export const DATA_POINT_FILE = 'data_point.json';
export const VERIFICATION_FILE = 'verification.jsonl';
export const RUN_STATE_FILE = 'run_state.json';
export const EVENTS_FILE = 'solver_log/events.jsonl';
export const STATUS_FILE = 'solver_log/status.json';
/** A browser task's saved pages (activities/environments/browser-state.ts writes them; sign-ins are saved from them). */
export const QUESTION_STATE_FILE = 'browser_state.json';
export const CHECKPOINTS_DIR = 'checkpoints';
export const LATEST_CHECKPOINT_FILE = `${CHECKPOINTS_DIR}/latest.json`;

export type ScreenshotPhase = 'pre' | 'post';

/**
 * `screenshot_<step>_<phase>.png`. A later session generation gets its own files (`screenshot_<step>_g<k>_<phase>.png`)
 * so an earlier event's screenshot is never overwritten. The phase always comes last: the original's verifier finds a
 * step's pre image by replacing `_post.` with `_pre.` in the post image's name.
 */
export function screenshotName(step: number, phase: ScreenshotPhase, generation = 0): string {
  if (!Number.isSafeInteger(step) || step < 0) throw new RangeError(`step must be a whole number ≥ 0, got ${step}`);
  if (!Number.isSafeInteger(generation) || generation < 0) {
    throw new RangeError(`generation must be a whole number ≥ 0, got ${generation}`);
  }
  const tag = generation === 0 ? '' : `_g${generation}`;
  return `screenshot_${step}${tag}_${phase}.png`;
}

/**
 * A task id is one folder name under runsDir: no separators, no NUL, not `.`/`..`, at most 128 characters (a colon:
 * a scheduled run's id, `<schedule>-<scheduled time>`).
 */
const TASK_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function isValidTaskId(taskId: string): boolean {
  return TASK_ID.test(taskId) && taskId !== '.' && taskId !== '..';
}
