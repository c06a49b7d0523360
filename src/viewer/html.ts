// The trajectory viewer's HTML: one self-contained page (inline CSS and JS, screenshots as data: URIs) from a
// TrajectoryView. Pure: strings in, a string out.
//
// Its parts: markup.ts (escaping), step-html.ts (a step's card), marker-svg.ts (markers), page-style.ts (CSS, script).
//
// Everything taken from the run (thoughts, answers, URLs, tool output) is model or page output, so untrusted: it is
// HTML-escaped everywhere, and the page's Content-Security-Policy allows no network at all and only the page's own
// script (by its hash), so even a missed escape could neither load nor run anything.
import { replaySummary } from './lines';
import { block, escapeHtml, num, pre } from './markup';
import { CSS, SCRIPT, contentSecurityPolicy } from './page-style';
import { stepSection, userMessages } from './step-html';
import type { TrajectoryView } from './view';

const REDECIDED_MARK = '<span class="r" title="re-decided after a lost worker">↻</span>';

function stepList(view: TrajectoryView): string {
  const items = view.steps.map(
    (s) =>
      `<li><a href="#step-${s.number}" data-step="${s.number}"${s.calls.length ? ` title="${escapeHtml(s.summary)}"` : ''}>` +
      `<span class="n">${s.number}</span> ` +
      `<span class="s">${escapeHtml(s.summary)}</span>${s.supersededDecisions.length ? REDECIDED_MARK : ''}</a></li>`,
  );
  return `<nav class="steps" aria-label="Steps"><h2>Steps (${view.steps.length})</h2><ol>${items.join('')}</ol></nav>`;
}

function outcome(view: TrajectoryView, id: string): string {
  const reason =
    view.endReason && view.endReason !== view.status
      ? ` <span class="reason">(${escapeHtml(view.endReason)})</span>`
      : '';
  const detail = view.endDetail ? `<p class="detail">${escapeHtml(view.endDetail)}</p>` : '';
  const answer =
    view.answer === null
      ? '<p class="none">(no answer)</p>'
      : `<pre class="answer" id="${id}">${escapeHtml(view.answer)}</pre>`;
  return (
    `<div class="outcome"><p><span class="label">Status</span> ` +
    `<span class="status status-${escapeHtml(view.status)}">${escapeHtml(view.status)}</span>${reason}</p>` +
    `${detail}<div class="final"><span class="label">Final answer</span>${answer}</div>${outputHtml(view, id)}</div>`
  );
}

/** A task's structured output (docs/output.md), under its answer: the JSON, or why there is none. */
function outputHtml(view: TrajectoryView, id: string): string {
  const o = view.output;
  if (o === null) return '';
  const body =
    'json' in o
      ? `<pre class="answer output" id="${id}-output">${escapeHtml(o.json)}</pre>`
      : `<p class="none">(no output: ${escapeHtml(o.missing)})</p>`;
  const label = 'json' in o && o.partial ? 'Output (partial: a budget stopped the task)' : 'Output';
  return `<div class="final"><span class="label">${label}</span>${body}</div>`;
}

/** The run's settings: the browser's start page, model family and viewport, or the desktop's screen. */
function settings(view: TrajectoryView): string[][] {
  if (view.screen) {
    const calls = view.steps.reduce((n, s) => n + s.calls.length, 0);
    return [
      ['Environment', view.environment],
      ['Screen', `${view.screen.width}×${view.screen.height}`],
      ['Steps', String(view.steps.length)],
      ['Tool calls', String(calls)],
    ];
  }
  return [
    ['Start URL', view.startUrl || '(none)'],
    ['Model family', view.profile],
    ['Viewport', `${view.viewport.width}×${view.viewport.height}`],
    ['Steps', String(view.steps.length)],
    ['Model usage', view.usage],
  ];
}

function replayLine(view: TrajectoryView): string {
  return view.replay ? `<p class="replay-of">${escapeHtml(replaySummary(view.replay))}</p>` : '';
}

function header(view: TrajectoryView): string {
  const facts = [['Run', view.taskId], ...settings(view)];
  const superseded = view.steps.reduce((n, s) => n + s.supersededDecisions.length, 0);
  if (superseded) facts.push(['Superseded decisions', `${superseded} (worker lost mid-step; effect unknown)`]);
  return (
    `<header class="run"><h1>Trajectory</h1>${replayLine(view)}<div class="instruction"><span class="label">Instruction</span>` +
    `${pre(view.instruction, 'instruction')}</div><dl class="facts">` +
    facts.map(([k, v]) => `<dt>${escapeHtml(k ?? '')}</dt><dd>${escapeHtml(v ?? '')}</dd>`).join('') +
    `</dl>${outcome(view, 'final-answer')}</header>`
  );
}

function footer(view: TrajectoryView): string {
  const verification = view.verification.length
    ? block(
        'Verification',
        `<ul>${view.verification
          .map(
            (v) =>
              `<li><b>${escapeHtml(v.name)}</b>: ${v.score === null ? 'not scored' : escapeHtml(num(v.score))}` +
              `${v.reasoning ? ` — ${escapeHtml(v.reasoning)}` : ''}</li>`,
          )
          .join('')}</ul>`,
      )
    : '';
  const after = view.after.length ? block('After the last step', userMessages(view.after)) : '';
  const warnings = view.warnings.length
    ? block('Warnings', `<ul>${view.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>`, 'warnings')
    : '';
  return `<footer class="run"><h2>End of run</h2>${outcome(view, 'final-answer-end')}${after}${verification}${warnings}</footer>`;
}

/** The whole page. `images` maps a run-relative screenshot path to its data: URI. */
export function renderTrajectoryHtml(view: TrajectoryView, images: ReadonlyMap<string, string>): string {
  const title = `Trajectory ${view.taskId} · ${view.status}`;
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(SCRIPT))}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title><style>${CSS}</style></head>`,
    '<body>',
    stepList(view),
    '<main>',
    header(view),
    '<p class="keys">Keys: <kbd>←</kbd>/<kbd>→</kbd> or <kbd>k</kbd>/<kbd>j</kbd> previous/next step, ' +
      '<kbd>Home</kbd>/<kbd>End</kbd> first/last.</p>',
    ...view.steps.map((s) => stepSection(s, images)),
    footer(view),
    '</main>',
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
