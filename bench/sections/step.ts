// Section 1, step time: per step, the non-model time (observe + act with settling + persistence + decide's own
// work = step wall time minus the model HTTP call) for (a) the same activities in a plain in-process loop without
// Temporal and (b) the real workflow on the dev server; their ratio and difference are the orchestration overhead.
// (a) runs twice, before and after (b), so a change in machine load during the section weighs on both sides.
import type { Bench } from '../context';
import { activityRecords, stepStarts } from '../history';
import type { ActivityRecord } from '../history';
import { runInProcess } from '../inproc';
import type { ActivityTimes } from '../inproc';
import { row } from '../report';
import type { SectionResult } from '../report';
import { staticEntries, writeScript } from '../scripts';
import { fmtMs, round, summarize, table } from '../stats';
import type { Summary } from '../stats';
import { LONG_STEPS, longWorkflowRun } from './long-run';

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
  const script = writeScript(b.scriptsDir, `static-${IN_PROCESS_STEPS}`, staticEntries(IN_PROCESS_STEPS));
  const runId = `inproc-${label}-${Date.now().toString(36)}`;
  b.log(`[bench] step (a${label}): ${IN_PROCESS_STEPS}-step task in a plain in-process loop (same activities)`);
  const a = await runInProcess(config, runtime.pool, await b.taskInput({ runId, script }));
  const starts = new Map(a.stepStarts.map((t, i) => [i + 1, t]));
  return samplesFrom(starts, timer.durations(runId))
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

export async function benchStep(b: Bench): Promise<Omit<SectionResult, 'seconds'>> {
  const { timer } = await b.model();
  const a1 = await inProcessRun(b, '1');
  b.log(`[bench] step (b): a ${LONG_STEPS}-step task through the workflow on the dev server`);
  const long = await longWorkflowRun(b);
  const a2 = await inProcessRun(b, '2');
  const samplesA = [...a1, ...a2];

  const canSteps = new Set(long.continuedAfterSteps);
  const allB = samplesFrom(stepStarts(long.runs), timer.durations(long.runId));
  // A step that ended with continue-as-new is reported on its own, not mixed into the steady state.
  const records = long.runs.flatMap((r) => activityRecords(r.events));
  const samplesB = workflowSamples(
    records,
    allB.filter((s) => !canSteps.has(s.step)),
  );
  const canSamples = allB.filter((s) => canSteps.has(s.step));

  const sum = (xs: Detailed[], f: (x: Detailed) => number) => summarize(xs.map(f));
  const sa = sum(samplesA, (s) => s.nonModelMs);
  const sb = sum(samplesB, (s) => s.nonModelMs);
  const model = sum([...samplesA, ...samplesB], (s) => s.modelMs);
  const line = (label: string, x: Summary) => [
    label,
    `${x.n}`,
    fmtMs(x.p50),
    fmtMs(x.p95),
    fmtMs(x.mean),
    fmtMs(x.max),
  ];
  const perActivity = (['observe', 'decide', 'act'] as const).map((name) => ({
    name,
    a: sum(samplesA, (s) => s.exec[name]),
    b: sum(samplesB, (s) => s.exec[name]),
  }));
  const execA = sum(samplesA, (s) => total(s.exec));
  const execB = sum(samplesB, (s) => total(s.exec));
  const outsideA = sum(samplesA, (s) => s.wallMs - total(s.exec));
  const outsideB = sum(samplesB, (s) => s.wallMs - total(s.exec));
  const queue = sum(samplesB, (s) => s.queueMs);
  b.log(
    table([
      ['per step (ms)', 'n', 'p50', 'p95', 'mean', 'max'],
      line('non-model, (a) in-process loop', sa),
      line('non-model, (b) Temporal workflow', sb),
      line('model HTTP call (a and b)', model),
      line('activities, (a)', execA),
      line('activities, (b)', execB),
      ...perActivity.flatMap((x) => [line(`  ${x.name}, (a)`, x.a), line(`  ${x.name}, (b)`, x.b)]),
      line('outside activities, (a)', outsideA),
      line('outside activities, (b)', outsideB),
      line('  of which schedule-to-start, (b)', queue),
    ]),
  );

  const ratio50 = sb.p50 / sa.p50;
  const ratio95 = sb.p95 / sa.p95;
  const over50 = sb.p50 - sa.p50;
  const rows = [
    row('step', 'non-model step p50, (b) workflow', fmtMs(sb.p50), '≤ 300 ms', sb.p50 <= 300),
    row('step', 'non-model step p50 / p95, (a) in-process', `${fmtMs(sa.p50)} / ${fmtMs(sa.p95)}`),
    row('step', 'non-model step p95, (b) workflow', fmtMs(sb.p95)),
    row(
      'step',
      'overhead ratio b/a (p50; p95)',
      `${ratio50.toFixed(2)}; ${ratio95.toFixed(2)}`,
      '≤ 1.15',
      ratio50 <= 1.15,
    ),
    row('step', 'overhead per step b−a (p50)', fmtMs(over50), '≤ 30 ms', over50 <= 30),
    row('step', 'time outside activities per step, (b) p50', fmtMs(outsideB.p50)),
    ...canSamples.map((s) => row('step', `step ${s.step} (ended in continue-as-new), non-model`, fmtMs(s.nonModelMs))),
  ];
  return {
    name: 'step',
    rows,
    data: {
      workflowSteps: LONG_STEPS,
      inProcessSteps: [IN_PROCESS_STEPS, IN_PROCESS_STEPS],
      warmupStepsExcluded: WARMUP_STEPS,
      inProcess: {
        nonModelMs: brief(sa),
        activityExecutionMs: brief(execA),
        outsideActivitiesMs: brief(outsideA),
        samples: samplesA,
      },
      workflow: {
        nonModelMs: brief(sb),
        activityExecutionMs: brief(execB),
        scheduleToStartMs: brief(queue),
        outsideActivitiesMs: brief(outsideB),
        samples: samplesB,
        continueAsNewSteps: canSamples,
      },
      perActivityMs: perActivity.map((x) => ({ name: x.name, inProcess: brief(x.a), workflow: brief(x.b) })),
      modelCallMs: brief(model),
      ratioP50: round(ratio50, 3),
      ratioP95: round(ratio95, 3),
      overheadP50Ms: round(over50),
    },
  };
}
