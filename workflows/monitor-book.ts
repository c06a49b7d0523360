// The monitor's memory and its one decision: given the last compared value and a run's report, is this a change to
// notify about? `changed` notifies when the value is deep-unequal to the last one (the first run is the baseline); a
// condition notifies when it becomes true (false → true, or true at the first run), not while it stays true. A run
// heard of before is skipped, so a report delivered twice never notifies twice. Pure (no Temporal calls): the
// monitor workflow keeps one, and unit tests drive it directly.
import { compileCondition, conditionHolds } from '../src/contract/condition-logic';
import type { CompiledCondition } from '../src/contract/condition-logic';
import { jsonEqual } from '../src/contract/condition';
import { MONITOR_KEEPS, monitorDeliveryId } from '../src/contract/monitor';
import type {
  MonitorInput,
  MonitorNotification,
  MonitorReport,
  MonitorRun,
  MonitorState,
  MonitorVerdict,
} from '../src/contract/monitor';

const keepLast = <T>(list: T[], n: number): T[] => (list.length > n ? list.slice(list.length - n) : list);

/** The value a run is compared by: its output's value, or its answer when it asked for no structured output. */
function comparedValue(r: MonitorReport): { value: unknown } | { ignored: string } {
  if (r.status !== 'complete' && r.status !== 'max_rounds') return { ignored: `the run ended ${r.status}` };
  if (!r.hasSchema) return r.answer === null ? { ignored: 'the run has no answer' } : { value: r.answer };
  if (!r.output) return { ignored: 'the run has no output' };
  if (r.output.partial) return { ignored: 'the output is partial (the run stopped at a budget)' };
  return { value: r.output.value };
}

export class MonitorBook {
  readonly state: MonitorState;
  private readonly condition: CompiledCondition | { kind: 'invalid'; error: string };

  constructor(input: MonitorInput) {
    this.state = input.state ?? {
      schedule: input.schedule,
      notifyWhen: input.notifyWhen,
      last: null,
      held: false,
      seen: [],
      runs: [],
      notifications: [],
      reports: 0,
    };
    try {
      this.condition = compileCondition(this.state.notifyWhen);
    } catch (err) {
      // Checked when the schedule was created; a condition this code cannot read is reported on every run.
      this.condition = { kind: 'invalid', error: (err as Error).message };
    }
  }

  /** Hears a run's report: the notification to send about it, or null (nothing changed, or heard before). */
  hear(report: MonitorReport): MonitorNotification | null {
    const s = this.state;
    if (s.seen.includes(report.taskId)) return null;
    s.seen = keepLast([...s.seen, report.taskId], MONITOR_KEEPS.seen);
    s.reports++;
    const compared = comparedValue(report);
    const run: MonitorRun = {
      taskId: report.taskId,
      at: report.at,
      status: report.status,
      verdict: 'ignored',
      notified: false,
    };
    let notification: MonitorNotification | null = null;
    if ('ignored' in compared) run.note = compared.ignored;
    else if (this.condition.kind === 'invalid') run.note = `the condition cannot be read: ${this.condition.error}`;
    else {
      const { verdict, notify } = this.judge(this.condition, report, compared.value);
      run.verdict = verdict;
      if (notify) {
        notification = {
          taskId: report.taskId,
          deliveryId: monitorDeliveryId(s.schedule, report.taskId),
          at: report.at,
          old: s.last?.value ?? null,
          new: compared.value,
          previousTaskId: s.last?.taskId ?? null,
        };
        run.notified = true;
        s.notifications = keepLast([...s.notifications, notification], MONITOR_KEEPS.notifications);
      }
      s.last = { taskId: report.taskId, value: compared.value, at: report.at };
    }
    s.runs = keepLast([...s.runs, run], MONITOR_KEEPS.runs);
    return notification;
  }

  private judge(c: CompiledCondition, r: MonitorReport, value: unknown): { verdict: MonitorVerdict; notify: boolean } {
    const s = this.state;
    if (c.kind === 'changed') {
      if (s.last === null) return { verdict: 'baseline', notify: false };
      const changed = !jsonEqual(s.last.value, value);
      return { verdict: changed ? 'changed' : 'unchanged', notify: changed };
    }
    const output = r.hasSchema ? (r.output?.value ?? null) : null;
    const holds = conditionHolds(c.node, { output, answer: r.answer, status: r.status });
    const was = s.held;
    s.held = holds;
    if (!holds) return { verdict: 'false', notify: false };
    return was ? { verdict: 'still_true', notify: false } : { verdict: 'became_true', notify: true };
  }
}
