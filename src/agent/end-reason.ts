// Why a task ended, as a machine-readable value beside the human text: tools built on top (an evaluation harness)
// must tell an agent failure (it gave up, ran out of steps, kept replying nonsense) from an environment failure (the
// model endpoint, the browser) without parsing messages. Pure; used by the workflow.

export const END_REASONS = [
  /** The model ended the task (terminate). */
  'complete',
  /** The step budget was used up. */
  'max_rounds',
  /** Too many model replies in a row were no valid action. */
  'invalid_replies',
  /** The model endpoint refused the request, or stayed unreachable through every retry. */
  'model_endpoint',
  /** The browser could not be opened, lost its page, or the start page could not load. */
  'browser',
  /** A captcha was not solved in time. */
  'captcha',
  /** Nobody answered the agent's question before the ask timeout. */
  'ask_timeout',
  /** Someone cancelled the task. */
  'cancelled',
  /** The task's input (or a file it names, e.g. a prompt file) was not usable. */
  'input',
  /** The run folder could not be read or written. */
  'run_folder',
  /** Anything else: a bug or an unexpected failure; the text says what. */
  'internal',
] as const;
export type EndReason = (typeof END_REASONS)[number];

const BY_FAILURE_TYPE: Readonly<Record<string, EndReason>> = {
  ModelRequestError: 'model_endpoint',
  ModelUnavailableError: 'model_endpoint',
  ModelOutputError: 'invalid_replies',
  NavigationError: 'browser',
  BrowserClosedError: 'browser',
  UnknownSessionError: 'browser',
  PageRecoveryError: 'browser',
  BrowserError: 'browser',
  PoolFullError: 'browser',
  CaptchaTimeout: 'captcha',
  CaptchaTimeoutError: 'captcha',
  InvalidTaskInput: 'input',
  InvalidRunIdError: 'input',
  PromptFileError: 'input',
  ModelOverrideRefused: 'input',
  InvalidAction: 'input',
  RunFolderError: 'run_folder',
  RunNotFoundError: 'run_folder',
  HistoryError: 'run_folder',
  TrajectoryError: 'run_folder',
  CorruptFileError: 'run_folder',
  InvalidRecordError: 'run_folder',
  LockTimeoutError: 'run_folder',
};

/**
 * The end reason of a failure: by the failure type of the activity error (its class name), or `browser` for a
 * browser activity that timed out (its worker is gone and could not be replaced).
 */
export function endReasonOfFailure(failure: { type?: string | null; sessionTimeout?: boolean }): EndReason {
  if (failure.sessionTimeout) return 'browser';
  return (failure.type && BY_FAILURE_TYPE[failure.type]) || 'internal';
}

export function isEndReason(value: unknown): value is EndReason {
  return typeof value === 'string' && (END_REASONS as readonly string[]).includes(value);
}
