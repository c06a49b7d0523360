// Gemini's computer-use functions as our actions: both predefined function sets (the 2.5 preview's `click_at`,
// `type_text_at`, `scroll_at`, …; the 3.x set's `click`, `type`, `hotkey`, `scroll`, … with an `intent`), read by
// name so a model of either set is understood whichever set the endpoint names. Points come on Gemini's 0–999 grid
// over the screenshot (px = x/1000*width), which is our 'norm1000' space as it is: no conversion. Scroll amounts
// become thousandths of the screen along the axis (what 'norm1000' scroll pixels mean, src/coords/viewport.ts),
// positive up or left. One function may become two of ours (a scroll at a point: mouse_move, then scroll; a drag:
// mouse_move to the start, then left_click_drag to the end). A function we cannot carry out throws.
import type { FunctionCall } from '@google/genai';
import { toKeys } from '../../actions/normalize';
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import { InvalidActionArgumentsError, UnknownActionError } from '../../model/errors';

/** The two predefined function sets: the 2.5 preview's and the 3.x models'. */
export type GeminiFunctionSet = '2.5' | '3';
export const GEMINI_FUNCTION_SETS: readonly GeminiFunctionSet[] = ['2.5', '3'];

/**
 * Functions each set has that we cannot carry out, excluded from the tool (`excludedPredefinedFunctions`): 3.x's
 * held buttons and keys and its middle click have no action of ours. The 2.5 set is carried out whole.
 */
export const EXCLUDED_FUNCTIONS: Record<GeminiFunctionSet, readonly string[]> = {
  '2.5': [],
  '3': ['middle_click', 'mouse_down', 'mouse_up', 'key_down', 'key_up'],
};

/** The functions we read, for the feedback after an unknown one. */
export const SUPPORTED_FUNCTIONS = [
  'click_at', 'hover_at', 'type_text_at', 'key_combination', 'scroll_document', 'scroll_at', 'drag_and_drop',
  'navigate', 'go_back', 'go_forward', 'search', 'wait_5_seconds', 'open_web_browser', 'click', 'double_click', 'triple_click',
  'right_click', 'move', 'type', 'press_key', 'hotkey', 'scroll', 'wait', 'take_screenshot',
]; // prettier-ignore

/** How far `scroll_document` scrolls: most of a screen, in thousandths, as a Page Down key does in a browser. */
const PAGE_SCROLL = 875;
/** The docs' defaults: `scroll_at`'s magnitude on the grid, 3.x `scroll`'s magnitude_in_pixels. */
const GRID_SCROLL_DEFAULT = 800;
const PIXEL_SCROLL_DEFAULT = 300;
/** Where `search` goes: the reference implementation opens a search engine's home page. */
const SEARCH_HOME = 'https://www.google.com/';

type Args = Record<string, unknown>;
type Point = [number, number];

function num(args: Args, key: string, fn: string): number {
  const value = args[key];
  if (value === undefined || value === null) throw new InvalidActionArgumentsError(fn, key, 'is missing');
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    throw new InvalidActionArgumentsError(fn, key, `is ${JSON.stringify(value)}, not a number`);
  }
  return n;
}

/** A point on the 0–999 grid (1000 is let through: the grid's far edge). */
function point(args: Args, fn: string, xKey = 'x', yKey = 'y'): Point {
  const p: Point = [num(args, xKey, fn), num(args, yKey, fn)];
  p.forEach((v, i) => {
    if (v < 0 || v > 1000) throw new InvalidActionArgumentsError(fn, i ? yKey : xKey, `${v}, off the 0–999 grid`);
  });
  return p;
}

function str(args: Args, key: string, fn: string): string {
  const value = args[key];
  if (typeof value !== 'string' || value === '') {
    throw new InvalidActionArgumentsError(fn, key, value === undefined ? 'is missing' : 'is not a non-empty string');
  }
  return value;
}

function bool(args: Args, key: string, fallback: boolean): boolean {
  const value = args[key];
  return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : fallback;
}

/** A scroll of `amount` thousandths of the screen in `direction`: ours is positive up and left. */
function scrollBy(direction: unknown, amount: number, fn: string, thoughts: string): AgentAction {
  const pixels = Math.round(Math.abs(amount));
  switch (direction) {
    case 'up':
      return { action: 'scroll', thoughts, pixels };
    case 'down':
      return { action: 'scroll', thoughts, pixels: -pixels };
    case 'left':
      return { action: 'hscroll', thoughts, pixels };
    case 'right':
      return { action: 'hscroll', thoughts, pixels: -pixels };
    default:
      throw new InvalidActionArgumentsError(fn, 'direction', `is ${JSON.stringify(direction)}, not up/down/left/right`);
  }
}

/** 3.x `scroll`: `magnitude_in_pixels` (the docs: screenshot pixels) or `magnitude` (the reference: the grid). */
function scroll3(args: Args, screen: ScreenSize, thoughts: string): AgentAction[] {
  const vertical = args.direction === 'up' || args.direction === 'down';
  let amount: number;
  if (args.magnitude_in_pixels !== undefined) {
    amount = (num(args, 'magnitude_in_pixels', 'scroll') / (vertical ? screen.height : screen.width)) * 1000;
  } else if (args.magnitude !== undefined) amount = num(args, 'magnitude', 'scroll');
  else amount = (PIXEL_SCROLL_DEFAULT / (vertical ? screen.height : screen.width)) * 1000;
  const move: AgentAction[] =
    args.x !== undefined || args.y !== undefined
      ? [{ action: 'mouse_move', thoughts, coordinate: point(args, 'scroll') }]
      : [];
  return [...move, scrollBy(args.direction, amount, 'scroll', thoughts)];
}

/** `drag_and_drop` in either spelling: `x, y, destination_x, destination_y` or `start_x, start_y, end_x, end_y`. */
function drag(args: Args, thoughts: string): AgentAction[] {
  const docs = args.start_x !== undefined || args.end_x !== undefined;
  const from = docs ? point(args, 'drag_and_drop', 'start_x', 'start_y') : point(args, 'drag_and_drop');
  const to = docs
    ? point(args, 'drag_and_drop', 'end_x', 'end_y')
    : point(args, 'drag_and_drop', 'destination_x', 'destination_y');
  return [
    { action: 'mouse_move', thoughts, coordinate: from },
    { action: 'left_click_drag', thoughts, coordinate: to },
  ];
}

/** 3.x `hotkey{keys}`: a list of key names, or one chord string. */
function hotkeyKeys(args: Args): string[] {
  const keys = args.keys;
  if (Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === 'string' && k !== '')) {
    return keys as string[];
  }
  const chord = toKeys(keys);
  if (!chord) throw new InvalidActionArgumentsError('hotkey', 'keys', 'is not a list of key names');
  return chord;
}

type Mapper = (args: Args, screen: ScreenSize, thoughts: string) => AgentAction[];

const pointer =
  (action: 'left_click' | 'right_click' | 'double_click' | 'triple_click' | 'mouse_move', fn: string): Mapper =>
  (args, _screen, thoughts) => [{ action, thoughts, coordinate: point(args, fn) }];

const MAPPERS: Record<string, Mapper> = {
  // Both sets.
  navigate: (args, _s, thoughts) => [{ action: 'visit_url', thoughts, url: str(args, 'url', 'navigate') }],
  go_back: (_a, _s, thoughts) => [{ action: 'history_back', thoughts }],
  // No forward action of ours: the browser's own chord, which the browser layer routes to history forward.
  go_forward: (_a, _s, thoughts) => [{ action: 'key', thoughts, keys: ['Alt', 'ArrowRight'] }],
  drag_and_drop: (args, _s, thoughts) => drag(args, thoughts),
  // The 2.5 set.
  open_web_browser: (_a, _s, thoughts) => [{ action: 'wait', thoughts, time: 0 }], // the browser is open already
  wait_5_seconds: (_a, _s, thoughts) => [{ action: 'wait', thoughts, time: 5 }],
  search: (_a, _s, thoughts) => [{ action: 'visit_url', thoughts, url: SEARCH_HOME }],
  click_at: pointer('left_click', 'click_at'),
  hover_at: pointer('mouse_move', 'hover_at'),
  // `press_enter`: the docs default it to true, the reference code to false. We take false: an Enter not pressed
  // costs a step, an Enter pressed unasked may submit a form. `clear_before_typing` defaults to true in both.
  type_text_at: (args, _s, thoughts) => [
    {
      action: 'type',
      thoughts,
      coordinate: point(args, 'type_text_at'),
      text: typeof args.text === 'string' ? args.text : str(args, 'text', 'type_text_at'),
      press_enter: bool(args, 'press_enter', false),
      delete_existing_text: bool(args, 'clear_before_typing', true),
    },
  ],
  key_combination: (args, _s, thoughts) => {
    const keys = toKeys(args.keys);
    if (!keys) throw new InvalidActionArgumentsError('key_combination', 'keys', 'is not a key chord like "Control+A"');
    return [{ action: 'key', thoughts, keys }];
  },
  scroll_document: (args, _s, thoughts) => [scrollBy(args.direction, PAGE_SCROLL, 'scroll_document', thoughts)],
  scroll_at: (args, _s, thoughts) => [
    { action: 'mouse_move', thoughts, coordinate: point(args, 'scroll_at') },
    scrollBy(
      args.direction,
      args.magnitude === undefined ? GRID_SCROLL_DEFAULT : num(args, 'magnitude', 'scroll_at'),
      'scroll_at',
      thoughts,
    ),
  ],
  // The 3.x set.
  click: pointer('left_click', 'click'),
  double_click: pointer('double_click', 'double_click'),
  triple_click: pointer('triple_click', 'triple_click'),
  right_click: pointer('right_click', 'right_click'),
  move: pointer('mouse_move', 'move'),
  type: (args, _s, thoughts) => [
    {
      action: 'type',
      thoughts,
      text: typeof args.text === 'string' ? args.text : str(args, 'text', 'type'),
      press_enter: bool(args, 'press_enter', false),
    },
  ],
  press_key: (args, _s, thoughts) => [{ action: 'key', thoughts, keys: toKeys(str(args, 'key', 'press_key')) ?? [] }],
  hotkey: (args, _s, thoughts) => [{ action: 'key', thoughts, keys: hotkeyKeys(args) }],
  wait: (args, _s, thoughts) => [
    { action: 'wait', thoughts, time: args.seconds === undefined ? 1 : Math.max(0, num(args, 'seconds', 'wait')) },
  ],
  take_screenshot: (_a, _s, thoughts) => [{ action: 'wait', thoughts, time: 0 }], // every result carries one
  scroll: (args, screen, thoughts) => scroll3(args, screen, thoughts),
};

/** The call's arguments, without the safety decision and the 3.x intent (they are not arguments of the action). */
function actionArgs(call: FunctionCall): Args {
  const { safety_decision: _decision, intent: _intent, ...args } = call.args ?? {};
  return args;
}

/** The call's `intent` (3.x), when it has one. */
export function intentOf(call: FunctionCall): string | undefined {
  const intent = call.args?.intent;
  return typeof intent === 'string' && intent.trim() !== '' ? intent.trim() : undefined;
}

/** The call's safety decision asking the person to confirm, or undefined. */
export function confirmationOf(call: FunctionCall): { explanation: string } | undefined {
  const decision = call.args?.safety_decision;
  if (typeof decision !== 'object' || decision === null) return undefined;
  const { decision: kind, explanation } = decision as { decision?: unknown; explanation?: unknown };
  if (kind !== 'require_confirmation') return undefined;
  return { explanation: typeof explanation === 'string' && explanation.trim() ? explanation.trim() : '' };
}

/** One function call as our actions (one or two); throws a ModelOutputError for one we cannot carry out. */
export function actionsOfCall(call: FunctionCall, screen: ScreenSize, thoughts: string): AgentAction[] {
  const name = call.name ?? '';
  const mapper = Object.hasOwn(MAPPERS, name) ? MAPPERS[name] : undefined;
  if (!mapper) throw new UnknownActionError(name, SUPPORTED_FUNCTIONS);
  const actions = mapper(actionArgs(call), screen, thoughts);
  if (actions.some((a) => a.action === 'key' && a.keys.length === 0)) {
    throw new InvalidActionArgumentsError(name, 'key', 'is empty');
  }
  return actions;
}
