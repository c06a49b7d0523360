// A schedule's monitor (workflows/monitor.ts): what each scheduled run reports to it when it ends, what it keeps (the
// last output it compared, whether the condition held, the runs it has heard of, the notifications it sent), and
// the note it leaves in a run's folder. Pure types and helpers, shared by the workflows, the activities and the client.
import type { NotifyWhen } from './condition-logic';
import type { EndReason, TaskOutput, TaskState } from './task';

/** The monitor workflow's type name, and its id for a schedule. */
export const MONITOR_WORKFLOW = 'scheduleMonitor';
export const monitorId = (schedule: string): string => `${schedule}-monitor`;
/** A notification's id (its child workflow's, the webhook's delivery id): one per run that changed something. */
export const monitorDeliveryId = (schedule: string, taskId: string): string => `${schedule}-monitor-notify-${taskId}`;

/** What a scheduled run tells its monitor when it ends. */
export interface MonitorReport {
  taskId: string;
  status: TaskState;
  endReason: EndReason | null;
  answer: string | null;
  /** The task's output (structured output), when it has one. */
  output: TaskOutput | null;
  /** The task asked for structured output (an output schema): then the output is compared, else the answer. */
  hasSchema: boolean;
  steps: number;
  instruction: string;
  /** When the run ended (workflow time, ISO 8601). */
  at: string;
}

/**
 * What the monitor made of a run: the first compared value (`baseline`), a change or none, the condition becoming
 * true, staying true, or false; `ignored`: not compared (the run failed, has no value, or only a partial output).
 */
export type MonitorVerdict = 'baseline' | 'changed' | 'unchanged' | 'became_true' | 'still_true' | 'false' | 'ignored';

export interface MonitorRun {
  taskId: string;
  at: string;
  status: TaskState;
  verdict: MonitorVerdict;
  /** Why a run was ignored, or the condition's error. */
  note?: string;
  notified: boolean;
}

export interface MonitorNotification {
  taskId: string;
  deliveryId: string;
  at: string;
  old: unknown;
  new: unknown;
  /** The run whose value was the old one (null: none, a condition true at the first run). */
  previousTaskId: string | null;
}

export interface MonitorState {
  schedule: string;
  notifyWhen: NotifyWhen;
  /** The last value compared (a run's output value, or its answer when it has no output schema). */
  last: { taskId: string; value: unknown; at: string } | null;
  /** The condition held on the last compared run (a condition notifies only when it becomes true). */
  held: boolean;
  /** Task ids heard of, newest last (a report heard twice is not counted twice). */
  seen: string[];
  /** The last runs, newest last. */
  runs: MonitorRun[];
  /** The last notifications, newest last. */
  notifications: MonitorNotification[];
  /** Reports heard in all. */
  reports: number;
}

export interface MonitorInput {
  schedule: string;
  notifyWhen: NotifyWhen;
  /** What an earlier run of the monitor carried over (continue-as-new). */
  state?: MonitorState;
  /** The report of the run that started the monitor (when no monitor was running). */
  first?: MonitorReport;
}

/** The note the monitor leaves in a run's folder when it notified about that run (an event of kind `monitor`). */
export interface MonitorNoteInput {
  /** The task id; wire name, as in the other activities' inputs. */
  runId: string;
  step: number;
  text: string;
  deliveryId: string;
  old: unknown;
  new: unknown;
}

export interface MonitorActivities {
  recordMonitorNote(req: MonitorNoteInput): Promise<void>;
}

/** How many task ids, runs and notifications the monitor keeps. */
export const MONITOR_KEEPS = { seen: 500, runs: 20, notifications: 20 } as const;
