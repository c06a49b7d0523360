// Turns a model output into a validated action of the family, reading it as leniently as its meaning allows.
// Where the action is found: a `<tool_call>` block in the text (closing tag optional, code fences, text around it,
// only the first of several calls), a native OpenAI `tool_calls` entry (vLLM with a tool parser, hosted APIs), or a
// bare tool-call object in the text with no tags. How its body is read: JSON, then a relaxed Python-literal / JS
// reading, then closed if cut short (lenient-json.ts). Its shape: `{"name", "arguments"}` (arguments may be a JSON
// string), a flat `{"action": …}`, an OpenAI-style `{"function": {…}}`, or a function named after the action.
// Its arguments: normalised per action (actions/normalize.ts), then validated strictly, coordinates inside the screen.
// What still is no action throws a ModelOutputError subclass; `terminateOnParseError` turns it into a terminate.
import { actionOption } from '../actions/fara';
import type { FaraSpace } from '../actions/fara';
import type { AgentAction } from '../actions/schemas';
import { normalizeArguments } from '../actions/normalize';
import type { ScreenSize } from '../actions/tool-schema';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  MissingToolCallError,
  ModelOutputError,
  OutputTooLongError,
  ToolCallJsonError,
  UnknownActionError,
} from './errors';
import { LenientJsonError, decodeFirstObject } from './lenient-json';
import type { JsonReading } from './lenient-json';

export { pythonLiteralToJson } from './lenient-json';

/** A function call the endpoint returned natively (`choices[0].message.tool_calls[i].function`). */
export interface NativeToolCall {
  name: string;
  /** The arguments as the endpoint sent them: normally a JSON string. */
  arguments: string;
}

/**
 * A model output: its text, and the native tool calls when the endpoint returned any; from a provider's own API (a
 * native family's call), the response body as the provider sent it.
 */
export interface ModelOutput {
  text: string;
  toolCalls?: readonly NativeToolCall[];
  native?: unknown;
}

/** One action of a model call's batch: ours, and the provider's own action it was read from. */
export interface BatchedAction {
  action: AgentAction;
  native?: unknown;
}

/** How an output was read, beyond the canonical form; kept in the action event's metadata. */
export interface ReadNotes {
  /** Where the action came from. */
  source: 'tool_call_tag' | 'native_tool_call' | 'bare_json';
  /** How the body was decoded. */
  reading: JsonReading;
  /** The body's shape when it was not `{"name", "arguments"}`. */
  shape?: 'flat' | 'function' | 'named_after_action';
  /** Arguments the action does not use, dropped. */
  ignoredArguments: string[];
  /** Rewrites done to accept the arguments (`pixels: "-1445" → -1445`). */
  coerced: string[];
  /** Further tool calls in the same output, not carried out. */
  extraToolCalls: number;
}

export interface ParsedOutput {
  /** The output's text before the tool call, trimmed (also stored in `action.thoughts`). */
  thoughts: string;
  action: AgentAction;
  /** The tool call as the model wrote it, trimmed ('' when none was found). */
  toolCallText: string;
  /** Set when the output was accepted only through a fallback. */
  recoveredBy?: 'python-literal' | 'closed-json' | 'terminate-on-parse-error';
  /** With `terminate-on-parse-error`: the error that was turned into a terminate. */
  parseError?: { name: string; message: string };
  /** How the output was read (absent for a terminate-on-parse-error). */
  notes?: ReadNotes;
  /** The provider's own action `action` was read from (a native family's), recorded beside ours. */
  native?: unknown;
  /**
   * The rest of the model call's actions (a provider's batch: OpenAI's `actions[]`, Anthropic's several tool_use
   * blocks), carried out as the next steps, each with its own observation, without another model call.
   */
  then?: readonly BatchedAction[];
  /**
   * A provider's confirmation request (OpenAI's pending safety check, Gemini's require_confirmation): `action` is
   * then the question to the person (ask_user_question with the provider's message), and the call's actions wait in
   * `then` until the person confirms; `native` is what the family needs to acknowledge it (kept in the record).
   */
  check?: { message: string; native?: unknown };
}

export interface ParseOptions {
  /** Instead of throwing, end the task with a terminate carrying the raw output (Fara's terminate_on_parse_error). */
  terminateOnParseError?: boolean;
  /** The resized screenshot size: coordinates outside the model's space for it are refused. */
  screen?: ScreenSize;
  /**
   * The actions the model may use, when fewer than the family's (a prompt file that offers fewer: its list is the
   * whitelist). Another action of the family is then an UnknownActionError naming this list.
   */
  allowedActions?: readonly string[];
}

/** Longer outputs are not read: no action needs more, and every later prompt would carry the output again. */
export const MAX_OUTPUT_CHARS = 65_536;

const OPEN_TAG = /<tool_call\s*>/i;
const OPEN_TAGS = /<tool_call\s*>/gi;
const CLOSE_TAG = /<\/tool_call\s*>/i;

interface Located {
  source: ReadNotes['source'];
  thoughts: string;
  /** The text of the call, trimmed and unfenced (for records and errors). */
  body: string;
  /** Where the object is looked for. */
  search: string;
  extraToolCalls: number;
}

function stripCodeFence(body: string): string {
  if (!body.startsWith('```')) return body;
  return body
    .replace(/^```[a-zA-Z]*\s*/, '')
    .replace(/\s*```$/, '')
    .trim();
}

/** A tool-call object written with no tags: `{"name": …, "arguments": …}` or `{"action": …}`, maybe fenced. */
const BARE_CALL = /(```[a-zA-Z]*\s*)?\{\s*["']?(name|action|function)["']?\s*:/;

const THINK_END = /<\/think\s*>/gi;

/**
 * Where to look for the call: after a reasoning model's `</think>` when there is a call there (a call drafted
 * inside the reasoning is not the output's call), else the whole output.
 */
function callSearchStart(text: string): number {
  let end = -1;
  for (const m of text.matchAll(THINK_END)) end = m.index + m[0].length;
  return end >= 0 && (OPEN_TAG.test(text.slice(end)) || BARE_CALL.test(text.slice(end))) ? end : 0;
}

function locateInText(text: string): Located {
  const from = callSearchStart(text);
  const searched = text.slice(from);
  const open = OPEN_TAG.exec(searched);
  if (open) {
    const at = from + open.index;
    const after = text.slice(at + open[0].length);
    const close = CLOSE_TAG.exec(after);
    return {
      source: 'tool_call_tag',
      thoughts: text.slice(0, at).trim(),
      body: stripCodeFence((close ? after.slice(0, close.index) : after).trim()),
      search: after,
      extraToolCalls: (searched.match(OPEN_TAGS)?.length ?? 1) - 1,
    };
  }
  const bare = BARE_CALL.exec(searched);
  if (!bare) throw new MissingToolCallError();
  const at = from + bare.index;
  const rest = text.slice(at + (bare[1]?.length ?? 0));
  return {
    source: 'bare_json',
    thoughts: text.slice(0, at).trim(),
    body: stripCodeFence(rest.trim()),
    search: rest,
    extraToolCalls: 0,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object given as a string (`"arguments": "{\"action\": …}"`). */
function objectFromString(value: string, body: string): Record<string, unknown> {
  try {
    const decoded = decodeFirstObject(value).value;
    if (isRecord(decoded)) return decoded;
  } catch (cause) {
    throw new ToolCallJsonError(body, 'the "arguments" string is not JSON', { cause });
  }
  throw new ToolCallJsonError(body, 'the "arguments" string is not a JSON object');
}

/** Normalises an action name as written: case, spaces and dashes ("Left-Click" → "left_click"). */
function actionNameAsWritten(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

interface Unwrapped {
  args: Record<string, unknown>;
  shape?: ReadNotes['shape'];
}

/** The arguments object out of the shapes a tool call comes in (see the module comment). */
function unwrapCall(call: unknown, body: string, family: FaraSpace): Unwrapped {
  if (!isRecord(call)) throw new ToolCallJsonError(body, 'the tool call is not an object');
  if (isRecord(call.function) && call.arguments === undefined) {
    return { ...unwrapCall(call.function, body, family), shape: 'function' };
  }
  let args = call.arguments ?? call.parameters ?? call.args;
  if (typeof args === 'string') args = objectFromString(args, body);
  if (args === undefined && call.action !== undefined) {
    const { name: _name, ...flat } = call;
    return { args: flat, shape: 'flat' };
  }
  if (!isRecord(args)) throw new ToolCallJsonError(body, 'the tool call has no "arguments" object');
  const named = actionNameAsWritten(call.name);
  if (args.action === undefined && named !== undefined && family.allowedActions.includes(named)) {
    return { args: { ...args, action: named }, shape: 'named_after_action' };
  }
  return { args };
}

function outOfScreen(point: unknown, space: ScreenSize): boolean {
  if (!Array.isArray(point)) return false;
  const [x, y] = point as number[];
  return x === undefined || y === undefined || x < 0 || y < 0 || x > space.width || y > space.height;
}

interface Validated {
  action: AgentAction;
  ignored: string[];
  coerced: string[];
}

function validate(
  family: FaraSpace,
  allowed: readonly string[],
  written: Record<string, unknown>,
  thoughts: string,
  body: string,
  screen?: ScreenSize,
): Validated {
  const name = actionNameAsWritten(written.action);
  if (name === undefined || name === '') throw new ToolCallJsonError(body, 'the arguments have no string "action"');
  const option = allowed.includes(name) ? actionOption(family, name) : undefined;
  if (!option) throw new UnknownActionError(String(written.action), allowed);
  const { args, ignored, coerced } = normalizeArguments(option, { ...written, action: name });
  const result = option.safeParse({ ...args, thoughts });
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = String(issue?.path[0] ?? '(arguments)');
    const value = args[field];
    const reason = (issue?.message ?? 'not valid').replace(/^Invalid input: /, '');
    const detail = value === undefined ? 'missing' : `${JSON.stringify(value)}, which is not valid (${reason})`;
    throw new InvalidActionArgumentsError(name, field, detail, { cause: result.error });
  }
  const action = result.data as AgentAction;
  if (screen && 'coordinate' in action && outOfScreen(action.coordinate, family.displaySize(screen))) {
    const space = family.displaySize(screen);
    throw new InvalidActionArgumentsError(
      name,
      'coordinate',
      `[${String(action.coordinate)}] is outside the screen (0-${space.width}, 0-${space.height})`,
    );
  }
  return { action: inWrittenOrder(args, action), ignored, coerced };
}

/** The validated action, its keys in the order the model wrote them, so a past step's output re-renders as written. */
function inWrittenOrder(args: Record<string, unknown>, action: AgentAction): AgentAction {
  const slots: Record<string, unknown> = Object.fromEntries(Object.keys(args).map((key) => [key, undefined]));
  return Object.assign(slots, action);
}

/** Reads the action out of a located call (text or native); errors carry the thoughts and what was written. */
function readCall(family: FaraSpace, located: Located, opts: ParseOptions, decodedCall?: unknown): ParsedOutput {
  let reading: JsonReading = 'json';
  let call = decodedCall;
  let written: Record<string, unknown> | undefined;
  try {
    if (call === undefined) {
      if (located.body === '') throw new ToolCallJsonError('', 'the tool call is empty');
      try {
        const decoded = decodeFirstObject(located.search);
        call = decoded.value;
        reading = decoded.reading;
      } catch (err) {
        if (!(err instanceof LenientJsonError)) throw err;
        throw new ToolCallJsonError(located.body, `not valid JSON (${err.message})`, { cause: err });
      }
    }
    // The shape is read with every action of the family, so one left off a narrowed list is named in its error.
    const { args, shape } = unwrapCall(call, located.body, family);
    const allowed = opts.allowedActions ?? family.allowedActions;
    written = args;
    const thoughts =
      located.thoughts === '' && typeof args.thoughts === 'string' ? args.thoughts.trim() : located.thoughts;
    const { action, ignored, coerced } = validate(family, allowed, args, thoughts, located.body, opts.screen);
    const parsed: ParsedOutput = {
      thoughts,
      action,
      toolCallText: located.body,
      notes: {
        source: located.source,
        reading,
        ...(shape ? { shape } : {}),
        ignoredArguments: ignored,
        coerced,
        extraToolCalls: located.extraToolCalls,
      },
    };
    if (reading === 'relaxed') parsed.recoveredBy = 'python-literal';
    if (reading === 'closed') parsed.recoveredBy = 'closed-json';
    return parsed;
  } catch (err) {
    if (err instanceof ModelOutputError) {
      err.thoughts ??= located.thoughts;
      if (written) err.written ??= written;
    }
    throw err;
  }
}

function parseNative(output: ModelOutput, family: FaraSpace, opts: ParseOptions): ParsedOutput {
  const [first, ...rest] = output.toolCalls ?? [];
  if (!first) throw new MissingToolCallError();
  const before = OPEN_TAG.exec(output.text);
  const thoughts = (before ? output.text.slice(0, before.index) : output.text).trim();
  const body = `{"name": ${JSON.stringify(first.name)}, "arguments": ${first.arguments || '{}'}}`;
  const located: Located = { source: 'native_tool_call', thoughts, body, search: body, extraToolCalls: rest.length };
  let args: unknown;
  try {
    args = first.arguments.trim() === '' ? {} : decodeFirstObject(first.arguments).value;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    const error = new ToolCallJsonError(
      body,
      `the arguments of the "${first.name}" call are not valid JSON (${detail})`,
    );
    error.thoughts = thoughts;
    throw error;
  }
  return readCall(family, located, opts, { name: first.name, arguments: args });
}

function parseStrict(output: ModelOutput, family: FaraSpace, opts: ParseOptions): ParsedOutput {
  const length =
    output.text.length + (output.toolCalls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  if (length > MAX_OUTPUT_CHARS) throw new OutputTooLongError(length, MAX_OUTPUT_CHARS);
  if (output.toolCalls && output.toolCalls.length > 0) return parseNative(output, family, opts);
  if (output.text.trim() === '') throw new EmptyOutputError();
  let located: Located;
  try {
    located = locateInText(output.text);
  } catch (err) {
    if (err instanceof ModelOutputError) err.thoughts ??= output.text.trim();
    throw err;
  }
  return readCall(family, located, opts);
}

/**
 * The terminate a failed output turns into, by the family's terminate: one with an answer (Fara-1.5) answers with the
 * raw text, one with a status only (Fara-7B) reports failure.
 */
function terminateWithRawText(family: FaraSpace, raw: string): AgentAction {
  const answers = 'answer' in (actionOption(family, 'terminate')?.shape ?? {});
  return answers
    ? { action: 'terminate', answer: raw, thoughts: raw }
    : { action: 'terminate', status: 'failure', thoughts: raw };
}

function rawToolCallText(text: string): string {
  try {
    return locateInText(text).body;
  } catch {
    return '';
  }
}

/** The output's text with its native tool calls written out as `<tool_call>` blocks, as a Fara model writes them. */
export function outputAsText(output: ModelOutput): string {
  if (!output.toolCalls?.length) return output.text;
  const blocks = output.toolCalls.map(
    (c) => `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.arguments.trim() || '{}'}}\n</tool_call>`,
  );
  return [output.text.trim(), ...blocks].filter((s) => s !== '').join('\n');
}

/**
 * Parses a model output (its text, or text plus native tool calls) into thoughts and one validated action of
 * `family`. Throws a ModelOutputError subclass unless `terminateOnParseError` is set.
 */
export function parseModelOutput(
  output: string | ModelOutput,
  family: FaraSpace,
  opts: ParseOptions = {},
): ParsedOutput {
  const r: ModelOutput = typeof output === 'string' ? { text: output } : output;
  try {
    return parseStrict(r, family, opts);
  } catch (error) {
    if (!opts.terminateOnParseError || !(error instanceof ModelOutputError)) throw error;
    const raw = outputAsText(r).trim();
    return {
      thoughts: raw,
      action: terminateWithRawText(family, raw),
      toolCallText: rawToolCallText(raw),
      recoveredBy: 'terminate-on-parse-error',
      parseError: { name: error.name, message: error.message },
    };
  }
}
