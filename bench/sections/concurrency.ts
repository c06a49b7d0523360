// Section 5, concurrency: 1, 4, 8 and 16 tasks at once on one in-process worker (one Chromium, one context per
// task): tasks per minute, steps per second, p95 non-model step time (from each task's history, model calls
// subtracted), and the worker's memory per session (Node RSS + the RSS of its Chromium processes, from /proc).
import type { TaskResult } from '../../workflows/contract';
import type { Bench } from '../context';
import { fetchChain, stepStarts } from '../history';
import { workerPss, workerRss } from '../procs';
import { row } from '../report';
import type { Row, SectionResult } from '../report';
import { staticEntries, writeScript } from '../scripts';
import { fmtBytes, fmtMs, round, summarize, table } from '../stats';
import { samplesFrom } from './step';

const LEVELS = [1, 4, 8, 16];
const STEPS_PER_TASK = 8;
const P95_LIMIT = 3;

interface Level {
  tasks: number;
  completed: number;
  wallMs: number;
  steps: number;
  tasksPerMinute: number;
  stepsPerSecond: number;
  nonModelMs: { n: number; p50: number; p95: number; max: number };
  rss: { baseline: number; peak: number; perSession: number; peakChromiumProcesses: number };
  pss: { baseline: number; peak: number; perSession: number };
}

/** Samples worker RSS every 250 ms (PSS, dearer to read, every second) until stopped; returns the peaks. */
function sampleMemory(): () => { peak: number; peakPss: number; processes: number } {
  let peak = 0;
  let peakPss = 0;
  let processes = 0;
  let tick = 0;
  const take = () => {
    const r = workerRss();
    peak = Math.max(peak, r.total);
    processes = Math.max(processes, r.chromiumProcesses);
    if (tick++ % 4 === 0) peakPss = Math.max(peakPss, workerPss().total);
  };
  take();
  const timer = setInterval(take, 250);
  return () => {
    clearInterval(timer);
    tick = 0;
    take();
    return { peak, peakPss, processes };
  };
}

async function runLevel(b: Bench, n: number, script: string): Promise<Level> {
  const { client, runtime } = await b.temporal();
  const { timer } = await b.model();
  await new Promise((r) => setTimeout(r, 500)); // let the previous level's contexts go away
  const baseline = workerRss().total;
  const baselinePss = workerPss().total;
  b.log(`[bench] concurrency ${n}: ${n} task${n > 1 ? 's' : ''} × ${STEPS_PER_TASK} steps at once …`);
  const stopSampling = sampleMemory();
  const began = Date.now();
  const stamp = Date.now().toString(36);
  const handles = await Promise.all(
    Array.from({ length: n }, (_, i) => b.startTask({ runId: `conc${n}-${stamp}-${i + 1}`, script })),
  );
  const results = await Promise.allSettled(handles.map((h) => h.result() as Promise<TaskResult>));
  const wallMs = Date.now() - began;
  const { peak, peakPss, processes } = stopSampling();
  const completed = results.filter((r) => r.status === 'fulfilled' && r.value.status === 'complete').length;
  const samples = (
    await Promise.all(
      handles.map(async (h) => {
        const runs = await fetchChain(client, h.workflowId, h.firstExecutionRunId);
        return samplesFrom(stepStarts(runs), timer.durations(h.workflowId)).filter((s) => s.step > 1);
      }),
    )
  ).flat();
  const s = summarize(samples.map((x) => x.nonModelMs));
  const steps = results.reduce((sum, r) => sum + (r.status === 'fulfilled' ? r.value.steps : 0), 0);
  if (runtime.pool.size > 0) b.log(`[bench] concurrency ${n}: ${runtime.pool.size} sessions still open`);
  const level: Level = {
    tasks: n,
    completed,
    wallMs,
    steps,
    tasksPerMinute: round(completed / (wallMs / 60_000), 2),
    stepsPerSecond: round(steps / (wallMs / 1000), 2),
    nonModelMs: { n: s.n, p50: round(s.p50), p95: round(s.p95), max: round(s.max) },
    rss: { baseline, peak, perSession: Math.round((peak - baseline) / n), peakChromiumProcesses: processes },
    pss: { baseline: baselinePss, peak: peakPss, perSession: Math.round((peakPss - baselinePss) / n) },
  };
  b.log(
    `[bench] concurrency ${n}: ${completed}/${n} complete in ${fmtMs(wallMs)}, ${level.stepsPerSecond} steps/s, ` +
      `p95 non-model ${fmtMs(s.p95)}, +${fmtBytes(level.rss.perSession)} RSS (+${fmtBytes(level.pss.perSession)} PSS) per session`,
  );
  return level;
}

export async function benchConcurrency(b: Bench): Promise<Omit<SectionResult, 'seconds'>> {
  const { runtime } = await b.temporal();
  const site = await b.site();
  const script = writeScript(b.scriptsDir, `static-${STEPS_PER_TASK}`, staticEntries(STEPS_PER_TASK));
  // Launch the pool's browser first, so every level's baseline includes the browser process itself.
  const warm = await runtime.pool.openSession({
    viewport: { width: 1440, height: 900 },
    downloadsDir: `${b.dir}/warm`,
    url: `${site.url}/`,
  });
  await runtime.pool.close(warm.sessionId);
  const levels: Level[] = [];
  for (const n of LEVELS) levels.push(await runLevel(b, n, script));
  b.log(
    table([
      [
        'tasks',
        'done',
        'wall',
        'tasks/min',
        'steps/s',
        'non-model p50',
        'p95',
        'peak RSS',
        'RSS/session',
        'PSS/session',
        'chromium procs',
      ],
      ...levels.map((l) => [
        `${l.tasks}`,
        `${l.completed}`,
        fmtMs(l.wallMs),
        `${l.tasksPerMinute}`,
        `${l.stepsPerSecond}`,
        fmtMs(l.nonModelMs.p50),
        fmtMs(l.nonModelMs.p95),
        fmtBytes(l.rss.peak),
        fmtBytes(l.rss.perSession),
        fmtBytes(l.pss.perSession),
        `${l.rss.peakChromiumProcesses}`,
      ]),
    ]),
  );
  const single = levels.find((l) => l.tasks === 1);
  const rows: Row[] = levels.map((l) =>
    row(
      'concurrency',
      `${l.tasks} at once: tasks/min; steps/s; p95 non-model; RSS (PSS)/session`,
      `${l.tasksPerMinute}; ${l.stepsPerSecond}; ${fmtMs(l.nonModelMs.p95)}; ${fmtBytes(l.rss.perSession)} (${fmtBytes(l.pss.perSession)})`,
    ),
  );
  const top = levels[levels.length - 1];
  if (single && top) {
    const factor = top.nonModelMs.p95 / single.nonModelMs.p95;
    rows.push(
      row(
        'concurrency',
        `${top.tasks} tasks complete; p95 vs single-task`,
        `${top.completed}/${top.tasks}; ×${factor.toFixed(2)}`,
        `all; ≤ ×${P95_LIMIT}`,
        top.completed === top.tasks && factor <= P95_LIMIT,
      ),
    );
  }
  return { name: 'concurrency', rows, data: { stepsPerTask: STEPS_PER_TASK, levels } };
}
