// The schedules' typed errors, each one line; they extend TaskError like the client's other refusals.
import { TaskError } from './errors';

/** No schedule with this name exists in the namespace (or it was deleted). */
export class ScheduleNotFoundError extends TaskError {
  constructor(readonly schedule: string) {
    super(`no schedule named ${schedule}`);
  }
}

/** Creating a schedule whose name is taken. */
export class ScheduleAlreadyExistsError extends TaskError {
  constructor(readonly schedule: string) {
    super(`a schedule named ${schedule} already exists; delete it first or choose another name`);
  }
}

/** A schedule that cannot be created as asked: `field` is what is wrong (cron, timezone, every, startUrl, …). */
export class InvalidScheduleError extends TaskError {
  constructor(
    readonly field: string,
    readonly reason: string,
    /** The reason names the field itself (a cron field, a flag): not said twice. */
    named = false,
  ) {
    super(`invalid schedule: ${named ? reason : `${field}: ${reason}`}`);
  }
}
