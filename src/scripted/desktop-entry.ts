// What the desktop agent's calls ask of a script entry, whatever the wire they come by (chat completions in server.ts,
// Anthropic's Messages API and Gemini's generateContent in provider-desktop.ts): the two headers that name the entry
// and the kind of call, the describe and ground outputs (with their defaults), the person's reply read from the
// memory's `USER:` line for `{{reply}}`, an entry's calls with their arguments as objects, and the usage an answer
// reports.
import { MEMORY_LABELS } from '../desktop/agent/memory';
import { ScriptError } from './script';
import type { ScriptEntry, ScriptUsage } from './script';

/** Header naming the 0-based script entry of a request; when present it overrides the count of assistant messages. */
export const ENTRY_INDEX_HEADER = 'x-cua-entry';
/** Header naming which of a desktop step's calls a request is (absent: an ordinary call, as before). */
export const CALL_KIND_HEADER = 'x-cua-call';

/** The describe output of an entry without `describe`. */
export const DEFAULT_DESCRIBE_OUTPUT =
  'This description comes from a scripted test model; it has not looked at the screen.';
/** The ground output of an entry without `ground` (no point in it, so the click fails with an observation). */
export const NO_GROUND_OUTPUT = 'This scripted test model has no grounding output for this step.';

/** The entry's output for its `count`-th grounding call (0-based): in order, the last one repeating. */
export function groundOutput(entry: ScriptEntry, count: number): string {
  const outputs = entry.ground === undefined ? [] : typeof entry.ground === 'string' ? [entry.ground] : entry.ground;
  return outputs[Math.min(count, outputs.length - 1)] ?? NO_GROUND_OUTPUT;
}

/** Replaces `{{reply}}` in every string of a scripted value (before it is rendered, so JSON escaping holds). */
export function withReply(value: unknown, reply: string): unknown {
  if (typeof value === 'string') return value.split('{{reply}}').join(reply);
  if (Array.isArray(value)) return value.map((v) => withReply(v, reply));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withReply(v, reply)]));
  }
  return value;
}

/** The person's latest reply as the desktop agent's memory carries it: the last `USER:` line of the given texts. */
export function memoryReplyOf(texts: readonly string[]): string | undefined {
  let reply: string | undefined;
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (line.startsWith(`${MEMORY_LABELS.user} `)) reply = line.slice(MEMORY_LABELS.user.length + 1);
    }
  }
  return reply?.trim();
}

/** One function call an entry scripts, its arguments as an object. */
export interface DesktopCallOut {
  name: string;
  args: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A `tool_calls` entry's calls with `{{reply}}` replaced, arguments as objects (a string `arguments` is parsed);
 * throws ScriptError when a string is not a JSON object.
 */
export function entryCallObjects(entry: ScriptEntry, index: number, reply: string | undefined): DesktopCallOut[] {
  if (!('tool_calls' in entry)) return [];
  return entry.tool_calls.map((c) => {
    let args: unknown = reply === undefined ? c.arguments : withReply(c.arguments, reply);
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        args = undefined;
      }
    }
    if (!isObject(args)) {
      throw new ScriptError(`entry ${index + 1}: the arguments of ${c.name} are not a JSON object`);
    }
    return { name: c.name, args };
  });
}

/** Token counts an answer reports (the provider routes' neutral form). */
export interface DesktopUsage {
  input: number;
  output: number;
  cachedInput?: number;
}

/**
 * The usage an answer reports, as the other routes count it: none (`usage: false`), the entry's counts, or an
 * estimate (a quarter of the request's text's characters plus 258 per image; the output's characters over four).
 */
export function desktopUsage(
  usage: ScriptUsage | undefined,
  request: { allText: string; imageCount: number },
  written: string,
): DesktopUsage | undefined {
  if (usage === false) return undefined;
  if (usage) {
    const { prompt_tokens, completion_tokens, cached_tokens } = usage;
    return {
      input: prompt_tokens,
      output: completion_tokens,
      ...(cached_tokens ? { cachedInput: cached_tokens } : {}),
    };
  }
  return {
    input: Math.ceil(request.allText.length / 4) + 258 * request.imageCount,
    output: Math.ceil(written.length / 4),
  };
}

/** A desktop call as a provider wire reads it (desktop-anthropic.ts, desktop-gemini.ts). */
export interface DesktopRequest {
  /** The script's name: the body's `model` (Anthropic) or the path's model (Gemini). */
  script: string;
  /** The key in the provider's place; null: none (the route answers 401). */
  apiKey: string | null;
  /** Problems with the request against the provider's documented format, one line each (the key's left out). */
  problems: string[];
  /** Names of the functions the request declares, in order. */
  toolNames: string[];
  /** The names the model may call: the declared ones, narrowed by the request's tool choice (none when it forbids). */
  callable: string[];
  /** The request's tool choice as one word (`auto`, `any`, `none`, `tool:<name>`; Gemini's mode), when it set one. */
  toolChoice?: string;
  imageCount: number;
  /** The texts of the user turns, in order (where the memory's `USER:` line is read). */
  userTexts: string[];
  /** The texts of the last user turn. */
  lastUserText: string;
  /** Every text of the request (system prompt included), joined, for assertions and the usage estimate. */
  allText: string;
  /** Messages (Anthropic) or contents (Gemini) in the request. */
  messageCount: number;
}

/** What the route answers a desktop call with, before the wire puts it in the provider's shape. */
export interface DesktopAnswer {
  /** The text block or part (the description, the grounding output, or the action's thoughts); may be empty. */
  text: string;
  calls: DesktopCallOut[];
  /** Answer the action call malformed, the way the provider does (see script.ts `malformed`). */
  malformed: boolean;
  usage?: DesktopUsage;
}

/** Where an answer goes: the script (the model's name in the response) and the entry (for ids). */
export interface DesktopAnswerContext {
  script: string;
  entry: number;
}

/** One provider's side of the desktop calls: reading a request, and the answer and empty shapes. */
export interface DesktopCallWire {
  read(headers: Record<string, string>, url: URL, body: unknown): DesktopRequest;
  answer(a: DesktopAnswer, ctx: DesktopAnswerContext): unknown;
  /** A 200 response with no output at all (the `empty` fault). */
  empty(ctx: DesktopAnswerContext): unknown;
}
