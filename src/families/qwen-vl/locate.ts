// Finding the `computer_use` call in a Qwen-VL output and decoding its arguments: a native tool call (vLLM with
// `--tool-call-parser hermes` puts it in `tool_calls`, its arguments a JSON string), else the first
// `<tool_call>{"name": "computer_use", "arguments": {…}}</tool_call>` block of the text (after a reasoning model's
// `</think>` when there is a call there; closing tag and code fence optional), else a bare call object with no tags.
// Bodies are read as leniently as src/model/lenient-json.ts reads them; one that is still no JSON object is a
// ToolCallJsonError, and a text with no call at all is returned as text (after any reasoning) for the family to judge.
import { MissingToolCallError, ToolCallJsonError } from '../../model/errors';
import { LenientJsonError, decodeFirstObject } from '../../model/lenient-json';
import type { JsonReading } from '../../model/lenient-json';
import type { ModelOutput, ReadNotes } from '../../model/parse';

/** A call found in an output: its arguments as the model wrote them, and where and how they were read. */
export interface FoundCall {
  /** The text before the call, trimmed. */
  thoughts: string;
  /** The call as written (the block's body, or the native call written out), trimmed. */
  body: string;
  /** The function's name, when the call gave one. */
  name?: string;
  args: Record<string, unknown>;
  source: ReadNotes['source'];
  reading: JsonReading;
  shape?: ReadNotes['shape'];
  /** Further calls in the same output, not carried out. */
  extraCalls: number;
}

const OPEN_TAG = /<tool_call\s*>/i;
const OPEN_TAGS = /<tool_call\s*>/gi;
const CLOSE_TAG = /<\/tool_call\s*>/i;
const THINK_END = /<\/think\s*>/gi;
const BARE_CALL = /(```[a-zA-Z]*\s*)?\{\s*["']?(name|action|function)["']?\s*:/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unfenced(body: string): string {
  return body.startsWith('```')
    ? body
        .replace(/^```[a-zA-Z]*\s*/, '')
        .replace(/\s*```$/, '')
        .trim()
    : body;
}

/** Where a call is looked for: after the last `</think>` when a call follows it, else the whole text. */
function searchStart(text: string): number {
  let end = -1;
  for (const m of text.matchAll(THINK_END)) end = m.index + m[0].length;
  const after = text.slice(Math.max(end, 0));
  return end >= 0 && (OPEN_TAG.test(after) || BARE_CALL.test(after)) ? end : 0;
}

/** Decodes the first object of `text`; a body that is none is a ToolCallJsonError saying so. */
function decode(text: string, body: string, what: string): { value: Record<string, unknown>; reading: JsonReading } {
  if (body === '') throw new ToolCallJsonError('', `the ${what} is empty`);
  let decoded;
  try {
    decoded = decodeFirstObject(text);
  } catch (err) {
    if (!(err instanceof LenientJsonError)) throw err;
    throw new ToolCallJsonError(body, `the ${what} is not valid JSON (${err.message})`, { cause: err });
  }
  if (!isRecord(decoded.value)) throw new ToolCallJsonError(body, `the ${what} is not a JSON object`);
  return { value: decoded.value, reading: decoded.reading };
}

/** The arguments out of the shapes a call comes in: `{name, arguments}` (an object or a JSON string), flat, wrapped. */
function unwrap(call: Record<string, unknown>, body: string): Pick<FoundCall, 'name' | 'args' | 'shape'> {
  if (isRecord(call.function) && call.arguments === undefined) {
    return { ...unwrap(call.function, body), shape: 'function' };
  }
  const name = typeof call.name === 'string' ? call.name : undefined;
  let args = call.arguments ?? call.parameters ?? call.args;
  if (typeof args === 'string') args = decode(args, body, '"arguments" string').value;
  if (args === undefined && call.action !== undefined) {
    const { name: _name, ...flat } = call;
    return { name, args: flat, shape: 'flat' };
  }
  if (!isRecord(args)) throw new ToolCallJsonError(body, 'the call has no "arguments" object');
  return { name, args };
}

/** The call in the text, or null when the text has none (no tag, no bare call object). */
function callInText(text: string): FoundCall | null {
  const from = searchStart(text);
  const searched = text.slice(from);
  const open = OPEN_TAG.exec(searched);
  const bare = open ? null : BARE_CALL.exec(searched);
  if (!open && !bare) return null;
  const at = from + (open ? open.index : (bare?.index ?? 0));
  const after = open ? text.slice(at + open[0].length) : text.slice(at + (bare?.[1]?.length ?? 0));
  const close = open ? CLOSE_TAG.exec(after) : null;
  const body = unfenced((close ? after.slice(0, close.index) : after).trim());
  const thoughts = text.slice(0, at).trim();
  try {
    const { value, reading } = decode(after, body, '<tool_call> block');
    return {
      thoughts,
      body,
      ...unwrap(value, body),
      source: open ? 'tool_call_tag' : 'bare_json',
      reading,
      extraCalls: open ? (searched.match(OPEN_TAGS)?.length ?? 1) - 1 : 0,
    };
  } catch (err) {
    if (err instanceof ToolCallJsonError) err.thoughts = thoughts;
    throw err;
  }
}

/** The first native tool call, its arguments decoded. */
function nativeCall(output: ModelOutput): FoundCall {
  const [first, ...rest] = output.toolCalls ?? [];
  if (!first) throw new MissingToolCallError();
  const thoughts = output.text.trim();
  const body = `{"name": ${JSON.stringify(first.name)}, "arguments": ${first.arguments.trim() || '{}'}}`;
  try {
    const { value, reading } = decode(
      first.arguments.trim() || '{}',
      body,
      `arguments string of the "${first.name}" call`,
    );
    const unwrapped = value.action === undefined && isRecord(value.arguments) ? unwrap(value, body) : { args: value };
    return {
      thoughts,
      body,
      name: first.name,
      ...unwrapped,
      source: 'native_tool_call',
      reading,
      extraCalls: rest.length,
    };
  } catch (err) {
    if (err instanceof ToolCallJsonError) err.thoughts = thoughts;
    throw err;
  }
}

/** The text after a reasoning model's last `</think>` (the reasoning is no part of what it says), trimmed. */
function afterReasoning(text: string): string {
  let end = 0;
  for (const m of text.matchAll(THINK_END)) end = m.index + m[0].length;
  return text.slice(end).trim();
}

/** The output's call, or the text alone when it has none. Throws ToolCallJsonError for a call that is no object. */
export function findCall(output: ModelOutput): FoundCall | { text: string } {
  if (output.toolCalls && output.toolCalls.length > 0) return nativeCall(output);
  return callInText(output.text) ?? { text: afterReasoning(output.text) };
}
