// The trajectory viewer's HTML: one self-contained page (inline CSS and JS, screenshots as data: URIs) from a
// TrajectoryView. Pure: strings in, a string out.
//
// One card per step. A decision superseded after a lost worker is shown dimmed inside the card of the step that
// re-decided it (effect unknown), never as a card of its own, so counts and keyboard navigation are over real steps.
// An invalid reply shows its error prominently and no marker. A model call made inside the action's tool (the page
// question of read_page_answer_question) is shown under the action: model, prompt size, duration and its reply.
// In a replay run (`cua replay`) each step has a badge, replayed, healed or decided by the model, and the header says
// which run it replays and how many steps went each way.
//
// A desktop turn is one card too: the turn's screenshot with a marker per call that acted on a point (numbered by
// call when there are several), the window list instead of a URL, the vision model's screen description and the
// thoughts once, then each call in order with its action and observation.
//
// Everything taken from the run (thoughts, answers, URLs, tool output) is model or page output, so untrusted: it is
// HTML-escaped everywhere, and the page's Content-Security-Policy allows no network at all and only this file's own
// script (by its hash), so even a missed escape could neither load nor run anything.
import { createHash } from 'node:crypto';
import type { ToolSubCall } from '../trajectory/schema';
import type { ReplayMark } from '../trajectory/steps';
import { replaySummary, subCallLine } from './lines';
import type { Marker, Point, Size } from './markers';
import type { TrajectoryView, ViewCall, ViewDecision, ViewStep, ViewUserMessage } from './view';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const num = (n: number) => String(Math.round(n * 100) / 100);
const pts = (points: readonly Point[]) => points.map((p) => `${num(p.x)},${num(p.y)}`).join(' ');

// ---------- markers ----------

interface Pen {
  stroke: number;
  radius: number;
}

function penFor(image: Size): Pen {
  return { stroke: Math.max(2, image.width / 400), radius: Math.max(8, image.width / 90) };
}

/** A line drawn twice: a white halo under a coloured stroke, so it shows on any background. */
function line(a: Point, b: Point, pen: Pen, dashed = false): string {
  const coords = `x1="${num(a.x)}" y1="${num(a.y)}" x2="${num(b.x)}" y2="${num(b.y)}"`;
  const dash = dashed ? ` stroke-dasharray="${num(pen.stroke * 3)} ${num(pen.stroke * 2)}"` : '';
  return (
    `<line class="halo" ${coords} stroke-width="${num(pen.stroke * 2.5)}"/>` +
    `<line class="ink" ${coords} stroke-width="${num(pen.stroke)}"${dash}/>`
  );
}

function ring(at: Point, r: number, pen: Pen, cls = ''): string {
  const c = `cx="${num(at.x)}" cy="${num(at.y)}" r="${num(r)}"`;
  return (
    `<circle class="halo" ${c} fill="none" stroke-width="${num(pen.stroke * 2.5)}"/>` +
    `<circle class="ink${cls ? ` ${cls}` : ''}" ${c} fill="none" stroke-width="${num(pen.stroke)}"/>`
  );
}

/** The exact point of the marker: a small filled dot whose centre is the action's pixel position. */
function centre(at: Point, pen: Pen): string {
  return `<circle class="marker-center" cx="${num(at.x)}" cy="${num(at.y)}" r="${num(pen.stroke * 1.2)}"/>`;
}

function head(points: readonly Point[]): string {
  return points.length > 0 ? `<polygon class="head" points="${pts(points)}"/>` : '';
}

function markerBody(marker: Marker, pen: Pen): { at: Point; body: string } {
  switch (marker.kind) {
    case 'point': {
      const { at } = marker;
      const arm = pen.radius * 1.8;
      const cross =
        line({ x: at.x - arm, y: at.y }, { x: at.x - pen.radius * 0.4, y: at.y }, pen) +
        line({ x: at.x + pen.radius * 0.4, y: at.y }, { x: at.x + arm, y: at.y }, pen) +
        line({ x: at.x, y: at.y - arm }, { x: at.x, y: at.y - pen.radius * 0.4 }, pen) +
        line({ x: at.x, y: at.y + pen.radius * 0.4 }, { x: at.x, y: at.y + arm }, pen);
      return { at, body: ring(at, pen.radius, pen) + cross + centre(at, pen) };
    }
    case 'drag': {
      const { from, to } = marker;
      const path = from
        ? line(from, to, pen, true) + head(marker.head) + ring(from, pen.radius * 0.7, pen, 'start')
        : '';
      return { at: to, body: path + ring(to, pen.radius * (from ? 0.5 : 1), pen) + centre(to, pen) };
    }
    case 'scroll': {
      const { at, to } = marker;
      return { at, body: line(at, to, pen) + head(marker.head) + ring(at, pen.radius * 0.7, pen) + centre(at, pen) };
    }
  }
}

/** A desktop marker: the number of its call in the turn, and whether to write that number next to it. */
export interface CallMark {
  marker: Marker;
  call: number;
  labelled: boolean;
}

function markerGroup(marker: Marker, pen: Pen, mark?: Omit<CallMark, 'marker'>): string {
  const { at, body } = markerBody(marker, pen);
  const direction = marker.kind === 'scroll' ? ` data-direction="${marker.direction}"` : '';
  const call = mark ? ` data-call="${mark.call}"` : '';
  const label = mark?.labelled
    ? `<text class="marker-label" x="${num(at.x + pen.radius * 1.2)}" y="${num(at.y - pen.radius * 1.2)}" ` +
      `font-size="${num(pen.radius * 2)}">${mark.call}</text>`
    : '';
  return (
    `<g class="marker marker-${marker.kind}" data-kind="${marker.kind}" data-x="${num(at.x)}" ` +
    `data-y="${num(at.y)}"${direction}${call}>${body}${label}</g>`
  );
}

function overlay(inner: string, image: Size): string {
  return (
    `<svg class="overlay" viewBox="0 0 ${image.width} ${image.height}" preserveAspectRatio="none" ` +
    `xmlns="http://www.w3.org/2000/svg" aria-hidden="true">${inner}</svg>`
  );
}

/** The SVG overlay of a screenshot: viewBox = the screenshot's pixel size, so it scales with the image. */
export function markerSvg(marker: Marker | null, image: Size): string {
  return overlay(marker ? markerGroup(marker, penFor(image)) : '', image);
}

/** The overlay of a desktop turn's screenshot: one marker per call that acted on a point. */
export function callMarkersSvg(marks: readonly CallMark[], image: Size): string {
  const pen = penFor(image);
  return overlay(marks.map(({ marker, ...mark }) => markerGroup(marker, pen, mark)).join(''), image);
}

/** The markers of a desktop turn's calls, numbered by call (labels written only when there are several). */
function callMarks(calls: readonly ViewCall[]): CallMark[] {
  const marked = calls.flatMap((c, i) => (c.marker ? [{ marker: c.marker, call: i + 1 }] : []));
  return marked.map((m) => ({ ...m, labelled: marked.length > 1 }));
}

// ---------- page parts ----------

function block(title: string, body: string, cls = ''): string {
  return `<div class="block${cls ? ` ${cls}` : ''}"><h3>${escapeHtml(title)}</h3>${body}</div>`;
}

const pre = (text: string, cls = '') => `<pre${cls ? ` class="${cls}"` : ''}>${escapeHtml(text)}</pre>`;

const MESSAGE_LABELS: Readonly<Record<string, string>> = {
  task: 'Task',
  followup_task: 'Follow-up task',
  critical_point_response: 'User reply',
  retry_feedback: 'Retry feedback',
  steer: 'Message from the user (cua say)',
  handback: 'A person had the browser',
  in_doubt: 'In doubt after a lost worker',
};

function userMessages(messages: readonly ViewUserMessage[]): string {
  return messages
    .map(
      (m) =>
        `<div class="user-message" data-type="${escapeHtml(m.type)}"><span class="label">` +
        `${escapeHtml(MESSAGE_LABELS[m.type] ?? m.type)}</span>${pre(m.content)}</div>`,
    )
    .join('');
}

function screenshot(step: ViewDecision, images: ReadonlyMap<string, string>): string {
  const src = step.screenshot ? images.get(step.screenshot) : undefined;
  if (!src || !step.image) {
    const what = step.screenshot ? `screenshot ${step.screenshot} could not be read` : 'no screenshot';
    return `<figure class="shot missing"><div class="placeholder">${escapeHtml(what)}</div></figure>`;
  }
  const { width, height } = step.image;
  const where = step.pixelPoint ? ` · at ${num(step.pixelPoint.x)}, ${num(step.pixelPoint.y)} px` : '';
  const drag = step.marker?.kind === 'drag' && !step.marker.from ? ' · drag start unknown' : '';
  const svg = step.calls.length
    ? callMarkersSvg(callMarks(step.calls), step.image)
    : markerSvg(step.marker, step.image);
  return (
    `<figure class="shot"><div class="frame"><img src="${escapeHtml(src)}" width="${width}" height="${height}" ` +
    `alt="screenshot before ${step.superseded ? 'the superseded decision of ' : ''}step ${step.number}">${svg}</div>` +
    `<figcaption>${escapeHtml(step.screenshot)} · ${width}×${height}${escapeHtml(where + drag)}</figcaption></figure>`
  );
}

/** The text shown for a superseded decision: why its effect is unknown. */
export const SUPERSEDED_NOTE = 'Effect unknown: the worker was lost and the step was re-decided.';

function argList(args: ViewDecision['args']): string {
  return args.length
    ? `<dl class="args">${args.map((a) => `<dt>${escapeHtml(a.name)}</dt><dd>${escapeHtml(a.value)}</dd>`).join('')}</dl>`
    : '';
}

const observationBlock = (text: string) =>
  block('Observation', text ? pre(text, 'observation') : '<p class="none">(none)</p>');

/** The model calls made inside the action's tool (read_page_answer_question), each with its reply. */
function subCallsBlock(calls: readonly ToolSubCall[]): string {
  if (calls.length === 0) return '';
  const items = calls.map(
    (c) =>
      `<li class="sub-call" data-tool="${escapeHtml(c.tool)}"><p class="sub-call-line">${escapeHtml(subCallLine(c))}</p>` +
      (c.error ? pre(`error: ${c.error}`, 'error') : pre(c.reply || '(empty reply)', 'reply')) +
      '</li>',
  );
  return block(
    calls.length === 1 ? 'Model call in the tool' : 'Model calls in the tool',
    `<ul class="sub-calls">${items.join('')}</ul>`,
    'sub-calls',
  );
}

/** One call of a desktop turn: its action (with where it acted) and its observation. */
function callItem(call: ViewCall, n: number, total: number): string {
  const where = call.pixelPoint
    ? `<p class="where">at ${num(call.pixelPoint.x)}, ${num(call.pixelPoint.y)} px (screen)</p>`
    : '';
  return (
    `<li class="call" data-call="${n}" data-action="${escapeHtml(call.actionName)}">` +
    (total > 1 ? `<p class="call-title">Call ${n} of ${total}</p>` : '') +
    block(
      'Action',
      `<p class="action-name"><code>${escapeHtml(call.actionName)}</code></p>${argList(call.args)}${where}`,
    ) +
    `${observationBlock(call.observation)}</li>`
  );
}

/** The text of a decision: browser, its action and observation; desktop, the screen description and every call. */
function decisionText(step: ViewDecision): string[] {
  const thoughts = block('Thoughts', step.thoughts ? pre(step.thoughts, 'thoughts') : '<p class="none">(none)</p>');
  if (step.calls.length === 0) {
    return [
      thoughts,
      block('Action', `<p class="action-name"><code>${escapeHtml(step.actionName)}</code></p>${argList(step.args)}`),
      subCallsBlock(step.subCalls),
      observationBlock(step.observation),
    ];
  }
  const calls = step.calls.map((c, i) => callItem(c, i + 1, step.calls.length)).join('');
  return [
    step.screenDescription
      ? block('Screen (vision model)', pre(step.screenDescription, 'screen-description'), 'screen')
      : '',
    thoughts,
    `<ol class="calls">${calls}</ol>`,
  ];
}

/** A decision's screenshot and text: user messages, an invalid reply's error, thoughts, action, observation. */
function decisionBody(step: ViewDecision, images: ReadonlyMap<string, string>): string {
  const parts = [
    step.userMessages.length ? block('User messages', userMessages(step.userMessages), 'messages') : '',
    step.invalid !== null
      ? block('Invalid reply: no action was taken', pre(step.invalid, 'error'), 'invalid-reply')
      : '',
    ...decisionText(step),
  ];
  return `<div class="body">${screenshot(step, images)}<div class="text">${parts.join('')}</div></div>`;
}

/** Where the decision was made: the page's URL, or the desktop's window list. */
function whereLine(step: ViewDecision): string {
  const [cls, label, value] = step.calls.length ? [' windows', 'Windows', step.windows] : ['', 'URL', step.url];
  const usage = step.usage
    ? ` <span class="usage" title="this step's model calls">${escapeHtml(step.usage)}</span>`
    : '';
  return (
    `<p class="url${cls}"><span class="label">${label}</span> ` +
    `<span class="value">${escapeHtml(value || '(unknown)')}</span>${usage}</p>`
  );
}

function supersededDecision(decision: ViewDecision, images: ReadonlyMap<string, string>): string {
  return (
    `<div class="superseded" data-step="${decision.number}" data-generation="${decision.generation}" ` +
    `data-action="${escapeHtml(decision.actionName)}">` +
    `<h3 class="superseded-title">Superseded decision <code class="summary">${escapeHtml(decision.summary)}</code></h3>` +
    `<p class="note">${escapeHtml(SUPERSEDED_NOTE)}</p>${whereLine(decision)}${decisionBody(decision, images)}</div>`
  );
}

/** A replay run's step: how it came about (the recorded point of a healed step is in model coordinates). */
export function replayBadge(mark: ReplayMark | null): string {
  if (!mark) return '';
  const [text, title] =
    mark.how === 'replayed'
      ? ['replayed', "the recording's action, run without a model call"]
      : mark.how === 'healed'
        ? [
            `healed${mark.from ? ` (moved from [${mark.from.join(', ')}])` : ''}`,
            "the recording's action, its element found where it is now; no model call",
          ]
        : ['decided by the model', 'the page did not match the recording here, or an earlier step did not'];
  return ` <span class="badge replay ${mark.how}" title="${escapeHtml(title)}">${escapeHtml(text)}</span>`;
}

function badges(step: ViewStep): string {
  const redecided = step.supersededDecisions.length
    ? ' <span class="badge redecided">re-decided after a lost worker</span>'
    : '';
  const invalid = step.invalid !== null ? ' <span class="badge invalid">invalid reply</span>' : '';
  return redecided + invalid + replayBadge(step.replay);
}

function stepSection(step: ViewStep, images: ReadonlyMap<string, string>): string {
  const cls = `step${step.invalid !== null ? ' invalid' : ''}`;
  const superseded = step.supersededDecisions.map((d) => supersededDecision(d, images)).join('');
  const calls = step.calls.length ? ` data-calls="${step.calls.length}"` : '';
  return (
    `<section class="${cls}" id="step-${step.number}" data-step="${step.number}" data-generation="${step.generation}" ` +
    `data-action="${escapeHtml(step.actionName)}"${calls}>` +
    `<h2><span class="num">Step ${step.number}</span> <code class="summary">${escapeHtml(step.summary)}</code>${badges(step)}</h2>` +
    `${whereLine(step)}${superseded}${decisionBody(step, images)}</section>`
  );
}

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
    `${detail}<div class="final"><span class="label">Final answer</span>${answer}</div></div>`
  );
}

/** The run's settings: the browser's start page, model profile and viewport, or the desktop's screen. */
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
    ['Model profile', view.profile],
    ['Viewport', `${view.viewport.width}×${view.viewport.height}`],
    ['Steps', String(view.steps.length)],
    ['Model usage', view.usage],
  ];
}

function replayLine(view: TrajectoryView): string {
  return view.replay ? `<p class="replay-of">${escapeHtml(replaySummary(view.replay))}</p>` : '';
}

function header(view: TrajectoryView): string {
  const facts = [['Run', view.runId], ...settings(view)];
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

// ---------- style and behaviour ----------

const CSS = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f3f4f6}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0;background:#f6f8fa;border:1px solid #e5e7eb;border-radius:4px;padding:6px 8px}
nav.steps{position:fixed;top:0;left:0;bottom:0;width:250px;overflow:auto;background:#111827;color:#e5e7eb;padding:10px 0}
nav.steps h2{font-size:13px;margin:0 12px 8px;color:#9ca3af;text-transform:uppercase;letter-spacing:.05em}
nav.steps ol{list-style:none;margin:0;padding:0}
nav.steps a{display:flex;gap:6px;padding:4px 12px;color:inherit;text-decoration:none;white-space:nowrap;overflow:hidden}
nav.steps a .n{min-width:2em;text-align:right;color:#9ca3af}
nav.steps a .s{overflow:hidden;text-overflow:ellipsis}
nav.steps a:hover{background:#1f2937}
nav.steps a.current{background:#2563eb;color:#fff}
nav.steps a.current .n{color:#fff}
main{margin-left:250px;padding:16px 20px 40vh}
header.run,footer.run,section.step{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:12px 16px;margin-bottom:16px}
h1{font-size:20px;margin:0 0 8px}
h2{font-size:16px;margin:0 0 6px}
h3{font-size:12px;margin:8px 0 2px;color:#6b7280;text-transform:uppercase;letter-spacing:.05em}
.label{display:inline-block;font-size:12px;color:#6b7280;text-transform:uppercase;letter-spacing:.05em;margin-right:6px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}
dl.facts dt{color:#6b7280}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.status{font-weight:600;padding:1px 8px;border-radius:10px;background:#e5e7eb}
.status-complete{background:#dcfce7;color:#166534}
.status-failed,.status-cancelled,.status-max_rounds{background:#fee2e2;color:#991b1b}
.status-running,.status-waiting_for_user{background:#fef9c3;color:#854d0e}
pre.answer{background:#eff6ff;border-color:#bfdbfe;font-size:14px}
section.step{scroll-margin-top:12px;transition:box-shadow .15s}
section.step.current{border-color:#2563eb;box-shadow:0 0 0 3px rgba(37,99,235,.35)}
section.step h2 .num{color:#2563eb}
section.step h2 code.summary{font-size:14px}
.badge{font-size:11px;font-weight:600;padding:1px 7px;border-radius:10px;vertical-align:middle;margin-left:4px}
.badge.redecided{background:#fef3c7;color:#92400e}
.badge.invalid{background:#fee2e2;color:#991b1b}
.badge.replayed{background:#dcfce7;color:#166534}
.badge.healed{background:#e0f2fe;color:#075985}
.badge.decided{background:#f3f4f6;color:#374151}
p.replay-of{margin:0 0 8px;font-weight:600;color:#075985}
.superseded{opacity:.55;border:1px dashed #9ca3af;border-radius:6px;padding:6px 10px;margin:0 0 12px;background:#f9fafb}
.superseded:hover{opacity:.9}
.superseded h3.superseded-title{margin-top:0;text-transform:none;letter-spacing:0;font-size:13px;color:#4b5563}
.superseded .note{margin:0 0 6px;font-weight:600;color:#92400e}
.superseded .body{grid-template-columns:minmax(0,2fr) minmax(240px,3fr)}
@media (max-width:1100px){.superseded .body{grid-template-columns:minmax(0,1fr)}}
.invalid-reply h3{color:#991b1b}
.invalid-reply pre.error{background:#fef2f2;border-color:#fca5a5;color:#991b1b;font-size:14px;font-weight:600}
nav.steps a .r{color:#fbbf24}
p.url{margin:0 0 8px;overflow-wrap:anywhere;font-size:12.5px}
p.url .value{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
p.url .usage{float:right;color:#666;font-size:12px}
.body{display:grid;grid-template-columns:minmax(0,3fr) minmax(240px,2fr);gap:16px;align-items:start}
@media (max-width:1100px){.body{grid-template-columns:minmax(0,1fr)}}
figure.shot{margin:0}
.frame{position:relative;line-height:0;border:1px solid #d1d5db}
.frame img{display:block;width:100%;height:auto}
svg.overlay{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none;overflow:visible}
svg.overlay .halo{stroke:#fff;stroke-opacity:.85;stroke-linecap:round}
svg.overlay .ink{stroke:#e11d48;stroke-linecap:round}
svg.overlay .ink.start{stroke:#f59e0b}
svg.overlay .head{fill:#e11d48;stroke:#fff;stroke-width:1.5}
svg.overlay .marker-center{fill:#e11d48;stroke:#fff;stroke-width:1}
figcaption{font-size:12px;color:#6b7280;margin-top:4px;line-height:1.3}
.placeholder{padding:40px;text-align:center;color:#6b7280;background:#f9fafb;border:1px dashed #d1d5db;line-height:1.3}
dl.args{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:4px 0}
dl.args dt{color:#6b7280;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
dl.args dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
p.action-name{margin:2px 0}
ol.calls{list-style:none;margin:8px 0 0;padding:0}
ul.sub-calls{list-style:none;margin:0;padding:0}
p.sub-call-line{margin:2px 0;font-size:12px;color:#6b7280}
li.call{border:1px solid #e5e7eb;border-left:3px solid #2563eb;border-radius:4px;padding:4px 10px 6px;margin:0 0 8px}
li.call p.call-title{margin:0;font-size:12px;font-weight:600;color:#2563eb}
li.call h3{margin-top:4px}
p.where{margin:2px 0;font-size:12px;color:#6b7280}
.screen pre.screen-description{background:#f5f3ff;border-color:#ddd6fe}
svg.overlay .marker-label{fill:#e11d48;stroke:#fff;stroke-width:3px;paint-order:stroke;font-weight:700;font-family:system-ui,sans-serif}
.none{color:#9ca3af;margin:2px 0}
.user-message{border-left:3px solid #8b5cf6;padding-left:8px;margin:4px 0}
.warnings li{color:#92400e}
.keys{font-size:12px;color:#6b7280}
kbd{border:1px solid #d1d5db;border-bottom-width:2px;border-radius:3px;padding:0 4px;font-size:11px;background:#fff}
`;

/** Keyboard and click navigation between steps; works on the markup only (no run data inside the script). */
const SCRIPT = `(function () {
  var steps = Array.prototype.slice.call(document.querySelectorAll('section.step'));
  var links = Array.prototype.slice.call(document.querySelectorAll('nav.steps a[data-step]'));
  var current = -1;
  function select(i, scroll) {
    if (steps.length === 0) return;
    i = Math.max(0, Math.min(steps.length - 1, i));
    if (current >= 0) {
      steps[current].classList.remove('current');
      links[current].classList.remove('current');
      links[current].removeAttribute('aria-current');
    }
    current = i;
    steps[i].classList.add('current');
    links[i].classList.add('current');
    links[i].setAttribute('aria-current', 'step');
    document.body.setAttribute('data-current-step', steps[i].getAttribute('data-step'));
    if (scroll) {
      steps[i].scrollIntoView({ block: 'start' });
      links[i].scrollIntoView({ block: 'nearest' });
      // Only on navigation: a fragment set while loading would make the browser jump to it once loaded.
      try { history.replaceState(null, '', '#step-' + steps[i].getAttribute('data-step')); } catch (e) {}
    }
  }
  var keys = { ArrowLeft: -1, k: -1, ArrowRight: 1, j: 1 };
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === 'Home') select(0, true);
    else if (e.key === 'End') select(steps.length - 1, true);
    else if (Object.prototype.hasOwnProperty.call(keys, e.key)) select(current + keys[e.key], true);
    else return;
    e.preventDefault();
  });
  links.forEach(function (a, i) {
    a.addEventListener('click', function (e) { e.preventDefault(); select(i, true); });
  });
  steps.forEach(function (s, i) {
    s.addEventListener('click', function () { if (current !== i) select(i, false); });
  });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  var start = m ? steps.findIndex(function (s) { return s.getAttribute('data-step') === m[1]; }) : -1;
  select(start < 0 ? 0 : start, start >= 0);
})();`;

function contentSecurityPolicy(script: string): string {
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  return [
    "default-src 'none'",
    'img-src data:',
    "style-src 'unsafe-inline'",
    `script-src 'sha256-${hash}'`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The whole page. `images` maps a run-relative screenshot path to its data: URI. */
export function renderTrajectoryHtml(view: TrajectoryView, images: ReadonlyMap<string, string>): string {
  const title = `Trajectory ${view.runId} · ${view.status}`;
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
