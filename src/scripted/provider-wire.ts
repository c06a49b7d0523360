// What the scripted model server needs from each provider's wire (wire-openai.ts, wire-anthropic.ts,
// wire-gemini.ts): which requests are its, how it reads one (key, problems, which turn it asks for, the person's
// reply), how it checks a request against the turn it answers, and how it puts a turn, an error or an empty output
// in the provider's own shapes. The routing itself, the same for the three, is in provider-routes.ts.
import type { ProviderTurn, Size, StandInProvider } from './script-turns';
import type { StandInOutput } from './providers/output';

/** One provider request as read by its wire. */
export interface WireCall {
  /** The script's name: the body's `model` (OpenAI, Anthropic) or the path's model (Gemini). */
  script: string;
  /** The key in the provider's place; null: none (the route answers 401). */
  apiKey: string | null;
  /** Problems with the request against the provider's format (the key's own problem left out). */
  problems: string[];
  /** What the request acknowledged: OpenAI's check ids, Gemini's acknowledged calls. */
  acknowledged: string[];
  /** The computer tool declared (its type, with its version). */
  tool: string | null;
  /** The newest screenshot's size, or the provider's fallback when the request carried none. */
  screen: Size;
  /** Which turn the request asks for, by the provider's counting rule (see provider-routes.ts). */
  turn: number;
  /** The person's latest reply: the first text of the user turn after a text-only model turn. */
  reply: string | undefined;
  /** The texts of the last user turn. */
  lastUserText: string;
  /** Every text of the request, joined, for assertions. */
  allText: string;
  imageCount: number;
  /** Messages, input items or contents in the request. */
  messageCount: number;
  /** OpenAI's preview tool: one action per model call. */
  oneActionPerTurn: boolean;
  /** Typing needs a point (Gemini's 2.5 function set). */
  typeAtPointer: boolean;
  /** Problems of the request against the turn before the one it asks for (its echo, its pending check). */
  againstPrevious(prev: ProviderTurn, prevIndex: number): string[];
  /** The response body for a turn (may throw on a turn the provider cannot express: a scripting error). */
  respond(output: StandInOutput, index: number): unknown;
  /** A 200 response carrying no output at all (the `empty` fault). */
  empty(index: number): unknown;
}

export interface ProviderWire {
  provider: StandInProvider;
  /** Whether a POST to this path (query string removed) is this provider's. */
  matches(path: string): boolean;
  read(headers: Record<string, string | undefined>, url: URL, body: unknown): WireCall;
  /** An error body in the provider's shape. */
  error(status: number, message: string): unknown;
}

export type Json = Record<string, unknown>;
export const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const recordsOf = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isRecord) : []);

/** Headers as one lower-cased string each (node gives arrays for some). */
export function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}

/** Every string under a `text` key, and every image (a data URL, a base64 source or inline data), in a body. */
export function textsAndImages(body: unknown): { texts: string[]; images: number } {
  const texts: string[] = [];
  let images = 0;
  const walk = (v: unknown, key: string): void => {
    if (typeof v === 'string') {
      if (key === 'text') texts.push(v);
      if (key === 'image_url' && v.startsWith('data:image/')) images++;
      return;
    }
    if (Array.isArray(v)) return v.forEach((x) => walk(x, ''));
    if (!isRecord(v)) return;
    if ((key === 'source' && v.type === 'base64') || key === 'inlineData' || key === 'inline_data') images++;
    for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(body, '');
  return { texts, images };
}

/**
 * The usage a turn reports: none (`usage: false`), the entry's counts, or counts estimated from the request as the
 * chat route does (a quarter of its text's characters, 258 per image; the output's characters over four).
 */
export function turnUsage(turn: ProviderTurn, body: unknown): StandInOutput['usage'] {
  if (turn.usage === false) return undefined;
  if (turn.usage) {
    const { prompt_tokens, completion_tokens, cached_tokens } = turn.usage;
    return {
      input: prompt_tokens,
      output: completion_tokens,
      ...(cached_tokens ? { cachedInput: cached_tokens } : {}),
    };
  }
  const { texts, images } = textsAndImages(body);
  const o = turn.output;
  const written = o.thoughts.length + (o.final?.text.length ?? 0) + JSON.stringify(o.actions).length;
  return { input: Math.ceil(texts.join('\n').length / 4) + 258 * images, output: Math.ceil(written / 4) };
}

/** The four-digit number the OpenAI stand-in builds its ids from (`cs_0003`). */
export const pad4 = (n: number): string => String(n).padStart(4, '0');
