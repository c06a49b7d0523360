// The client's typed errors: one class per thing a caller may want to handle differently, each with a one-line
// message. All extend TaskError, so `catch (e) { if (e instanceof TaskError) ... }` covers every expected refusal.

export class TaskError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No workflow with this task id exists in the namespace. */
export class TaskNotFoundError extends TaskError {
  constructor(readonly taskId: string) {
    super(`no task with id ${taskId}`);
  }
}

/** Starting a task whose id is already taken (by a running or a closed task). */
export class TaskAlreadyExistsError extends TaskError {
  constructor(readonly taskId: string) {
    super(`a task with id ${taskId} already exists; choose another id`);
  }
}

/** A reply to a task that has no pending question (it runs, or it has ended). */
export class TaskNotWaitingError extends TaskError {
  constructor(
    readonly taskId: string,
    /** What the task is doing instead: its run status, or how its workflow ended. */
    readonly state: string,
    options?: { cause?: unknown },
  ) {
    super(`task ${taskId} is not waiting for a reply (it is ${state})`, options);
  }
}

/** A reply naming a question that is no longer the pending one. */
export class StaleQuestionError extends TaskError {
  constructor(
    readonly taskId: string,
    readonly questionId: string,
    /** The question the task waits on now, when known. */
    readonly pendingQuestionId: string | null,
    options?: { cause?: unknown },
  ) {
    const pending = pendingQuestionId ? `, the pending question is ${pendingQuestionId}` : '';
    super(`reply rejected: stale reply: it is for question ${questionId}${pending}`, options);
  }
}

/**
 * A task input or a reply text that does not pass validation: `field` is the offending path (`startUrl`, `maxSteps`,
 * or `reply` for a reply's text), `reason` what is wrong with it.
 */
export class InvalidTaskInputError extends TaskError {
  constructor(
    readonly field: string,
    readonly reason: string,
    message = `invalid task: ${field}: ${reason}`,
  ) {
    super(message);
  }
}

/** Cancelling a task that has already ended. */
export class TaskClosedError extends TaskError {
  constructor(
    readonly taskId: string,
    readonly workflowStatus: string,
  ) {
    super(`task ${taskId} has already ended (${workflowStatus.toLowerCase()})`);
  }
}

/** The task's workflow ended without a task result (terminated, timed out, or failed before it could record one). */
export class TaskFailedError extends TaskError {
  constructor(
    readonly taskId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`task ${taskId} ended without a result: ${message}`, options);
  }
}

/** A control (pause, resume, say, takeover, handback, continue) the task refused; the message says why, in one line. */
export class ControlRefusedError extends TaskError {
  constructor(
    readonly taskId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
