// One run of one level of the concurrency section (bench/sections/concurrency.ts): n tasks started together on the
// in-process worker, each task's figures read back from its history (outcome, steps, queue wait, end-to-end time,
// named failure, sessions lost), the non-model step times, and the worker's memory sampled while they ran.
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { failedResult, rootMessage, pendingDetails, waitingForSession } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { eventually } from '../context';
import type { Bench } from '../context';
import { activityRecords, eventMs, fetchChain, stepStarts } from '../history';
import type { HistoryEvent, RunHistory } from '../history';
import { memoryByRole, totalPss } from '../memory-roles';
import type { RoleMemory } from '../memory-roles';
import { chromiumPids, chromiumRole, rssBytes, workerRss } from '../procs';
import { loadNow } from '../report';
import { round } from '../stats';
import { samplesFrom } from './step';

export interface TaskFigures {
  workflowId: string;
  outcome: 'complete' | 'failed' | 'unfinished';
  steps: number;
  /** WorkflowExecutionStarted → the last run's close event (server clock). */
  endToEndMs: number;
  /** WorkflowExecutionStarted → the first successful openSession completed: waiting for a browser + a normal open. */
  queueWaitMs: number;
  /** The attempt at which that openSession succeeded (> 1: it found the pool full and retried). */
  openAttempts: number;
  /** Why it failed (end reason and message), null when it completed. */
  failure: string | null;
  /** It failed for lack of a browser (a full pool, or a browser that could not start or went away). */
  lackOfBrowser: boolean;
  /** Sessions it re-opened because a session activity failed as lost (timed out, browser gone). */
  sessionsLost: number;
}

export interface LevelRun {
  run: number;
  tasks: number;
  completed: number;
  wallMs: number;
  steps: number;
  stepsPerSecond: number;
  tasksPerMinute: number;
  nonModelMs: number[];
  taskFigures: TaskFigures[];
  /** Sessions still open once every task had ended (closed by the bench; see closeLeftovers). */
  leftoverSessions: number;
  memory: {
    baselineRss: number;
    peakRss: number;
    baselinePss: number;
    peakPss: number;
    /** The most browser sessions open at once (the concurrent tasks). */
    peakSessions: number;
    peakChromiumProcesses: number;
    /** Time the memory sampler spent on the worker's thread during the run. */
    samplerBusyMs: number;
    /** PSS per process role (Node, Chromium's browser, GPU, utilities, renderers) at the baseline and at the peak. */
    byRole: { baseline: RoleMemory; peak: RoleMemory };
  };
  load: { start: number; end: number };
}

interface MemoryPeaks {
  peak: number;
  peakPss: number;
  /** The worker's memory by process role when PSS peaked. */
  peakRoles: RoleMemory;
  processes: number;
  sessions: number;
  /** Time the sampler itself spent (it runs on the worker's thread: the bench's own cost in the figures). */
  busyMs: number;
}

/**
 * Samples the worker's memory (Node + its Chromium processes) and its open sessions until stopped: RSS every 500 ms,
 * PSS (dearer: smaps_rollup of every process) every 2 s; the list of Chromium processes is refreshed every second.
 */
function sampleMemory(openSessions: () => number): () => MemoryPeaks {
  const m: MemoryPeaks = { peak: 0, peakPss: 0, peakRoles: {}, processes: 0, sessions: 0, busyMs: 0 };
  let pids: number[] = [];
  let tick = 0;
  const take = (all: boolean) => {
    const t0 = performance.now();
    if (all || tick % 2 === 0) pids = chromiumPids(process.pid);
    m.peak = Math.max(m.peak, process.memoryUsage().rss + pids.reduce((sum, pid) => sum + rssBytes(pid), 0));
    m.processes = Math.max(m.processes, pids.length);
    m.sessions = Math.max(m.sessions, openSessions());
    if (all || tick % 4 === 0) {
      const roles = memoryByRole();
      const pss = totalPss(roles);
      if (pss > m.peakPss) Object.assign(m, { peakPss: pss, peakRoles: roles });
    }
    tick += 1;
    m.busyMs += performance.now() - t0;
  };
  take(true);
  const timer = setInterval(() => take(false), 500);
  return () => {
    clearInterval(timer);
    take(true);
    return { ...m, busyMs: Math.round(m.busyMs) };
  };
}

const CLOSED = [
  'workflowExecutionCompletedEventAttributes',
  'workflowExecutionFailedEventAttributes',
  'workflowExecutionTimedOutEventAttributes',
  'workflowExecutionTerminatedEventAttributes',
  'workflowExecutionCanceledEventAttributes',
] as const;
const closeEvent = (events: readonly HistoryEvent[]) => events.find((e) => CLOSED.some((k) => e[k]));

type Settled = { ok: true; result: TaskResult } | { ok: false; error: unknown } | { ok: false; unfinished: string };

/** Waits for every task until the deadline; tasks still running then are described (waiting for a session?). */
async function outcomes(handles: WorkflowHandleWithFirstExecutionRunId[], deadlineMs: number): Promise<Settled[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
  const settled = await Promise.all(
    handles.map(async (h): Promise<Settled> => {
      const result = (h.result() as Promise<TaskResult>).then(
        (value): Settled => ({ ok: true, result: value }),
        (error: unknown): Settled => ({ ok: false, error }),
      );
      const first = await Promise.race([result, deadline]);
      if (first !== 'late') return first;
      const desc = await h.describe();
      const waiting = waitingForSession(desc, await pendingDetails(desc, h.client.options.loadedDataConverter));
      await h.terminate('bench: the level did not finish in time').catch(() => undefined);
      return {
        ok: false,
        unfinished: waiting
          ? `still waiting for a session after ${Math.round(deadlineMs / 1000)} s (${waiting.attempts} attempts)`
          : `still running after ${Math.round(deadlineMs / 1000)} s`,
      };
    }),
  );
  clearTimeout(timer);
  return settled;
}

function taskFigures(workflowId: string, runs: RunHistory[], s: Settled): TaskFigures {
  const started = runs[0]?.events[0];
  const closed = closeEvent(runs[runs.length - 1]?.events ?? []);
  const open = runs
    .flatMap((r) => activityRecords(r.events))
    .find((r) => r.name === 'openSession' && r.outcome === 'completed');
  const t0 = started ? eventMs(started) : Number.NaN;
  let failure: string | null = null;
  let lackOfBrowser = false;
  if (!s.ok) {
    if ('unfinished' in s) {
      failure = s.unfinished;
      lackOfBrowser = s.unfinished.includes('waiting for a session');
    } else {
      const endReason = failedResult(s.error)?.endReason ?? 'unknown';
      const message = rootMessage(s.error);
      failure = `${endReason}: ${message}`;
      lackOfBrowser = endReason === 'browser' || /pool is full|PoolFull/i.test(message);
    }
  }
  return {
    workflowId,
    outcome: s.ok
      ? s.result.status === 'complete'
        ? 'complete'
        : 'failed'
      : 'unfinished' in s
        ? 'unfinished'
        : 'failed',
    steps: s.ok ? s.result.steps : 0,
    endToEndMs: closed ? eventMs(closed) - t0 : Number.NaN,
    queueWaitMs: open?.closedAt ? open.closedAt - t0 : Number.NaN,
    openAttempts: open?.attempt ?? 0,
    failure: failure ?? (s.ok && s.result.status !== 'complete' ? `ended ${s.result.status}` : null),
    lackOfBrowser,
    sessionsLost: runs
      .flatMap((r) => activityRecords(r.events))
      .filter((r) => r.name === 'openSession' && r.summary.includes('(worker_lost)')).length,
  };
}

/**
 * Once every task of a run has ended, each released its session before finishing: a session still open is one no
 * task will release (e.g. left behind when a session activity timed out and the task re-opened elsewhere), which only
 * the pool's idle timeout (10 min) would close. Waits up to 5 s for the pool to empty, then closes and counts them,
 * so the next run (and the resume section) start from an empty pool.
 */
async function closeLeftovers(b: Bench, label: string): Promise<number> {
  const { runtime } = await b.temporal();
  const empty = await eventually(() => runtime.pool.size === 0, 5_000, 'the browser pool to empty', 50).then(
    () => true,
    () => false,
  );
  if (empty) return 0;
  const ids = runtime.pool.sessionIds();
  b.log(`[bench] ${label}: ${ids.length} session(s) still open after every task ended; closing them`);
  await Promise.all(ids.map((id) => runtime.pool.close(id)));
  return ids.length;
}

/**
 * Waits (up to 5 s) until the renderers of the previous run's closed sessions have exited, at most the one spare
 * renderer Chromium keeps left, then 500 ms more: the baseline is of an idle browser.
 */
async function closedRenderersGone(): Promise<void> {
  const renderers = () => chromiumPids(process.pid).filter((pid) => chromiumRole(pid) === 'renderer').length;
  await eventually(() => renderers() <= 1, 5_000, "the closed sessions' renderers to exit", 100).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 500));
}

/** One run of a level: `n` tasks started together, their figures from history, the worker's memory meanwhile. */
export async function runLevel(b: Bench, n: number, script: string, run: number): Promise<LevelRun> {
  const { client, runtime } = await b.temporal();
  const { timer } = await b.model();
  await closedRenderersGone();
  const load = loadNow();
  const baselineRss = workerRss().total;
  const baselineRoles = memoryByRole();
  const baselinePss = totalPss(baselineRoles);
  const stopSampling = sampleMemory(() => runtime.pool.size);
  const began = Date.now();
  const stamp = Date.now().toString(36);
  const handles = await Promise.all(
    Array.from({ length: n }, (_, i) => b.startTask({ taskId: `conc${n}-${stamp}-${i + 1}`, script })),
  );
  const settled = await outcomes(handles, 60_000 + n * 8_000);
  const wallMs = Date.now() - began;
  const { peak, peakPss, peakRoles, processes, sessions, busyMs } = stopSampling();
  const leftoverSessions = await closeLeftovers(b, `concurrency ${n}, run ${run}`);
  const chains = await Promise.all(handles.map((h) => fetchChain(client, h.workflowId, h.firstExecutionRunId)));
  const figures = chains.map((runs, i) => taskFigures(handles[i]?.workflowId ?? '', runs, settled[i] as Settled));
  // Step 1 (opening the browser) is left out, as in the step section; the terminate step has no next step.
  const nonModelMs = chains.flatMap((runs, i) =>
    samplesFrom(stepStarts(runs), timer.durations(handles[i]?.workflowId ?? ''))
      .filter((s) => s.step > 1)
      .map((s) => s.nonModelMs),
  );
  const completed = figures.filter((f) => f.outcome === 'complete').length;
  const steps = figures.reduce((sum, f) => sum + f.steps, 0);
  return {
    run,
    tasks: n,
    completed,
    wallMs,
    steps,
    stepsPerSecond: round(steps / (wallMs / 1000), 2),
    tasksPerMinute: round(completed / (wallMs / 60_000), 2),
    nonModelMs,
    taskFigures: figures,
    leftoverSessions,
    memory: {
      baselineRss,
      peakRss: peak,
      baselinePss,
      peakPss,
      peakSessions: sessions,
      peakChromiumProcesses: processes,
      samplerBusyMs: busyMs,
      byRole: { baseline: baselineRoles, peak: peakRoles },
    },
    load: { start: load, end: loadNow() },
  };
}
