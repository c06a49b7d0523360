// A model call made inside a tool (read_page's question about the page, the desktop's grounding of a click), as a
// `tool_sub_calls` entry (ToolSubCallSchema): which model, how big the prompt was, what it returned (or the error), how
// long it took, and the call with its usage in the shape of `llm_conversation`, so the run's usage totals count it
// (src/trajectory/usage.ts). Pure.
import type { ChatMessage, Completion } from '../model/client';
import type { ToolSubCallInput } from '../trajectory/schema';
import { conversationEntry } from './decision';

export interface ModelSubCall {
  model: string;
  messages: readonly ChatMessage[];
  durationMs: number;
  /** The answer; absent when the call failed. */
  completion?: Completion;
  error?: unknown;
}

/** Characters of a prompt's messages (their text parts). */
function promptChars(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    if (typeof m.content === 'string') n += m.content.length;
    else
      for (const part of m.content ?? []) n += 'text' in part && typeof part.text === 'string' ? part.text.length : 0;
  }
  return n;
}

/** The `tool_sub_calls` entry of `tool`'s call. */
export function subCallRecord(tool: string, call: ModelSubCall): ToolSubCallInput {
  const error = call.error === undefined ? '' : call.error instanceof Error ? call.error.message : String(call.error);
  return {
    tool,
    model: call.model,
    prompt_chars: promptChars(call.messages),
    duration_ms: Math.round(call.durationMs),
    reply: call.completion?.text.trim() ?? '',
    error: error.split('\n')[0] ?? error,
    messages: call.completion ? [conversationEntry(call.completion, call.completion.text)] : [],
  };
}
