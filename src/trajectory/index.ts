// The trajectory package's public surface: the run folder (Fara DataPoint format) — schema, ids, writer, reader, steps.
export {
  CorruptFileError,
  ConsecutiveActionsError,
  EventIdConflictError,
  InvalidRecordError,
  InvalidTaskIdError,
  LockTimeoutError,
  RunExistsError,
  RunFolderNotFoundError,
  RunStoreUnavailableError,
  TrajectoryError,
  UnknownActionIdError,
} from './errors';
export {
  actionEvent,
  followupMessage,
  postObservation,
  preObservation,
  retryFeedback,
  sessionRestored,
  startObservation,
  taskMessage,
  toolOutput,
  userReply,
} from './events';
export type { ActionFields, PageState, Stamp } from './events';
export { EVENT_KINDS, eventId, eventScope, isEventKind, parseEventId } from './ids';
export type { EventIdParts, EventKind } from './ids';
export {
  DATA_POINT_FILE,
  EVENTS_FILE,
  METADATA_FILE,
  RUN_STATE_FILE,
  STATUS_FILE,
  TASK_FILE,
  VERIFICATION_FILE,
  isValidTaskId,
  screenshotName,
} from './layout';
export type { ScreenshotPhase } from './layout';
export { readDataPoint, readRun, readRunFromStore } from './reader';
export type { ReadWarning, RunRecord, StatusSnapshot } from './reader';
export {
  ActionSchema,
  DataPointSchema,
  EventSchema,
  ObservationSchema,
  StatusFileSchema,
  TaskSchema,
  VerificationResultSchema,
  isCorrect,
} from './schema';
export type {
  Action,
  DataPoint,
  DataPointMetadata,
  EnvironmentObservation,
  Event,
  EventInput,
  Observation,
  Outcome,
  SolverStatus,
  Task,
  TaskInput,
  ToolOutputObservation,
  UserMessageObservation,
  UserMessageType,
  VerificationResult,
  VerificationResultInput,
} from './schema';
export { fromFileStatus, toFileStatus } from './status';
export { buildSteps, stepScreenshot, stepSummaries, stepUrl } from './steps';
export type { Step, StepSummary } from './steps';
export { copyRun, openRunStore } from './open-store';
export { S3RunStore } from './s3-store';
export type { S3RunStoreOptions } from './s3-store';
export { LocalRunStore } from './store';
export type { LocalRunStoreOptions, RunStore } from './store';
export { TrajectoryWriter } from './writer';
export type { RunsRoot, WriterOptions } from './writer';
