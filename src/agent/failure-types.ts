// One vocabulary of failure type names: what activities throw (an error class's `name`, or the type given to
// `nonRetryable`), what the workflow's retry policies list as non-retryable, what tells a lost session, and which
// end reason each stands for. Pure and deterministic: imported by the workflow as well as by activities.
import type { EndReason } from '../contract/end-reason';

/** Every failure type the agent names anywhere, with the end reason a task that fails with it gets. */
export const FAILURE_TYPES = {
  // The model endpoint
  ModelRequestError: 'model_endpoint',
  ModelUnavailableError: 'model_endpoint',
  ModelTimeoutError: 'model_endpoint',
  ModelOutputError: 'invalid_replies',
  // The browser environment
  NavigationError: 'browser',
  BrowserClosedError: 'browser',
  UnknownSessionError: 'browser',
  PageRecoveryError: 'browser',
  BrowserError: 'browser',
  PoolFullError: 'browser',
  BrowserProviderError: 'browser',
  /** A takeover that cannot be granted (src/browser/takeover/). */
  TakeoverError: 'browser',
  CaptchaTimeout: 'captcha',
  CaptchaTimeoutError: 'captcha',
  // The desktop environment
  DesktopUnavailableError: 'desktop',
  UnknownDesktopSessionError: 'desktop',
  DesktopClosedError: 'desktop',
  DesktopPoolFullError: 'desktop',
  SandboxError: 'desktop',
  // An environment an application brings (src/environments/plugin.ts): an environment failure, as the browser's
  EnvironmentUnavailableError: 'browser',
  // The task's input and the files it names
  InvalidTaskInput: 'input',
  /** InvalidTaskIdError's name: wire name, kept (recorded histories carry it). */
  InvalidRunIdError: 'input',
  PromptFileError: 'input',
  ModelOverrideRefused: 'input',
  InvalidAction: 'input',
  // The run folder
  RunFolderError: 'run_folder',
  /** RunFolderNotFoundError's name: wire name, kept (recorded histories carry it). */
  RunNotFoundError: 'run_folder',
  HistoryError: 'run_folder',
  TrajectoryError: 'run_folder',
  CorruptFileError: 'run_folder',
  InvalidRecordError: 'run_folder',
  LockTimeoutError: 'run_folder',
  /** Full, read-only or unreachable beyond store.faultWaitMinutes, or refused (no bucket, credentials). */
  RunStoreUnavailableError: 'run_folder',
  // A strict replay that no longer matches the recording
  ReplayDiverged: 'replay_diverged',
  // The workflow's own failure, wrapping the one that ended the task
  TaskFailed: 'internal',
} as const satisfies Record<string, EndReason>;

export type FailureType = keyof typeof FAILURE_TYPES;

/** A session activity failed this way: its environment (or the worker holding it) is gone; re-open and re-observe. */
export const SESSION_LOST: readonly FailureType[] = [
  'UnknownSessionError',
  'BrowserClosedError',
  'PageRecoveryError',
  'UnknownDesktopSessionError',
  'DesktopClosedError',
];

/** Opening a session: a full pool is retried (another worker may take it); these are not. */
export const OPEN_NOT_RETRIED: readonly FailureType[] = [
  'NavigationError',
  'InvalidRunIdError',
  'RunNotFoundError',
  'DesktopUnavailableError',
  'SandboxError',
  'RunStoreUnavailableError',
];

/** Opening a session found every session of the worker in use: waited out (the task queues for a session). */
export const POOL_FULL: readonly FailureType[] = ['PoolFullError', 'DesktopPoolFullError'];

/** Attempts an open may take on errors other than a full pool before the task fails (about 25 s of retries). */
export const OPEN_ATTEMPTS = 8;

/**
 * The model call: a refused request, bad input or a broken run folder cannot succeed on a retry, nor can a run store
 * that stayed unusable for store.faultWaitMinutes (the activity waited it out already).
 */
export const MODEL_NOT_RETRIED: readonly FailureType[] = [
  'ModelRequestError',
  'InvalidTaskInput',
  'RunFolderError',
  'RunStoreUnavailableError',
];

export function isFailureType(value: unknown): value is FailureType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(FAILURE_TYPES, value);
}

/** Whether a failure type means the session is gone. */
export function isSessionLostType(type: string | null | undefined): boolean {
  return isFailureType(type) && SESSION_LOST.includes(type);
}

/** Whether a failure type means every session of the worker was in use (the task waits for one). */
export function isPoolFullType(type: string | null | undefined): boolean {
  return isFailureType(type) && POOL_FULL.includes(type);
}

/**
 * The heartbeat detail of an open waiting in line in a full pool. A client tells a queued task by it (or by a last
 * failure of a pool-full type) on the pending openSession, without decoding the payload.
 */
export const IN_LINE_DETAIL = 'inLineForSession';

/**
 * The end reason of a failure: by the failure type of the activity error (its class name), or the environment of a
 * session activity that timed out (its worker is gone and could not be replaced).
 */
export function endReasonOfFailure(failure: {
  type?: string | null;
  /** A session activity timed out: true (a browser) or the environment it belongs to. */
  sessionTimeout?: boolean | string;
}): EndReason {
  if (failure.sessionTimeout) return failure.sessionTimeout === 'desktop' ? 'desktop' : 'browser';
  return isFailureType(failure.type) ? FAILURE_TYPES[failure.type] : 'internal';
}
