// Short natural-language descriptions of actions, for the trajectory's action_nl_description and UI summaries.
import type { AgentAction } from './schemas';

export interface DescribeOptions {
  /** Cut quoted free text (typed text, answers, questions) to this many characters, adding an ellipsis. */
  maxTextLength?: number;
}

function quote(text: string, opts: DescribeOptions): string {
  const max = opts.maxTextLength;
  const cut = max !== undefined && text.length > max ? `${text.slice(0, max)}…` : text;
  return `'${cut}'`;
}

function at(coordinate: readonly [number, number]): string {
  return `(${coordinate[0]}, ${coordinate[1]})`;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

function describeType(action: Extract<AgentAction, { action: 'type' }>, opts: DescribeOptions): string {
  const target = 'coordinate' in action && action.coordinate ? ` at ${at(action.coordinate)}` : '';
  const head = action.delete_existing_text ? 'Clear the field and type' : 'Type';
  const tail = action.press_enter ? ' and press Enter' : '';
  return `${head} ${quote(action.text, opts)}${target}${tail}`;
}

function describeScroll(pixels: number, horizontal: boolean): string {
  const amount = plural(Math.abs(pixels), 'pixel');
  if (horizontal) return pixels >= 0 ? `Scroll left ${amount}` : `Scroll right ${amount}`;
  return pixels >= 0 ? `Scroll up ${amount}` : `Scroll down ${amount}`;
}

function describeTerminate(action: Extract<AgentAction, { action: 'terminate' }>, opts: DescribeOptions): string {
  return 'answer' in action ? `Finish with the answer ${quote(action.answer, opts)}` : `Finish (${action.status})`;
}

/** A one-line description such as "Click at (500, 340)" or "Type 'hello' and press Enter". */
export function describeAction(action: AgentAction, opts: DescribeOptions = {}): string {
  switch (action.action) {
    case 'left_click':
      return `Click at ${at(action.coordinate)}`;
    case 'double_click':
      return `Double-click at ${at(action.coordinate)}`;
    case 'right_click':
      return `Right-click at ${at(action.coordinate)}`;
    case 'triple_click':
      return `Triple-click at ${at(action.coordinate)}`;
    case 'mouse_move':
      return `Move the mouse to ${at(action.coordinate)}`;
    case 'left_click_drag':
      return `Drag to ${at(action.coordinate)}`;
    case 'type':
      return describeType(action, opts);
    case 'key':
      return `Press ${action.keys.join('+')}`;
    case 'scroll':
      return describeScroll(action.pixels, false);
    case 'hscroll':
      return describeScroll(action.pixels, true);
    case 'visit_url':
      return `Visit ${action.url}`;
    case 'history_back':
      return 'Go back';
    case 'web_search':
      return `Search the web for ${quote(action.query, opts)}`;
    case 'read_page_answer_question':
      return `Read the page to answer ${quote(action.question, opts)}`;
    case 'pause_and_memorize_fact':
      return `Memorize ${quote(action.fact, opts)}`;
    case 'ask_user_question':
      return `Ask the user ${quote(action.question, opts)}`;
    case 'wait':
      return `Wait ${plural(action.time, 'second')}`;
    case 'terminate':
      return describeTerminate(action, opts);
    default:
      return assertNever(action);
  }
}

/**
 * A value as Python's `json.dumps` writes it with its defaults (`, ` and `: ` separators, non-ASCII as `\uXXXX`):
 * the seed's writer records actions this way, so a trainer reading both sees the same text.
 */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`).join(', ')}}`;
  }
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  if (typeof value === 'number') return String(value); // NaN, Infinity and -Infinity as Python writes them too
  return value === undefined ? 'null' : JSON.stringify(value);
}

/** The seed's `name(args)`: the action's name and its arguments (without `action` and `thoughts`) as Python JSON. */
export function describeCall(name: string, args: Readonly<Record<string, unknown>>): string {
  const { action: _a, thoughts: _t, ...rest } = args;
  return `${name}(${pythonJson(rest)})`;
}

/** The seed's action_nl_description: the thoughts, a newline and `name(args)`; `name(args)` alone without thoughts. */
export function nlDescription(thoughts: string, name: string, args: Readonly<Record<string, unknown>>): string {
  const call = describeCall(name, args);
  return thoughts ? `${thoughts}\n${call}` : call;
}

function assertNever(value: never): never {
  throw new Error(`Unhandled action: ${JSON.stringify(value)}`);
}
