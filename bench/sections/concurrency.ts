// Section 5, concurrency: 1, 4, 8, 16 and 32 eight-step tasks started together on one in-process worker with the
// worker's own slots (derived from the machine unless CUA_SLOTS is set), so the levels above it queue
// for a browser. Per level: steps per second, tasks per minute, p50/p95 non-model step time (from each task's history,
// model calls subtracted), queue wait (workflow start → its browser session open), end-to-end task time, failures
// (named), and the worker's memory per concurrent task (Node + its Chromium processes, from /proc). Each level is
// repeated until two consecutive runs' medians agree within 5% (or `--repeat-cap` is reached).
import type { BrowserPool } from '../../src/browser/pool';
import type { Config } from '../../src/runtime/config';
import type { Bench } from '../context';
import { perSessionByRole, roleTable } from '../memory-roles';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { staticEntries, writeScript } from '../scripts';
import { AGREE_WITHIN, lastTwo, repeatUntilStable } from '../stability';
import type { Stability } from '../stability';
import { fmtBytes, fmtMs, round, summarize, table } from '../stats';
import { runLevel } from './concurrency-run';
import type { LevelRun } from './concurrency-run';

const STEPS_PER_TASK = 8;
const P95_LIMIT = 3;
const MEMORY_TARGET_BYTES = 60 * 1024 * 1024;
/** steps/s "never falls" from one level to the next: a drop within the measurement tolerance (5%) is not a fall. */
const THROUGHPUT_FROM = 4;

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
  /** The run whose PSS per task is reported: what each process role added per session (see memory-roles.ts). */
  memoryRun: LevelRun['memory'];
  runs: Omit<LevelRun, 'nonModelMs' | 'taskFigures'>[];
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
  const worst = used[perTask.indexOf(perTask.reduce((a, m) => (m.pss > a.pss ? m : a)))] ?? used[0];
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
    memoryRun: (worst as LevelRun).memory,
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

/** The worker's slots and where they come from (the machine, or CUA_SLOTS / CUA_MAX_SESSIONS). */
function sessionLimit(config: Config): { limit: number; limitSource: string } {
  const limitSource = config.limits.derived.includes('slots')
    ? `derived from ${config.limits.machine.cores} cores, ${(config.limits.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB`
    : 'CUA_SLOTS';
  return { limit: config.browser.slots, limitSource };
}

/** Launches the pool's browser first, so every level's baseline includes the browser process itself. */
async function warmBrowser(b: Bench, pool: BrowserPool, siteUrl: string): Promise<void> {
  const warm = await pool.openSession({
    viewport: { width: 1440, height: 900 },
    downloadsDir: `${b.dir}/warm`,
    url: `${siteUrl}/`,
  });
  await pool.close(warm.sessionId);
}

/** A line per level (the figures of its used runs), then each level's stability and failures. */
function logLevels(b: Bench, levels: Level[]): void {
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
}

/** A level's two rows: its figures, and how it went (stability, failures, retried opens, lost and leftover sessions). */
function levelRows(l: Level): Row[] {
  return [
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
  ];
}

/** steps/s from THROUGHPUT_FROM tasks up never falls (beyond the tolerance); none with fewer than two such levels. */
function throughputRows(levels: Level[]): Row[] {
  const rising = levels.filter((l) => l.tasks >= THROUGHPUT_FROM);
  if (rising.length <= 1) return [];
  const falls = rising
    .slice(1)
    .filter((l, i) => l.stepsPerSecond < (rising[i] as Level).stepsPerSecond * (1 - AGREE_WITHIN));
  return [
    row(
      'concurrency',
      `steps/s as concurrency rises ${THROUGHPUT_FROM} → ${rising[rising.length - 1]?.tasks}`,
      rising.map((l) => `${l.tasks}: ${l.stepsPerSecond}`).join(' → '),
      `never falls (by > ${AGREE_WITHIN * 100}%)`,
      falls.length === 0,
    ),
  ];
}

/** 16 tasks' non-model p95 against a single task's (when both levels ran). */
function p95Rows(levels: Level[]): Row[] {
  const single = levels.find((l) => l.tasks === 1);
  const sixteen = levels.find((l) => l.tasks === 16);
  if (!single || !sixteen) return [];
  const factor = sixteen.nonModelMs.p95 / single.nonModelMs.p95;
  return [
    row(
      'concurrency',
      '16 tasks: non-model p95 vs single task',
      `×${factor.toFixed(2)} (${fmtMs(sixteen.nonModelMs.p95)} vs ${fmtMs(single.nonModelMs.p95)})`,
      `≤ ×${P95_LIMIT}`,
      factor <= P95_LIMIT,
    ),
  ];
}

/** The level where the most sessions were open at once (the worker's full load); the first such. */
const busiestLevel = (levels: Level[]): Level | undefined =>
  [...levels].sort((x, y) => y.memoryPerTask.peakSessions - x.memoryPerTask.peakSessions)[0];

/** Where memory per task went at 16 tasks (else at the busiest level), per process role, as a table in the log. */
function logMemoryByRole(b: Bench, levels: Level[]): void {
  const level = levels.find((l) => l.tasks === 16) ?? busiestLevel(levels);
  if (!level) return;
  const { byRole, peakSessions } = level.memoryRun;
  b.log(`[bench] concurrency ${level.tasks}: memory by process, baseline → peak, ${peakSessions} sessions open`);
  b.log(table(roleTable(byRole.baseline, byRole.peak, peakSessions)));
}

/** Per level, what each process role added per session open (PSS), largest first. */
function memoryByRoleRows(levels: Level[]): Row[] {
  return levels.map((l) => {
    const { byRole, peakSessions } = l.memoryRun;
    const roles = perSessionByRole(byRole.baseline, byRole.peak, peakSessions).filter(([role]) => role !== 'total');
    return row(
      'concurrency',
      `${l.tasks} at once: PSS per concurrent task by process`,
      roles.map(([role, bytes]) => `${role} ${fmtBytes(bytes)}`).join('; '),
    );
  });
}

/** Memory is judged at 16 tasks (issue 46), else where the most sessions were open at once (the worker's full load). */
function memoryRows(levels: Level[]): Row[] {
  const busiest = levels.find((l) => l.tasks === 16) ?? busiestLevel(levels);
  if (!busiest) return [];
  return [
    row(
      'concurrency',
      `memory per concurrent task, PSS (${busiest.tasks} tasks, ${busiest.memoryPerTask.peakSessions} sessions open)`,
      `${fmtBytes(busiest.memoryPerTask.pss)} (RSS ${fmtBytes(busiest.memoryPerTask.rss)})`,
      `≤ ${fmtBytes(MEMORY_TARGET_BYTES)}`,
      busiest.memoryPerTask.pss <= MEMORY_TARGET_BYTES,
    ),
  ];
}

/** The highest level: no task failed for lack of a browser. */
function lackOfBrowserRows(levels: Level[]): Row[] {
  const top = levels[levels.length - 1];
  if (!top) return [];
  const forLack = top.failures.filter((f) => f.lackOfBrowser);
  return [
    row(
      'concurrency',
      `${top.tasks} submitted tasks: failed for lack of a browser (of all failures)`,
      `${forLack.length} (of ${top.failures.length})${top.failures.length ? `: ${failureList(top)}` : ''}`,
      'none',
      forLack.length === 0,
    ),
  ];
}

export async function benchConcurrency(b: Bench): Promise<SectionOutput> {
  const { runtime, config } = await b.temporal();
  const site = await b.site();
  const { limit, limitSource } = sessionLimit(config);
  b.log(`[bench] concurrency: the worker has ${limit} browser slots (${limitSource}); more tasks queue`);
  const script = writeScript(b.scriptsDir, `static-${STEPS_PER_TASK}`, staticEntries(STEPS_PER_TASK));
  await warmBrowser(b, runtime.pool, site.url);
  const levels: Level[] = [];
  for (const n of b.levels) levels.push(await measureLevel(b, n, script));
  logLevels(b, levels);
  logMemoryByRole(b, levels);
  const rows: Row[] = [
    row('concurrency', 'browser sessions per worker (the limit in use)', `${limit} (${limitSource})`),
    ...levels.flatMap(levelRows),
    ...throughputRows(levels),
    ...p95Rows(levels),
    ...memoryByRoleRows(levels),
    ...memoryRows(levels),
    ...lackOfBrowserRows(levels),
  ];
  return {
    name: 'concurrency',
    rows,
    data: {
      stepsPerTask: STEPS_PER_TASK,
      slots: limit,
      maxSessionsSource: limitSource,
      levels,
    },
  };
}
