// Section 4, history growth: Temporal history events and bytes per step of the long task (protobuf-encoded, as the
// server stores them), the step at which it continued as new, and where Temporal's default thresholds would put it.
import type { Bench } from '../context';
import { DEFAULT_SUGGEST_CAN_BYTES, DEFAULT_SUGGEST_CAN_EVENTS, SUGGEST_CAN_EVENTS } from '../context';
import { eventBytes, perStepHistory } from '../history';
import { row } from '../report';
import type { SectionOutput } from '../report';
import { fmtBytes, round, summarize, table } from '../stats';
import { LONG_STEPS, longWorkflowRun } from './long-run';

const TARGET_BYTES_PER_STEP = 4 * 1024;

export async function benchHistory(b: Bench): Promise<SectionOutput> {
  const long = await longWorkflowRun(b);
  const first = long.runs[0];
  if (!first) throw new Error('the long task has no history');
  // Steady-state steps: not the first (it opens the browser) and not the last of a run (continue-as-new / finish).
  const steps = long.runs.flatMap((run) => perStepHistory(run).slice(1, -1));
  const events = summarize(steps.map((s) => s.events));
  const bytes = summarize(steps.map((s) => s.bytes));
  const firstStepBytes = steps[0]?.bytes ?? Number.NaN;
  const lastStepBytes = steps[steps.length - 1]?.bytes ?? Number.NaN;
  const continued = long.runs[1];
  const carriedBytes = continued?.events[0] ? eventBytes(continued.events[0]) : null;
  const observed = long.continuedAfterSteps[0] ?? null;
  // Where Temporal's default suggestion (4096 events or 4 MB) would come, at this per-step rate.
  const base = first.events.length - perStepHistory(first).reduce((s, p) => s + p.events, 0);
  const projectedByCount = Math.floor((DEFAULT_SUGGEST_CAN_EVENTS - base) / events.p50);
  const projectedBySize = Math.floor(DEFAULT_SUGGEST_CAN_BYTES / bytes.p50);
  b.log(
    table([
      ['run', 'events', 'bytes', 'steps', 'continued as new'],
      ...long.runs.map((r, i) => [
        `${i + 1}`,
        `${r.events.length}`,
        fmtBytes(r.bytes),
        `${perStepHistory(r).length}`,
        r.continuedAs ? `yes, after step ${long.continuedAfterSteps[i]}` : 'no',
      ]),
    ]),
  );
  b.log(
    `[bench] history: per steady step ${events.p50} events, ${fmtBytes(bytes.p50)} (max ${fmtBytes(bytes.max)}); ` +
      `first run ${first.events.length} events / ${fmtBytes(first.bytes)}`,
  );
  const rows = [
    row(
      'history',
      'history per step (p50; max)',
      `${fmtBytes(bytes.p50)}; ${fmtBytes(bytes.max)}`,
      '≤ 4 KB',
      bytes.max <= TARGET_BYTES_PER_STEP,
    ),
    row('history', 'history events per step (p50)', `${events.p50}`),
    row(
      'history',
      `continue-as-new (server suggests at ${SUGGEST_CAN_EVENTS} events here)`,
      observed === null ? 'not observed' : `after step ${observed} (${first.events.length} events)`,
      'observed',
      observed !== null,
    ),
    row(
      'history',
      'projected CAN step at Temporal defaults',
      `step ≈ ${Math.min(projectedByCount, projectedBySize)} (${DEFAULT_SUGGEST_CAN_EVENTS} events; 4 MB → step ${projectedBySize})`,
    ),
  ];
  return {
    name: 'history',
    rows:
      carriedBytes === null
        ? rows
        : [...rows, row('history', 'continued run start event (input + carried state)', fmtBytes(carriedBytes))],
    data: {
      steps: LONG_STEPS,
      result: long.result,
      runs: long.runs.map((r) => ({
        runId: r.temporalRunId,
        events: r.events.length,
        bytes: r.bytes,
        continuedAs: r.continuedAs,
      })),
      perStep: { events: events, bytes: { ...bytes, p50: round(bytes.p50), mean: round(bytes.mean) } },
      perStepDetail: long.runs.map((r) => perStepHistory(r)),
      firstSteadyStepBytes: firstStepBytes,
      lastSteadyStepBytes: lastStepBytes,
      suggestContinueAsNewEvents: SUGGEST_CAN_EVENTS,
      continuedAfterSteps: long.continuedAfterSteps,
      carriedStartEventBytes: carriedBytes,
      projectedStepAtDefaults: { byCount: projectedByCount, bySize: projectedBySize },
    },
  };
}
