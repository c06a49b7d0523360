// The extraction call of a task with an output schema (docs/output.md): its prompt (the schema, the agent's answer,
// the facts it memorized and the final page's text, cut at the page-question limit), the second try's prompt with the
// validation errors, a lenient reading of the model's JSON (a ```json fence, prose around it), and the call as a
// `tool_sub_calls` entry so the run's usage and cost count it. Pure.
import type { ChatMessage } from '../model/client';
import { decodeFirstObject } from '../model/lenient-json';
import type { ToolSubCallInput } from '../trajectory/schema';
import { pageTextForQuestion } from './page-question';
import { subCallRecord } from './sub-calls';
import type { ModelSubCall } from './sub-calls';

/** The sub-call's tool name in the run folder (its `tool_sub_calls` entry). */
export const EXTRACT_TOOL = 'extract_output';

/** The extraction's tries: the first, and one more with the first's validation errors. */
export const EXTRACT_ATTEMPTS = 2;

const INSTRUCTIONS =
  'You turn what a browser agent found into JSON. Reply with one JSON value that the JSON Schema below validates, ' +
  'and nothing else. Use only the information given: where it says nothing, leave optional fields out (or use null ' +
  'where the schema allows it); never make values up.';

export interface ExtractionFacts {
  schema: Record<string, unknown>;
  /** The agent's answer (at a budget stop: the last step's text), or null. */
  answer: string | null;
  /** Facts the agent memorized (pause_and_memorize_fact), in order. */
  facts: readonly string[];
  /** The final page's text ('' when none was read: a desktop, or a session already gone). */
  pageText: string;
  /** The task stopped at its step or cost budget: its work may be unfinished. */
  partial: boolean;
}

/** The first try's messages. `limit`: characters of page text sent (the page question's, browser.readPageMaxChars). */
export function extractionMessages(f: ExtractionFacts, limit?: number): ChatMessage[] {
  const facts = f.facts.length ? f.facts.map((fact) => `- ${fact}`).join('\n') : '(none)';
  const page = f.pageText.trim() ? pageTextForQuestion(f.pageText, limit) : '(not available)';
  const partial = f.partial
    ? '\n\nThe agent stopped at its step or cost budget before it finished: give what the text supports.'
    : '';
  const user =
    `JSON Schema:\n${JSON.stringify(f.schema, null, 2)}\n\nThe agent's answer:\n${f.answer ?? '(none)'}\n\n` +
    `Facts the agent memorized:\n${facts}\n\nThe final page's text:\n${page}${partial}`;
  return [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: user },
  ];
}

/** The second try's messages: the first's, its reply, and what was wrong with it (one line each). */
export function retryMessages(
  first: readonly ChatMessage[],
  reply: string,
  problems: readonly string[],
): ChatMessage[] {
  const told = problems.map((p) => `- ${p}`).join('\n');
  return [
    ...first,
    { role: 'assistant', content: reply },
    {
      role: 'user',
      content: `That reply does not fit the schema:\n${told}\nReply again with the corrected JSON only.`,
    },
  ];
}

export type ParsedOutput = { ok: true; value: unknown } | { ok: false; error: string };

const FENCE = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/;

/**
 * The JSON in a model's reply, read leniently: the reply as it is, else the inside of a ```json fence, else the
 * first object in it (prose before or after, trailing commas, a cut-off end: src/model/lenient-json.ts), else its
 * first array.
 */
export function parseOutputJson(reply: string): ParsedOutput {
  const text = reply.trim();
  const candidates = [text, FENCE.exec(text)?.[1]?.trim()].filter((c): c is string => Boolean(c));
  for (const candidate of candidates) {
    try {
      return { ok: true, value: JSON.parse(candidate) as unknown };
    } catch {
      // the next reading
    }
  }
  const inner = candidates.at(-1) ?? text;
  if (inner.includes('{')) {
    try {
      return { ok: true, value: decodeFirstObject(inner).value };
    } catch {
      // no object in it either
    }
  }
  const array = /\[[\s\S]*\]/.exec(inner)?.[0];
  if (array) {
    try {
      return { ok: true, value: JSON.parse(array) as unknown };
    } catch {
      // not an array of JSON
    }
  }
  return { ok: false, error: text ? 'the reply holds no JSON' : 'the reply is empty' };
}

/** The `tool_sub_calls` entry of one extraction try. */
export function outputSubCallRecord(call: ModelSubCall & { pageChars: number }): ToolSubCallInput {
  return { ...subCallRecord(EXTRACT_TOOL, call), page_chars: call.pageChars };
}

/**
 * A task's output as one line for people (`cua run`, `cua show`, `cua status`): `output: {…}`, `output (partial):
 * {…}`, or `no output: <why>`; undefined for a task without an output schema (nothing to say).
 */
export function outputLine(output: { value: unknown; partial: boolean } | null | undefined, error?: string | null) {
  if (output === undefined) return undefined;
  if (output === null) return `no output${error ? `: ${error}` : ''}`;
  return `output${output.partial ? ' (partial)' : ''}: ${JSON.stringify(output.value)}`;
}
