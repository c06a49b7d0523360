// A scheduled run with a monitor (input.schedule.notifyWhen) reports how it ended to the schedule's monitor
// workflow, last thing before it closes: a signal, or, when no monitor is running, a start of one (a child it leaves
// running) with this report first — the way a task reaches its sign-in's lock. In workflow code, not an activity: the
// report is part of the task's history, so a worker killed after it replays without sending it again, and one killed
// before sends it on replay. Never fails the task. Behind the patch MONITOR_REPORT_PATCH. Deterministic.
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  getExternalWorkflowHandle,
  log,
  patched,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { monitorId } from '../src/contract/monitor';
import type { MonitorReport } from '../src/contract/monitor';
import type { TaskInput, TaskResult } from '../src/contract/task';
import { monitorReportSignal, scheduleMonitor } from './monitor';

/** Patch id: a scheduled run with a monitor reports to it at its end. */
export const MONITOR_REPORT_PATCH = 'schedule-monitor-report';

/** How often the run tries to reach the monitor (signal it, else start it) before it gives up. */
const REACH_ATTEMPTS = 3;

export async function reportToMonitor(input: TaskInput, result: TaskResult): Promise<void> {
  const schedule = input.schedule;
  if (schedule?.notifyWhen === undefined || !patched(MONITOR_REPORT_PATCH)) return;
  const report: MonitorReport = {
    taskId: input.runId,
    status: result.status,
    endReason: result.endReason,
    answer: result.answer,
    output: result.output ?? null,
    hasSchema: input.outputSchema !== undefined,
    steps: result.steps,
    instruction: input.instruction,
    at: new Date().toISOString(),
  };
  const id = monitorId(schedule.name);
  await CancellationScope.nonCancellable(async () => {
    for (let attempt = 1; attempt <= REACH_ATTEMPTS; attempt++) {
      try {
        await getExternalWorkflowHandle(id).signal(monitorReportSignal, report);
        return;
      } catch {
        // no monitor running: start one
      }
      try {
        await startChild(scheduleMonitor, {
          workflowId: id,
          args: [{ schedule: schedule.name, notifyWhen: schedule.notifyWhen!, first: report }],
          taskQueue: workflowInfo().taskQueue,
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          staticSummary: `monitor of schedule ${schedule.name}`,
        });
        return;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) break;
      }
    }
    log.warn('could not report to the schedule monitor', { monitor: id, taskId: input.runId });
  });
}
