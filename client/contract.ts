// `durable-cua/contract`: what the workflow accepts and answers, for applications that use the raw Temporal client
// (or another language's SDK): the workflow type, task input schema and types, the reply update and signal, the
// controls' updates (pause, resume, say, takeover, handback),
// status and steps queries, the reply refusals' failure types, the search attributes and the default task queue. The sources are src/contract/task.ts and workflows/messages.ts.
// And what a worker's webhook sends (its body and headers) with the receiver's check, verifyWebhookSignature
// (src/notify/).
import { AGENT_WORKFLOW, CONTROL_REFUSED, REPLY_REFUSALS, TASK_STATES } from '../src/contract/task';
import type { TaskState } from '../src/contract/task';
import {
  STATUS_SEARCH_ATTRIBUTE,
  STEP_SEARCH_ATTRIBUTE,
  handbackUpdate,
  pauseUpdate,
  replySignal,
  replyUpdate,
  resumeUpdate,
  sayUpdate,
  statusQuery,
  stepsQuery,
  takeoverUpdate,
} from '../workflows/messages';

export {
  AGENT_WORKFLOW,
  CONTROL_REFUSED,
  DEFAULT_TASK_QUEUE,
  END_REASONS,
  ENVIRONMENTS,
  ModelChoiceSchema,
  REPLY_REFUSALS,
  TASK_STATES,
  TaskInputSchema,
} from '../src/contract/task';
export {
  STATUS_SEARCH_ATTRIBUTE,
  STEP_SEARCH_ATTRIBUTE,
  handbackUpdate,
  pauseUpdate,
  replySignal,
  replyUpdate,
  resumeUpdate,
  sayUpdate,
  statusQuery,
  stepsQuery,
  takeoverUpdate,
} from '../workflows/messages';
export type {
  ControlAccepted,
  EndReason,
  HandbackInput,
  SayInput,
  TakeoverLease,
  EnvironmentName,
  PendingQuestion,
  ReplyInput,
  TaskState,
  StepSummary,
  TaskInput,
  TaskInputArgs,
  TaskOutput,
  TaskResult,
  TaskStatus,
} from '../src/contract/task';

export { NOTIFY_EVENTS } from '../src/contract/activities';
export type { NotifyEvent } from '../src/contract/activities';
export type { WebhookBody } from '../src/notify/body';
export {
  DEFAULT_TOLERANCE_SECONDS,
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyWebhookSignature,
} from '../src/notify/signature';
export type { WebhookHeaders, WebhookVerification } from '../src/notify/signature';

/** @deprecated use TASK_STATES (the same values). */
export const RUN_STATUSES = TASK_STATES;
/** @deprecated use TaskState (the same values). */
export type RunStatus = TaskState;

/** The names on the wire, for clients that do not import the definitions above (Python, Go, the temporal CLI). */
export const WIRE_NAMES = {
  workflow: AGENT_WORKFLOW,
  replyUpdate: replyUpdate.name,
  replySignal: replySignal.name,
  statusQuery: statusQuery.name,
  stepsQuery: stepsQuery.name,
  statusSearchAttribute: STATUS_SEARCH_ATTRIBUTE.name,
  stepSearchAttribute: STEP_SEARCH_ATTRIBUTE.name,
  /** The failure types of a refused reply update. */
  replyRefusals: REPLY_REFUSALS,
  /** The controls' updates (each refuses a bad or stale request with CONTROL_REFUSED). */
  pauseUpdate: pauseUpdate.name,
  resumeUpdate: resumeUpdate.name,
  sayUpdate: sayUpdate.name,
  takeoverUpdate: takeoverUpdate.name,
  handbackUpdate: handbackUpdate.name,
  controlRefused: CONTROL_REFUSED,
} as const;
