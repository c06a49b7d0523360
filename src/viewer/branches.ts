// Best of N compared (`cua show <parent id>`, `cua view <parent id>`, and what `cua fork --branches` prints): each
// branch's state, end, steps (and how many it decided itself), score, tokens and cost, and the winner. Tokens and
// cost are what its own model calls recorded (decisions and the calls inside tools; inherited steps are the
// source's); the cost is shown when its endpoint has a price (models.<name>.price). Pure: the events come in.
import type { BranchesRecord, BranchRecord } from '../eval/branches';
import type { Event } from '../trajectory/schema';
import { escapeHtml } from './markup';
import { dollars, usageTotals } from '../trajectory/usage';

export interface BranchStats {
  /** Steps the branch decided itself (its own actions, not the inherited ones). */
  ownSteps: number;
  /** Model calls it made (decisions and calls inside tools). */
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** US dollars of its calls that had a price (usage.ts); null when none had one. */
  costUsd: number | null;
  /** The newest screenshot of its run folder (run-relative path), for the report. */
  lastScreenshot: string | null;
}

const isInherited = (e: Event) => !!(e.metadata as Record<string, unknown> | undefined)?.['inherited_from'];

/** What a branch's own steps cost in model calls, tokens and dollars (usage.ts), from its run folder's events. */
export function branchStats(events: readonly Event[]): BranchStats {
  const own = events.filter((e) => e.type !== 'action' || !isInherited(e));
  const t = usageTotals(own);
  let lastScreenshot: string | null = null;
  for (const e of events) {
    if (e.type === 'observation' && e.observation_type === 'environment' && e.screenshot_path) {
      lastScreenshot = e.screenshot_path;
    }
  }
  return {
    ownSteps: own.filter((e) => e.type === 'action').length,
    calls: t.calls,
    promptTokens: t.promptTokens,
    completionTokens: t.completionTokens,
    costUsd: t.unpricedCalls === t.calls ? null : t.costUsd,
    lastScreenshot,
  };
}

const count = (n: number) => n.toLocaleString('en-US');
const oneLine = (text: string, width: number) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
};

/** What a branch's last column says: its score's reasoning, else its answer. */
const remarkOf = (b: BranchRecord) => b.reasoning ?? (b.answer !== null ? `answer: ${b.answer}` : '');

function scoreText(b: BranchRecord): string {
  if (b.score === null) return '–';
  return `${b.score}${b.scoredBy === 'judge' ? ' (judge)' : ''}`;
}

function tokensText(s: BranchStats | undefined): string {
  if (!s) return '?';
  if (s.calls === 0) return '0';
  const cost = s.costUsd === null ? '' : ` ${dollars(s.costUsd)}`;
  return `${count(s.promptTokens + s.completionTokens)} (${s.calls} calls)${cost}`;
}

/** The comparison as terminal lines: a head, one line per branch (the winner starred), and the verdict. */
export function branchesLines(record: BranchesRecord, stats: ReadonlyMap<string, BranchStats>): string[] {
  const { source, branches } = record;
  const lines = [
    `best of ${branches.length}: forks of ${source.runId} at step ${source.step}: ${oneLine(record.instruction, 80)}`,
    `state: ${record.state}${record.cancelRest ? ' (the first to pass cancels the rest)' : ''}`,
    `   #  ${'branch'.padEnd(40)} ${'state'.padEnd(9)} ${'end'.padEnd(14)} ${'steps'.padStart(5)} ${'own'.padStart(4)}  ${'score'.padEnd(11)} ${'tokens'.padEnd(20)} remark`,
  ];
  for (const b of branches) {
    const s = stats.get(b.runId);
    const mark = record.winner === b.runId ? '*' : ' ';
    lines.push(
      `${mark}${String(b.index).padStart(3)}  ${oneLine(b.runId, 40).padEnd(40)} ${b.state.padEnd(9)} ` +
        `${(b.endReason ?? '').padEnd(14)} ${String(b.steps ?? '').padStart(5)} ${String(s?.ownSteps ?? '').padStart(4)}  ` +
        `${scoreText(b).padEnd(11)} ${tokensText(s).padEnd(20)} ${oneLine(remarkOf(b), 70)}`.trimEnd(),
    );
    const what = [b.model ? `model ${b.model}` : '', b.hint ? `hint "${oneLine(b.hint, 60)}"` : ''].filter(Boolean);
    if (what.length) lines.push(`      ${what.join(' · ')}`);
  }
  lines.push(`${record.winner ? 'winner' : 'verdict'}: ${record.verdict}`);
  return lines;
}

/** The comparison as a self-contained HTML page: the table, and each branch's last screenshot with a link to its report. */
export function branchesHtml(
  record: BranchesRecord,
  stats: ReadonlyMap<string, BranchStats>,
  shots: ReadonlyMap<string, string>,
  reportHref: (taskId: string) => string | null,
): string {
  const e = escapeHtml;
  const rows = record.branches
    .map((b) => {
      const s = stats.get(b.runId);
      const href = reportHref(b.runId);
      const name = href ? `<a href="${e(href)}">${e(b.runId)}</a>` : e(b.runId);
      const won = record.winner === b.runId;
      return (
        `<tr${won ? ' class="winner"' : ''}><td>${b.index}${won ? ' ★' : ''}</td><td>${name}` +
        `${b.model || b.hint ? `<div class="what">${e([b.model ? `model ${b.model}` : '', b.hint ? `hint “${b.hint}”` : ''].filter(Boolean).join(' · '))}</div>` : ''}</td>` +
        `<td>${e(b.state)}</td><td>${e(b.endReason ?? '')}</td><td>${b.steps ?? ''}</td><td>${s?.ownSteps ?? ''}</td>` +
        `<td>${e(scoreText(b))}</td><td>${e(tokensText(s))}</td><td>${e(remarkOf(b))}</td></tr>`
      );
    })
    .join('\n');
  const cards = record.branches
    .map((b) => {
      const shot = shots.get(b.runId);
      return shot
        ? `<figure><img src="${e(shot)}" alt="branch ${b.index}'s last screenshot"><figcaption>branch ${b.index}: ${e(b.state)}${b.score !== null ? `, score ${b.score}` : ''}</figcaption></figure>`
        : '';
    })
    .join('\n');
  const title = `Best of ${record.branches.length}: forks of ${record.source.runId} at step ${record.source.step}`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${e(title)}</title><style>
body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
tr.winner{background:#e9f7ea}.what{color:#666;font-size:12px}figure{display:inline-block;margin:8px;width:320px}img{width:100%;border:1px solid #ccc}
</style></head><body><h1>${e(title)}</h1><p>${e(record.instruction)}</p>
<p><b>${e(record.winner ? 'Winner' : 'Verdict')}:</b> ${e(record.verdict)} · state: ${e(record.state)}</p>
<table><tr><th>#</th><th>branch</th><th>state</th><th>end</th><th>steps</th><th>own steps</th><th>score</th><th>tokens, cost</th><th>remark</th></tr>
${rows}</table>
<p class="what">Steps count the inherited ones; own steps are those the branch decided. Tokens are its own model calls' recorded usage, with their cost where the endpoint has a price.</p>
${cards}</body></html>
`;
}
