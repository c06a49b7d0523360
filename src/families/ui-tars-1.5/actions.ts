// One UI-TARS-1.5 action (its name and arguments, as `@ui-tars/action-parser` read them) turned into our actions.
// Points are absolute pixels of the screenshot the model saw (smart_resize, factor 28): our 'resized-pixels' space, so
// they pass through unchanged; a box [x1,y1,x2,y2] is its centre. The parser's own conversion to screen pixels is not
// used: our dispatch converts from the family's space to the viewport in one place (src/coords/viewport.ts).
// Some actions become two of ours: drag is mouse_move to the start then left_click_drag to the end, and scroll at a
// point is mouse_move there then scroll (or hscroll) by 80% of the screen's height (or width), as UI-TARS-desktop's
// browser operator does.
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import { InvalidActionArgumentsError, UnknownActionError } from '../../model/errors';
import { UI_TARS_ACTION_NAMES } from './prompt';

/** An action as the parser returns it: the function's name and its arguments (boxes as JSON number lists). */
export interface UiTarsCall {
  name: string;
  inputs: Readonly<Record<string, unknown>>;
  /** The call as the model wrote it (box tokens removed), for arguments the parser does not read faithfully. */
  written: string;
}

/** How far one scroll turns the page: this share of the screen's height (or width, sideways). */
export const SCROLL_SHARE = 0.8;
/** wait() sleeps this many seconds, as the prompt tells the model. */
export const WAIT_SECONDS = 5;
/** The question asked when call_user() comes with no thought to say what the model needs. */
export const DEFAULT_QUESTION = 'I need your help to continue this task. What should I do?';

/** Other names the UI-TARS models and their prompt variants use for the same actions. */
const ALIASES: Readonly<Record<string, string>> = {
  left_single: 'click',
  double_click: 'left_double',
  right_click: 'right_single',
  select: 'drag',
};

type Point = [number, number];

function badArgument(action: string, field: string, detail: string): InvalidActionArgumentsError {
  return new InvalidActionArgumentsError(action, field, detail);
}

/** A box argument's centre: the parser gives "[x1,y1,x2,y2]" (a point repeated); anything else is refused. */
export function boxCentre(call: UiTarsCall, field: 'start_box' | 'end_box', screen: ScreenSize): Point {
  const value = call.inputs[field];
  if (value === undefined || value === '') throw badArgument(call.name, field, 'missing');
  let numbers: unknown;
  try {
    numbers = JSON.parse(String(value));
  } catch {
    numbers = undefined;
  }
  const ok = Array.isArray(numbers) && numbers.length === 4 && numbers.every((n) => Number.isFinite(n));
  if (!ok) throw badArgument(call.name, field, `not a point (x,y) or a box [x1,y1,x2,y2]: ${call.written}`);
  const [x1, y1, x2, y2] = numbers as number[];
  const point: Point = [((x1 ?? 0) + (x2 ?? 0)) / 2, ((y1 ?? 0) + (y2 ?? 0)) / 2];
  if (point[0] < 0 || point[1] < 0 || point[0] > screen.width || point[1] > screen.height) {
    throw badArgument(
      call.name,
      field,
      `(${point[0]},${point[1]}), outside the screenshot (0-${screen.width}, 0-${screen.height})`,
    );
  }
  return point;
}

/** Python string escapes in a written text: \n, \t, \', \", \\ (others are kept as written). */
export function unescapePython(text: string): string {
  const table: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', "'": "'", '"': '"', '\\': '\\' };
  return text.replace(/\\(.)/gs, (whole, c: string) => table[c] ?? whole);
}

/**
 * A text argument (content=…) read from the call as written: the parser splits arguments on commas outside single
 * quotes (cutting a double-quoted text at its first comma) and leaves escapes undecoded. The value runs from its
 * opening quote to the last quote of the same kind before the call's closing parenthesis.
 */
export function textArgument(call: UiTarsCall, field: string): string | undefined {
  const open = new RegExp(`\\b${field}\\s*=\\s*(['"])`).exec(call.written);
  if (!open) {
    const bare = call.inputs[field];
    return typeof bare === 'string' ? unescapePython(bare) : undefined;
  }
  const quote = open[1] ?? "'";
  const start = open.index + open[0].length;
  const body = call.written.slice(start).replace(/\)\s*$/, '');
  const end = body.lastIndexOf(quote);
  return unescapePython(end >= 0 ? body.slice(0, end) : body);
}

function keysOf(call: UiTarsCall): string[] {
  const written = call.inputs.key ?? call.inputs.hotkey;
  const keys =
    typeof written === 'string'
      ? written
          .toLowerCase()
          .split(/[\s+]+/)
          .filter(Boolean)
      : [];
  if (keys.length === 0) throw badArgument(call.name, 'key', 'missing');
  return keys;
}

function scrollOf(call: UiTarsCall, screen: ScreenSize, thoughts: string): AgentAction[] {
  const direction = typeof call.inputs.direction === 'string' ? call.inputs.direction.trim().toLowerCase() : '';
  if (!['up', 'down', 'left', 'right'].includes(direction)) {
    const detail = direction ? `'${direction}', not one of down, up, right, left` : 'missing';
    throw badArgument(call.name, 'direction', detail);
  }
  const vertical = direction === 'up' || direction === 'down';
  const amount = Math.round(SCROLL_SHARE * (vertical ? screen.height : screen.width));
  // Our amounts are positive toward the start of the page (up, left), as the wheel's are not.
  const pixels = direction === 'up' || direction === 'left' ? amount : -amount;
  const scroll: AgentAction = vertical
    ? { action: 'scroll', thoughts, pixels }
    : { action: 'hscroll', thoughts, pixels };
  if (call.inputs.start_box === undefined) return [scroll];
  return [{ action: 'mouse_move', thoughts, coordinate: boxCentre(call, 'start_box', screen) }, scroll];
}

/** The name of a call as the prompt spells it, or UnknownActionError naming the prompt's actions. */
export function canonicalName(name: string): string {
  const canonical = ALIASES[name] ?? name;
  if (!UI_TARS_ACTION_NAMES.includes(canonical)) throw new UnknownActionError(name, UI_TARS_ACTION_NAMES);
  return canonical;
}

/**
 * Our actions for one UI-TARS call, in order; `thoughts` is the output's thought (finished() without content ends
 * with it, call_user() asks it). Throws a ModelOutputError for an unknown action or arguments it cannot use.
 */
export function ourActions(call: UiTarsCall, screen: ScreenSize, thoughts: string): AgentAction[] {
  const at = (field: 'start_box' | 'end_box') => boxCentre(call, field, screen);
  switch (canonicalName(call.name)) {
    case 'click':
      return [{ action: 'left_click', thoughts, coordinate: at('start_box') }];
    case 'left_double':
      return [{ action: 'double_click', thoughts, coordinate: at('start_box') }];
    case 'right_single':
      return [{ action: 'right_click', thoughts, coordinate: at('start_box') }];
    case 'drag':
      return [
        { action: 'mouse_move', thoughts, coordinate: at('start_box') },
        { action: 'left_click_drag', thoughts, coordinate: at('end_box') },
      ];
    case 'hotkey':
      return [{ action: 'key', thoughts, keys: keysOf(call) }];
    case 'type': {
      const content = textArgument(call, 'content');
      if (content === undefined) throw badArgument(call.name, 'content', "missing: write type(content='xxx')");
      const submit = content.endsWith('\n');
      const text = submit ? content.slice(0, -1) : content;
      return [{ action: 'type', thoughts, text, ...(submit ? { press_enter: true } : {}) }];
    }
    case 'scroll':
      return scrollOf(call, screen, thoughts);
    case 'wait':
      return [{ action: 'wait', thoughts, time: WAIT_SECONDS }];
    case 'finished':
      return [{ action: 'terminate', thoughts, answer: textArgument(call, 'content')?.trim() || thoughts }];
    case 'call_user':
    default:
      return [{ action: 'ask_user_question', thoughts, question: thoughts.trim() || DEFAULT_QUESTION }];
  }
}
