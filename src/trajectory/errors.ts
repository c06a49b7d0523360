// Typed errors of the run folder: each names the file (and line) it is about, so a bad folder is easy to find.

/** Base class: every trajectory error carries the run-relative file it concerns, when there is one. */
export class TrajectoryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** `create` found a task.json already in the folder: the caller must choose resume (`open`) explicitly. */
export class RunExistsError extends TrajectoryError {
  constructor(readonly file: string) {
    super(`run already exists: ${file} is present (open it to resume instead)`);
  }
}

/**
 * `open` / `readRun` found no task.json: not a run folder. Its `name` (the failure type activities fail with) stays
 * 'RunNotFoundError': wire name, kept so recorded histories replay and workers of either version agree.
 */
export class RunFolderNotFoundError extends TrajectoryError {
  override readonly name = 'RunNotFoundError';
  constructor(readonly file: string) {
    super(`not a run folder: ${file} is missing`);
  }
}

/**
 * A task id that is not a single safe path segment (the run folder's name). Its `name` (the failure type) stays
 * 'InvalidRunIdError': wire name, kept so recorded histories replay and workers of either version agree.
 */
export class InvalidTaskIdError extends TrajectoryError {
  override readonly name = 'InvalidRunIdError';
  constructor(readonly taskId: string) {
    super(`invalid task id ${JSON.stringify(taskId)}: use letters, digits, '.', '_' or '-' (not '.' or '..')`);
  }
}

/** A file (or one line of a .jsonl file) that is not valid JSON or does not match the schema. */
export class CorruptFileError extends TrajectoryError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}${line === undefined ? '' : `:${line}`}: ${detail}`, options);
  }
}

/** A folder `cua adopt` cannot take over (not a folder, no task.json, no events, a finished run, …): one line. */
export class FolderNotAdoptableError extends TrajectoryError {
  constructor(
    readonly folder: string,
    readonly reason: string,
  ) {
    super(`cannot adopt ${folder}: ${reason}`);
  }
}

/** An observation whose action_id names no action in the stream. */
export class UnknownActionIdError extends TrajectoryError {
  constructor(
    readonly observationId: string,
    readonly actionId: string,
  ) {
    super(`observation ${observationId} refers to action_id ${actionId}, but no such action is in the stream`);
  }
}

/** Two actions with no observation between them. */
export class ConsecutiveActionsError extends TrajectoryError {
  constructor(
    readonly previousActionId: string,
    readonly actionId: string,
  ) {
    super(`action ${actionId} follows action ${previousActionId} with no observation between them`);
  }
}

/** The same event id twice with different content: a deterministic id was reused for another event. */
export class EventIdConflictError extends TrajectoryError {
  constructor(readonly eventId: string) {
    super(`event id ${eventId} is already in the stream with a different type`);
  }
}

/** Another writer holds the folder's append lock for too long. */
export class LockTimeoutError extends TrajectoryError {
  constructor(readonly file: string) {
    super(`timed out waiting for the lock ${file}`);
  }
}

/** An event or verification result handed to the writer that does not match the schema. */
export class InvalidRecordError extends TrajectoryError {
  constructor(
    readonly what: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid ${what}: ${detail}`, options);
  }
}

/**
 * Why a run store cannot be used. `full` (ENOSPC, EDQUOT), `read_only` (EROFS) and `unreachable` (an S3 endpoint that
 * refuses connections, times out or answers 5xx) are the environment's faults, waited out (src/trajectory/store-faults.ts);
 * `refused` (no such bucket, credentials refused, keys unset) is the configuration's, which waiting cannot fix.
 */
export type RunStoreUnavailableKind = 'full' | 'read_only' | 'unreachable' | 'refused';

/** The run store cannot be used: full, read-only, unreachable, or refused (no bucket, credentials refused). */
export class RunStoreUnavailableError extends TrajectoryError {
  readonly kind: RunStoreUnavailableKind;
  /** Set when a worker waited this long for the store and gave up: final, never waited out again. */
  readonly waitedMs: number | undefined;

  constructor(message: string, options: { kind: RunStoreUnavailableKind; waitedMs?: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
    this.waitedMs = options.waitedMs;
  }
}
