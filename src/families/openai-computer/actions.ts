// OpenAI's computer actions (the union shared by the GA tool's `actions[]` and the preview tool's `action`) as our
// actions, in pixels of the screenshot the model was sent. One OpenAI action may become two of ours (a drag is a move
// to its first point, then a drag to its last; a scroll is a move to its point, then the wheel), and three become one:
// OpenAI has no navigate, so CTRL+L, the typed address and ENTER in one batch are our visit_url (the preview tool, one
// action per call, visits when a call types a whole address). A malformed action of the kinds OpenAI sends (an unknown
// type, a missing coordinate) throws the error the model reads next step.
import { PROVIDER_FAMILY_ACTIONS } from '../native/actions';
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import { InvalidActionArgumentsError, ModelOutputError, UnknownActionError } from '../../model/errors';
import type { BatchedAction } from '../../model/parse';
import { isRecord } from './wire';
import type { JsonObject } from './wire';

/** OpenAI's action types (the model reads this list after an unknown one). */
export const OPENAI_ACTION_TYPES = [
  'click',
  'double_click',
  'drag',
  'keypress',
  'move',
  'screenshot',
  'scroll',
  'type',
  'wait',
] as const;

/** The actions of ours the mapping produces: the family's allowed actions. */
export const OPENAI_ALLOWED_ACTIONS = PROVIDER_FAMILY_ACTIONS.filter((a) => a !== 'triple_click');

/** Seconds a `wait` lasts: OpenAI's wait carries no duration. */
export const WAIT_SECONDS = 1;

type Point = [number, number];

function invalid(type: string, field: string, detail: string): InvalidActionArgumentsError {
  return new InvalidActionArgumentsError(type, field, detail);
}

/** The action's point (`x`, `y`), inside the screenshot; a missing or off-screen coordinate is refused. */
function pointOf(type: string, at: JsonObject, screen: ScreenSize): Point {
  const missing = `missing: a ${type} needs both x and y, in pixels of the screenshot`;
  const { x, y } = at;
  if (typeof x !== 'number' || !Number.isFinite(x)) throw invalid(type, 'x', missing);
  if (typeof y !== 'number' || !Number.isFinite(y)) throw invalid(type, 'y', missing);
  if (x < 0 || y < 0 || x > screen.width || y > screen.height) {
    throw invalid(type, 'x', `(${x}, ${y}) is outside the ${screen.width}x${screen.height} screenshot`);
  }
  return [x, y];
}

/** A drag path point: `{x, y}`, or the `[x, y]` pair OpenAI's own helpers also accept. */
function pathPoint(p: unknown): JsonObject {
  return Array.isArray(p) ? { x: p[0], y: p[1] } : isRecord(p) ? p : {};
}

/** Modifier keys held during a mouse action (SDK 6.33): our actions cannot hold keys, so keys given are refused. */
function refuseHeldKeys(type: string, a: JsonObject): void {
  if (Array.isArray(a.keys) && a.keys.length > 0) {
    throw invalid(type, 'keys', 'holding keys during a mouse action is not supported here: act without keys');
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function clickOf(a: JsonObject, screen: ScreenSize): AgentAction[] {
  const button = a.button ?? 'left';
  // The browser's back and forward buttons need no point.
  if (button === 'back') return [{ action: 'history_back' }];
  if (button === 'forward') return [{ action: 'key', keys: ['ALT', 'ARROWRIGHT'] }];
  const coordinate = pointOf('click', a, screen);
  if (button === 'left') return [{ action: 'left_click', coordinate }];
  if (button === 'right') return [{ action: 'right_click', coordinate }];
  throw invalid('click', 'button', `${String(button)} is not supported here: use left or right`);
}

function scrollOf(a: JsonObject, screen: ScreenSize): AgentAction[] {
  const coordinate = pointOf('scroll', a, screen);
  // OpenAI's scroll_y is positive downward, our pixels positive upward (and scroll_x rightward, hscroll leftward).
  const dx = num(a.scroll_x);
  const dy = num(a.scroll_y);
  const wheel: AgentAction[] = [];
  if (dy !== 0 || dx === 0) wheel.push({ action: 'scroll', pixels: -dy + 0 });
  if (dx !== 0) wheel.push({ action: 'hscroll', pixels: -dx + 0 });
  return [{ action: 'mouse_move', coordinate }, ...wheel];
}

function dragOf(a: JsonObject, screen: ScreenSize): AgentAction[] {
  const path = Array.isArray(a.path) ? a.path.map(pathPoint) : [];
  const [start, end] = [path[0], path[path.length - 1]];
  if (path.length < 2 || !start || !end) throw invalid('drag', 'path', 'needs at least two points');
  return [
    { action: 'mouse_move', coordinate: pointOf('drag', start, screen) },
    { action: 'left_click_drag', coordinate: pointOf('drag', end, screen) },
  ];
}

/** One OpenAI action as our actions (one or two). */
export function ourActions(a: JsonObject, screen: ScreenSize): AgentAction[] {
  const type = typeof a.type === 'string' ? a.type : '(none)';
  if (['click', 'double_click', 'move', 'drag', 'scroll'].includes(type)) refuseHeldKeys(type, a);
  switch (type) {
    case 'click':
      return clickOf(a, screen);
    case 'double_click':
      return [{ action: 'double_click', coordinate: pointOf(type, a, screen) }];
    case 'move':
      return [{ action: 'mouse_move', coordinate: pointOf(type, a, screen) }];
    case 'drag':
      return dragOf(a, screen);
    case 'scroll':
      return scrollOf(a, screen);
    case 'keypress': {
      const keys = Array.isArray(a.keys) ? a.keys.filter((k): k is string => typeof k === 'string' && k !== '') : [];
      if (keys.length === 0) throw invalid(type, 'keys', 'needs at least one key');
      return [{ action: 'key', keys }];
    }
    case 'type':
      if (typeof a.text !== 'string') throw invalid(type, 'text', 'missing');
      return [{ action: 'type', text: a.text }];
    case 'wait':
      return [{ action: 'wait', time: WAIT_SECONDS }];
    case 'screenshot':
      // Every step ends with a screenshot: taking one is doing nothing for no time.
      return [{ action: 'wait', time: 0 }];
    default:
      throw new UnknownActionError(type, OPENAI_ACTION_TYPES);
  }
}

const upper = (v: unknown): string => (typeof v === 'string' ? v.toUpperCase() : '');
const keysOf = (a: JsonObject | undefined): string[] =>
  a?.type === 'keypress' && Array.isArray(a.keys) ? a.keys.map(upper) : [];

/** CTRL+L (or META+L, CMD+L): the address bar, which our browser has not, in a keypress. */
function opensAddressBar(a: JsonObject | undefined): boolean {
  const keys = keysOf(a);
  return keys.length === 2 && keys[1] === 'L' && ['CTRL', 'CONTROL', 'META', 'CMD', 'COMMAND'].includes(keys[0] ?? '');
}

const pressesEnter = (a: JsonObject | undefined): boolean =>
  keysOf(a).length === 1 && ['ENTER', 'RETURN'].includes(keysOf(a)[0] ?? '');

/**
 * A visit at `at`: CTRL+L, then `type` with an address (then ENTER, optional: a typed address is visited anyway), as
 * visit_url with the OpenAI actions it stands for; null when the actions there are no such visit.
 */
function visitAt(natives: readonly JsonObject[], at: number): { batched: BatchedAction; used: number } | null {
  const typed = natives[at + 1];
  if (!opensAddressBar(natives[at]) || typed?.type !== 'type' || typeof typed.text !== 'string') return null;
  const url = typed.text.trim();
  if (url === '' || /\s/.test(url)) return null;
  const used = pressesEnter(natives[at + 2]) ? 3 : 2;
  return { batched: { action: { action: 'visit_url', url }, native: natives.slice(at, at + used) }, used };
}

/** Runs `read`; an error it throws keeps the OpenAI action as the model wrote it (recorded with the invalid output). */
function withWritten<T>(native: JsonObject, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ModelOutputError) err.written = { ...native };
    throw err;
  }
}

/**
 * The preview tool sends one action per call, so CTRL+L, the address and ENTER come as three calls: CTRL+L alone is
 * nothing (our browser has no address bar to focus), and a call that only types a whole web address (http or https,
 * no spaces) visits it. Typing a whole address into a page's own field is rare; a preview model could not visit at all
 * otherwise. Null: the action is no such step.
 */
function previewVisitStep(native: JsonObject): AgentAction | null {
  if (opensAddressBar(native)) return { action: 'wait', time: 0 };
  const text = native.type === 'type' && typeof native.text === 'string' ? native.text.trim() : '';
  return /^https?:\/\/\S+$/i.test(text) ? { action: 'visit_url', url: text } : null;
}

/**
 * A call's OpenAI actions, in order, as our batch; `native` on each is the OpenAI action (or actions) it came from.
 * `preview`: the call is the preview tool's single action (see previewVisitStep).
 */
export function ourBatch(natives: readonly JsonObject[], screen: ScreenSize, preview = false): BatchedAction[] {
  const single = preview && natives.length === 1 && natives[0] ? previewVisitStep(natives[0]) : null;
  if (single) return [{ action: single, native: natives[0] }];
  const batch: BatchedAction[] = [];
  for (let at = 0; at < natives.length;) {
    const visit = visitAt(natives, at);
    if (visit) {
      batch.push(visit.batched);
      at += visit.used;
      continue;
    }
    const native = natives[at];
    if (!native) break;
    for (const action of withWritten(native, () => ourActions(native, screen))) batch.push({ action, native });
    at += 1;
  }
  return batch;
}
