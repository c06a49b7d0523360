// Webhook notifications from the task workflow: when the task waits for a reply, is paused, or ends, the loop calls
// in here, and a `notification` child workflow (notification.ts) sends it. The task only waits for the child to
// start, never for the webhook. Sent only when the worker that started the task has a webhook (startRun says which
// events it wants; kept in the carried state), and behind the patch NOTIFY_PATCH. Deterministic.
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  log,
  patched,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { NotifyEvent, NotifyInput, StartRunResult } from '../src/contract/activities';
import type { TaskState } from '../src/contract/task';
import { notification } from './notification';
import type { CarriedState, AgentTask } from './task-state';

/**
 * Patch id: the task starts a notification child at its events. Histories recorded before have no such children (and
 * their startRun said nothing), and a task a worker without the patch ran up to an event replays without one there.
 */
export const NOTIFY_PATCH = 'notify-webhook';

/** The events that end a task, by its final status. */
const END_EVENTS: Partial<Record<TaskState, NotifyEvent>> = {
  complete: 'completed',
  max_rounds: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** Keeps what the starting worker's startRun said: which events its webhook wants (nothing: none are sent). */
export function rememberNotifyEvents(state: CarriedState, started: StartRunResult | undefined): void {
  if (started?.notifyEvents?.length) state.notifyEvents = started.notifyEvents;
}

/** The task waits for a reply to its question (call after the status became waiting_for_user). */
export function notifyWaiting(task: AgentTask): Promise<void> {
  return notifyEvent(task, 'waiting');
}

/** The task was paused (call after its status says so). */
export function notifyPaused(task: AgentTask): Promise<void> {
  return notifyEvent(task, 'paused');
}

/** The task ended: completed (or max_rounds), failed or cancelled, by its final status (call after finalize). */
export async function notifyEnd(task: AgentTask): Promise<void> {
  const event = END_EVENTS[task.status];
  if (event) await notifyEvent(task, event);
}

/**
 * Starts the notification of `event` when the task's webhook wants it: a child workflow on the task's own queue,
 * with the id `<task id>-notify-<event>-<n>`, left running when the task closes. Never fails the task: a child that
 * cannot be started is logged and skipped. Cancelling the task does not cancel a notification under way.
 */
export async function notifyEvent(task: AgentTask, event: NotifyEvent): Promise<void> {
  const state = task.carried;
  if (!state.notifyEvents?.includes(event) || !patched(NOTIFY_PATCH)) return;
  state.notifications = (state.notifications ?? 0) + 1;
  // A follow-up is another run of the same task id: its notifications are numbered apart from the earlier runs'.
  const run = state.followUpAt === undefined ? '' : `-followup${state.followUpAt}`;
  const deliveryId = `${task.input.runId}${run}-notify-${event}-${state.notifications}`;
  try {
    await CancellationScope.nonCancellable(() =>
      startChild(notification, {
        workflowId: deliveryId,
        args: [notifyInput(task, event, deliveryId)],
        taskQueue: workflowInfo().taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `${event}: ${task.input.runId}`,
      }),
    );
  } catch (err) {
    log.warn('could not start a notification', { event, deliveryId, error: String(err) });
  }
}

/** What the notification says, from the task's state now. */
function notifyInput(task: AgentTask, event: NotifyEvent, deliveryId: string): NotifyInput {
  const { input, carried, question } = task;
  const ended = END_EVENTS[task.status] !== undefined;
  return {
    event,
    deliveryId,
    taskId: input.runId,
    status: task.status,
    step: carried.step,
    instruction: input.instruction,
    // A question still pending (not one a task that ended left behind: it can no longer be replied to).
    ...(question && !ended
      ? { question: { id: question.id, text: question.text, ...(question.kind ? { kind: question.kind } : {}) } }
      : {}),
    ...(ended && task.answer !== null ? { answer: task.answer } : {}),
    ...(task.error !== null ? { error: task.error } : {}),
    ...(ended && task.endReason !== null ? { endReason: task.endReason } : {}),
    // A task with an output schema: its output (null when none came, and why).
    ...(ended ? task.outputView() : {}),
    at: new Date().toISOString(),
  };
}
