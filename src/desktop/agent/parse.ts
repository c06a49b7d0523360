// Reads the tool calls out of an action-model output. Native `tool_calls` win; without them, calls written in the
// text are accepted: `<tool_call>` blocks (one or several, closing tag optional), or JSON objects / arrays of calls,
// fenced or bare, in the shapes models use ({name, arguments}, {tool, …}, {function: {name, arguments}}). Bodies are
// read with the lenient JSON reader. A call that cannot be read still comes back, carrying its error, so the model
// learns what went wrong; an output with no call at all gets a one-line instruction for the at the next step.
import { LenientJsonError, decodeFirstObject, firstObject, pythonLiteralToJson } from '../../model/lenient-json';
import { DESKTOP_TOOL_NAMES, canonicalToolName, checkCall, desktopTool } from './tools';
import type { DesktopCall } from './tools';

/** Calls beyond this many in one output are not run. */
export const MAX_CALLS_PER_OUTPUT = 10;

export interface OutputCalls {
  /** The calls to run, in order (at most MAX_CALLS_PER_OUTPUT); each may carry an `error`. */
  calls: DesktopCall[];
  /** The output's text outside the calls, trimmed. */
  thoughts: string;
  source: 'native' | 'text' | 'none';
  /** Set when the output called no tool: what to tell the model at the next step. */
  error?: string;
  /** Calls past the cap, not run. */
  dropped?: DesktopCall[];
}

export interface OutputInput {
  text: string;
  toolCalls?: readonly { name: string; arguments: string }[];
}

/** The instruction an output without any tool call earns. */
export const NO_TOOL_CALL_ERROR =
  `Your output did not call any tool. Every step must call at least one of: ${DESKTOP_TOOL_NAMES.join(', ')}. ` +
  'If the task is finished, call stop with the final answer.';

const TOOL_CALL_BLOCK = /<tool_call\s*>([\s\S]*?)(?:<\/tool_call\s*>|(?=<tool_call\s*>)|$)/gi;
const THINK_END = /<\/think\s*>/gi;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- decoding --------------------------------------------------------------------------------

type BracketEnds = (start: number) => number | undefined;

/**
 * For a text, a function giving the index just past the bracket that balances the `{` or `[` at `start` (quotes of
 * either kind respected), or undefined when none does. One scan answers for every bracket nested in the one it
 * started from, so asking about each bracket of a text stays linear.
 */
function bracketEnds(text: string): BracketEnds {
  const known = new Map<number, number | undefined>();
  const scan = (start: number) => {
    const open: number[] = [];
    let quote: string | undefined;
    for (let i = start; i < text.length; i++) {
      const ch = text[i] ?? '';
      if (quote) {
        if (ch === '\\') i++;
        else if (ch === quote) quote = undefined;
      } else if (ch === '"' || ch === "'") quote = ch;
      else if (ch === '{' || ch === '[') open.push(i);
      else if (ch === '}' || ch === ']') {
        const at = open.pop() ?? start;
        if ((text[at] === '{') !== (ch === '}')) break; // mismatched: none of the open ones is balanced
        known.set(at, i + 1);
        if (open.length === 0) return;
      }
    }
    for (const at of [start, ...open]) if (!known.has(at)) known.set(at, undefined);
  };
  return (start) => {
    if (!known.has(start)) scan(start);
    return known.get(start);
  };
}

/** A JSON array read strictly, then relaxed (single quotes, trailing commas…). */
function decodeArray(text: string): unknown[] {
  for (const candidate of [() => text, () => pythonLiteralToJson(text)]) {
    try {
      const value: unknown = JSON.parse(candidate());
      if (Array.isArray(value)) return value;
    } catch {
      // try the next reading
    }
  }
  throw new LenientJsonError('not a JSON array', text);
}

/** The value of a call body: an object (lenient, closed if cut short) or an array of objects. */
function decodeBody(body: string): unknown {
  const text = body.trim();
  if (text.startsWith('[')) return decodeArray(text);
  if (text.startsWith('"')) {
    const inner: unknown = JSON.parse(text);
    if (typeof inner === 'string') return decodeBody(inner);
  }
  return decodeFirstObject(text).value;
}

function stripFence(body: string): string {
  return body
    .trim()
    .replace(/^```[a-zA-Z]*\s*/, '')
    .replace(/\s*```$/, '')
    .trim();
}

// ---- call shapes -----------------------------------------------------------------------------

const NAME_KEYS = ['name', 'tool', 'tool_name', 'function_name'] as const;
const ARGUMENT_KEYS = ['arguments', 'parameters', 'args', 'input', 'params'] as const;

interface Shape {
  name: string;
  args: unknown;
  /** Whether the arguments came under an arguments key (not from the call's other fields). */
  hasArguments: boolean;
}

/** The name and arguments of a call-shaped value, or undefined when it does not look like a call. */
function callShape(value: unknown): Shape | undefined {
  if (!isRecord(value)) return undefined;
  if (isRecord(value.function)) return callShape(value.function);
  let name = typeof value.function === 'string' ? value.function : undefined;
  name ??= NAME_KEYS.map((k) => value[k]).find((v): v is string => typeof v === 'string');
  // A flat {"action": "click", …} counts only when the action is one of our tools.
  if (name === undefined && typeof value.action === 'string' && desktopTool(canonicalToolName(value.action))) {
    name = value.action;
  }
  if (name === undefined) return undefined;
  const key = ARGUMENT_KEYS.find((k) => value[k] !== undefined);
  if (key !== undefined) return { name, args: value[key], hasArguments: true };
  const rest = Object.fromEntries(
    Object.entries(value).filter(([k]) => ![...NAME_KEYS, 'function', 'action', 'type', 'id'].includes(k)),
  );
  return { name, args: rest, hasArguments: false };
}

/** Arguments written as a JSON string inside the call (`"arguments": "{\"command\": \"ls\"}"`). */
function argumentsValue(args: unknown): unknown {
  if (typeof args !== 'string' || !/^\s*[{["]/.test(args)) return args;
  return decodeBody(args);
}

/** A call that could not be read; a named tool that does not exist reports that instead. */
function failedCall(name: string, error: string): DesktopCall {
  const base = checkCall(name, {});
  const unknown = !base.known && name.trim() !== '';
  return { name: base.name, arguments: {}, known: base.known, error: unknown ? (base.error ?? error) : error };
}

function shapeToCall(shape: Shape): DesktopCall {
  let args: unknown;
  try {
    args = argumentsValue(shape.args);
  } catch (err) {
    return failedCall(shape.name, `The arguments of the ${shape.name} call are not valid JSON (${errorText(err)}).`);
  }
  return checkCall(shape.name, args);
}

/**
 * The calls in a decoded body (an object, or an array of them); undefined when something in it is no call. In free
 * text (`plausible`) a call must also name one of our tools or carry an arguments object, so that other JSON with a
 * "name" field stays text.
 */
function callsIn(value: unknown, plausible = false): DesktopCall[] | undefined {
  const items = Array.isArray(value) ? value : [value];
  const shapes: Shape[] = [];
  for (const item of items) {
    const shape = callShape(item);
    if (!shape || (plausible && !shape.hasArguments && !desktopTool(canonicalToolName(shape.name)))) return undefined;
    shapes.push(shape);
  }
  return shapes.length === 0 ? undefined : shapes.map(shapeToCall);
}

const UNREADABLE_HINT = 'Write each call as {"name": <tool>, "arguments": {…}}.';

/** The name written in a body that could not be decoded, if one can be seen. */
function guessName(body: string): string {
  return /["']?name["']?\s*:\s*["']([\w.-]+)["']/.exec(body)?.[1] ?? '';
}

/** The calls of one `<tool_call>` block; a block that is no call becomes a call carrying the error. */
function blockCalls(body: string): DesktopCall[] {
  const text = stripFence(body);
  if (text === '') return [failedCall('', `The tool call block is empty. ${UNREADABLE_HINT}`)];
  let value: unknown;
  try {
    value = decodeBody(text);
  } catch (err) {
    return [failedCall(guessName(text), `The tool call could not be read (${errorText(err)}). ${UNREADABLE_HINT}`)];
  }
  return callsIn(value) ?? [failedCall(guessName(text), `The tool call names no tool. ${UNREADABLE_HINT}`)];
}

// ---- locating calls in text ------------------------------------------------------------------

interface Span {
  start: number;
  end: number;
  calls: DesktopCall[];
}

function tagSpans(text: string, from: number): Span[] {
  const spans: Span[] = [];
  for (const m of text.slice(from).matchAll(TOOL_CALL_BLOCK)) {
    const start = from + m.index;
    spans.push({ start, end: start + m[0].length, calls: blockCalls(m[1] ?? '') });
  }
  return spans;
}

/** Where a call or a list of calls may start: `{` before a key, or `[` before `{` (other brackets are skipped). */
const CALL_START = /\{\s*["'\w]|\[\s*\{/y;

/** Call-shaped JSON objects or arrays in free text (fenced or not); other JSON is left as text. */
function jsonSpans(text: string, from: number): Span[] {
  const spans: Span[] = [];
  // Reading an unclosed object to the end of the text is tried once: an output is cut short at one place only, and
  // trying at every brace of a long unbalanced text would take quadratic time.
  let openTried = false;
  const endOf = bracketEnds(text);
  for (let i = from; i < text.length; i++) {
    CALL_START.lastIndex = i;
    if (!CALL_START.test(text)) continue;
    const end = endOf(i);
    if (end === undefined && openTried) continue;
    openTried ||= end === undefined;
    const found = end === undefined ? openJsonAt(text, i) : jsonIn(text.slice(i, end), i, end);
    const calls = found && callsIn(found.value, true);
    if (found && calls) {
      spans.push({ start: i, end: found.end, calls });
      i = found.end - 1;
    }
  }
  return spans;
}

function jsonIn(body: string, start: number, end: number): { value: unknown; end: number } | undefined {
  try {
    return { value: decodeBody(body), end };
  } catch {
    return undefined;
  }
}

/** An object with no matching close at `start`: as the lenient reader scans it, or closed at the end of the text. */
function openJsonAt(text: string, start: number): { value: unknown; end: number } | undefined {
  if (text[start] !== '{') return undefined;
  const rest = text.slice(start);
  const balanced = firstObject(rest);
  if (balanced !== undefined) return jsonIn(balanced, start, start + balanced.length);
  try {
    return { value: decodeFirstObject(rest).value, end: text.length };
  } catch {
    return undefined;
  }
}

/** Where to look: after a reasoning model's last `</think>` when calls follow it, else everywhere. */
function answerStart(text: string): number {
  let end = -1;
  for (const m of text.matchAll(THINK_END)) end = m.index + m[0].length;
  return end;
}

function locate(text: string): Span[] {
  const afterThink = answerStart(text);
  if (afterThink >= 0) {
    const spans = tagSpans(text, afterThink);
    const found = spans.length > 0 ? spans : jsonSpans(text, afterThink);
    if (found.length > 0) return found;
  }
  const spans = tagSpans(text, 0);
  return spans.length > 0 ? spans : jsonSpans(text, 0);
}

/** The text with the spans cut out, leftover empty fences, `ACTION:` labels and think tags removed. */
function outside(text: string, spans: readonly Span[]): string {
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start).replace(/ACTION:\s*$/i, '');
    at = span.end;
  }
  out += text.slice(at);
  return out
    .replace(/```[a-zA-Z]*\s*```/g, '')
    .replace(/<\/?think\s*>/gi, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// ---- entry point -----------------------------------------------------------------------------

function nativeCall(call: { name: string; arguments: string }): DesktopCall {
  const text = call.arguments.trim();
  if (text === '') return checkCall(call.name, {});
  try {
    return checkCall(call.name, decodeBody(text));
  } catch (err) {
    return failedCall(call.name, `The arguments of the ${call.name} call are not valid JSON (${errorText(err)}).`);
  }
}

function capped(calls: DesktopCall[], thoughts: string, source: OutputCalls['source']): OutputCalls {
  if (calls.length === 0) return { calls, thoughts, source: 'none', error: NO_TOOL_CALL_ERROR };
  const output: OutputCalls = { calls: calls.slice(0, MAX_CALLS_PER_OUTPUT), thoughts, source };
  if (calls.length > MAX_CALLS_PER_OUTPUT) output.dropped = calls.slice(MAX_CALLS_PER_OUTPUT);
  return output;
}

/**
 * The tool calls of an output, native ones first, else those written in its text (see the module comment), with the
 * text around them as `thoughts`. Never throws.
 */
export function readToolCalls(completion: OutputInput): OutputCalls {
  const text = completion.text ?? '';
  if (completion.toolCalls && completion.toolCalls.length > 0) {
    return capped(completion.toolCalls.map(nativeCall), outside(text, tagSpans(text, 0)), 'native');
  }
  const spans = locate(text);
  return capped(
    spans.flatMap((s) => s.calls),
    outside(text, spans),
    'text',
  );
}
