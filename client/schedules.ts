// Schedules over Temporal Schedules: create (a cron or an interval, a time zone, an overlap policy, a catch-up
// window, a monitor's condition), list, describe (next runs, the last runs with their state and output, the
// monitor's memory), pause, unpause, trigger, backfill, delete. A schedule's action starts the task workflow with the
// same task input `start` builds; Temporal names each run `<name>-<scheduled time>`, and the run carries the
// CuaSchedule search attribute. What can be checked here is refused here, one line each (InvalidScheduleError).
import { ScheduleAlreadyRunning, ScheduleNotFoundError as TemporalScheduleNotFound } from '@temporalio/client';
import type { Client, ScheduleDescription, ScheduleOverlapPolicy } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { AGENT_WORKFLOW, SCHEDULE_NAME } from '../src/contract/task';
import type { TaskInput, TaskOutput, TaskResult, TaskState } from '../src/contract/task';
import { MONITOR_WORKFLOW, monitorId } from '../src/contract/monitor';
import type { MonitorInput, MonitorState } from '../src/contract/monitor';
import type { NotifyWhen } from '../src/contract/condition-logic';
import { SCHEDULE_SEARCH_ATTRIBUTE, STATUS_SEARCH_ATTRIBUTE, STEP_SEARCH_ATTRIBUTE } from '../workflows/messages';
import { monitorStateQuery, monitorStopSignal } from '../workflows/monitor';
import { InvalidTaskInputError, TaskNotFoundError } from './errors';
import { InvalidScheduleError, ScheduleAlreadyExistsError, ScheduleNotFoundError } from './schedule-errors';
import { checkCron, checkTimezone, parseDuration, parseEvery, ScheduleSpecError } from './schedule-spec';
import { viewTask } from './tasks';

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'terminate_other', 'allow_all'];
export type OverlapPolicy = 'skip' | 'buffer_one' | 'buffer_all' | 'cancel_other' | 'terminate_other' | 'allow_all';
/** A run missed while the server was down is still started within this window (then: a backfill). */
export const DEFAULT_CATCHUP_WINDOW = '1h';
/** How many runs `describe` shows. */
export const RUNS_SHOWN = 5;

/** When a schedule runs: a cron expression (in `timezone`, default UTC) or an interval (`every`: `6h`, `5s`). */
export interface ScheduleTiming {
  cron?: string;
  every?: string;
  timezone?: string;
}

export interface ScheduleOptionsIn extends ScheduleTiming {
  /** Default skip: a run due while the last one still runs is skipped. */
  overlap?: OverlapPolicy;
  /** Default 1h. */
  catchupWindow?: string;
  /** The monitor's condition: `changed`, an expression over the output, or a JSON-logic object. */
  notifyWhen?: NotifyWhen;
  paused?: boolean;
}

/** What a schedule's memo keeps for people: how it was written (Temporal keeps a cron as compiled calendars). */
interface ScheduleMemo extends ScheduleTiming {
  instruction: string;
  notifyWhen?: NotifyWhen;
}

export interface ScheduleRun {
  /** The run's task id, `<name>-<scheduled time>`. */
  id: string;
  scheduledAt: string;
  startedAt: string;
  /** Its state (running, complete, failed, …), or `unknown` when its workflow is gone (past retention). */
  status: TaskState | 'unknown';
  answer: string | null;
  output: TaskOutput | null;
  error: string | null;
  endReason: TaskResult['endReason'] | null;
}

export interface ScheduleListEntry extends ScheduleTiming {
  name: string;
  paused: boolean;
  instruction: string;
  notifyWhen: NotifyWhen | null;
  nextRun: string | null;
  lastRun: string | null;
}

export interface ScheduleDetail extends ScheduleListEntry {
  note: string | null;
  overlap: OverlapPolicy;
  catchupWindowSeconds: number;
  /** The next few times it runs (ISO). */
  nextRuns: string[];
  /** The last runs, newest first (at most RUNS_SHOWN). */
  runs: ScheduleRun[];
  counts: { taken: number; skippedOverlap: number; missedCatchupWindow: number };
  /** The monitor's memory (null: no monitor, or it is not running). */
  monitor: MonitorState | null;
}

const overlapOf = (p: OverlapPolicy): ScheduleOverlapPolicy => p.toUpperCase() as ScheduleOverlapPolicy;

/** Runs a spec check; its ScheduleSpecError becomes InvalidScheduleError (the message names the part). */
function checked<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ScheduleSpecError) throw new InvalidScheduleError(field, err.message, true);
    throw err;
  }
}

/** The schedule's timing as Temporal takes it, or InvalidScheduleError. */
function specOf(t: ScheduleTiming): { cronExpressions: string[] } | { intervals: { every: number }[] } {
  if ((t.cron === undefined) === (t.every === undefined)) {
    throw new InvalidScheduleError('timing', 'give exactly one of --cron and --every', true);
  }
  if (t.timezone !== undefined) checked('timezone', () => checkTimezone(t.timezone!));
  if (t.cron !== undefined) {
    checked('cron', () => checkCron(t.cron!));
    return { cronExpressions: [t.cron] };
  }
  if (t.timezone !== undefined) {
    throw new InvalidScheduleError('timezone', '--timezone is for --cron; an interval is the same everywhere', true);
  }
  return { intervals: [{ every: checked('every', () => parseEvery(t.every ?? '')) }] };
}

/**
 * Checks what a schedule's name and options can be checked for here: the name, a cron or an interval, the time zone,
 * the overlap policy, the catch-up window. InvalidScheduleError, one line.
 */
export function checkScheduleOptions(name: string, opts: ScheduleOptionsIn) {
  if (!SCHEDULE_NAME.test(name)) {
    throw new InvalidScheduleError(
      'name',
      'letters, digits, dot, dash, underscore (max 64), starting with a letter or digit',
    );
  }
  const spec = specOf(opts);
  if (opts.overlap !== undefined && !OVERLAP_POLICIES.includes(opts.overlap)) {
    throw new InvalidScheduleError('overlap', `one of ${OVERLAP_POLICIES.join(', ')}`);
  }
  const window = opts.catchupWindow ?? DEFAULT_CATCHUP_WINDOW;
  const catchupWindow = checked('catchupWindow', () => parseDuration(window, '--catchup-window'));
  return { spec, catchupWindow };
}

/**
 * Creates the schedule `name` running `input` (a task input as `start` validates it: its id is replaced by each run's).
 * With `notifyWhen`, its monitor is started first. InvalidScheduleError, ScheduleAlreadyExistsError.
 */
export async function createSchedule(
  client: Client,
  taskQueue: string,
  name: string,
  input: TaskInput,
  opts: ScheduleOptionsIn,
): Promise<ScheduleDetail> {
  const { spec, catchupWindow } = checkScheduleOptions(name, opts);
  if (await scheduleExists(client, name)) throw new ScheduleAlreadyExistsError(name);
  const task: TaskInput = {
    ...input,
    runId: name,
    schedule: { name, ...(opts.notifyWhen !== undefined ? { notifyWhen: opts.notifyWhen } : {}) },
  };
  if (opts.notifyWhen !== undefined)
    await startMonitor(client, taskQueue, { schedule: name, notifyWhen: opts.notifyWhen });
  const memo: ScheduleMemo = {
    instruction: input.instruction.slice(0, 400),
    ...timingOf(opts),
    ...(opts.notifyWhen !== undefined ? { notifyWhen: opts.notifyWhen } : {}),
  };
  try {
    await client.schedule.create({
      scheduleId: name,
      spec: { ...spec, ...(opts.timezone ? { timezone: opts.timezone } : {}) },
      action: {
        type: 'startWorkflow',
        workflowType: AGENT_WORKFLOW,
        workflowId: name,
        taskQueue,
        args: [task],
        staticSummary: `${name}: ${input.instruction}`.slice(0, 400),
        memo: { instruction: input.instruction.slice(0, 400), environment: input.environment, schedule: name },
        typedSearchAttributes: [
          { key: SCHEDULE_SEARCH_ATTRIBUTE, value: name },
          ...(input.searchAttributes
            ? [
                { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
                { key: STEP_SEARCH_ATTRIBUTE, value: 0 },
              ]
            : []),
        ],
      },
      policies: { overlap: overlapOf(opts.overlap ?? 'skip'), catchupWindow },
      memo: memo as unknown as Record<string, unknown>,
      state: { paused: opts.paused ?? false, ...(opts.paused ? { note: 'created paused' } : {}) },
    });
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) throw new ScheduleAlreadyExistsError(name);
    throw err;
  }
  return describeSchedule(client, name);
}

function timingOf(t: ScheduleTiming): ScheduleTiming {
  return {
    ...(t.cron !== undefined ? { cron: t.cron } : {}),
    ...(t.every !== undefined ? { every: t.every } : {}),
    ...(t.timezone !== undefined ? { timezone: t.timezone } : {}),
  };
}

async function scheduleExists(client: Client, name: string): Promise<boolean> {
  try {
    await client.schedule.getHandle(name).describe();
    return true;
  } catch (err) {
    if (err instanceof TemporalScheduleNotFound) return false;
    throw err;
  }
}

/** Starts the schedule's monitor; one left running by an earlier schedule of the same name is replaced. */
async function startMonitor(client: Client, taskQueue: string, input: MonitorInput): Promise<void> {
  await client.workflow.start(MONITOR_WORKFLOW, {
    workflowId: monitorId(input.schedule),
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.TERMINATE_EXISTING,
    staticSummary: `monitor of schedule ${input.schedule}`,
  });
}

/** The schedule's description, or ScheduleNotFoundError. */
async function describeRaw(client: Client, name: string): Promise<ScheduleDescription> {
  try {
    return await client.schedule.getHandle(name).describe();
  } catch (err) {
    if (err instanceof TemporalScheduleNotFound) throw new ScheduleNotFoundError(name);
    throw err;
  }
}

const iso = (d: Date | undefined): string | null => (d ? d.toISOString() : null);

function entryOf(
  name: string,
  memo: Record<string, unknown> | undefined,
  paused: boolean,
  next: Date[],
  recent: { scheduledAt: Date }[],
): ScheduleListEntry {
  const m = (memo ?? {}) as Partial<ScheduleMemo>;
  return {
    name,
    paused,
    instruction: m.instruction ?? '',
    notifyWhen: m.notifyWhen ?? null,
    ...timingOf(m),
    nextRun: iso(next[0]),
    lastRun: iso(recent.at(-1)?.scheduledAt),
  };
}

/** The schedules that start tasks (others in the namespace are left out), by name. */
export async function listSchedules(client: Client): Promise<ScheduleListEntry[]> {
  const out: ScheduleListEntry[] = [];
  for await (const s of client.schedule.list()) {
    if (s.action?.workflowType !== AGENT_WORKFLOW) continue;
    out.push(entryOf(s.scheduleId, s.memo, s.state.paused, s.info.nextActionTimes, s.info.recentActions));
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** A run's state and result, as far as its workflow is still known. */
async function runOf(client: Client, id: string, scheduledAt: Date, takenAt: Date): Promise<ScheduleRun> {
  const base = { id, scheduledAt: scheduledAt.toISOString(), startedAt: takenAt.toISOString() };
  try {
    const view = await viewTask(client, id);
    const r = view.result;
    return {
      ...base,
      status: view.status?.status ?? r?.status ?? (view.workflowStatus === 'CANCELLED' ? 'cancelled' : 'failed'),
      answer: view.status?.answer ?? r?.answer ?? null,
      output: r?.output ?? null,
      error: view.status?.error ?? r?.error ?? view.failure,
      endReason: view.status ? view.status.endReason : (r?.endReason ?? null),
    };
  } catch (err) {
    if (!(err instanceof TaskNotFoundError)) throw err;
    return { ...base, status: 'unknown', answer: null, output: null, error: null, endReason: null };
  }
}

/** Next runs, the last runs with their state and output, the monitor's memory; ScheduleNotFoundError. */
export async function describeSchedule(client: Client, name: string): Promise<ScheduleDetail> {
  const d = await describeRaw(client, name);
  const recent = d.info.recentActions.slice(-RUNS_SHOWN).reverse();
  const runs = await Promise.all(
    recent.map((a) => runOf(client, a.action.workflow.workflowId, a.scheduledAt, a.takenAt)),
  );
  const entry = entryOf(name, d.memo, d.state.paused, d.info.nextActionTimes, d.info.recentActions);
  const monitor = entry.notifyWhen === null ? null : await monitorStateOf(client, name);
  return {
    ...entry,
    note: d.state.note ?? null,
    overlap: (d.policies.overlap ?? 'SKIP').toLowerCase() as OverlapPolicy,
    catchupWindowSeconds: Math.round(d.policies.catchupWindow / 1000),
    nextRuns: d.info.nextActionTimes.slice(0, 5).map((t) => t.toISOString()),
    runs,
    counts: {
      taken: d.info.numActionsTaken,
      skippedOverlap: d.info.numActionsSkippedOverlap,
      missedCatchupWindow: d.info.numActionsMissedCatchupWindow,
    },
    monitor,
  };
}

async function monitorStateOf(client: Client, name: string): Promise<MonitorState | null> {
  try {
    return await client.workflow.getHandle(monitorId(name)).query(monitorStateQuery);
  } catch {
    return null; // not running (deleted, or never started): nothing to show
  }
}

export async function pauseSchedule(client: Client, name: string, note?: string): Promise<void> {
  await describeRaw(client, name);
  await client.schedule.getHandle(name).pause(note ?? 'paused');
}

export async function unpauseSchedule(client: Client, name: string, note?: string): Promise<void> {
  await describeRaw(client, name);
  await client.schedule.getHandle(name).unpause(note ?? 'unpaused');
}

/** Starts a run now (under the schedule's overlap policy: with skip, none while one runs). */
export async function triggerSchedule(client: Client, name: string): Promise<void> {
  await describeRaw(client, name);
  await client.schedule.getHandle(name).trigger();
}

/**
 * Runs the times the schedule would have run between `from` and `to`, one after another (overlap buffer_all: a
 * backfill's runs never skip each other). InvalidScheduleError for times that are no dates or out of order.
 */
export async function backfillSchedule(client: Client, name: string, from: string, to: string): Promise<void> {
  const [start, end] = [new Date(from), new Date(to)];
  if (Number.isNaN(start.getTime())) throw new InvalidScheduleError('from', `'${from}' is no ISO time`);
  if (Number.isNaN(end.getTime())) throw new InvalidScheduleError('to', `'${to}' is no ISO time`);
  if (end <= start) throw new InvalidScheduleError('to', 'must be after --from');
  await describeRaw(client, name);
  await client.schedule.getHandle(name).backfill({ start, end, overlap: 'BUFFER_ALL' });
}

/** Deletes the schedule (its runs keep running) and stops its monitor once it has sent what it has to send. */
export async function deleteSchedule(client: Client, name: string): Promise<void> {
  await describeRaw(client, name);
  await client.schedule.getHandle(name).delete();
  await client.workflow
    .getHandle(monitorId(name))
    .signal(monitorStopSignal)
    .catch(() => undefined); // no monitor running
}

/** A task input for a schedule: InvalidTaskInputError becomes InvalidScheduleError (same one line). */
export function scheduleTaskError(err: unknown): unknown {
  if (!(err instanceof InvalidTaskInputError)) return err;
  return new InvalidScheduleError(err.field.replace(/^schedule\./, ''), err.reason);
}
