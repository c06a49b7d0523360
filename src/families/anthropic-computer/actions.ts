// An Anthropic message's computer actions read into ours. A beta tool's tool_use is named `computer` with the action
// in `input.action`; the toolset's is named after the action (`left_click`) and carries `toolset_name`. Several
// tool_use blocks in one message are one batch. One of theirs may become several of ours (a drag from a start point is
// mouse_move + left_click_drag; a scroll at a point is mouse_move + scroll), and three of theirs may become one of ours
// (key ctrl+l, type a URL, key Return: visit_url, since our browser has no address bar). Zoom and screenshot have no
// action of ours: the next request answers them (a zoom with the region cropped from the screenshot); a turn of
// nothing else is a wait of 0 seconds, so the step still takes its screenshot. Coordinates are screenshot pixels,
// our 'resized-pixels' space, checked against the screen. Scroll amounts are wheel clicks of 100 px.
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import { EmptyOutputError, InvalidActionArgumentsError, UnknownActionError } from '../../model/errors';
import { BETA_TOOL_NAME } from './tools';

/** Pixels per wheel click of `scroll_amount` (a Chromium wheel notch). */
export const SCROLL_PIXELS_PER_CLICK = 100;
/** The toolset's limit on `key`'s `repeat`. */
const MAX_REPEAT = 100;

/** The Anthropic actions we carry out, as the model reads them in an unknown action's error. */
export const SUPPORTED_ACTIONS = [
  'key',
  'type',
  'mouse_move',
  'left_click',
  'left_click_drag',
  'right_click',
  'double_click',
  'triple_click',
  'scroll',
  'wait',
  'screenshot',
  'zoom',
] as const;

type Json = Record<string, unknown>;
const isRecord = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A tool_use block as the response carried it. */
export interface ToolUse extends Json {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** A region to zoom into, in screenshot pixels: [x0, y0, x1, y1]. */
export type Region = readonly [number, number, number, number];

/** One action of ours, the tool_use it was read from, and the tool_use blocks it carries out (in order). */
export interface ReadAction {
  action: AgentAction;
  native: ToolUse;
  owners: number[];
}

/** A message read: its text, its tool_use blocks, our actions, and the zoom regions by tool_use index. */
export interface TurnReading {
  text: string;
  toolUses: ToolUse[];
  actions: ReadAction[];
  zooms: Map<number, Region>;
}

/** A message's content blocks (a string content is one text block). */
export function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

/** The message's text: its text blocks joined, trimmed. */
export function textOf(blocks: readonly Json[]): string {
  return blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => String(b.text))
    .join('\n\n')
    .trim();
}

/** The message's thinking, where it shows any (a summary; empty when the model's thinking is omitted). */
export function thinkingOf(blocks: readonly Json[]): string {
  return blocks
    .filter((b) => b.type === 'thinking' && typeof b.thinking === 'string')
    .map((b) => String(b.thinking))
    .join('\n\n')
    .trim();
}

export function toolUsesOf(blocks: readonly Json[]): ToolUse[] {
  return blocks.filter(
    (b): b is ToolUse => b.type === 'tool_use' && typeof b.id === 'string' && typeof b.name === 'string',
  );
}

/** The action a tool_use asks for: a beta tool's `input.action`, the toolset's block name. */
export function actionNameOf(use: ToolUse): string {
  const input = isRecord(use.input) ? use.input : {};
  return use.name === BETA_TOOL_NAME && typeof input.action === 'string' ? input.action : use.name;
}

function inputOf(use: ToolUse): Json {
  return isRecord(use.input) ? use.input : {};
}

function pointOf(input: Json, field: string, name: string, screen: ScreenSize): [number, number] {
  const value = input[field];
  if (value === undefined) {
    throw new InvalidActionArgumentsError(name, field, 'missing (clicking at the cursor position is not supported)');
  }
  if (!Array.isArray(value) || value.length !== 2 || !value.every((n) => typeof n === 'number' && isFinite(n))) {
    throw new InvalidActionArgumentsError(name, field, `${JSON.stringify(value)}, which is not [x, y]`);
  }
  const [x, y] = value as [number, number];
  if (x < 0 || y < 0 || x > screen.width || y > screen.height) {
    throw new InvalidActionArgumentsError(
      name,
      field,
      `[${x},${y}] is outside the screen (0-${screen.width}, 0-${screen.height})`,
    );
  }
  return [x, y];
}

function refuseModifiers(input: Json, name: string): void {
  for (const field of ['text', 'key']) {
    const value = input[field];
    if (typeof value === 'string' && value.trim() !== '') {
      throw new InvalidActionArgumentsError(name, field, `"${value}": modifier keys are not supported here`);
    }
  }
}

function stringOf(input: Json, field: string, name: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') {
    throw new InvalidActionArgumentsError(name, field, value === undefined ? 'missing' : 'not a non-empty string');
  }
  return value;
}

/** xdotool key names with no equivalent in ours; the rest (Return, BackSpace, Page_Down, ctrl) our browser knows. */
const XDOTOOL_KEYS: Readonly<Record<string, string>> = {
  plus: '+',
  minus: '-',
  equal: '=',
  period: '.',
  comma: ',',
  slash: '/',
  backslash: '\\',
  semicolon: ';',
  apostrophe: "'",
  grave: '`',
  bracketleft: '[',
  bracketright: ']',
  kp_enter: 'Enter',
};

/** One xdotool chord (`ctrl+shift+t`) as our key names. */
function chordOf(chord: string): string[] {
  return chord.split('+').map((k) => XDOTOOL_KEYS[k.toLowerCase()] ?? k);
}

const isChord = (keys: readonly string[], ...want: string[]): boolean =>
  keys.length === want.length && keys.every((k, i) => k.toLowerCase() === want[i]);

function keyActions(input: Json): AgentAction[] {
  const text = stringOf(input, 'text', 'key');
  const repeat = input.repeat ?? 1;
  if (typeof repeat !== 'number' || !Number.isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT) {
    throw new InvalidActionArgumentsError('key', 'repeat', `${JSON.stringify(repeat)}, which is not 1-${MAX_REPEAT}`);
  }
  // xdotool presses space-separated chords one after another.
  const chords = text.trim().split(/\s+/).map(chordOf);
  const once = chords.map((keys): AgentAction => {
    if (isChord(keys, 'alt', 'left')) return { action: 'history_back' };
    return { action: 'key', keys };
  });
  return Array.from({ length: repeat }, () => once).flat();
}

function scrollActions(input: Json, screen: ScreenSize): AgentAction[] {
  refuseModifiers(input, 'scroll');
  const direction = input.scroll_direction;
  if (direction !== 'up' && direction !== 'down' && direction !== 'left' && direction !== 'right') {
    const written = direction === undefined ? 'missing' : `${JSON.stringify(direction)}, not up, down, left or right`;
    throw new InvalidActionArgumentsError('scroll', 'scroll_direction', written);
  }
  const amount = input.scroll_amount ?? 1;
  if (typeof amount !== 'number' || !isFinite(amount) || amount <= 0) {
    throw new InvalidActionArgumentsError(
      'scroll',
      'scroll_amount',
      `${JSON.stringify(amount)}, not a positive number`,
    );
  }
  // Ours: positive pixels scroll up (scroll) or left (hscroll).
  const pixels = Math.round(amount * SCROLL_PIXELS_PER_CLICK) * (direction === 'up' || direction === 'left' ? 1 : -1);
  const scroll: AgentAction =
    direction === 'up' || direction === 'down' ? { action: 'scroll', pixels } : { action: 'hscroll', pixels };
  // The wheel turns wherever the pointer is: a point given moves it there first.
  if (input.coordinate === undefined) return [scroll];
  return [{ action: 'mouse_move', coordinate: pointOf(input, 'coordinate', 'scroll', screen) }, scroll];
}

function regionOf(input: Json, screen: ScreenSize): Region {
  const value = input.region;
  if (!Array.isArray(value) || value.length !== 4 || !value.every((n) => typeof n === 'number' && isFinite(n))) {
    const written = value === undefined ? 'missing' : `${JSON.stringify(value)}, which is not [x0, y0, x1, y1]`;
    throw new InvalidActionArgumentsError('zoom', 'region', written);
  }
  const [x0, y0, x1, y1] = value as [number, number, number, number];
  const inside = Math.min(x0, y0) >= 0 && Math.max(x0, x1) <= screen.width && Math.max(y0, y1) <= screen.height;
  if (!inside || x1 <= x0 || y1 <= y0) {
    throw new InvalidActionArgumentsError(
      'zoom',
      'region',
      `[${x0},${y0},${x1},${y1}] is not a region inside the screen (0-${screen.width}, 0-${screen.height})`,
    );
  }
  return [x0, y0, x1, y1];
}

/** One tool_use as our actions (none for zoom and screenshot). */
function actionsOf(name: string, input: Json, screen: ScreenSize): AgentAction[] {
  const at = (field = 'coordinate') => pointOf(input, field, name, screen);
  switch (name) {
    case 'left_click':
    case 'right_click':
    case 'double_click':
    case 'triple_click':
      refuseModifiers(input, name);
      return [{ action: name, coordinate: at() }];
    case 'mouse_move':
      return [{ action: 'mouse_move', coordinate: at() }];
    case 'left_click_drag': {
      const start = at('start_coordinate');
      return [
        { action: 'mouse_move', coordinate: start },
        { action: 'left_click_drag', coordinate: at() },
      ];
    }
    case 'type':
      return [{ action: 'type', text: stringOf(input, 'text', 'type') }];
    case 'key':
      return keyActions(input);
    case 'scroll':
      return scrollActions(input, screen);
    case 'wait': {
      const duration = input.duration ?? 1;
      if (typeof duration !== 'number' || !isFinite(duration) || duration < 0) {
        throw new InvalidActionArgumentsError('wait', 'duration', `${JSON.stringify(duration)}, not seconds`);
      }
      return [{ action: 'wait', time: duration }];
    }
    case 'screenshot':
    case 'zoom':
      return [];
    default:
      throw new UnknownActionError(name, SUPPORTED_ACTIONS);
  }
}

/**
 * Key ctrl+l, type, (key Return) in a row become visit_url: our browser has no address bar. A ctrl+l with no type
 * after it would do nothing, and is refused so the model learns the form.
 */
function withNavigation(read: ReadAction[]): ReadAction[] {
  const out: ReadAction[] = [];
  for (let i = 0; i < read.length; i++) {
    const here = read[i] as ReadAction;
    if (here.action.action !== 'key' || !isChord(here.action.keys, 'ctrl', 'l')) {
      out.push(here);
      continue;
    }
    const typed = read[i + 1];
    if (typed?.action.action !== 'type') {
      throw new InvalidActionArgumentsError(
        'key',
        'text',
        '"ctrl+l" alone does nothing (there is no address bar): to open a URL, send key "ctrl+l", type the URL ' +
          'and key "Return" in one turn',
      );
    }
    const enter = read[i + 2];
    const pressed = enter?.action.action === 'key' && /^(return|enter)$/i.test(enter.action.keys.join('+'));
    const owners = [...here.owners, ...typed.owners, ...(pressed && enter ? enter.owners : [])];
    out.push({ action: { action: 'visit_url', url: typed.action.text.trim() }, native: typed.native, owners });
    i += pressed ? 2 : 1;
  }
  return out;
}

/**
 * A message's content read into our actions. An action not in `allowed`, an unknown action, an argument missing or
 * malformed, or a coordinate off the screen throws a ModelOutputError; a message with neither text nor tool_use
 * throws EmptyOutputError.
 */
export function readTurn(content: unknown, screen: ScreenSize, allowed: readonly string[]): TurnReading {
  const blocks = blocksOf(content);
  const text = textOf(blocks);
  const toolUses = toolUsesOf(blocks);
  if (toolUses.length === 0 && text === '') throw new EmptyOutputError();
  const zooms = new Map<number, Region>();
  const read: ReadAction[] = [];
  toolUses.forEach((use, owner) => {
    const name = actionNameOf(use);
    const input = inputOf(use);
    if (name === 'zoom') zooms.set(owner, regionOf(input, screen));
    for (const action of actionsOf(name, input, screen)) read.push({ action, native: use, owners: [owner] });
  });
  const actions = withNavigation(read);
  const first = toolUses[0];
  if (actions.length === 0 && first) {
    actions.push({ action: { action: 'wait', time: 0 }, native: first, owners: toolUses.map((_, i) => i) });
  }
  for (const { action } of actions) {
    if (!allowed.includes(action.action)) throw new UnknownActionError(action.action, allowed);
  }
  return { text, toolUses, actions, zooms };
}
