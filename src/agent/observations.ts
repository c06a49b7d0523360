// The text fed back after an action, in one table keyed by action name: what its tool_output records as `output`,
// and whether the model also reads it in its next step (`textObservation`). The voice is the original's: the seeds
// quote the click ("I clicked at coordinates (720.0, 306.0)."), scroll ("I scrolled up") and memorize ("I memorized
// the following fact: …") texts; the others are our words in the same voice. Numbers are what the browser did
// (viewport pixels after conversion, one decimal), not what the model said, as the original reports them.
import type { ActionName, AgentAction } from '../actions/schemas';

/**
 * An action as carried out: coordinates and scroll amounts converted to viewport pixels (scroll: positive = up /
 * left, as the model is told), visit_url's address resolved. Same shape as the model's action, other units.
 */
export type PerformedAction = AgentAction;

/** What carrying out an action produced beyond the action itself. */
export interface ActionOutcome {
  /** The page answer of read_page_answer_question. */
  answer?: string;
  /** A back (history_back, Alt+Left) in a restored session that loaded this recorded URL: said, and fed back. */
  loadedFromRecord?: string;
}

export interface ObservationEntry<A extends AgentAction> {
  /** The tool_output text of the action once carried out. */
  text: (action: A, outcome: ActionOutcome) => string;
  /** True when the model reads this text in its next step (the original feeds these back into its history). */
  textObservation: boolean;
}

export type ObservationTable = { [K in ActionName]: ObservationEntry<Extract<AgentAction, { action: K }>> };

/** `(720.0, 306.0)`: viewport pixels with one decimal, as the original prints its floats. */
function point(coordinate: readonly [number, number]): string {
  return `(${coordinate[0].toFixed(1)}, ${coordinate[1].toFixed(1)})`;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** `a`, `a and b`, `a, b and c`. */
function joinClauses(clauses: readonly string[]): string {
  if (clauses.length <= 1) return clauses.join('');
  return `${clauses.slice(0, -1).join(', ')} and ${clauses.at(-1) ?? ''}`;
}

function typeText(action: Extract<AgentAction, { action: 'type' }>): string {
  const at = 'coordinate' in action && action.coordinate ? action.coordinate : undefined;
  const clauses = [
    ...(at ? [`clicked at coordinates ${point(at)}`] : []),
    ...(action.delete_existing_text ? ['cleared the existing text'] : []),
    `typed '${action.text}'`,
    ...(action.press_enter ? ['pressed Enter'] : []),
  ];
  return `I ${joinClauses(clauses)}.`;
}

/** The seed notes the asymmetry: a vertical scroll reports its direction only, a horizontal one its amount. */
function hscrollText(pixels: number): string {
  return `I scrolled ${pixels < 0 ? 'right' : 'left'} ${plural(Math.abs(pixels), 'pixel')}`;
}

const quiet = <A extends AgentAction>(text: ObservationEntry<A>['text']): ObservationEntry<A> => ({
  text,
  textObservation: false,
});
const fed = <A extends AgentAction>(text: ObservationEntry<A>['text']): ObservationEntry<A> => ({
  text,
  textObservation: true,
});

export const OBSERVATIONS: ObservationTable = {
  left_click: quiet((a) => `I clicked at coordinates ${point(a.coordinate)}.`),
  double_click: quiet((a) => `I double-clicked at coordinates ${point(a.coordinate)}.`),
  triple_click: quiet((a) => `I triple-clicked at coordinates ${point(a.coordinate)}.`),
  right_click: quiet((a) => `I right-clicked at coordinates ${point(a.coordinate)}.`),
  mouse_move: quiet((a) => `I moved the mouse to coordinates ${point(a.coordinate)}.`),
  left_click_drag: quiet((a) => `I dragged the mouse to coordinates ${point(a.coordinate)}.`),
  type: quiet(typeText),
  key: quiet((a) => `I pressed ${a.keys.join('+')}.`),
  scroll: quiet((a) => (a.pixels < 0 ? 'I scrolled down' : 'I scrolled up')),
  hscroll: quiet((a) => hscrollText(a.pixels)),
  visit_url: quiet((a) => `I visited ${a.url}`),
  history_back: quiet(() => 'I went back to the previous page.'),
  web_search: quiet((a) => `I searched the web for '${a.query}'.`),
  read_page_answer_question: fed((_a, outcome) => outcome.answer ?? ''),
  // The original's facts list is write-only: the model remembers a fact through this text in its history.
  pause_and_memorize_fact: fed((a) => `I memorized the following fact: ${a.fact}`),
  wait: quiet((a) => `I waited ${plural(a.time, 'second')}.`),
  ask_user_question: quiet((a) => a.question),
  terminate: quiet((a) => ('answer' in a ? a.answer : `Task ended: ${a.status}`)),
};

/** The entry of an action (the table typed for the action's own name). */
export function observationOf<A extends AgentAction>(action: A): ObservationEntry<A> {
  return OBSERVATIONS[action.action] as ObservationEntry<A>;
}

/** Said after an action's text when a back loaded the previous page from the run's record instead of the browser's. */
export function loadedFromRecordText(url: string): string {
  return (
    "The browser's own history was lost when the session was restored; loaded the previous page from the record: " +
    `${url} (a fresh GET: what was typed there is not restored).`
  );
}

/**
 * Said with the first observation of an adopted run (`cua adopt`): the folder the original wrote keeps no page state,
 * so the browser was opened anew at the last URL it recorded.
 */
export function reopenedPageText(url: string | null): string {
  return (
    `This run was taken over from a run folder that keeps no browser state; the browser was reopened at ${url ?? 'a blank page'} ` +
    '(a fresh load: what was typed, scrolled or focused there before is not restored).'
  );
}

/** Fed back when an action throws: the model sees the first line of the error. */
export function failureText(message: string): string {
  return `The action failed: ${message}`;
}

/** Fed back when visit_url cannot open its address, so the model can try another. */
export function navigationFailureText(url: string, message: string): string {
  return `I tried to open ${url}, but it failed: ${message}`;
}
