// A person's controls over a task (issue 26): pause, resume, say, take over, hand back — each a Temporal Update of the
// task's workflow, whose validator refuses a bad or stale request in one line (ControlRefusedError) — and continue, a
// follow-up task in a finished task's run (a new run of its workflow id, going on from its run folder and its last
// page). The CLI commands and AgentClient's methods are built on these.
import type { Client } from '@temporalio/client';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { cleanReply } from '../src/agent/reply';
import { CONTROL_REFUSED, TaskInputSchema } from '../src/contract/task';
import type { ControlAccepted, HandbackInput, TakeoverLease, TaskInput, TaskResult } from '../src/contract/task';
import {
  handbackUpdate,
  pauseUpdate,
  resumeUpdate,
  sayUpdate,
  statusQuery,
  takeoverUpdate,
} from '../workflows/messages';
import { ControlRefusedError, InvalidTaskInputError, TaskAlreadyExistsError } from './errors';
import { describeTask, isOpen, startTask } from './tasks';

/** A message's text, checked here first (the workflow checks it again): InvalidTaskInputError naming what is wrong. */
function cleanText(text: string, what: string): { text: string } {
  const cleaned = cleanReply(text);
  if (cleaned.ok) return cleaned;
  const reason = cleaned.reason.replace(/^reply text/, `${what} text`);
  throw new InvalidTaskInputError(what, reason, reason);
}

/** Runs a control Update; a refusal (the validator's, or a task that has ended) is a ControlRefusedError. */
async function control<R>(
  client: Client,
  id: string,
  run: (h: ReturnType<Client['workflow']['getHandle']>) => Promise<R>,
) {
  const handle = client.workflow.getHandle(id);
  const desc = await describeTask(handle);
  if (!isOpen(desc)) {
    throw new ControlRefusedError(id, `task ${id} has ended (${desc.status.name.toLowerCase()})`);
  }
  try {
    return await run(handle);
  } catch (err) {
    const failure = err instanceof WorkflowUpdateFailedError ? err.cause : err;
    if (failure instanceof ApplicationFailure && (failure.type === CONTROL_REFUSED || failure.nonRetryable)) {
      throw new ControlRefusedError(id, failure.message, { cause: err });
    }
    throw err;
  }
}

/** Pauses the task after the step under way; resolves once it is paused (or has ended meanwhile). */
export function pauseTask(client: Client, id: string): Promise<ControlAccepted> {
  return control(client, id, (h) => h.executeUpdate(pauseUpdate));
}

/** Resumes a paused task where it stopped. */
export function resumeTask(client: Client, id: string): Promise<ControlAccepted> {
  return control(client, id, (h) => h.executeUpdate(resumeUpdate));
}

/** A message the model reads with its next observation (`message_type: followup_task`, `metadata.kind: steer`). */
export async function sayToTask(client: Client, id: string, text: string): Promise<ControlAccepted> {
  const cleaned = cleanText(text, 'message');
  return control(client, id, (h) => h.executeUpdate(sayUpdate, { args: [{ text: cleaned.text }] }));
}

/** Takes over the task's live browser after the step under way; resolves with the lease (where to drive it). */
export function takeOverTask(client: Client, id: string): Promise<TakeoverLease> {
  return control(client, id, (h) => h.executeUpdate(takeoverUpdate));
}

/** Ends a takeover: the agent goes on, told how long the person had the browser, what changed, and the note. */
export function handBackTask(client: Client, id: string, input: HandbackInput = {}): Promise<ControlAccepted> {
  return control(client, id, (h) => h.executeUpdate(handbackUpdate, { args: [input] }));
}

export interface FollowUpOptions {
  /** Steps the follow-up may take (default: the task's own budget). */
  maxSteps?: number;
}

/**
 * A follow-up task in a finished task's run (`cua continue`): a new run of the task's workflow id, with the same run
 * folder (the model's history) and the page its last step left (restored from the step's checkpoint). Refused while
 * the task runs (say something to it instead), waits for a reply (reply first) or when it did not finish normally.
 */
export async function continueTask(
  client: Client,
  id: string,
  text: string,
  opts: FollowUpOptions = {},
): Promise<{ id: string; input: TaskInput }> {
  const cleaned = cleanText(text, 'follow-up');
  const handle = client.workflow.getHandle(id);
  const desc = await describeTask(handle);
  if (isOpen(desc)) {
    const status = await handle.query(statusQuery).catch(() => undefined);
    if (status?.status === 'waiting_for_user') {
      throw new ControlRefusedError(id, `task ${id} is waiting for a reply: reply with \`cua reply ${id} "…"\` first`);
    }
    throw new ControlRefusedError(
      id,
      `task ${id} is still running: tell it something now with \`cua say ${id} "…"\`, or continue it once it has finished`,
    );
  }
  if (desc.status.name !== 'COMPLETED') {
    throw new ControlRefusedError(
      id,
      `task ${id} ended ${desc.status.name.toLowerCase()}: only a finished task takes a follow-up`,
    );
  }
  const result = (await handle.result()) as TaskResult;
  const first = await firstInput(client, id);
  const budget = opts.maxSteps ?? first.maxSteps;
  const input = TaskInputSchema.parse({
    ...first,
    followUp: cleaned.text,
    maxSteps: Math.min(10_000, result.steps + budget),
  });
  try {
    await startTask(client, desc.taskQueue, input, { reuseClosedId: true, summary: `follow-up: ${cleaned.text}` });
  } catch (err) {
    if (err instanceof TaskAlreadyExistsError) {
      throw new ControlRefusedError(id, `task ${id} has just been continued by someone else`, { cause: err });
    }
    throw err;
  }
  return { id, input };
}

/**
 * The input the task's latest run started with (through the client's codec), without its follow-up or what it was
 * forked or adopted from (a follow-up of a fork goes on in its run folder; a fork of it is made anew).
 */
export async function firstInput(client: Client, id: string): Promise<TaskInput> {
  const history = await client.workflow.getHandle(id).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payloads = (started?.input?.payloads ?? []) as Payload[];
  const raw = await decodeFromPayloadsAtIndex<Record<string, unknown>>(client.options.loadedDataConverter, 0, payloads);
  const { followUp: _followUp, forkOf: _forkOf, adoptOf: _adoptOf, ...input } = raw;
  return TaskInputSchema.parse(input);
}
