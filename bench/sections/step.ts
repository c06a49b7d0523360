// Section 1, step time: per step, the non-model time (observe — folded into the act before it, from the
// fold-observe-into-act patch on — + act with settling + persistence + decide's own work = step wall time minus the
// model HTTP call) for (a) the same activities in a plain in-process loop without
// Temporal and (b) the real workflow on the dev server; their ratio and difference are the orchestration overhead.
// (a) runs twice, before and after (b), so a change in machine load during the section weighs on both sides. The
// trio is repeated until two consecutive runs' (a) and (b) medians agree within 5% (or `--repeat-cap` is reached);
// the figures come from the last two runs.
import type { Bench } from '../context';
import { activityRecords, stepStarts, workflowTaskRecords } from '../history';
import type { ActivityRecord } from '../history';
import { runInProcess } from '../inproc';
import type { ActivityTimes } from '../inproc';
import { loadNow, row } from '../report';
import type { Row, SectionOutput } from '../report';
import { stepEntries, writeScript } from '../scripts';
import { fmtMs, round, summarize, table } from '../stats';
import type { Summary } from '../stats';
import { lastTwo, repeatUntilStable } from '../stability';
import type { Stability } from '../stability';
import { LONG_STEPS, longWorkflowRun, runLongTask } from './long-run';
import { floorBrief, stepFloor } from './step-floor';
import type { FloorFigures } from './step-floor';

/** Steps left out of the statistics at the start of each run (first screenshots, cold code paths). */
const WARMUP_STEPS = 2;
/** Steps of each of the two in-process runs (together about as many samples as the workflow run). */
const IN_PROCESS_STEPS = 13;

export interface StepSample {
  step: number;
  wallMs: number;
  modelMs: number;
  nonModelMs: number;
}

/** A steady-state step with its activities' execution times and (for (b)) their schedule-to-start waits. */
interface Detailed extends StepSample {
  exec: ActivityTimes;
  queueMs: number;
}

/** Step k's wall time is from its start to step k+1's start; the last (terminate) step has no act and is left out. */
export function samplesFrom(starts: Map<number, number>, modelMs: readonly number[]): StepSample[] {
  const samples: StepSample[] = [];
  for (const [step, at] of [...starts].sort((x, y) => x[0] - y[0])) {
    const next = starts.get(step + 1);
    if (next === undefined) continue;
    const model = modelMs[step - 1] ?? 0;
    samples.push({ step, wallMs: round(next - at), modelMs: round(model), nonModelMs: round(next - at - model) });
  }
  return samples;
}

const brief = (s: Summary) => ({
  n: s.n,
  p50: round(s.p50),
  p95: round(s.p95),
  mean: round(s.mean),
  max: round(s.max),
});
const total = (t: ActivityTimes) => t.observe + t.decide + t.act;

async function inProcessRun(b: Bench, label: string): Promise<Detailed[]> {
  const { config, runtime } = await b.temporal();
  const { timer } = await b.model();
  const script = writeScript(b.scriptsDir, `steps-${IN_PROCESS_STEPS}`, stepEntries(IN_PROCESS_STEPS));
  const taskId = `inproc-${label}-${Date.now().toString(36)}`;
  b.log(`[bench] step (a), run ${label}: ${IN_PROCESS_STEPS}-step task in a plain in-process loop (same activities)`);
  const a = await runInProcess(config, runtime.pool, await b.taskInput({ taskId, script }));
  const starts = new Map(a.stepStarts.map((t, i) => [i + 1, t]));
  return samplesFrom(starts, timer.durations(taskId))
    .slice(0, a.steps - 1)
    .filter((s) => s.step > WARMUP_STEPS)
    .map((s) => ({ ...s, exec: a.activityMs[s.step - 1] as ActivityTimes, queueMs: 0 }));
}

function workflowSamples(records: ActivityRecord[], samples: StepSample[]): Detailed[] {
  const of = (step: number, name: string) =>
    records.filter((r) => r.step === step && r.name === name && r.startedAt !== null && r.closedAt !== null);
  const exec = (step: number, name: string) =>
    of(step, name).reduce((sum, r) => sum + ((r.closedAt as number) - (r.startedAt as number)), 0);
  return samples
    .filter((s) => s.step > WARMUP_STEPS)
    .map((s) => ({
      ...s,
      exec: { observe: exec(s.step, 'observe'), decide: exec(s.step, 'decide'), act: exec(s.step, 'act') },
      queueMs: ['observe', 'decide', 'act']
        .flatMap((name) => of(s.step, name))
        .reduce((sum, r) => sum + ((r.startedAt as number) - r.scheduledAt), 0),
    }));
}

interface StepRun {
  run: number;
  a: Detailed[];
  b: Detailed[];
  /** Steps that ended in continue-as-new, on their own. */
  can: StepSample[];
  /** (b)'s workflow tasks: each one's wait for a worker and its run there (ms), and how many a step had. */
  wft: { waitMs: number[]; runMs: number[]; perStep: number };
  seconds: number;
  load: { start: number; end: number };
}

/** One measurement: (a) in-process, (b) workflow, (a) in-process again. The first run's (b) is the shared long task. */
async function stepRun(b: Bench, run: number): Promise<StepRun> {
  const { timer } = await b.model();
  const t0 = Date.now();
  const load = loadNow();
  const a1 = await inProcessRun(b, `${run}.1`);
  b.log(`[bench] step (b), run ${run}: a ${LONG_STEPS}-step task through the workflow on the dev server`);
  const long = run === 1 ? await longWorkflowRun(b) : await runLongTask(b);
  const a2 = await inProcessRun(b, `${run}.2`);
  const canSteps = new Set(long.continuedAfterSteps);
  const allB = samplesFrom(stepStarts(long.runs), timer.durations(long.taskId));
  // A step that ended with continue-as-new is reported on its own, not mixed into the steady state.
  const records = long.runs.flatMap((r) => activityRecords(r.events));
  return {
    run,
    a: [...a1, ...a2],
    b: workflowSamples(
      records,
      allB.filter((s) => !canSteps.has(s.step)),
    ),
    can: allB.filter((s) => canSteps.has(s.step)),
    wft: workflowTaskFigures(long.runs, allB.length),
    seconds: round((Date.now() - t0) / 1000),
    load: { start: load, end: loadNow() },
  };
}

/** The workflow tasks of (b)'s runs: a time outside activities goes to their waits and runs. */
function workflowTaskFigures(runs: { events: Parameters<typeof workflowTaskRecords>[0] }[], steps: number) {
  const tasks = runs.flatMap((r) => workflowTaskRecords(r.events));
  const done = tasks.filter((t) => t.startedAt !== null && t.completedAt !== null);
  return {
    waitMs: done.map((t) => (t.startedAt as number) - t.scheduledAt),
    runMs: done.map((t) => (t.completedAt as number) - (t.startedAt as number)),
    perStep: round(tasks.length / Math.max(1, steps), 2),
  };
}

const nonModelP50 = (xs: Detailed[]) => summarize(xs.map((x) => x.nonModelMs)).p50;
const summaryOf = (xs: Detailed[], f: (x: Detailed) => number) => summarize(xs.map(f));
const msLine = (label: string, x: Summary) => [
  label,
  `${x.n}`,
  fmtMs(x.p50),
  fmtMs(x.p95),
  fmtMs(x.mean),
  fmtMs(x.max),
];

/** The figures of the runs used: their samples together, and what they add up to on each side. */
interface StepFigures {
  samplesA: Detailed[];
  samplesB: Detailed[];
  canSamples: (StepSample & { run: number })[];
  /** Non-model time per step, (a) and (b). */
  sa: Summary;
  sb: Summary;
  model: Summary;
  perActivity: { name: keyof ActivityTimes; a: Summary; b: Summary }[];
  execA: Summary;
  execB: Summary;
  outsideA: Summary;
  outsideB: Summary;
  /** Schedule-to-start waits per step, (b). */
  queue: Summary;
  /** (b)'s workflow tasks: wait for a worker, run on it, and how many per step. */
  wftWait: Summary;
  wftRun: Summary;
  wftPerStep: number;
}

/** The figures of the used runs (the last two, or the only one). */
function stepFigures(used: StepRun[]): StepFigures {
  const samplesA = used.flatMap((r) => r.a);
  const samplesB = used.flatMap((r) => r.b);
  return {
    samplesA,
    samplesB,
    canSamples: used.flatMap((r) => r.can.map((s) => ({ ...s, run: r.run }))),
    sa: summaryOf(samplesA, (s) => s.nonModelMs),
    sb: summaryOf(samplesB, (s) => s.nonModelMs),
    model: summaryOf([...samplesA, ...samplesB], (s) => s.modelMs),
    perActivity: (['observe', 'decide', 'act'] as const).map((name) => ({
      name,
      a: summaryOf(samplesA, (s) => s.exec[name]),
      b: summaryOf(samplesB, (s) => s.exec[name]),
    })),
    execA: summaryOf(samplesA, (s) => total(s.exec)),
    execB: summaryOf(samplesB, (s) => total(s.exec)),
    outsideA: summaryOf(samplesA, (s) => s.wallMs - total(s.exec)),
    outsideB: summaryOf(samplesB, (s) => s.wallMs - total(s.exec)),
    queue: summaryOf(samplesB, (s) => s.queueMs),
    wftWait: summarize(used.flatMap((r) => r.wft.waitMs)),
    wftRun: summarize(used.flatMap((r) => r.wft.runMs)),
    wftPerStep: used.reduce((n, r) => n + r.wft.perStep, 0) / Math.max(1, used.length),
  };
}

/** One line per run: its time, load and both sides' medians. */
function logRuns(b: Bench, results: StepRun[]): void {
  b.log(
    table([
      ['run', 'seconds', 'load start → end', '(a) n', '(a) p50', '(b) n', '(b) p50', '(b) p95', 'ratio b/a p50'],
      ...results.map((r) => [
        `${r.run}`,
        `${r.seconds}`,
        `${r.load.start.toFixed(2)} → ${r.load.end.toFixed(2)}`,
        `${r.a.length}`,
        fmtMs(nonModelP50(r.a)),
        `${r.b.length}`,
        fmtMs(nonModelP50(r.b)),
        fmtMs(summarize(r.b.map((x) => x.nonModelMs)).p95),
        (nonModelP50(r.b) / nonModelP50(r.a)).toFixed(2),
      ]),
    ]),
  );
}

/** The used runs' figures: non-model and model time, activity execution, time outside activities. */
function logFigures(b: Bench, f: StepFigures): void {
  b.log(
    table([
      ['per step (ms)', 'n', 'p50', 'p95', 'mean', 'max'],
      msLine('non-model, (a) in-process loop', f.sa),
      msLine('non-model, (b) Temporal workflow', f.sb),
      msLine('model HTTP call (a and b)', f.model),
      msLine('activities, (a)', f.execA),
      msLine('activities, (b)', f.execB),
      ...f.perActivity.flatMap((x) => [msLine(`  ${x.name}, (a)`, x.a), msLine(`  ${x.name}, (b)`, x.b)]),
      msLine('outside activities, (a)', f.outsideA),
      msLine('outside activities, (b)', f.outsideB),
      msLine('  of which schedule-to-start, (b)', f.queue),
      msLine(`workflow task: wait for a worker (${f.wftPerStep.toFixed(2)} per step), (b)`, f.wftWait),
      msLine('workflow task: run on the worker, (b)', f.wftRun),
    ]),
  );
}

/** The floor workflow's figures, beside (b)'s workflow tasks above. */
function logFloor(b: Bench, floor: FloorFigures): void {
  const shapes = [
    ['decide + act', floor.twoActivities],
    ['act alone', floor.oneActivity],
  ] as const;
  b.log(
    table([
      ['floor workflow, per step (ms)', 'n', 'p50', 'p95', 'mean', 'max'],
      ...shapes.flatMap(([shape, x]) => [
        msLine(`${shape}: beyond the activities' own time`, x.beyond),
        msLine(`${shape}: workflow task wait for a worker`, x.wftWait),
        msLine(`${shape}: workflow task run on the worker`, x.wftRun),
      ]),
    ]),
  );
}

/** Round trips: the activities each steady step scheduled (observe, decide, act; after the fold an act observes). */
function roundTripsPerStep(samplesB: Detailed[]): number {
  return (
    samplesB.reduce((n, s) => n + (['observe', 'decide', 'act'] as const).filter((k) => s.exec[k] > 0).length, 0) /
    Math.max(1, samplesB.length)
  );
}

/** The section's rows in the final table, with their targets. */
function stepRows(stability: Stability, f: StepFigures, floor: FloorFigures): Row[] {
  const { sa, sb, outsideB } = f;
  const roundTrips = roundTripsPerStep(f.samplesB);
  const ratio50 = sb.p50 / sa.p50;
  const ratio95 = sb.p95 / sa.p95;
  return [
    row('step', 'stability: repeats of (a, b, a) until (a) and (b) p50 agree within 5%', stability.summary),
    row('step', 'non-model step p50, (b) workflow', fmtMs(sb.p50), '≤ 250 ms', sb.p50 <= 250),
    row('step', 'non-model step p50 / p95, (a) in-process', `${fmtMs(sa.p50)} / ${fmtMs(sa.p95)}`),
    row('step', 'non-model step p95, (b) workflow', fmtMs(sb.p95)),
    row(
      'step',
      'overhead ratio b/a (p50; p95)',
      `${ratio50.toFixed(2)}; ${ratio95.toFixed(2)}`,
      '≤ 1.10 both',
      ratio50 <= 1.1 && ratio95 <= 1.1,
    ),
    row('step', 'overhead per step b−a (p50)', fmtMs(sb.p50 - sa.p50)),
    ...floorRows(sa, floor),
    row('step', 'time outside activities per step, (b) p50', fmtMs(outsideB.p50), '≤ 60 ms', outsideB.p50 <= 60),
    row('step', 'activity round trips per steady step, (b) mean', roundTrips.toFixed(2), '≤ 2', roundTrips <= 2),
    ...f.canSamples.map((s) =>
      row('step', `step ${s.step} (ended in continue-as-new), non-model, run ${s.run}`, fmtMs(s.nonModelMs)),
    ),
  ];
}

/**
 * The floor's rows: what the server and the SDK cost per step with no workflow code, and the smallest ratio that
 * leaves, for today's shape (a decide and an act) and for an act alone.
 */
function floorRows(sa: Summary, floor: FloorFigures): Row[] {
  const shapes = [
    ['a decide and an act (today)', floor.twoActivities],
    ['an act alone (decide folded in)', floor.oneActivity],
  ] as const;
  return shapes.map(([shape, x]) =>
    row(
      'step',
      `orchestration floor per step, ${shape}: p50; least ratio (a + floor) / a`,
      `${fmtMs(x.beyond.p50)}; ${((sa.p50 + x.beyond.p50) / sa.p50).toFixed(2)}`,
    ),
  );
}

/** The section's data in the results file: every run's medians, and the used runs' figures and samples. */
function stepData(
  results: StepRun[],
  used: StepRun[],
  stability: Stability,
  f: StepFigures,
  floor: FloorFigures,
): Record<string, unknown> {
  return {
    workflowSteps: LONG_STEPS,
    inProcessSteps: [IN_PROCESS_STEPS, IN_PROCESS_STEPS],
    warmupStepsExcluded: WARMUP_STEPS,
    stability,
    runs: results.map((r) => ({
      run: r.run,
      seconds: r.seconds,
      load: r.load,
      inProcessP50: round(nonModelP50(r.a)),
      workflowP50: round(nonModelP50(r.b)),
    })),
    figuresFromRuns: used.map((r) => r.run),
    inProcess: {
      nonModelMs: brief(f.sa),
      activityExecutionMs: brief(f.execA),
      outsideActivitiesMs: brief(f.outsideA),
      samples: f.samplesA,
    },
    workflow: {
      nonModelMs: brief(f.sb),
      activityExecutionMs: brief(f.execB),
      scheduleToStartMs: brief(f.queue),
      workflowTask: { waitMs: brief(f.wftWait), runMs: brief(f.wftRun), perStep: round(f.wftPerStep, 2) },
      outsideActivitiesMs: brief(f.outsideB),
      samples: f.samplesB,
      continueAsNewSteps: f.canSamples,
    },
    perActivityMs: f.perActivity.map((x) => ({ name: x.name, inProcess: brief(x.a), workflow: brief(x.b) })),
    modelCallMs: brief(f.model),
    ratioP50: round(f.sb.p50 / f.sa.p50, 3),
    ratioP95: round(f.sb.p95 / f.sa.p95, 3),
    overheadP50Ms: round(f.sb.p50 - f.sa.p50),
    floorPerStepMs: { twoActivities: floorBrief(floor.twoActivities), oneActivity: floorBrief(floor.oneActivity) },
  };
}

export async function benchStep(b: Bench): Promise<SectionOutput> {
  const { results, stability } = await repeatUntilStable(
    { capSeconds: b.repeatCapSeconds, log: b.log, label: 'step' },
    (run) => stepRun(b, run),
    (r) => ({ '(b) workflow p50': nonModelP50(r.b), '(a) in-process p50': nonModelP50(r.a) }),
  );
  // The figures: the last two runs' samples together (the pair that agreed; the only run when there was one).
  const used = lastTwo(results);
  const figures = stepFigures(used);
  logRuns(b, results);
  const runsUsed = used.map((r) => r.run).join(' and ');
  b.log(`[bench] step: ${stability.summary}; figures below from run${used.length > 1 ? 's' : ''} ${runsUsed}`);
  logFigures(b, figures);
  const activityP50 = (name: keyof ActivityTimes) => figures.perActivity.find((x) => x.name === name)?.a.p50 ?? 0;
  const floor = await stepFloor(b, activityP50('decide'), activityP50('observe') + activityP50('act'));
  logFloor(b, floor);
  return {
    name: 'step',
    rows: stepRows(stability, figures, floor),
    data: stepData(results, used, stability, figures, floor),
  };
}
