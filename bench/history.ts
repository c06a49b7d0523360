// Reading Temporal histories for the benchmark: the chain of runs of a task (following continue-as-new), each
// event's encoded size, and the activities of each step with their schedule/start/close times (server clock).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface RunHistory {
  temporalRunId: string;
  events: HistoryEvent[];
  /** Size of the run's whole history, protobuf-encoded (what the server stores and replays). */
  bytes: number;
  /** The next run's Temporal run id when this run continued as new. */
  continuedAs: string | null;
}

export interface ActivityRecord {
  name: string;
  summary: string;
  /** The step from the activity summary ("step 7 · observe"), null for run-level activities. */
  step: number | null;
  scheduledAt: number;
  startedAt: number | null;
  closedAt: number | null;
  outcome: 'completed' | 'failed' | 'timed_out' | 'canceled' | 'open';
  /** The attempt that started last (Temporal records only the last attempt's start, with its number). */
  attempt: number;
  /** A completed activity's result, read as JSON (the bench's histories are not encrypted); undefined otherwise. */
  result?: unknown;
}

/** The first payload of a completed activity, as JSON; undefined when there is none or it is not JSON. */
function resultOf(e: HistoryEvent): unknown {
  const data = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
}

type Long = { toString(): string } | number | null | undefined;
const num = (v: Long): number => (typeof v === 'number' ? v : Number(String(v ?? 0)));

/** An event's server time in epoch milliseconds. */
export function eventMs(e: HistoryEvent): number {
  return num(e.eventTime?.seconds as Long) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
}

export function eventBytes(e: HistoryEvent): number {
  return temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
}

function summaryOf(e: HistoryEvent): string {
  const data = e.userMetadata?.summary?.data;
  if (!data) return '';
  try {
    return String(JSON.parse(Buffer.from(data).toString('utf8')));
  } catch {
    return '';
  }
}

/** All runs of a task, first to last. */
export async function fetchChain(
  client: Client,
  workflowId: string,
  firstTemporalRunId: string,
): Promise<RunHistory[]> {
  const runs: RunHistory[] = [];
  let temporalRunId: string | null = firstTemporalRunId;
  while (temporalRunId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, temporalRunId)
      .fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    const next: HistoryEvent | undefined = events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes);
    const continuedAs: string | null = next?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? null;
    runs.push({
      temporalRunId,
      events,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      continuedAs,
    });
    temporalRunId = continuedAs;
  }
  return runs;
}

/** For each run of the chain that continued as new: the last step it ran. */
export function continuedAfterSteps(runs: readonly RunHistory[]): number[] {
  return runs.filter((r) => r.continuedAs).map((r) => Math.max(...activityRecords(r.events).map((a) => a.step ?? 0)));
}

/** The activities of one run's history, in schedule order. */
export function activityRecords(events: readonly HistoryEvent[]): ActivityRecord[] {
  const byId = new Map<string, ActivityRecord>();
  const records: ActivityRecord[] = [];
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const summary = summaryOf(e);
      const step = /^step (\d+) ·/.exec(summary);
      const record: ActivityRecord = {
        name: scheduled.activityType?.name ?? '',
        summary,
        step: step ? Number(step[1]) : null,
        scheduledAt: eventMs(e),
        startedAt: null,
        closedAt: null,
        outcome: 'open',
        attempt: 1,
      };
      byId.set(String(num(e.eventId as Long)), record);
      records.push(record);
      continue;
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const r = byId.get(String(num(started.scheduledEventId as Long)));
      if (r) {
        r.startedAt = eventMs(e);
        r.attempt = started.attempt ?? 1;
      }
      continue;
    }
    const closes: [{ scheduledEventId?: Long } | null | undefined, ActivityRecord['outcome']][] = [
      [e.activityTaskCompletedEventAttributes, 'completed'],
      [e.activityTaskFailedEventAttributes, 'failed'],
      [e.activityTaskTimedOutEventAttributes, 'timed_out'],
      [e.activityTaskCanceledEventAttributes, 'canceled'],
    ];
    for (const [attrs, outcome] of closes) {
      const r = attrs ? byId.get(String(num(attrs.scheduledEventId))) : undefined;
      if (!r) continue;
      r.closedAt = eventMs(e);
      r.outcome = outcome;
      if (outcome === 'completed') r.result = resultOf(e);
    }
  }
  return records;
}

/** One workflow task of a run: when it was scheduled, started by a worker and completed (server clock, ms). */
export interface WorkflowTaskRecord {
  scheduledAt: number;
  startedAt: number | null;
  completedAt: number | null;
}

/** The workflow tasks of one run's history, in order (a timed-out or failed one has no completion). */
export function workflowTaskRecords(events: readonly HistoryEvent[]): WorkflowTaskRecord[] {
  const byId = new Map<string, WorkflowTaskRecord>();
  const records: WorkflowTaskRecord[] = [];
  for (const e of events) {
    if (e.workflowTaskScheduledEventAttributes) {
      const record: WorkflowTaskRecord = { scheduledAt: eventMs(e), startedAt: null, completedAt: null };
      byId.set(String(num(e.eventId as Long)), record);
      records.push(record);
    }
    const started = e.workflowTaskStartedEventAttributes;
    const r1 = started && byId.get(String(num(started.scheduledEventId as Long)));
    if (r1) r1.startedAt = eventMs(e);
    const completed = e.workflowTaskCompletedEventAttributes;
    const r2 = completed && byId.get(String(num(completed.scheduledEventId as Long)));
    if (r2) r2.completedAt = eventMs(e);
  }
  return records;
}

/**
 * Activities that begin a step: its observe, or its decide when the act before it observed for it (from the
 * fold-observe-into-act patch on, most steps have no observe of their own).
 */
const STEP_OPENERS = new Set(['observe', 'decide']);

/** When each step began: the first observe or decide scheduled for it, across all runs (server clock, ms). */
export function stepStarts(runs: readonly RunHistory[]): Map<number, number> {
  const starts = new Map<number, number>();
  for (const run of runs) {
    for (const r of activityRecords(run.events)) {
      if (STEP_OPENERS.has(r.name) && r.step !== null && !starts.has(r.step)) starts.set(r.step, r.scheduledAt);
    }
  }
  return starts;
}

/** Events and encoded bytes of each step: from its first observe or decide being scheduled to the next step's. */
export function perStepHistory(run: RunHistory): { step: number; events: number; bytes: number }[] {
  const out: { step: number; events: number; bytes: number }[] = [];
  let current: { step: number; events: number; bytes: number } | undefined;
  for (const e of run.events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    const match = STEP_OPENERS.has(scheduled?.activityType?.name ?? '') ? /^step (\d+) ·/.exec(summaryOf(e)) : null;
    if (match && Number(match[1]) !== current?.step) {
      current = { step: Number(match[1]), events: 0, bytes: 0 };
      out.push(current);
    }
    if (current) {
      current.events += 1;
      current.bytes += eventBytes(e);
    }
  }
  return out;
}
