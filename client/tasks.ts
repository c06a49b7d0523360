// Task operations over a Temporal client: start, look up, reply, describe, list, cancel, wait for the result. The
// public client (client/client.ts) and the `cua` commands are built on these; refusals are the typed errors of
// client/errors.ts, each one line.
import { randomBytes } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type {
  Client,
  WorkflowExecutionDescription,
  WorkflowHandle,
  WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, WorkflowIdReusePolicy } from '@temporalio/common';
import type { LoadedDataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { AGENT_WORKFLOW, REPLY_REFUSALS, TaskInputSchema } from '../src/contract/task';
import { applyStartPolicy } from '../src/contract/start-policy';
import type { StartPolicy } from '../src/contract/start-policy';
import { familyIssue } from '../src/families/registry';
import { outputSchemaIssue } from '../src/agent/output-schema';
import {
  STATUS_SEARCH_ATTRIBUTE,
  STEP_SEARCH_ATTRIBUTE,
  replyUpdate,
  statusQuery,
  stepsQuery,
} from '../workflows/messages';
import type { TaskState, TaskInput, TaskInputArgs, TaskResult, TaskStatus, StepSummary } from '../src/contract/task';
import { IN_LINE_DETAIL, isPoolFullType } from '../src/agent/failure-types';
import { STORE_WAIT_DETAIL, storeFaultLine } from '../src/trajectory/store-wait';
import type { StoreWait } from '../src/trajectory/store-wait';
import { cleanReply } from '../src/agent/reply';
import {
  InvalidTaskInputError,
  StaleQuestionError,
  TaskAlreadyExistsError,
  TaskClosedError,
  TaskError,
  TaskFailedError,
  TaskNotFoundError,
  TaskNotWaitingError,
} from './errors';

export { TaskError };

export function newTaskId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `task-${stamp}-${randomBytes(3).toString('hex')}`;
}

/**
 * The task input with defaults filled in, or InvalidTaskInputError naming the first field that is wrong (the model
 * family and its identity checked against the families registered in this process).
 */
export function validateTaskInput(args: TaskInputArgs): TaskInput {
  const parsed = TaskInputSchema.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidTaskInputError(issue?.path.join('.') || 'input', issue?.message ?? 'invalid');
  }
  const issue = familyIssue(parsed.data);
  if (issue) throw new InvalidTaskInputError(issue.field, issue.reason);
  const schemaIssue = outputSchemaIssue(parsed.data.outputSchema);
  if (schemaIssue) throw new InvalidTaskInputError('outputSchema', schemaIssue);
  return parsed.data;
}

/** A start policy and the callers it is for (named in its refusals: "MCP callers may use …"). */
export interface CallerPolicy {
  rules: StartPolicy;
  callers: string;
}

/** The task as `policy` lets it start (its URL policy narrowed, its start URL checked again), or InvalidTaskInputError. */
export function withCallerPolicy(input: TaskInput, policy: CallerPolicy | undefined): TaskInput {
  if (!policy) return input;
  const verdict = applyStartPolicy(policy.rules, input, policy.callers);
  if (!verdict.ok) throw new InvalidTaskInputError(verdict.field, verdict.reason);
  return validateTaskInput(verdict.input);
}

export async function startTask(
  client: Client,
  taskQueue: string,
  input: TaskInput,
  opts: { reuseClosedId?: boolean; summary?: string } = {},
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  try {
    return await client.workflow.start(AGENT_WORKFLOW, {
      taskQueue,
      workflowId: input.runId,
      // The id names the task's run folder: a second task under a closed task's id would write into the first's. A
      // follow-up (client/control.ts continueTask) means to: it goes on in that folder.
      workflowIdReusePolicy: opts.reuseClosedId
        ? WorkflowIdReusePolicy.ALLOW_DUPLICATE
        : WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      staticSummary: (opts.summary ?? input.instruction).slice(0, 400),
      // A fork's parent and step (issue 27), an adopted folder (issue 28), in the Temporal UI's memo beside the instruction.
      memo: {
        instruction: input.instruction.slice(0, 400),
        // The task list (the web console) shows it without reading each run folder.
        environment: input.environment,
        ...(input.forkOf ? { forkOf: { runId: input.forkOf.runId, step: input.forkOf.step } } : {}),
        ...(input.adoptOf ? { adoptOf: { folder: input.adoptOf.folder } } : {}),
      },
      ...(input.searchAttributes
        ? {
            typedSearchAttributes: [
              { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
              { key: STEP_SEARCH_ATTRIBUTE, value: 0 },
            ],
          }
        : {}),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new TaskAlreadyExistsError(input.runId);
    throw err;
  }
}

/** Describes a task's current run (the latest of its continue-as-new chain), or TaskNotFoundError. */
export async function describeTask(handle: WorkflowHandle): Promise<WorkflowExecutionDescription> {
  try {
    return await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new TaskNotFoundError(handle.workflowId);
    throw err;
  }
}

/** The handle of an existing task, or TaskNotFoundError when there is none. */
export async function existingTask(client: Client, id: string): Promise<WorkflowHandle> {
  const handle = client.workflow.getHandle(id);
  await describeTask(handle);
  return handle;
}

export interface TaskView {
  status: TaskStatus | null;
  workflowStatus: string;
  result: TaskResult | null;
  failure: string | null;
  /** The task is queued for a browser or desktop: every worker's sessions were in use at its last attempt. */
  waitingForSession: { attempts: number; since: string | null } | null;
  /** The step's model call is slow or being retried (see `waitingForModel`). */
  waitingForModel: ModelWait | null;
  /** An activity waits for the run store, which is full, read-only or unreachable (see `waitingForStore`). */
  waitingForStore: StoreWait | null;
}

/**
 * The heartbeat details of a workflow's pending activities, decoded (through the client's codec, so encrypted
 * payloads too), by activity id. Activities that never heartbeat, or whose details cannot be decoded here, are absent.
 */
export async function pendingDetails(
  desc: WorkflowExecutionDescription,
  converter: LoadedDataConverter,
): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const a of desc.raw.pendingActivities ?? []) {
    let payload = a.heartbeatDetails?.payloads?.[0];
    if (!a.activityId || !payload) continue;
    try {
      for (const codec of [...converter.payloadCodecs].reverse())
        payload = (await codec.decode([payload]))[0] ?? payload;
      out.set(a.activityId, converter.payloadConverter.fromPayload(payload));
    } catch {
      // not ours to read (another codec's payload): no details for it
    }
  }
  return out;
}

const detailOf = (details: unknown, key: string): unknown =>
  typeof details === 'object' && details !== null && key in details
    ? (details as Record<string, unknown>)[key]
    : undefined;

/**
 * From a running workflow's pending activities and their heartbeat details: is one of them waiting for the run
 * store (full, read-only or unreachable), since when, until when, and the last error?
 */
export function waitingForStore(
  desc: WorkflowExecutionDescription,
  details: ReadonlyMap<string, unknown>,
): StoreWait | null {
  for (const a of desc.raw.pendingActivities ?? []) {
    const wait = detailOf(details.get(a.activityId ?? ''), STORE_WAIT_DETAIL) as StoreWait | undefined;
    if (wait && typeof wait.kind === 'string' && typeof wait.lastError === 'string') return wait;
  }
  return null;
}

/** The line `cua status` and `cua run` print for a store wait. */
export function storeWaitLine(w: StoreWait, now = Date.now()): string {
  const hhmmss = (iso: string) => `${iso.slice(11, 19)} UTC`;
  const minutes = Math.max(0, Math.round((now - Date.parse(w.since)) / 60_000));
  return (
    `waiting for the run store: ${storeFaultLine(w.kind, w.lastError)} — since ${hhmmss(w.since)} ` +
    `(${minutes} min); the task goes on when it is back, or ends (run_folder) at ${hhmmss(w.until)}`
  );
}

/** A model call that is slow or failed and is tried again: which try, how long the step has waited, the last error. */
export interface ModelWait {
  /** The try under way (1 for the first). */
  attempt: number;
  /** How many tries the task's retry policy allows (null: no limit). */
  maxAttempts: number | null;
  /** Seconds since the step's first try was scheduled. */
  waitedSeconds: number;
  /** The last failed try's one-line reason (null on the first try). */
  lastError: string | null;
}

/** A model call that takes this long is reported as a wait (a normal Fara step answers within a few seconds). */
export const MODEL_SLOW_AFTER_MS = 10_000;

const timestampMs = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | null =>
  t?.seconds !== undefined && t.seconds !== null ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : null;

/**
 * From a running workflow's pending activities (and its status, which tells when the step's first try began: a
 * retried activity's scheduled time is its latest try's): is its model call slow, or failing and tried again?
 */
export function waitingForModel(
  desc: WorkflowExecutionDescription,
  status: Pick<TaskStatus, 'modelCallSince'> | null,
  now = Date.now(),
): ModelWait | null {
  for (const a of desc.raw.pendingActivities ?? []) {
    if (a.activityType?.name !== 'decide') continue;
    const since = status?.modelCallSince ? Date.parse(status.modelCallSince) : NaN;
    const scheduledMs = Number.isFinite(since) ? since : timestampMs(a.scheduledTime);
    const waitedMs = scheduledMs === null ? 0 : Math.max(0, now - scheduledMs);
    const attempt = a.attempt ?? 1;
    if (attempt <= 1 && waitedMs < MODEL_SLOW_AFTER_MS) continue;
    const max = a.maximumAttempts ?? 0;
    return {
      attempt,
      maxAttempts: max > 0 ? max : null,
      waitedSeconds: Math.round(waitedMs / 1000),
      lastError: a.lastFailure?.message?.split('\n')[0] ?? null,
    };
  }
  return null;
}

/** What a running task waits for, if anything: a session, the model, the run store (one describe's worth). */
export async function waitsOf(
  desc: WorkflowExecutionDescription,
  status: TaskStatus | null,
  converter: LoadedDataConverter,
): Promise<Pick<TaskView, 'waitingForSession' | 'waitingForModel' | 'waitingForStore'>> {
  const details = await pendingDetails(desc, converter);
  return {
    waitingForSession: waitingForSession(desc, details),
    waitingForModel: waitingForModel(desc, status),
    waitingForStore: waitingForStore(desc, details),
  };
}

/** The line `cua status` and `cua run` print for a model wait. */
export function modelWaitLine(w: ModelWait): string {
  const of = w.maxAttempts ? ` of ${w.maxAttempts}` : '';
  const last = w.lastError ? `; the last try: ${w.lastError}` : '';
  return `waiting for the model: try ${w.attempt}${of}, ${w.waitedSeconds} s so far${last}`;
}

/** An open not picked up by any worker for this long is queued for a free browser (a normal open starts at once). */
const QUEUED_AFTER_MS = 2_000;

/**
 * From a running workflow's pending activities (and their decoded heartbeat details: an open heartbeats all along,
 * and says so in its details while it waits in line): is its session open waiting out full pools?
 */
export function waitingForSession(
  desc: WorkflowExecutionDescription,
  details: ReadonlyMap<string, unknown>,
  now = Date.now(),
): TaskView['waitingForSession'] {
  for (const a of desc.raw.pendingActivities ?? []) {
    if (a.activityType?.name !== 'openSession') continue;
    const type = a.lastFailure?.applicationFailureInfo?.type ?? '';
    const scheduledMs = timestampMs(a.scheduledTime);
    // In line in a full pool (the open heartbeats only then), refused by full pools and retried, or not taken by any
    // worker yet (workers take browser opens only while they have a free slot: see src/contract/queues.ts).
    const inLine = detailOf(details.get(a.activityId ?? ''), IN_LINE_DETAIL) !== undefined;
    const notTaken =
      a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED &&
      scheduledMs !== null &&
      now - scheduledMs >= QUEUED_AFTER_MS;
    if (!inLine && !notTaken && !isPoolFullType(type)) continue;
    const since = scheduledMs !== null ? new Date(scheduledMs).toISOString() : null;
    return { attempts: a.attempt ?? 1, since };
  }
  return null;
}

/** A workflow still going: running, or between two runs of its continue-as-new chain. */
export function isOpen(desc: WorkflowExecutionDescription): boolean {
  return desc.status.name === 'RUNNING' || desc.status.name === 'CONTINUED_AS_NEW';
}

/** How a closed task ended: its result (also for failures that carry one), and the failure's message. */
export async function closedOutcome(
  handle: WorkflowHandle,
): Promise<{ result: TaskResult | null; failure: string | null }> {
  try {
    return { result: (await handle.result()) as TaskResult, failure: null };
  } catch (err) {
    return { result: failedResult(err) ?? (await cancelledResult(handle, err)), failure: rootMessage(err) };
  }
}

/**
 * A cancelled task ends with a cancellation, not a TaskResult; this is the result it would have carried, its step
 * count from the CuaStep search attribute (0 when the task publishes none). Null for other failures.
 */
async function cancelledResult(handle: WorkflowHandle, err: unknown): Promise<TaskResult | null> {
  if (!(err instanceof Error && err.cause instanceof CancelledFailure)) return null;
  const desc = await handle.describe().catch(() => null);
  const step = (desc?.searchAttributes as Record<string, unknown[] | undefined> | undefined)?.CuaStep?.[0];
  return {
    status: 'cancelled',
    endReason: 'cancelled',
    answer: null,
    steps: typeof step === 'number' ? step : 0,
    error: 'cancelled by user',
  };
}

/** Status of a task, running or closed. */
export async function viewTask(client: Client, id: string): Promise<TaskView> {
  const handle = client.workflow.getHandle(id);
  const desc = await describeTask(handle);
  const workflowStatus = desc.status.name;
  if (isOpen(desc)) {
    const status = await handle.query(statusQuery);
    const waits = await waitsOf(desc, status, client.options.loadedDataConverter);
    return { status, workflowStatus, result: null, failure: null, ...waits };
  }
  const { result, failure } = await closedOutcome(handle);
  return {
    status: null,
    workflowStatus,
    result,
    failure,
    waitingForSession: null,
    waitingForModel: null,
    waitingForStore: null,
  };
}

/** The result of a task once it has ended (waits for it); TaskFailedError when its workflow ended without one. */
export async function taskResult(client: Client, id: string): Promise<TaskResult> {
  const handle = await existingTask(client, id);
  const { result, failure } = await closedOutcome(handle);
  if (!result) throw new TaskFailedError(id, failure ?? 'unknown failure');
  return result;
}

/**
 * The TaskResult a failed task carries in its failure details (status `failed` with its end reason), or null for a
 * failure without one (cancelled, terminated, or a history recorded before end reasons existed).
 */
export function failedResult(err: unknown): TaskResult | null {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (!(e instanceof ApplicationFailure)) continue;
    const first: unknown = e.details?.[0];
    if (first && typeof first === 'object' && 'endReason' in first && 'status' in first) return first as TaskResult;
  }
  return null;
}

export function rootMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** The typed error for a reply the workflow's update validator refused (its messages are in workflows/task-state.ts). */
function replyRefusal(id: string, questionId: string | undefined, err: Error): TaskError {
  const message = rootMessage(err);
  // By failure type (workers from REPLY_REFUSALS on); by message for workers from before.
  let failure: unknown = err;
  while (failure instanceof Error && !(failure instanceof ApplicationFailure)) failure = failure.cause;
  if (failure instanceof ApplicationFailure) {
    const detail = (failure.details?.[0] ?? {}) as { pendingQuestionId?: string; status?: string };
    if (failure.type === REPLY_REFUSALS.stale && questionId) {
      return new StaleQuestionError(id, questionId, detail.pendingQuestionId ?? null, { cause: err });
    }
    if (failure.type === REPLY_REFUSALS.notWaiting) {
      return new TaskNotWaitingError(id, detail.status ?? 'running', { cause: err });
    }
    if (failure.type === REPLY_REFUSALS.invalid) return new TaskError(`reply rejected: ${message}`, { cause: err });
  }
  const stale = /^stale reply: .*the pending question is (\S+)$/.exec(message);
  if (stale && questionId) return new StaleQuestionError(id, questionId, stale[1] ?? null, { cause: err });
  const notWaiting = /is not waiting for a reply \(status: (\w+)\)/.exec(message);
  if (notWaiting) return new TaskNotWaitingError(id, notWaiting[1] ?? 'running', { cause: err });
  return new TaskError(`reply rejected: ${message}`, { cause: err });
}

/**
 * Replies to a task's pending question. The text is checked here first (the workflow checks it again); a task that is
 * not waiting, a stale `questionId` and an invalid text are refused with TaskNotWaitingError, StaleQuestionError and
 * InvalidTaskInputError.
 */
export async function replyToTask(client: Client, id: string, text: string, questionId?: string) {
  const cleaned = cleanReply(text);
  if (!cleaned.ok) throw new InvalidTaskInputError('reply', cleaned.reason, cleaned.reason);
  const handle = client.workflow.getHandle(id);
  const desc = await describeTask(handle);
  if (!isOpen(desc)) throw new TaskNotWaitingError(id, desc.status.name.toLowerCase());
  try {
    return await handle.executeUpdate(replyUpdate, { args: [{ text, ...(questionId ? { questionId } : {}) }] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError || err instanceof ApplicationFailure) {
      throw replyRefusal(id, questionId, err);
    }
    throw err;
  }
}

export async function querySteps(handle: WorkflowHandle): Promise<StepSummary[]> {
  return handle.query(stepsQuery);
}

export interface TaskListFilter {
  /** Only tasks with this status (the CuaStatus search attribute). */
  status?: TaskState;
  /** At most this many (newest first); default 50. */
  limit?: number;
  /** `cost`: that page sorted by CuaCost, dearest first (the dev server's visibility cannot sort by it). */
  sort?: 'cost';
}

export interface TaskListEntry {
  id: string;
  /** The task's status (CuaStatus), or its workflow's status when the task did not publish one. */
  status: string;
  step: number | null;
  /** What its model calls cost so far in US dollars (CuaCost); null when it publishes none. */
  cost: number | null;
  started: string;
  instruction: string;
  /** browser, desktop, or a custom environment's name; null for tasks started before it was recorded (memo). */
  environment: string | null;
}

/** Tasks, newest first, via the CuaStatus/CuaStep search attributes. */
export async function listTasks(client: Client, filter: TaskListFilter = {}): Promise<TaskListEntry[]> {
  let query = `WorkflowType = '${AGENT_WORKFLOW}'`;
  if (filter.status) query += ` AND CuaStatus = '${filter.status}'`;
  const limit = filter.limit ?? 50;
  const rows: TaskListEntry[] = [];
  if (limit <= 0) return rows;
  for await (const wf of client.workflow.list({ query })) {
    const sa = wf.searchAttributes as Record<string, unknown[] | undefined>;
    rows.push({
      id: wf.workflowId,
      status: String(sa.CuaStatus?.[0] ?? wf.status.name.toLowerCase()),
      step: typeof sa.CuaStep?.[0] === 'number' ? (sa.CuaStep[0] as number) : null,
      cost: typeof sa.CuaCost?.[0] === 'number' ? (sa.CuaCost[0] as number) : null,
      started: wf.startTime.toISOString(),
      instruction: String((wf.memo as { instruction?: unknown } | undefined)?.instruction ?? '').replace(/\s+/g, ' '),
      environment: String((wf.memo as { environment?: unknown } | undefined)?.environment ?? '') || null,
    });
    if (rows.length >= limit) break;
  }
  if (filter.sort === 'cost') rows.sort((a, b) => (b.cost ?? -1) - (a.cost ?? -1));
  return rows;
}

/**
 * Cancels a running task and waits for it to end (its browser closed, its run folder kept). Returns the
 * cancellation's message; TaskClosedError when the task had already ended.
 */
export async function cancelTask(client: Client, id: string): Promise<{ message: string }> {
  const handle = client.workflow.getHandle(id);
  const desc = await describeTask(handle);
  if (!isOpen(desc)) throw new TaskClosedError(id, desc.status.name);
  await handle.cancel();
  try {
    await handle.result();
  } catch (err) {
    return { message: rootMessage(err) };
  }
  return { message: 'the task ended before the cancellation reached it' };
}
