// A run as plain text, the report `cua show` prints and the MCP server's report resource returns: the instruction,
// where the run is, its status and answer, its structured output (docs/output.md), usage, a replay's summary, then the
// step table. A decision superseded after a lost worker is listed under its step's number, marked, above the decision
// that replaced it; an invalid model output is marked. A desktop run is listed one line per tool call under its step's number, with the window list in place of
// the URL. A model call made inside a step's tool gets a line under its step, and so does an approval question: what
// was held and how the person decided.
import { outputLine } from '../agent/output-extract';
import type { RunRecord } from '../trajectory/reader';
import { stepSummaries } from '../trajectory/steps';
import type { StepSummary } from '../trajectory/steps';
import { usageLine, usageTotals } from '../trajectory/usage';
import { approvalsByStep } from './approvals';
import type { ViewApproval } from './approvals';
import { environmentOf } from './desktop';
import { replaySummary, subCallLine } from './lines';
import { buildTrajectoryView } from './model';
import { replayView } from './run-settings';
import type { TrajectoryView, ViewDecision } from './view';

/** The run's request journal (src/browser/request-journal.ts), read for what approval questions held. */
export const REQUEST_JOURNAL = 'requests.jsonl';

const SUPERSEDED_REMARK = 'effect unknown, worker lost; re-decided below';

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

function desktopTable(run: RunRecord): string[] {
  const view = buildTrajectoryView(run, () => undefined);
  const calls = view.steps.reduce((n, s) => n + s.calls.length, 0);
  const superseded = view.steps.reduce((n, s) => n + s.supersededDecisions.length, 0);
  const more = superseded ? ` (+${superseded} superseded step${superseded === 1 ? '' : 's'})` : '';
  return [`steps: ${view.steps.length}, ${calls} tool calls${more}`, ...desktopLines(view)];
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

function browserTable(rows: readonly StepSummary[], approvals: readonly (ViewApproval | null)[]): string[] {
  const superseded = rows.filter((r) => r.superseded).length;
  const more = superseded ? ` (+${superseded} superseded decision${superseded === 1 ? '' : 's'})` : '';
  return [
    `steps: ${rows.length - superseded}${more}`,
    ...rows.flatMap((r, i) => [stepLine(r), ...subCallLines(r), ...approvalLines(approvals[i])]),
  ];
}

/** The run as text, one entry a line; `location` is where it lives (a folder path or an s3:// URL). */
export function runTextLines(run: RunRecord, journal: string, location: string): string[] {
  const replay = replayView(run);
  const table =
    environmentOf(run) === 'desktop'
      ? desktopTable(run)
      : browserTable(stepSummaries(run.events), approvalsByStep(run.events, journal));
  return [
    run.task.instruction,
    `run folder: ${location}`,
    `status: ${run.status}${run.outcome ? ` · answer: ${run.outcome.answer}` : ''}`,
    ...[outputLine(run.output, run.outputError)].filter((l): l is string => l !== undefined),
    `usage: ${usageLine(usageTotals(run.events, run.verification))}`,
    ...(replay ? [replaySummary(replay)] : []),
    ...table,
    ...run.warnings.map((w) => `warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`),
  ];
}
