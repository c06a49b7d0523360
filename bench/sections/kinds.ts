// Section kinds: a step's non-model time by the kind of its action (click, type of 12 and of 200 characters, a key,
// a key that navigates, scroll, visit_url, back, read_page) on the hotel site, (a) in a plain in-process loop and
// (b) through the workflow on the dev server, side by side, each broken down by where the act's time went
// (ActResult.timings: element record, action, settle, records, screenshot, save, page checkpoint, next observation)
// and, for (b), the time outside activities (the round trips through the server). The first cycle warms up and is
// left out; a step that ended in continue-as-new is left out too.
import type { ActTimings } from '../../src/contract/activities';
import type { TaskResult } from '../../src/contract/task';
import type { Bench } from '../context';
import { activityRecords, continuedAfterSteps, fetchChain, stepStarts } from '../history';
import type { ActivityRecord } from '../history';
import { runInProcess } from '../inproc';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { writeScript } from '../scripts';
import type { Entry } from '../scripts';
import { fmtMs, round, summarize, table } from '../stats';
import { samplesFrom } from './step';

/** Cycles of the kinds in one run; the first warms up. */
const CYCLES = 5;

const LONG_TEXT = 'Lisbon, Porto, Coimbra and the Algarve coast: a fortnight in spring. '.repeat(3).slice(0, 200);

/** One cycle on the hotel site (1440×900; the model's points in 1000×1000): each step's kind and its action. */
function cycle(siteUrl: string): [string, Entry][] {
  const act = (thoughts: string, action: Record<string, unknown>): Entry => ({ thoughts, action });
  return [
    ['visit_url', act('Open the home page.', { action: 'visit_url', url: `${siteUrl}/` })],
    ['click', act('Click the search box.', { action: 'left_click', coordinate: [500, 200] })],
    ['type 200', act('Type a long text.', { action: 'type', text: LONG_TEXT, delete_existing_text: true })],
    ['type 12', act('Type the cities.', { action: 'type', text: 'Lisbon Porto', delete_existing_text: true })],
    ['key', act('Move to the button.', { action: 'key', keys: ['Tab'] })],
    ['click', act('Back to the search box.', { action: 'left_click', coordinate: [500, 200] })],
    ['key (navigates)', act('Search.', { action: 'key', keys: ['Enter'] })],
    ['scroll', act('Scroll down.', { action: 'scroll', pixels: -300 })],
    ['scroll', act('Scroll back up.', { action: 'scroll', pixels: 300 })],
    ['back', act('Go back.', { action: 'history_back' })],
    ['read_page', act('Read the page.', { action: 'read_page_answer_question', question: 'What can I search?' })],
  ];
}

export const KINDS = [
  'click',
  'type 12',
  'type 200',
  'key',
  'key (navigates)',
  'scroll',
  'visit_url',
  'back',
  'read_page',
];

/** Targets of the workflow's p50 per kind (ms); every kind but type 200 and read_page: p95 ≤ 400 ms. */
const P50_TARGETS: Record<string, number> = {
  click: 300,
  'type 12': 250,
  'key (navigates)': 300,
  visit_url: 300,
  scroll: 250,
};
const P95_TARGET = 400;
const NO_P95_TARGET = new Set(['type 200', 'read_page']);

interface KindSample {
  kind: string;
  step: number;
  nonModelMs: number;
  /** Wall time minus the activities' execution: the round trips through the server ((b); about 0 for (a)). */
  outsideMs: number;
  timings: ActTimings | undefined;
}

/** The script: CYCLES cycles, then terminate; and each step's kind. */
function kindScript(b: Bench, siteUrl: string): { script: string; kinds: string[] } {
  const steps = Array.from({ length: CYCLES }, () => cycle(siteUrl)).flat();
  const entries = [...steps.map(([, e]) => e), { thoughts: 'Done.', action: { action: 'terminate', answer: 'done' } }];
  return { script: writeScript(b.scriptsDir, 'kinds', entries), kinds: steps.map(([k]) => k) };
}

const warm = (kinds: string[]) => (s: { step: number }) => s.step > kinds.length / CYCLES;

async function inProcessKinds(b: Bench, siteUrl: string): Promise<KindSample[]> {
  const { config, runtime } = await b.temporal();
  const { timer } = await b.model();
  const { script, kinds } = kindScript(b, siteUrl);
  const taskId = `kinds-a-${Date.now().toString(36)}`;
  b.log(`[bench] kinds (a): ${kinds.length} steps in a plain in-process loop`);
  const a = await runInProcess(config, runtime.pool, await b.taskInput({ taskId, script }));
  const starts = new Map(a.stepStarts.map((t, i) => [i + 1, t]));
  return samplesFrom(starts, timer.durations(taskId))
    .filter((s) => s.step <= kinds.length)
    .filter(warm(kinds))
    .map((s) => {
      const exec = a.activityMs[s.step - 1];
      const activities = exec ? exec.observe + exec.decide + exec.act : s.wallMs;
      return {
        kind: kinds[s.step - 1] ?? '?',
        step: s.step,
        nonModelMs: s.nonModelMs,
        outsideMs: round(s.wallMs - activities),
        timings: a.actTimings[s.step - 1],
      };
    });
}

async function workflowKinds(b: Bench, siteUrl: string): Promise<KindSample[]> {
  const { client } = await b.temporal();
  const { timer } = await b.model();
  const { script, kinds } = kindScript(b, siteUrl);
  const taskId = `kinds-b-${Date.now().toString(36)}`;
  b.log(`[bench] kinds (b): ${kinds.length} steps through the workflow on the dev server`);
  const handle = await b.startTask({ taskId, script });
  const result = (await handle.result()) as TaskResult;
  if (result.status !== 'complete') throw new Error(`the kinds task ended ${result.status}: ${result.error}`);
  const runs = await fetchChain(client, taskId, handle.firstExecutionRunId);
  const continued = new Set(continuedAfterSteps(runs));
  const records = runs.flatMap((r) => activityRecords(r.events));
  const ofStep = (step: number): ActivityRecord[] =>
    records.filter((r) => r.step === step && r.startedAt !== null && r.closedAt !== null);
  return samplesFrom(stepStarts(runs), timer.durations(taskId))
    .filter((s) => s.step <= kinds.length && !continued.has(s.step))
    .filter(warm(kinds))
    .map((s) => {
      const own = ofStep(s.step);
      const activities = own.reduce((sum, r) => sum + ((r.closedAt as number) - (r.startedAt as number)), 0);
      const act = own.find((r) => r.name === 'act' && r.outcome === 'completed');
      return {
        kind: kinds[s.step - 1] ?? '?',
        step: s.step,
        nonModelMs: s.nonModelMs,
        outsideMs: round(s.wallMs - activities),
        timings: (act?.result as { timings?: ActTimings } | undefined)?.timings,
      };
    });
}

const PARTS: (keyof ActTimings)[] = [
  'element',
  'action',
  'settle',
  'record',
  'screenshotSettle',
  'screenshot',
  'save',
  'checkpoint',
  'next',
];

/** The median of each part of the act over the samples (parts no sample has are left out). */
function medianParts(samples: KindSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of PARTS) {
    const values = samples.flatMap((s) => (s.timings?.[part] === undefined ? [] : [s.timings[part] as number]));
    if (values.length) out[part] = round(summarize(values).p50);
  }
  out.outside = round(summarize(samples.map((s) => s.outsideMs)).p50);
  return out;
}

interface KindFigures {
  kind: string;
  a: { n: number; p50: number; p95: number; parts: Record<string, number> };
  b: { n: number; p50: number; p95: number; parts: Record<string, number> };
}

function figuresOf(a: KindSample[], b: KindSample[]): KindFigures[] {
  const side = (xs: KindSample[]) => {
    const s = summarize(xs.map((x) => x.nonModelMs));
    return { n: s.n, p50: round(s.p50), p95: round(s.p95), parts: medianParts(xs) };
  };
  return KINDS.map((kind) => ({
    kind,
    a: side(a.filter((x) => x.kind === kind)),
    b: side(b.filter((x) => x.kind === kind)),
  }));
}

function logFigures(bench: Bench, figures: KindFigures[]): void {
  bench.log(
    table([
      ['kind (non-model ms)', '(a) n', '(a) p50', '(a) p95', '(b) n', '(b) p50', '(b) p95', 'ratio b/a p50'],
      ...figures.map((f) => [
        f.kind,
        `${f.a.n}`,
        fmtMs(f.a.p50),
        fmtMs(f.a.p95),
        `${f.b.n}`,
        fmtMs(f.b.p50),
        fmtMs(f.b.p95),
        (f.b.p50 / f.a.p50).toFixed(2),
      ]),
    ]),
  );
  const parts = [...PARTS, 'outside'] as string[];
  bench.log('[bench] kinds (b): where the time goes, median ms per part (outside: round trips through the server)');
  bench.log(
    table([
      ['kind', ...parts],
      ...figures.map((f) => [f.kind, ...parts.map((p) => (f.b.parts[p] === undefined ? '—' : `${f.b.parts[p]}`))]),
    ]),
  );
}

function kindRows(figures: KindFigures[]): Row[] {
  const rows: Row[] = [];
  for (const f of figures) {
    const p50Target = P50_TARGETS[f.kind];
    const measured = `${fmtMs(f.b.p50)} / ${fmtMs(f.b.p95)} (plain loop ${fmtMs(f.a.p50)} / ${fmtMs(f.a.p95)})`;
    const metric = `${f.kind}: non-model step p50 / p95, (b) workflow`;
    if (p50Target !== undefined)
      rows.push(row('kinds', metric, measured, `p50 ≤ ${p50Target} ms`, f.b.p50 <= p50Target));
    else rows.push(row('kinds', metric, measured));
    if (!NO_P95_TARGET.has(f.kind)) {
      rows.push(
        row('kinds', `${f.kind}: p95, (b) workflow`, fmtMs(f.b.p95), `≤ ${P95_TARGET} ms`, f.b.p95 <= P95_TARGET),
      );
    }
  }
  return rows;
}

export async function benchKinds(b: Bench): Promise<SectionOutput> {
  const site = await b.site();
  const a = await inProcessKinds(b, site.url);
  const w = await workflowKinds(b, site.url);
  const figures = figuresOf(a, w);
  logFigures(b, figures);
  return {
    name: 'kinds',
    rows: kindRows(figures),
    data: { cycles: CYCLES, warmupCycles: 1, figures, samples: { a, b: w } },
  };
}
