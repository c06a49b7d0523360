// The evaluation's HTML report: one self-contained page (no scripts, no external files) with the totals, the figures
// by site, level and tag, the LLM judge's figures, and one row per trial (with the judge's verdict and reasons when it
// judged the run) linking to its trajectory report and its workflow in the Temporal UI.
import type { EvalRecord } from './records';
import type { EvalResultsFile, Rate } from './results';

export interface ReportLinks {
  /** The trajectory report of a run (a relative path or URL), or null when there is none. */
  trajectory(taskId: string): string | null;
  /** The run's workflow in the Temporal UI, or null without a UI address. */
  temporal(taskId: string): string | null;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);

function rateTable(title: string, rates: Record<string, Rate>): string {
  const rows = Object.entries(rates);
  if (rows.length === 0) return '';
  const body = rows
    .map(
      ([k, r]) =>
        `<tr><td>${esc(k)}</td><td>${r.runs}</td><td>${r.scored}</td><td>${r.passed}</td><td>${pct(r.rate)}</td></tr>`,
    )
    .join('');
  return `<h2>By ${esc(title)}</h2><table><tr><th>${esc(title)}</th><th>runs</th><th>scored</th><th>passed</th><th>rate</th></tr>${body}</table>`;
}

function statusCell(r: EvalRecord): string {
  if (r.outcome === 'aborted') return '<span class="ab">aborted</span>';
  if (r.score === null) return '<span class="un">unscored</span>';
  return r.score >= 0.5 ? '<span class="ok">pass</span>' : '<span class="no">fail</span>';
}

/** The judge's cell: verifier, verdict (or the error) and its reasons. */
function judgeCell(r: EvalRecord): string {
  const j = r.judge;
  if (!j) return '';
  const verdict =
    j.score === null
      ? `<span class="un">no verdict (${esc(j.error ?? 'error')})</span>`
      : j.score >= 0.5
        ? `<span class="ok">pass</span> ${j.score}`
        : `<span class="no">fail</span> ${j.score}`;
  return `<b>${esc(j.verifier)}</b>: ${verdict}<br>${esc(j.reasoning)}`;
}

function judgeTable(results: EvalResultsFile): string {
  const j = results.summary.judge;
  if (!j || j.judged === 0) return '';
  const agree = j.withRules ? `${j.agreeWithRules} of ${j.withRules}` : '–';
  return (
    `<h2>LLM judge</h2><table><tr><th>runs judged</th><td>${j.judged}</td></tr>` +
    `<tr><th>judged a pass</th><td>${j.passed}</td></tr><tr><th>no verdict</th><td>${j.errors}</td></tr>` +
    `<tr><th>agrees with the rules</th><td>${agree}</td></tr></table>`
  );
}

function trialRow(r: EvalRecord, links: ReportLinks): string {
  const traj = links.trajectory(r.runId);
  const ui = links.temporal(r.runId);
  const linkCells = [traj ? `<a href="${esc(traj)}">trajectory</a>` : '', ui ? `<a href="${esc(ui)}">Temporal</a>` : '']
    .filter(Boolean)
    .join(' · ');
  const retries = r.attempts.length > 1 ? ` <small>(${r.attempts.length} attempts)</small>` : '';
  return (
    `<tr><td>${esc(r.taskId)}</td><td>${r.trial}</td><td>${statusCell(r)}</td><td>${esc(r.endReason)}${retries}</td>` +
    `<td>${r.steps}</td><td>${r.score ?? '–'}</td><td class="why">${esc(r.reasoning)}</td>` +
    `<td class="why">${judgeCell(r)}</td><td class="why">${esc(r.answer ?? '')}</td><td>${linkCells}</td></tr>`
  );
}

export function renderEvalReport(results: EvalResultsFile, links: ReportLinks): string {
  const s = results.summary;
  const budgets = Object.entries(s.stepBudgets)
    .map(([b, v]) => `<tr><td>≤ ${esc(b)} steps</td><td>${pct(v)}</td></tr>`)
    .join('');
  const rows = results.tasks.flatMap((t) => t.trials.map((r) => trialRow(r, links))).join('');
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>Evaluation ${esc(results.evalId)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2733}table{border-collapse:collapse;margin:8px 0 20px}
td,th{border:1px solid #d5dbe1;padding:4px 8px;text-align:left;vertical-align:top}th{background:#eef2f5}
.why{max-width:420px}.ok{color:#17803d;font-weight:600}.no{color:#b42318;font-weight:600}.ab{color:#8a5a00}.un{color:#667}
.big{font-size:20px}</style></head><body>
<h1>Evaluation ${esc(results.evalId)}</h1>
<p>Task set <code>${esc(results.taskSet)}</code> · ${esc(results.createdAt)}</p>
<p class="big">Success rate <b>${pct(s.successRate)}</b> (${s.passed} of ${s.scored} scored runs) · aborted ${s.aborted}` +
    ` (not counted) · unscored ${s.unscored}</p>
<table><tr><th>tasks</th><td>${s.tasks}</td></tr><tr><th>trials per task</th><td>${s.trials}</td></tr>
<tr><th>pass@${s.trials}</th><td>${pct(s.passAtK)}</td></tr><tr><th>mean score</th><td>${s.meanScore === null ? '–' : s.meanScore.toFixed(3)}</td></tr></table>
<h2>Within step budgets</h2><table>${budgets}</table>
${judgeTable(results)}${rateTable('site', s.bySite)}${rateTable('level', s.byLevel)}${rateTable('tag', s.byTag)}
<h2>Runs</h2><table><tr><th>task</th><th>trial</th><th>status</th><th>end</th><th>steps</th><th>score</th><th>reason</th><th>judge</th><th>answer</th><th>links</th></tr>
${rows}</table></body></html>
`
  );
}
