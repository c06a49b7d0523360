// Script files of the scripted model (a TEST DOUBLE standing in for a real model): their schema and loading.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const FaultSchema = z.union([
  z.strictObject({ status: z.number().int().min(400).max(599), message: z.string().optional() }),
  z.strictObject({ empty: z.literal(true) }),
  /** Accepts the request and sends nothing, until the caller gives up (an overloaded or hung GPU server). */
  z.strictObject({ hang: z.literal(true) }),
]);

/**
 * The `usage` an output reports: `false` sends none (as some servers do: the agent then estimates it), an object sends
 * those counts; absent, counts estimated from the request (a quarter of its text's characters, 258 per image).
 */
export const UsageSchema = z.union([
  z.literal(false),
  z.strictObject({
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    cached_tokens: z.number().int().min(0).optional(),
    reasoning_tokens: z.number().int().min(0).optional(),
  }),
]);
export type ScriptUsage = z.infer<typeof UsageSchema>;

const common = {
  delay_ms: z.number().int().min(0).optional(),
  usage: UsageSchema.optional(),
  faults: z.array(FaultSchema).optional(),
  /** Answer to a sub-call made while carrying out this entry's action (read_page_answer_question). */
  page_answer: z.string().optional(),
  /** Desktop agent: the vision model's description of the screen for this step (`x-cua-call: describe`). */
  describe: z.string().optional(),
  /** Desktop agent: outputs for the grounding calls made while this step's tools run, in order; the last repeats. */
  ground: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
};

/**
 * An entry that plays the LLM judge of an evaluation (src/eval/judge.ts): its output for each kind of judge call
 * (`x-cua-call: key_points | relevance | verdict | rubric`). `relevance` is a list answered by the screenshot's
 * position (`x-cua-item`), the last one repeating. A kind without an output gets a text no judge can read.
 */
export const JudgeOutputsSchema = z.strictObject({
  key_points: z.string().optional(),
  relevance: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
  verdict: z.string().optional(),
  rubric: z.string().optional(),
});

/** A Fara action in a script (its fields are checked when it is played: the chat route renders it as written). */
const ScriptActionSchema = z.looseObject({ action: z.string().min(1) });

/** The malformed outputs a provider stand-in can send (see providers/output.ts StandInMalformed). */
export const MALFORMED_KINDS = [
  'unknown-action',
  'missing-coordinate',
  'off-screen',
  'malformed-function-call',
  'unparsable',
] as const;

/**
 * Fields of an action entry that only the provider routes (`/v1/responses`, `/v1/messages`, generateContent) and the
 * chat route's UI-TARS and Qwen-VL formats read (see script-turns.ts, chat-formats.ts); Fara's format ignores them.
 */
const providerFields = {
  /** More actions in the same model call (a batch); a provider that cannot batch plays them as consecutive turns. */
  then: z.array(ScriptActionSchema).optional(),
  /**
   * The provider's confirmation on this call (OpenAI `pending_safety_checks`, Gemini `safety_decision`); on
   * Anthropic, which has none, a text-only question (the message) before the entry's action.
   */
  safety_check: z.strictObject({ code: z.string().min(1).optional(), message: z.string().min(1) }).optional(),
  /**
   * The model first answers this entry with a malformed output of the kind the provider really sends (`true`: the
   * provider's usual kind), then, on the next call, with the entry's action: one extra turn before the entry's.
   */
  malformed: z.union([z.literal(true), z.enum(MALFORMED_KINDS)]).optional(),
};

export const ScriptEntrySchema = z.union([
  z.strictObject({
    thoughts: z.string().default(''),
    action: ScriptActionSchema,
    ...providerFields,
    ...common,
  }),
  z.strictObject({ raw: z.string(), ...common }),
  /**
   * A native function-calling output (the desktop agent's action call): `content` is the thoughts, `tool_calls` the
   * calls. Chat completions send them as OpenAI `tool_calls` (as vLLM does with a tool parser on), Anthropic as
   * `tool_use` blocks, Gemini as `functionCall` parts (provider-desktop.ts).
   */
  z.strictObject({
    content: z.string().default(''),
    tool_calls: z
      .array(
        z.strictObject({
          name: z.string().min(1),
          arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
        }),
      )
      .min(1),
    /**
     * This entry's action call is answered malformed, the way each wire really does it: chat completions send the
     * first call as `<tool_call>` text of broken JSON and no native calls; Anthropic sends the first call as a
     * `tool_use` whose `input` is `{}` (its required arguments missing); Gemini ends the candidate with
     * `finishReason: MALFORMED_FUNCTION_CALL` and no content. The desktop agent names the entry by its step
     * (`x-cua-entry`), so a retry of the same step gets the same malformed answer: there is no extra turn as on
     * the browser routes. The model's correction is the script's next entry, which the agent reaches at its next
     * step, after it has fed the error back to the model.
     */
    malformed: z.literal(true).optional(),
    ...common,
  }),
  z.strictObject({ judge: JudgeOutputsSchema, ...common }),
]);
export type ScriptEntry = z.infer<typeof ScriptEntrySchema>;

const ScriptObjectSchema = z.strictObject({
  description: z.string().optional(),
  /** The script's `usage` switch: every entry's that sets none (see UsageSchema). */
  usage: UsageSchema.optional(),
  entries: z.array(ScriptEntrySchema),
  /**
   * The replies to a task's output extraction (`x-cua-call: extract`; docs/output.md), by try: the first call gets the
   * first, the second try (after validation errors) the second; the last repeats. `{{prompt:REGEX}}` in a reply is
   * replaced by REGEX's first group in the prompt's text (the page text it was sent), `null` when it does not match:
   * a script whose page changes between runs (a schedule's) reads it from there.
   */
  extract: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
});

export class ScriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Loads `<dir>/<name>.json`; the name comes from the request's `model` field. A string in an action may hold
 * `{{reply}}`, replaced by the user's latest reply to ask_user_question (see server.ts latestReply).
 */
export function loadScript(dir: string, name: string): ScriptEntry[] {
  return loadScriptFile(dir, name).entries;
}

/** The replies a script gives a task's output extraction, by try ([] when it gives none). */
export function loadExtractReplies(dir: string, name: string): string[] {
  const { extract } = loadScriptFile(dir, name);
  return extract === undefined ? [] : typeof extract === 'string' ? [extract] : extract;
}

function loadScriptFile(dir: string, name: string): { entries: ScriptEntry[]; extract?: string | string[] } {
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.')) {
    throw new ScriptError(`invalid script name '${name}' (letters, digits, dot, dash, underscore)`);
  }
  const file = path.join(dir, `${name}.json`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new ScriptError(`no script named '${name}' (looked for ${file})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ScriptError(`script ${file} is not valid JSON: ${(err as Error).message}`);
  }
  // Parse with the branch the file's shape picks, so an error names the entry and field at fault.
  const parsed = Array.isArray(json) ? z.array(ScriptEntrySchema).safeParse(json) : ScriptObjectSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ScriptError(`script ${file} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  if (Array.isArray(parsed.data)) return { entries: parsed.data };
  const { usage, entries, extract } = parsed.data;
  const all = usage === undefined ? entries : entries.map((e) => (e.usage === undefined ? { ...e, usage } : e));
  return { entries: all, ...(extract !== undefined ? { extract } : {}) };
}

/** A reply with each `{{prompt:REGEX}}` replaced by REGEX's first group in `prompt` (or `null` when nothing matches). */
export function fillFromPrompt(reply: string, prompt: string): string {
  return reply.replace(/\{\{prompt:(.+?)\}\}/g, (_all, pattern: string) => {
    let found: RegExpExecArray | null = null;
    try {
      found = new RegExp(pattern).exec(prompt);
    } catch {
      throw new ScriptError(`extract reply: {{prompt:${pattern}}} is not a regular expression`);
    }
    return found?.[1] ?? 'null';
  });
}
