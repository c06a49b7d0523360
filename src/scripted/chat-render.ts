// One scripted model turn (a StandInOutput, its points already in the format's space) written the way UI-TARS-1.5 and
// Qwen-VL write their outputs (pure), from the providers' documented formats, never from our families:
// - UI-TARS-1.5: `Thought: …\nAction: click(start_box='(x,y)')`, several actions of a batch separated by blank
//   lines; `type(content='…')` in Python escapes, a trailing `\n` pressing Enter; `hotkey(key='ctrl c')` in lower
//   case; `scroll(start_box=…, direction=…)`; `wait()`; `finished(content='…')` for the answer (`finished()` for a
//   bare status); `call_user()` for a question, the question as the Thought. No hover, triple or middle click.
// - Qwen-VL: one `computer_use` call per model turn, `{"action": …, "coordinate": [x, y], …}`, only the actions the
//   request's enum offers; a question is text only (Qwen has no ask action), the answer `answer` (Qwen3) or text
//   only when the enum has no `answer` (Qwen2.5), a bare status `terminate`. Scroll `pixels` are in the format's
//   space, positive up (hscroll: positive left). The route puts a call in `<tool_call>` text or native `tool_calls`.
// Navigation has no action in either: CTRL+L, the URL, ENTER; back is ALT+LEFT (as a person at the keyboard would).
// Something the format cannot say is left out, and named in `dropped`.
import type { ScreenAction, ScreenPoint, StandInMalformed, StandInOutput } from './providers/output';
import type { Size } from './script-turns';

/** Pixels beyond the space's edge where an `off-screen` malformed point lands. */
const OFF_SCREEN_MARGIN = 40;
/** Key names as a person writes them → the lower-case names both formats use (pyautogui's). */
const KEY_NAMES: Record<string, string> = {
  control: 'ctrl',
  escape: 'esc',
  arrowup: 'up',
  arrowdown: 'down',
  arrowleft: 'left',
  arrowright: 'right',
  ' ': 'space',
  controlormeta: 'ctrl',
};
const keyName = (k: string): string => KEY_NAMES[k.toLowerCase()] ?? k.toLowerCase();

/** What a renderer needs besides the turn: the space (for `off-screen`), and whether a final text is a bare status. */
export interface RenderContext {
  space: Size;
  /** The final answer is a terminate's status, not an answer (`finished()`, Qwen's `terminate`). */
  statusOnly: boolean;
}

export interface Rendered<T> {
  calls: T[];
  dropped: string[];
}

const round = (p: ScreenPoint): [number, number] => [Math.round(p.x), Math.round(p.y)];

// ---- UI-TARS-1.5 ----

const box = (p: ScreenPoint): string => `'(${round(p).join(',')})'`;
/** A string in Python's single-quoted form, as the prompt asks (\', \", \n escaped). */
const pyString = (s: string): string =>
  `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/"/g, '\\"').replace(/\n/g, '\\n')}'`;

function uiTarsCalls(a: ScreenAction): string[] {
  switch (a.kind) {
    case 'click':
      if (a.button === 'right' && a.count === 1) return [`right_single(start_box=${box(a)})`];
      if (a.button !== 'left' || a.count === 3) return [];
      return [`${a.count === 2 ? 'left_double' : 'click'}(start_box=${box(a)})`];
    case 'drag': {
      const [from, to] = [a.path[0], a.path[a.path.length - 1]];
      return from && to ? [`drag(start_box=${box(from)}, end_box=${box(to)})`] : [];
    }
    case 'type':
      return [
        ...(a.at ? [`click(start_box=${box(a.at)})`] : []),
        `type(content=${pyString(a.text + (a.pressEnter ? '\n' : ''))})`,
      ];
    case 'keys':
      return [`hotkey(key='${a.keys.map(keyName).join(' ')}')`];
    case 'scroll': {
      const direction = a.dy > 0 ? 'down' : a.dy < 0 ? 'up' : a.dx > 0 ? 'right' : 'left';
      return [`scroll(start_box=${box(a)}, direction='${direction}')`];
    }
    case 'wait':
      return ['wait()'];
    case 'navigate':
      return ["hotkey(key='ctrl l')", `type(content=${pyString(`${a.url}\n`)})`];
    case 'back':
      return ["hotkey(key='alt left')"];
    default:
      return [];
  }
}

/** The first call malformed the way the script asks; the calls after it kept (cut off for `unparsable`). */
function malformUiTars(calls: string[], kind: StandInMalformed, space: Size): string[] {
  const [first = '', ...rest] = calls;
  const pointer = calls.findIndex((c) => c.includes("start_box='("));
  const withPointer = (edit: (c: string) => string): string[] => {
    if (pointer < 0) throw new Error(`malformed '${kind}' needs a pointer action in the turn`);
    return calls.map((c, i) => (i === pointer ? edit(c) : c));
  };
  switch (kind) {
    case 'unparsable': {
      // An output cut off inside its first call: a box with one number, or an unclosed string or call.
      const comma = first.indexOf(',');
      const quote = first.indexOf("'");
      const cut = comma >= 0 ? comma + 1 : quote >= 0 ? quote + 2 : first.indexOf('(') + 1;
      return [first.slice(0, cut)];
    }
    case 'unknown-action':
      return [first.replace(/^\w+/, 'tap'), ...rest];
    case 'missing-coordinate':
      return withPointer((c) => c.replace(/start_box='[^']*'/, "start_box=''"));
    case 'off-screen': {
      const far = `'(${space.width + OFF_SCREEN_MARGIN},${space.height + OFF_SCREEN_MARGIN})'`;
      return withPointer((c) => c.replace(/start_box='[^']*'/, `start_box=${far}`));
    }
    default:
      throw new Error(`UI-TARS does not send the malformed kind ${kind}`);
  }
}

/** The turn as UI-TARS-1.5's output text; `dropped` names the actions it has no call for. */
export function renderUiTars(out: StandInOutput, ctx: RenderContext): Rendered<string> {
  const dropped: string[] = [];
  let thought = out.thoughts;
  let calls = out.actions.flatMap((a) => {
    const c = uiTarsCalls(a);
    if (c.length === 0) dropped.push(a.kind === 'click' ? `${a.button} click ×${a.count}` : a.kind);
    return c;
  });
  if (out.final?.kind === 'question') {
    thought = out.final.text;
    calls = ['call_user()'];
  } else if (out.final) {
    calls = [ctx.statusOnly ? 'finished()' : `finished(content=${pyString(out.final.text)})`];
  }
  if (calls.length === 0) return { calls: [], dropped };
  if (out.malformed) calls = malformUiTars(calls, out.malformed, ctx.space);
  const action = `Action: ${calls.join('\n\n')}`;
  return { calls: [thought.trim() ? `Thought: ${thought.trim()}\n${action}` : action], dropped };
}

// ---- Qwen-VL ----

/** One Qwen model turn: a `computer_use` call's arguments, or a text-only output (a question, Qwen2.5's answer). */
export type QwenCall = { args: Record<string, unknown> } | { text: string };

function qwenArgs(a: ScreenAction): Record<string, unknown>[] {
  const at = (p: ScreenPoint) => ({ coordinate: round(p) });
  switch (a.kind) {
    case 'click': {
      if (a.button !== 'left') return [{ action: `${a.button}_click`, ...at(a) }];
      return [{ action: ['left_click', 'double_click', 'triple_click'][a.count - 1], ...at(a) }];
    }
    case 'move':
      return [{ action: 'mouse_move', ...at(a) }];
    case 'drag': {
      const to = a.path[a.path.length - 1];
      return to ? [{ action: 'left_click_drag', ...at(to) }] : [];
    }
    case 'type':
      return [
        ...(a.at ? [{ action: 'left_click', ...at(a.at) }] : []),
        { action: 'type', text: a.text },
        ...(a.pressEnter ? [{ action: 'key', keys: ['enter'] }] : []),
      ];
    case 'keys':
      return [{ action: 'key', keys: a.keys.map(keyName) }];
    case 'scroll':
      if (a.dy !== 0) return [{ action: 'scroll', pixels: -Math.round(a.dy) }];
      return [{ action: 'hscroll', pixels: -Math.round(a.dx) }];
    case 'wait':
      return [{ action: 'wait', time: a.seconds }];
    case 'navigate':
      return [
        { action: 'key', keys: ['ctrl', 'l'] },
        { action: 'type', text: a.url },
        { action: 'key', keys: ['enter'] },
      ];
    case 'back':
      return [{ action: 'key', keys: ['alt', 'left'] }];
    default:
      return [];
  }
}

/**
 * The malformed model turn: one call, the first one broken the way the script asks, or the first pointer call for
 * `missing-coordinate` and `off-screen` (`unparsable` is written by the route: it breaks the JSON text).
 */
function malformQwen(calls: QwenCall[], kind: StandInMalformed, space: Size): QwenCall[] {
  const [first] = calls;
  if (!first || !('args' in first)) throw new Error('a text-only Qwen output cannot be malformed');
  if (kind === 'unparsable') return [first];
  if (kind === 'unknown-action') return [{ args: { ...first.args, action: 'click' } }];
  const pointer = calls.find((c): c is { args: Record<string, unknown> } => 'args' in c && 'coordinate' in c.args);
  if (!pointer) throw new Error(`malformed '${kind}' needs a pointer action in the turn`);
  const { coordinate: _dropped, ...rest } = pointer.args;
  if (kind === 'missing-coordinate') return [{ args: rest }];
  if (kind === 'off-screen') {
    return [{ args: { ...rest, coordinate: [space.width + OFF_SCREEN_MARGIN, space.height + OFF_SCREEN_MARGIN] } }];
  }
  throw new Error(`Qwen-VL does not send the malformed kind ${kind}`);
}

/** The turn as Qwen model turns, one call each, only the offered actions; `dropped` names what it cannot say. */
export function renderQwen(
  out: StandInOutput,
  ctx: RenderContext & { offered: readonly string[] },
): Rendered<QwenCall> {
  const dropped: string[] = [];
  let calls: QwenCall[] = out.actions.flatMap((a) => {
    const args = qwenArgs(a).filter((x) => ctx.offered.includes(String(x.action)));
    if (args.length === 0) dropped.push(a.kind === 'click' ? `${a.button} click ×${a.count}` : a.kind);
    return args.map((x) => ({ args: x }));
  });
  const final = out.final;
  if (final?.kind === 'question') calls = [{ text: final.text }];
  else if (final && ctx.statusOnly) calls = [{ args: { action: 'terminate', status: final.text } }];
  else if (final)
    calls = [ctx.offered.includes('answer') ? { args: { action: 'answer', text: final.text } } : { text: final.text }];
  if (calls.length > 0 && out.malformed) calls = malformQwen(calls, out.malformed, ctx.space);
  return { calls, dropped };
}
