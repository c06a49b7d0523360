// Section 5, concurrency: 1, 4, 8, 16 and 32 eight-step tasks started together on one in-process worker with the
// worker's own session limit (derived from the machine unless CUA_MAX_SESSIONS is set), so the levels above it queue
// for a browser. Per level: steps per second, tasks per minute, p50/p95 non-model step time (from each task's history,
// model calls subtracted), queue wait (workflow start → its browser session open), end-to-end task time, failures
// (named), and the worker's memory per concurrent task (Node + its Chromium processes, from /proc). Each level is
// repeated until two consecutive runs' medians agree within 5% (or `--repeat-cap` is reached).
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { failedResult, rootMessage, pendingDetails, waitingForSession } from '../../api/tasks';
import type { TaskResult } from '../../src/contract/task';
import { eventually } from '../context';
import type { Bench } from '../context';
import { activityRecords, eventMs, fetchChain, stepStarts } from '../history';
import type { HistoryEvent, RunHistory } from '../history';
import { chromiumPids, pssBytes, rssBytes, workerPss, workerRss } from '../procs';
import { loadNow, row } from '../report';
import type { Row, SectionOutput } from '../report';
import { staticEntries, writeScript } from '../scripts';
import { AGREE_WITHIN, lastTwo, repeatUntilStable } from '../stability';
import type { Stability } from '../stability';
import { fmtBytes, fmtMs, round, summarize, table } from '../stats';
import { samplesFrom } from './step';

const STEPS_PER_TASK = 8;
const P95_LIMIT = 3;
const MEMORY_TARGET_BYTES = 60 * 1024 * 1024;
/** steps/s "never falls" from one level to the next: a drop within the measurement tolerance (5%) is not a fall. */
const THROUGHPUT_FROM = 4;

interface TaskFigures {
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

interface LevelRun {
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
  };
  load: { start: number; end: number };
}

interface Level {
  tasks: number;
  stability: Stability;
  figuresFromRuns: number[];
  completed: number;
  submitted: number;
  stepsPerSecond: number;
  tasksPerMinute: number;
  nonModelMs: { n: number; p50: number; p95: number; max: number };
  queueWaitMs: { p50: number; p95: number; max: number };
  /** Tasks whose open needed more than one attempt, of `submitted`; the highest attempt. */
  openRetried: { tasks: number; maxAttempt: number };
  endToEndMs: { p50: number; p95: number; max: number };
  /** Over every run of the level: sessions re-opened after a loss, and sessions left open after all tasks ended. */
  sessionsLost: number;
  leftoverSessions: number;
  /** Every failed task of every run of the level, named. */
  failures: { run: number; workflowId: string; failure: string; lackOfBrowser: boolean }[];
  /** Memory added per concurrent task (peak minus idle baseline, divided by the peak of open sessions). */
  memoryPerTask: { rss: number; pss: number; peakSessions: number; peakRss: number; peakChromiumProcesses: number };
  runs: Omit<LevelRun, 'nonModelMs' | 'taskFigures'>[];
}

interface MemoryPeaks {
  peak: number;
  peakPss: number;
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
  const m: MemoryPeaks = { peak: 0, peakPss: 0, processes: 0, sessions: 0, busyMs: 0 };
  let pids: number[] = [];
  let tick = 0;
  const take = (all: boolean) => {
    const t0 = performance.now();
    if (all || tick % 2 === 0) pids = chromiumPids(process.pid);
    m.peak = Math.max(m.peak, process.memoryUsage().rss + pids.reduce((sum, pid) => sum + rssBytes(pid), 0));
    m.processes = Math.max(m.processes, pids.length);
    m.sessions = Math.max(m.sessions, openSessions());
    if (all || tick % 4 === 0) {
      m.peakPss = Math.max(m.peakPss, pssBytes('self') + pids.reduce((sum, pid) => sum + pssBytes(pid), 0));
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

async function runLevel(b: Bench, n: number, script: string, run: number): Promise<LevelRun> {
  const { client, runtime } = await b.temporal();
  const { timer } = await b.model();
  await new Promise((r) => setTimeout(r, 500)); // let the previous run's closed contexts' processes go away
  const load = loadNow();
  const baselineRss = workerRss().total;
  const baselinePss = workerPss().total;
  const stopSampling = sampleMemory(() => runtime.pool.size);
  const began = Date.now();
  const stamp = Date.now().toString(36);
  const handles = await Promise.all(
    Array.from({ length: n }, (_, i) => b.startTask({ runId: `conc${n}-${stamp}-${i + 1}`, script })),
  );
  const settled = await outcomes(handles, 60_000 + n * 8_000);
  const wallMs = Date.now() - began;
  const { peak, peakPss, processes, sessions, busyMs } = stopSampling();
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
    },
    load: { start: load, end: loadNow() },
  };
}

const brief = (values: number[]) => {
  const s = summarize(values.filter((v) => Number.isFinite(v)));
  return { p50: round(s.p50), p95: round(s.p95), max: round(s.max) };
};

async function measureLevel(b: Bench, n: number, script: string): Promise<Level> {
  const label = `concurrency ${n}`;
  b.log(`[bench] ${label}: ${n} task${n > 1 ? 's' : ''} × ${STEPS_PER_TASK} steps at once …`);
  const { results, stability } = await repeatUntilStable(
    {
      capSeconds: b.repeatCapSeconds,
      log: b.log,
      label,
      format: (metric, v) => (metric === 'steps/s' ? v.toFixed(2) : fmtMs(v)),
    },
    async (run) => {
      const r = await runLevel(b, n, script, run);
      const failed = r.tasks - r.completed;
      b.log(
        `[bench] ${label}: run ${run}: ${r.completed}/${n} complete${failed ? ` (${failed} failed)` : ''} in ` +
          `${fmtMs(r.wallMs)}, up to ${r.memory.peakSessions} sessions open, load ${r.load.start.toFixed(2)} → ` +
          `${r.load.end.toFixed(2)}`,
      );
      return r;
    },
    (r) => ({ 'non-model p50': summarize(r.nonModelMs).p50, 'steps/s': r.stepsPerSecond }),
  );
  const used = lastTwo(results);
  const tasks = used.flatMap((r) => r.taskFigures);
  const wallMs = used.reduce((s, r) => s + r.wallMs, 0);
  const nonModel = summarize(used.flatMap((r) => r.nonModelMs));
  const perTask = used.map((r) => ({
    rss: Math.round((r.memory.peakRss - r.memory.baselineRss) / Math.max(1, r.memory.peakSessions)),
    pss: Math.round((r.memory.peakPss - r.memory.baselinePss) / Math.max(1, r.memory.peakSessions)),
  }));
  const retried = tasks.filter((t) => t.openAttempts > 1);
  return {
    tasks: n,
    stability,
    figuresFromRuns: used.map((r) => r.run),
    completed: tasks.filter((t) => t.outcome === 'complete').length,
    submitted: tasks.length,
    stepsPerSecond: round(used.reduce((s, r) => s + r.steps, 0) / (wallMs / 1000), 2),
    tasksPerMinute: round(used.reduce((s, r) => s + r.completed, 0) / (wallMs / 60_000), 2),
    nonModelMs: { n: nonModel.n, p50: round(nonModel.p50), p95: round(nonModel.p95), max: round(nonModel.max) },
    queueWaitMs: brief(tasks.map((t) => t.queueWaitMs)),
    openRetried: { tasks: retried.length, maxAttempt: Math.max(1, ...tasks.map((t) => t.openAttempts)) },
    endToEndMs: brief(tasks.map((t) => t.endToEndMs)),
    sessionsLost: results.reduce((sum, r) => sum + r.taskFigures.reduce((s2, t) => s2 + t.sessionsLost, 0), 0),
    leftoverSessions: results.reduce((sum, r) => sum + r.leftoverSessions, 0),
    failures: results.flatMap((r) =>
      r.taskFigures
        .filter((t) => t.failure !== null)
        .map((t) => ({
          run: r.run,
          workflowId: t.workflowId,
          failure: t.failure as string,
          lackOfBrowser: t.lackOfBrowser,
        })),
    ),
    memoryPerTask: {
      rss: Math.max(...perTask.map((m) => m.rss)),
      pss: Math.max(...perTask.map((m) => m.pss)),
      peakSessions: Math.max(...used.map((r) => r.memory.peakSessions)),
      peakRss: Math.max(...used.map((r) => r.memory.peakRss)),
      peakChromiumProcesses: Math.max(...used.map((r) => r.memory.peakChromiumProcesses)),
    },
    runs: results.map((r) => ({
      run: r.run,
      tasks: r.tasks,
      completed: r.completed,
      wallMs: r.wallMs,
      steps: r.steps,
      stepsPerSecond: r.stepsPerSecond,
      tasksPerMinute: r.tasksPerMinute,
      leftoverSessions: r.leftoverSessions,
      memory: r.memory,
      load: r.load,
    })),
  };
}

const pair = (x: { p50: number; p95: number }) => `${fmtMs(x.p50)} / ${fmtMs(x.p95)}`;
const failureList = (l: Level) =>
  l.failures.map((f) => `${f.workflowId} (run ${f.run}): ${f.failure.slice(0, 160)}`).join('; ');

export async function benchConcurrency(b: Bench): Promise<SectionOutput> {
  const { runtime, config } = await b.temporal();
  const site = await b.site();
  const limit = config.browser.maxSessions;
  const limitSource = config.limits.derived.includes('maxSessions')
    ? `derived from ${config.limits.machine.cores} cores, ${(config.limits.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB`
    : 'CUA_MAX_SESSIONS';
  b.log(`[bench] concurrency: the worker holds at most ${limit} browser sessions (${limitSource}); more tasks queue`);
  const script = writeScript(b.scriptsDir, `static-${STEPS_PER_TASK}`, staticEntries(STEPS_PER_TASK));
  // Launch the pool's browser first, so every level's baseline includes the browser process itself.
  const warm = await runtime.pool.openSession({
    viewport: { width: 1440, height: 900 },
    downloadsDir: `${b.dir}/warm`,
    url: `${site.url}/`,
  });
  await runtime.pool.close(warm.sessionId);
  const levels: Level[] = [];
  for (const n of b.levels) levels.push(await measureLevel(b, n, script));
  b.log(
    table([
      [
        'tasks',
        'done',
        'runs',
        'steps/s',
        'tasks/min',
        'non-model p50 / p95',
        'queue wait p50 / p95',
        'opens retried',
        'end-to-end p50 / p95',
        'lost / left open',
        'sessions',
        'PSS/task',
        'RSS/task',
        'load (last run)',
      ],
      ...levels.map((l) => {
        const last = l.runs[l.runs.length - 1];
        return [
          `${l.tasks}`,
          `${l.completed}/${l.submitted}`,
          `${l.stability.runs}${l.stability.settled ? '' : ' (unsettled)'}`,
          `${l.stepsPerSecond}`,
          `${l.tasksPerMinute}`,
          pair(l.nonModelMs),
          pair(l.queueWaitMs),
          `${l.openRetried.tasks} (max attempt ${l.openRetried.maxAttempt})`,
          pair(l.endToEndMs),
          `${l.sessionsLost} / ${l.leftoverSessions}`,
          `${l.memoryPerTask.peakSessions}`,
          fmtBytes(l.memoryPerTask.pss),
          fmtBytes(l.memoryPerTask.rss),
          last ? `${last.load.start.toFixed(2)} → ${last.load.end.toFixed(2)}` : '',
        ];
      }),
    ]),
  );
  for (const l of levels) {
    b.log(`[bench] concurrency ${l.tasks}: ${l.stability.summary}`);
    if (l.failures.length > 0) b.log(`[bench] concurrency ${l.tasks}: failed: ${failureList(l)}`);
  }

  const rows: Row[] = [
    row('concurrency', 'browser sessions per worker (the limit in use)', `${limit} (${limitSource})`),
  ];
  for (const l of levels) {
    rows.push(
      row(
        'concurrency',
        `${l.tasks} at once: steps/s; tasks/min; non-model p50/p95; queue wait p50/p95; end-to-end p50/p95; ` +
          `PSS (RSS)/concurrent task`,
        `${l.stepsPerSecond}; ${l.tasksPerMinute}; ${pair(l.nonModelMs)}; ${pair(l.queueWaitMs)}; ` +
          `${pair(l.endToEndMs)}; ${fmtBytes(l.memoryPerTask.pss)} (${fmtBytes(l.memoryPerTask.rss)})`,
      ),
      row(
        'concurrency',
        `${l.tasks} at once: stability; failed tasks; opens retried; sessions lost; left open`,
        `${l.stability.summary}; ${l.failures.length} failed; ${l.openRetried.tasks} of ${l.submitted} opens ` +
          `retried; ${l.sessionsLost} lost; ${l.leftoverSessions} left open`,
      ),
    );
  }
  const rising = levels.filter((l) => l.tasks >= THROUGHPUT_FROM);
  if (rising.length > 1) {
    const falls = rising
      .slice(1)
      .filter((l, i) => l.stepsPerSecond < (rising[i] as Level).stepsPerSecond * (1 - AGREE_WITHIN));
    rows.push(
      row(
        'concurrency',
        `steps/s as concurrency rises ${THROUGHPUT_FROM} → ${rising[rising.length - 1]?.tasks}`,
        rising.map((l) => `${l.tasks}: ${l.stepsPerSecond}`).join(' → '),
        `never falls (by > ${AGREE_WITHIN * 100}%)`,
        falls.length === 0,
      ),
    );
  }
  const single = levels.find((l) => l.tasks === 1);
  const sixteen = levels.find((l) => l.tasks === 16);
  if (single && sixteen) {
    const factor = sixteen.nonModelMs.p95 / single.nonModelMs.p95;
    rows.push(
      row(
        'concurrency',
        '16 tasks: non-model p95 vs single task',
        `×${factor.toFixed(2)} (${fmtMs(sixteen.nonModelMs.p95)} vs ${fmtMs(single.nonModelMs.p95)})`,
        `≤ ×${P95_LIMIT}`,
        factor <= P95_LIMIT,
      ),
    );
  }
  // Memory is judged where the most sessions were open at once (the worker's full load).
  const busiest = [...levels].sort((x, y) => y.memoryPerTask.peakSessions - x.memoryPerTask.peakSessions)[0];
  if (busiest) {
    rows.push(
      row(
        'concurrency',
        `memory per concurrent task, PSS (${busiest.tasks} tasks, ${busiest.memoryPerTask.peakSessions} sessions open)`,
        `${fmtBytes(busiest.memoryPerTask.pss)} (RSS ${fmtBytes(busiest.memoryPerTask.rss)})`,
        `≤ ${fmtBytes(MEMORY_TARGET_BYTES)}`,
        busiest.memoryPerTask.pss <= MEMORY_TARGET_BYTES,
      ),
    );
  }
  const top = levels[levels.length - 1];
  if (top) {
    const forLack = top.failures.filter((f) => f.lackOfBrowser);
    rows.push(
      row(
        'concurrency',
        `${top.tasks} submitted tasks: failed for lack of a browser (of all failures)`,
        `${forLack.length} (of ${top.failures.length})${top.failures.length ? `: ${failureList(top)}` : ''}`,
        'none',
        forLack.length === 0,
      ),
    );
  }
  return {
    name: 'concurrency',
    rows,
    data: {
      stepsPerTask: STEPS_PER_TASK,
      maxSessions: limit,
      maxSessionsSource: limitSource,
      levels,
    },
  };
}
