// One step's card on the trajectory page.
//
// One card per step. A decision superseded after a lost worker is shown dimmed inside the card of the step that
// re-decided it (effect unknown), never as a card of its own, so counts and keyboard navigation are over real steps.
// An invalid output shows its error prominently and no marker. A model call made inside the action's tool (the page
// question of read_page_answer_question) is shown under the action: model, prompt size, duration and its output.
// In a replay run (`cua replay`) each step has a badge, replayed, healed or decided by the model, and the header says
// which run it replays and how many steps went each way. A question the runtime asked about requests an approval rule
// held has an approval badge and a line saying what was held and how the person decided.
//
// A desktop step is one card too: the step's screenshot with a marker per call that acted on a point (numbered by
// call when there are several), the window list instead of a URL, the vision model's screen description and the
// thoughts once, then each call in order with its action and observation.
import type { ToolSubCall } from '../trajectory/schema';
import type { ReplayMark } from '../trajectory/steps';
import { subCallLine } from './lines';
import { callMarkersSvg, callMarks, markerSvg } from './marker-svg';
import { block, escapeHtml, num, pre } from './markup';
import type { ViewCall, ViewDecision, ViewStep, ViewUserMessage } from './view';

const MESSAGE_LABELS: Readonly<Record<string, string>> = {
  task: 'Task',
  followup_task: 'Follow-up task',
  critical_point_response: 'User reply',
  retry_feedback: 'Retry feedback',
  steer: 'Message from the user (cua say)',
  handback: 'A person had the browser',
  in_doubt: 'In doubt after a lost worker',
};

export function userMessages(messages: readonly ViewUserMessage[]): string {
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

/** The model calls made inside the action's tool (read_page_answer_question), each with its output. */
function subCallsBlock(calls: readonly ToolSubCall[]): string {
  if (calls.length === 0) return '';
  const items = calls.map(
    (c) =>
      `<li class="sub-call" data-tool="${escapeHtml(c.tool)}"><p class="sub-call-line">${escapeHtml(subCallLine(c))}</p>` +
      (c.error ? pre(`error: ${c.error}`, 'error') : pre(c.reply || '(empty output)', 'output')) +
      '</li>',
  );
  return block(
    calls.length === 1 ? 'Model call in the tool' : 'Model calls in the tool',
    `<ul class="sub-calls">${items.join('')}</ul>`,
    'sub-calls',
  );
}

/** One call of a desktop step: its action (with where it acted) and its observation. */
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

/** An approval question's request and outcome, one line (approved, denied, or no answer yet). */
function approvalBlock(step: ViewDecision): string {
  const a = step.approval;
  if (!a) return '';
  return block(
    'Approval',
    `<p class="approval-line" data-outcome="${escapeHtml(a.outcome)}">${escapeHtml(a.line)}</p>`,
    'approval',
  );
}

/** A decision's screenshot and text: user messages, an invalid output's error, thoughts, action, observation. */
function decisionBody(step: ViewDecision, images: ReadonlyMap<string, string>): string {
  const parts = [
    approvalBlock(step),
    step.userMessages.length ? block('User messages', userMessages(step.userMessages), 'messages') : '',
    step.invalid !== null
      ? block('Invalid output: no action was taken', pre(step.invalid, 'error'), 'invalid-output')
      : '',
    ...decisionText(step),
    step.nativeAction ? block("The provider's action", pre(step.nativeAction), 'native-action') : '',
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
  const invalid = step.invalid !== null ? ' <span class="badge invalid">invalid output</span>' : '';
  const approval = step.approval
    ? ` <span class="badge approval ${step.approval.outcome}">approval ${
        step.approval.outcome === 'pending' ? 'asked' : step.approval.outcome
      }</span>`
    : '';
  return redecided + invalid + approval + replayBadge(step.replay);
}

export function stepSection(step: ViewStep, images: ReadonlyMap<string, string>): string {
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
