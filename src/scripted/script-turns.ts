// Script entries as one provider's sequence of model turns (pure). The scripted model's entries are written in the
// Fara action space, coordinates on Fara-1.5's 0–1000 grid; each provider stand-in (OpenAI Responses, Anthropic
// Messages, Gemini generateContent) plays the SAME entries as its own turns, each a StandInOutput in the pixels of
// the request's newest screenshot (coordinate × size / 1000); so do the chat route's UI-TARS and Qwen-VL formats
// (chat-formats.ts), in their own space. Scroll `pixels` are thousandths of the screen's height
// (hscroll: width), positive up (left), as Fara's are.
// What becomes of an entry:
// - a pointer, keyboard or browser action is one action of the turn; `then: [...]` adds more actions to the same
//   model call (a batch), which OpenAI's preview tool, one action per call, plays as consecutive turns;
// - ask_user_question is a text-only question, terminate a text-only answer;
// - read_page_answer_question, pause_and_memorize_fact and web_search have no provider equivalent and are dropped
//   (as are raw, tool_calls and judge entries, which only the chat route speaks): `dropped` lists them;
// - `malformed` adds one turn before the entry's: the same output, malformed the way the provider really does it;
// - `safety_check` rides on the entry's first action (OpenAI, Gemini); Anthropic, UI-TARS and Qwen-VL, which have no
//   such field, ask in plain text first: a text-only question turn, then the entry's action.
import { fara15ActionSchema, fara7bActionSchema } from '../actions/schemas';
import type { AgentAction } from '../actions/schemas';
import { splitForPreview } from './providers/openai-responses';
import type { ScreenAction, ScreenPoint, StandInMalformed, StandInOutput } from './providers/output';
import { ScriptError } from './script';
import type { ScriptEntry, ScriptUsage } from './script';

export type StandInProvider = 'openai' | 'anthropic' | 'gemini';
/** The chat-completions formats other than Fara's that the chat route plays the same turns in (chat-formats.ts). */
export type ChatStandIn = 'ui-tars' | 'qwen-vl';

export interface Size {
  width: number;
  height: number;
}

export interface TurnOptions {
  provider: StandInProvider | ChatStandIn;
  /** OpenAI's computer_use_preview tool: one action per model call, so a batch is played as consecutive turns. */
  oneActionPerTurn?: boolean;
  /** The request's newest screenshot: the points are in its pixels. */
  screen: Size;
  /** Typing needs a point (Gemini's 2.5 set: type_text_at): typing without one types where the pointer last went. */
  typeAtPointer?: boolean;
  /** The person's latest reply, for `{{reply}}` (absent: `{{reply}}` stays as written). */
  reply?: string;
}

/** One model call's output, and where it comes from. */
export interface ProviderTurn {
  /** The script entry (0-based). */
  entry: number;
  /** malformed: the extra malformed turn; check: carries (or, on Anthropic, asks) the provider's confirmation. */
  kind: 'malformed' | 'check' | 'action' | 'text';
  /** The entry's first turn: its faults and delay apply here. */
  first: boolean;
  output: StandInOutput;
  /** The entry's `usage` switch (script.ts UsageSchema): the caller estimates counts when it is undefined. */
  usage: ScriptUsage | undefined;
}

export interface DroppedAction {
  entry: number;
  action: string;
}

export interface ScriptTurns {
  turns: ProviderTurn[];
  dropped: DroppedAction[];
}

/** The malformed output each provider sends when a script says `malformed: true`. */
export const DEFAULT_MALFORMED: Record<StandInProvider | ChatStandIn, StandInMalformed> = {
  openai: 'unknown-action',
  anthropic: 'unknown-action',
  gemini: 'malformed-function-call',
  'ui-tars': 'unparsable',
  'qwen-vl': 'unparsable',
};
/** Who has no confirmation on the wire, so a `safety_check` is asked in plain text first (a question turn). */
const ASKS_IN_TEXT: ReadonlySet<TurnOptions['provider']> = new Set(['anthropic', 'ui-tars', 'qwen-vl']);
/** The OpenAI check code of a `safety_check` without one. */
export const DEFAULT_CHECK_CODE = 'malicious_instructions';
/** Fara actions a provider has no equivalent for: their entries are dropped from its turns. */
export const DROPPED_ACTIONS = ['read_page_answer_question', 'pause_and_memorize_fact', 'web_search'] as const;

/** Replaces `{{reply}}` in every string of a value. */
export function withReply<T>(value: T, reply: string | undefined): T {
  if (reply === undefined) return value;
  const replace = (v: unknown): unknown => {
    if (typeof v === 'string') return v.split('{{reply}}').join(reply);
    if (Array.isArray(v)) return v.map(replace);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replace(x)]));
    return v;
  };
  return replace(value) as T;
}

/** A scripted action checked against the Fara action space (Fara-1.5's, or Fara-7B's for its terminate). */
function faraAction(value: unknown, entry: number): AgentAction {
  const a = fara15ActionSchema.safeParse(value);
  if (a.success) return a.data;
  const b = fara7bActionSchema.safeParse(value);
  if (b.success) return b.data;
  const issue = a.error.issues[0];
  throw new ScriptError(
    `entry ${entry + 1}: ${JSON.stringify(value)} is no Fara action (${issue?.path.join('.') || 'action'}: ${issue?.message})`,
  );
}

type Played = { actions: ScreenAction[] } | { final: NonNullable<StandInOutput['final']> } | 'dropped';

/** One Fara action in screenshot pixels; `cursor` (0–1000) is where the pointer last went, and is moved. */
function play(a: AgentAction, opts: TurnOptions, cursor: { at: [number, number] }): Played {
  const { screen } = opts;
  const px = ([x, y]: readonly [number, number]): ScreenPoint => ({
    x: (x * screen.width) / 1000,
    y: (y * screen.height) / 1000,
  });
  const pointer = (c: [number, number]): ScreenPoint => ((cursor.at = c), px(c));
  const click = (button: 'left' | 'right', count: 1 | 2 | 3, c: [number, number]): Played => ({
    actions: [{ kind: 'click', button, count, ...pointer(c) }],
  });
  switch (a.action) {
    case 'left_click':
      return click('left', 1, a.coordinate);
    case 'right_click':
      return click('right', 1, a.coordinate);
    case 'double_click':
      return click('left', 2, a.coordinate);
    case 'triple_click':
      return click('left', 3, a.coordinate);
    case 'mouse_move':
      return { actions: [{ kind: 'move', ...pointer(a.coordinate) }] };
    case 'left_click_drag': {
      const from = px(cursor.at);
      return { actions: [{ kind: 'drag', path: [from, pointer(a.coordinate)] }] };
    }
    case 'type': {
      const point = a.coordinate ?? (opts.typeAtPointer ? cursor.at : undefined);
      const at = point ? { at: pointer(point) } : {};
      return { actions: [{ kind: 'type', text: a.text, ...at, ...(a.press_enter ? { pressEnter: true } : {}) }] };
    }
    case 'key':
      return { actions: [{ kind: 'keys', keys: a.keys }] };
    case 'scroll':
      return { actions: [{ kind: 'scroll', ...px(cursor.at), dx: 0, dy: (-a.pixels * screen.height) / 1000 }] };
    case 'hscroll':
      return { actions: [{ kind: 'scroll', ...px(cursor.at), dx: (-a.pixels * screen.width) / 1000, dy: 0 }] };
    case 'visit_url':
      return { actions: [{ kind: 'navigate', url: a.url }] };
    case 'history_back':
      return { actions: [{ kind: 'back' }] };
    case 'wait':
      return { actions: [{ kind: 'wait', seconds: a.time }] };
    case 'ask_user_question':
      return { final: { kind: 'question', text: a.question } };
    case 'terminate':
      return { final: { kind: 'answer', text: 'answer' in a ? a.answer : a.status } };
    default:
      return 'dropped';
  }
}

type ActionEntry = Extract<ScriptEntry, { action: unknown }>;

/** An action entry's one model call before the provider's rules: its actions or its text, or nothing (dropped). */
function entryOutput(
  e: ActionEntry,
  n: number,
  opts: TurnOptions,
  cursor: { at: [number, number] },
  dropped: DroppedAction[],
): StandInOutput | null {
  const actions: ScreenAction[] = [];
  let final: StandInOutput['final'];
  const all = [e.action, ...(e.then ?? [])].map((a) => faraAction(withReply(a, opts.reply), n));
  for (const a of all) {
    const played = play(a, opts, cursor);
    if (played === 'dropped') dropped.push({ entry: n, action: a.action });
    else if ('final' in played) final = played.final;
    else actions.push(...played.actions);
  }
  if (final && all.length > 1) {
    throw new ScriptError(`entry ${n + 1}: ask_user_question and terminate end a model call; they take no \`then\``);
  }
  if (!final && actions.length === 0) return null;
  return { thoughts: withReply(e.thoughts, opts.reply), actions, ...(final ? { final } : {}) };
}

/** The turns of one entry's output under the provider's rules (see the module comment). */
function entryTurns(e: ActionEntry, n: number, out: StandInOutput, opts: TurnOptions): ProviderTurn[] {
  const turn = (kind: ProviderTurn['kind'], output: StandInOutput): ProviderTurn => ({
    entry: n,
    kind,
    first: false,
    output,
    usage: e.usage,
  });
  const turns: ProviderTurn[] = [];
  if (e.malformed !== undefined) {
    const malformed = e.malformed === true ? DEFAULT_MALFORMED[opts.provider] : e.malformed;
    turns.push(turn('malformed', { ...out, malformed }));
  }
  const check = e.safety_check;
  if (check && out.actions.length === 0) {
    throw new ScriptError(`entry ${n + 1}: a safety_check rides on an action; this entry has none`);
  }
  if (check && ASKS_IN_TEXT.has(opts.provider)) {
    turns.push(
      turn('check', { thoughts: out.thoughts, actions: [], final: { kind: 'question', text: check.message } }),
    );
    turns.push(turn('action', { ...out, thoughts: '' }));
  } else {
    const safetyCheck = check ? { code: check.code ?? DEFAULT_CHECK_CODE, message: check.message } : undefined;
    const full: StandInOutput = safetyCheck ? { ...out, safetyCheck } : out;
    const parts = opts.oneActionPerTurn && out.actions.length > 0 ? splitForPreview(full) : [full];
    parts.forEach((p, i) => {
      const kind = i === 0 && safetyCheck ? 'check' : p.actions.length === 0 ? 'text' : 'action';
      turns.push(turn(kind, p));
    });
  }
  const [head] = turns;
  if (head) head.first = true;
  return turns;
}

/** The provider's turns for a script (see the module comment); throws ScriptError on an entry it cannot play. */
export function scriptTurns(entries: readonly ScriptEntry[], opts: TurnOptions): ScriptTurns {
  const turns: ProviderTurn[] = [];
  const dropped: DroppedAction[] = [];
  const cursor: { at: [number, number] } = { at: [500, 500] };
  entries.forEach((e, n) => {
    if (!('action' in e)) {
      const what = 'raw' in e ? 'raw' : 'judge' in e ? 'judge' : 'tool_calls';
      dropped.push({ entry: n, action: what });
      return;
    }
    const out = entryOutput(e, n, opts, cursor, dropped);
    if (out) turns.push(...entryTurns(e, n, out, opts));
  });
  return { turns, dropped };
}
