// Client-side task operations shared by the commands: start, follow, reply, describe; errors in one line.
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
import { ApplicationFailure } from '@temporalio/common';
import {
  AGENT_WORKFLOW,
  STATUS_SEARCH_ATTRIBUTE,
  STEP_SEARCH_ATTRIBUTE,
  TaskInputSchema,
  replyUpdate,
  statusQuery,
  stepsQuery,
} from '../workflows/contract';
import type { TaskInput, TaskInputArgs, TaskResult, TaskStatus, StepSummary } from '../workflows/contract';
import { isPoolFullType } from '../src/agent/failure-types';
import { cleanReply } from '../src/agent/reply';
import { UsageError } from './args';

export class TaskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `task-${stamp}-${randomBytes(3).toString('hex')}`;
}

export function validateTaskInput(args: TaskInputArgs): TaskInput {
  const parsed = TaskInputSchema.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`invalid task: ${issue?.path.join('.') || 'input'}: ${issue?.message}`);
  }
  return parsed.data;
}

export async function startTask(
  client: Client,
  taskQueue: string,
  input: TaskInput,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  try {
    return await client.workflow.start(AGENT_WORKFLOW, {
      taskQueue,
      workflowId: input.runId,
      args: [input],
      staticSummary: input.instruction.slice(0, 400),
      memo: { instruction: input.instruction.slice(0, 400) },
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
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new TaskError(`a task with id ${input.runId} already exists; choose another --id`);
    }
    throw err;
  }
}

/** The handle of an existing task, or a clear error when there is none. */
export async function existingTask(client: Client, id: string): Promise<WorkflowHandle> {
  const handle = client.workflow.getHandle(id);
  try {
    await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new TaskError(`no task with id ${id}`);
    throw err;
  }
  return handle;
}

export interface TaskView {
  status: TaskStatus | null;
  workflowStatus: string;
  result: TaskResult | null;
  failure: string | null;
  /** The task is queued for a browser or desktop: every worker's sessions were in use at its last attempt. */
  waitingForSession: { attempts: number; since: string | null } | null;
}

/** From a running workflow's pending activities: is its session open waiting out full pools? */
export function waitingForSession(desc: WorkflowExecutionDescription): TaskView['waitingForSession'] {
  for (const a of desc.raw.pendingActivities ?? []) {
    if (a.activityType?.name !== 'openSession') continue;
    const type = a.lastFailure?.applicationFailureInfo?.type ?? '';
    // In line in a full pool (the open heartbeats only then), or refused by full pools and retried.
    const inLine = (a.heartbeatDetails?.payloads?.length ?? 0) > 0;
    if (!inLine && !isPoolFullType(type)) continue;
    const since = a.scheduledTime?.seconds ? new Date(Number(a.scheduledTime.seconds) * 1000).toISOString() : null;
    return { attempts: a.attempt ?? 1, since };
  }
  return null;
}

/** Status of a task, running or closed. */
export async function viewTask(client: Client, id: string): Promise<TaskView> {
  const handle = await existingTask(client, id);
  const desc = await handle.describe();
  const workflowStatus = desc.status.name;
  if (workflowStatus === 'RUNNING') {
    const status = await handle.query(statusQuery);
    return { status, workflowStatus, result: null, failure: null, waitingForSession: waitingForSession(desc) };
  }
  try {
    const result = (await handle.result()) as TaskResult;
    return { status: null, workflowStatus, result, failure: null, waitingForSession: null };
  } catch (err) {
    return {
      status: null,
      workflowStatus,
      result: failedResult(err),
      failure: rootMessage(err),
      waitingForSession: null,
    };
  }
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

export async function replyToTask(client: Client, id: string, text: string, questionId?: string) {
  const cleaned = cleanReply(text);
  if (!cleaned.ok) throw new UsageError(cleaned.reason);
  const handle = await existingTask(client, id);
  const desc = await handle.describe();
  if (desc.status.name !== 'RUNNING') {
    throw new TaskError(`task ${id} is not waiting for a reply (it is ${desc.status.name.toLowerCase()})`);
  }
  try {
    return await handle.executeUpdate(replyUpdate, { args: [{ text, ...(questionId ? { questionId } : {}) }] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError || err instanceof ApplicationFailure) {
      throw new TaskError(`reply rejected: ${rootMessage(err)}`);
    }
    throw err;
  }
}

export async function querySteps(handle: WorkflowHandle): Promise<StepSummary[]> {
  return handle.query(stepsQuery);
}
