// A schedule's monitor (workflow id `<schedule>-monitor`): each scheduled run reports to it when it ends (the report
// signal; the run starts the monitor when none is running), and it compares the run's value with the last one
// (monitor-book.ts). A change to tell is sent as a `monitor_changed` notification — a notification child workflow
// whose id is one per run, so a replay or a report heard twice cannot send it twice — and noted in the run's folder.
// Its memory is its own state: a worker killed or a server restarted in between replays to the same state. Runs as
// long as the schedule does (the schedule's delete stops it), continuing as new when its history grows.
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { NotifyInput } from '../src/contract/activities';
import type {
  MonitorActivities,
  MonitorInput,
  MonitorNotification,
  MonitorReport,
  MonitorState,
} from '../src/contract/monitor';
import { MonitorBook } from './monitor-book';
import { notification } from './notification';

/** A scheduled run ended: its status, answer and output. */
export const monitorReportSignal = defineSignal<[MonitorReport]>('monitorReport');
/** The schedule was deleted: the monitor sends what it still has to send, then ends. */
export const monitorStopSignal = defineSignal('monitorStop');
/** What the monitor keeps: the last value, the last runs and notifications. */
export const monitorStateQuery = defineQuery<MonitorState>('monitorState');

/** Continue as new past this many history events (or when Temporal suggests it). */
const HISTORY_LIMIT = 2_000;

const { recordMonitorNote } = proxyActivities<MonitorActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

export async function scheduleMonitor(input: MonitorInput): Promise<void> {
  const book = new MonitorBook(input);
  const outbox: { n: MonitorNotification; report: MonitorReport }[] = [];
  let stopped = false;
  const hear = (report: MonitorReport) => {
    const n = book.hear(report);
    if (n) outbox.push({ n, report });
  };
  setHandler(monitorReportSignal, hear);
  setHandler(monitorStopSignal, () => void (stopped = true));
  setHandler(monitorStateQuery, () => book.state);
  if (input.first) hear(input.first);
  const due = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_LIMIT;
  for (;;) {
    await condition(() => outbox.length > 0 || stopped || due());
    while (outbox.length > 0) {
      const next = outbox[0]!;
      await send(book.state, next.n, next.report);
      outbox.shift();
    }
    if (stopped) return;
    if (due()) {
      await condition(allHandlersFinished);
      if (outbox.length > 0) continue;
      return continueAsNew<typeof scheduleMonitor>({
        schedule: input.schedule,
        notifyWhen: input.notifyWhen,
        state: book.state,
      });
    }
  }
}

/** Starts the notification (once per run: its id says which) and notes it in the run's folder. Never throws. */
async function send(state: MonitorState, n: MonitorNotification, report: MonitorReport): Promise<void> {
  const when = typeof state.notifyWhen === 'string' ? state.notifyWhen : JSON.stringify(state.notifyWhen);
  const body: NotifyInput = {
    event: 'monitor_changed',
    deliveryId: n.deliveryId,
    taskId: n.taskId,
    status: report.status,
    step: report.steps,
    instruction: report.instruction,
    ...(report.answer !== null ? { answer: report.answer } : {}),
    monitor: { schedule: state.schedule, condition: when, old: n.old, new: n.new, previousTaskId: n.previousTaskId },
    at: n.at,
  };
  await CancellationScope.nonCancellable(async () => {
    try {
      await startChild(notification, {
        workflowId: n.deliveryId,
        args: [body],
        taskQueue: workflowInfo().taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `monitor_changed: ${n.taskId}`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
        log.warn('could not start a monitor notification', { deliveryId: n.deliveryId, error: String(err) });
      }
    }
    const text = `${state.schedule}: ${when === 'changed' ? 'the output changed' : `${when} became true`}; notified`;
    await recordMonitorNote({
      runId: n.taskId,
      step: report.steps,
      text,
      deliveryId: n.deliveryId,
      old: n.old,
      new: n.new,
    }).catch((err: unknown) =>
      log.warn('could not note the notification in the run', { taskId: n.taskId, error: String(err) }),
    );
  });
}
