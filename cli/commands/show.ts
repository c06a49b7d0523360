// `cua show <id|run-folder>`: the step table of a run, read from its run folder. A decision superseded after a lost
// worker is listed under its step's number, marked, above the decision that replaced it; an invalid output is marked.
// A desktop run is listed one line per tool call under its step's number, with the window list in place of the URL.
// A model call made inside a step's tool (read_page_answer_question) gets a line under its step. A replay run
// (`cua replay`) says which run it replays and how many steps were replayed, healed or decided by the model. A
// question the runtime asked about requests an approval rule held gets a line under its step: what was held and how
// the person decided (src/viewer/approvals.ts, read with the run's request journal).
// The run is read from a folder path, or by id from the configured run store (config `store`: folder or S3). The id of
// a best of N parent (`cua fork --branches K`) shows its branches compared instead.
import fs from 'node:fs';
import path from 'node:path';
import type { readRun } from '../../src/trajectory/reader';
import { readRunFromStore } from '../../src/trajectory/reader';
import { isValidTaskId } from '../../src/trajectory/layout';
import { openRunStore } from '../../src/trajectory/open-store';
import { LocalRunStore } from '../../src/trajectory/store';
import type { RunStore } from '../../src/trajectory/store';
import type { Config } from '../../src/runtime/config';
import { stepSummaries } from '../../src/trajectory/steps';
import { usageLine, usageTotals } from '../../src/trajectory/usage';
import type { StepSummary } from '../../src/trajectory/steps';
import { approvalsByStep } from '../../src/viewer/approvals';
import type { ViewApproval } from '../../src/viewer/approvals';
import { environmentOf } from '../../src/viewer/desktop';
import { replaySummary, subCallLine } from '../../src/viewer/lines';
import { buildTrajectoryView } from '../../src/viewer/model';
import { replayView } from '../../src/viewer/run-settings';
import type { TrajectoryView, ViewDecision } from '../../src/viewer/view';
import { loadConfig } from '../../src/runtime/config';
import { outputLine } from '../../src/agent/output-extract';
import { one, parse } from '../args';
import { TaskError } from '../../client/tasks';
import { readBranches, showBranches } from './branches';

export const SHOW_USAGE = 'npx cua show <id|run-folder> [--json] [--config FILE]';

export function resolveRunFolder(idOrPath: string, runsDir: string): string {
  const candidates = [idOrPath, path.join(runsDir, idOrPath)];
  const found = candidates.find((c) => fs.existsSync(path.join(c, 'task.json')));
  if (!found)
    throw new TaskError(
      `no run folder for '${idOrPath}' (looked in ${candidates.map((c) => path.resolve(c)).join(' and ')})`,
    );
  return path.resolve(found);
}

export interface ResolvedRun {
  store: RunStore;
  taskId: string;
  /** Where it lives: a folder path, or an s3:// URL. */
  location: string;
  /** The folder, when the run is in a local one. */
  folder?: string;
}

/**
 * A run by folder path, or by id in the configured store: a folder given as a path wins; with an S3 store, an id is
 * looked up in the bucket; otherwise under `runsDir`.
 */
export async function resolveRun(idOrPath: string, config: Pick<Config, 'store' | 'runsDir'>): Promise<ResolvedRun> {
  if (config.store.kind === 's3' && isValidTaskId(idOrPath) && !fs.existsSync(path.join(idOrPath, 'task.json'))) {
    const store = openRunStore(config);
    if (await store.exists(`${idOrPath}/task.json`)) {
      return { store, taskId: idOrPath, location: store.describe(idOrPath) };
    }
    const local = path.join(config.runsDir, idOrPath);
    if (!fs.existsSync(path.join(local, 'task.json'))) {
      throw new TaskError(`no run '${idOrPath}' (looked in ${store.describe(idOrPath)} and ${path.resolve(idOrPath)})`);
    }
  }
  const folder = resolveRunFolder(idOrPath, config.runsDir);
  const taskId = path.basename(folder);
  return { store: new LocalRunStore(path.dirname(folder)), taskId, location: folder, folder };
}

/** Best of N's record when `id` names a parent (no run folder of its own, a branches.json in the store). */
export async function bestOfIn(config: Config, id: string) {
  if (!isValidTaskId(id) || fs.existsSync(path.join(id, 'task.json'))) return undefined;
  let store: RunStore;
  try {
    store = openRunStore(config);
  } catch {
    return undefined;
  }
  const record = await readBranches(store, id);
  return record ? { store, record } : undefined;
}

const oneLine = (text: string, width: number) => text.replace(/\s+/g, ' ').trim().slice(0, width);

/** What the last column says: a superseded decision's unknown effect, an invalid output's error, else the thoughts. */
function remark(row: StepSummary): string {
  if (row.superseded) return SUPERSEDED_REMARK;
  if (row.invalid !== null) return `invalid output: ${oneLine(row.invalid, 100)}`;
  return oneLine(row.thoughts, 70);
}

/** One line of the step table, e.g. `   7  (superseded) left_click   http://…   effect unknown, …`. */
export function stepLine(row: StepSummary): string {
  const action = `${row.superseded ? '(superseded) ' : ''}${row.action_name}${row.invalid !== null ? ' (invalid)' : ''}${row.replay ? ` (${row.replay})` : ''}`;
  return `${String(row.step).padStart(4)}  ${action.padEnd(26)} ${row.url.slice(0, 50).padEnd(50)} ${remark(row)}`;
}

/** The run's request journal (src/browser/request-journal.ts), read for what approval questions held. */
const REQUEST_JOURNAL = 'requests.jsonl';

const SUPERSEDED_REMARK = 'effect unknown, worker lost; re-decided below';

/** What the last column says for a desktop call: the step's mark or thoughts on its first call, else its error. */
function callRemark(decision: ViewDecision, call: number, observation: string): string {
  if (call > 0) return oneLine(observation.split('\n').find((l) => l.startsWith('error: ')) ?? '', 70);
  if (decision.superseded) return SUPERSEDED_REMARK;
  if (decision.invalid !== null) return `invalid output: ${oneLine(decision.invalid, 100)}`;
  return oneLine(decision.thoughts, 70);
}

/** A column of the desktop table: one line, cut with an ellipsis to `width`, padded. */
function cell(text: string, width: number): string {
  const line = oneLine(text, Number.MAX_SAFE_INTEGER);
  return (line.length > width ? `${line.slice(0, width - 1)}…` : line).padEnd(width);
}

/** The lines of a desktop step, one per call, e.g. `   2  click "the OK button"   xterm | Mousepad   I will …`. */
function stepLines(decision: ViewDecision): string[] {
  return decision.calls.map((call, i) => {
    const marks = `${i === 0 && decision.superseded ? '(superseded) ' : ''}${i > 0 ? '+ ' : ''}`;
    const what = cell(`${marks}${call.summary}${decision.invalid !== null ? ' (invalid)' : ''}`, 46);
    const windows = cell(i === 0 ? decision.windows : '', 34);
    const remark = callRemark(decision, i, call.observation);
    return `${String(decision.number).padStart(4)}  ${what} ${windows} ${remark}`.trimEnd();
  });
}

/** The step table of a desktop run: superseded steps above the step that re-decided them. */
export function desktopLines(view: TrajectoryView): string[] {
  return view.steps.flatMap((step) => [...step.supersededDecisions, step].flatMap(stepLines));
}

function desktopTable(run: Awaited<ReturnType<typeof readRun>>): string[] {
  const view = buildTrajectoryView(run, () => undefined);
  const calls = view.steps.reduce((n, s) => n + s.calls.length, 0);
  const superseded = view.steps.reduce((n, s) => n + s.supersededDecisions.length, 0);
  const more = superseded ? ` (+${superseded} superseded step${superseded === 1 ? '' : 's'})` : '';
  return [`steps: ${view.steps.length}, ${calls} tool calls${more}`, ...desktopLines(view)];
}

export async function showCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: 'boolean' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    SHOW_USAGE,
  );
  if (values.help) return (console.log(`usage: ${SHOW_USAGE}`), 0);
  const idOrPath = one(positionals, 'task id or run folder', SHOW_USAGE);
  const config = loadConfig({ file: values.config });
  const branches = await bestOfIn(config, idOrPath);
  if (branches) return (await showBranches(branches.store, branches.record, !!values.json), 0);
  const found = await resolveRun(idOrPath, config);
  const run = await readRunFromStore(found.store, found.taskId);
  const dir = found.location;
  const journal = (await found.store.readText(`${found.taskId}/${REQUEST_JOURNAL}`).catch(() => undefined)) ?? '';
  const approvals = approvalsByStep(run.events, journal);
  const rows = stepSummaries(run.events);
  const replay = replayView(run);
  if (values.json) {
    const { status, outcome, warnings } = run;
    const usage = usageTotals(run.events, run.verification);
    const steps = rows.map((r, i) => (approvals[i] ? { ...r, approval: approvals[i] } : r));
    const output = run.output !== undefined ? { output: run.output, outputError: run.outputError ?? null } : {};
    console.log(
      JSON.stringify({ dir, status, outcome, ...output, usage, steps, warnings, ...(replay ? { replay } : {}) }),
    );
    return 0;
  }
  console.log(`${run.task.instruction}`);
  console.log(`run folder: ${dir}`);
  console.log(`status: ${run.status}${run.outcome ? ` · answer: ${run.outcome.answer}` : ''}`);
  const output = outputLine(run.output, run.outputError);
  if (output) console.log(output);
  console.log(`usage: ${usageLine(usageTotals(run.events, run.verification))}`);
  if (replay) console.log(replaySummary(replay));
  if (environmentOf(run) === 'desktop') {
    for (const line of desktopTable(run)) console.log(line);
  } else {
    browserTable(rows, approvals);
  }
  for (const w of run.warnings) console.log(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
  return 0;
}

/** The lines under a step for the model calls its tool made, e.g. `        model call: m · 1,204 … ms → It says …`. */
export function subCallLines(row: StepSummary): string[] {
  return row.sub_calls.map((c) => {
    const outcome = c.error ? `error: ${c.error}` : c.reply;
    return `${' '.repeat(6)}model call: ${subCallLine(c)} → ${oneLine(outcome, 80)}`;
  });
}

/** The line under an approval question's step: what was held and how the person decided. */
export function approvalLines(approval: ViewApproval | null | undefined): string[] {
  return approval ? [`${' '.repeat(6)}${approval.line}`] : [];
}

function browserTable(rows: readonly StepSummary[], approvals: readonly (ViewApproval | null)[]): void {
  const superseded = rows.filter((r) => r.superseded).length;
  const more = superseded ? ` (+${superseded} superseded decision${superseded === 1 ? '' : 's'})` : '';
  console.log(`steps: ${rows.length - superseded}${more}`);
  rows.forEach((r, i) => {
    for (const line of [stepLine(r), ...subCallLines(r), ...approvalLines(approvals[i])]) console.log(line);
  });
}
