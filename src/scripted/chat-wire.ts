// The chat-completions wire the scripted model server answers on (`POST …/chat/completions`): the request's shape as
// the server reads it, the text and images of its messages, and the completion, usage and error bodies it sends. The
// Fara route (server.ts) and the UI-TARS and Qwen-VL formats (chat-formats.ts) share them.
import type http from 'node:http';
import type { ScriptUsage } from './script';

export interface ChatMessage {
  role: string;
  content: unknown;
  tool_calls?: unknown;
}

export interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  tools?: { type?: unknown; function?: { name?: unknown; description?: unknown; parameters?: unknown } }[];
  tool_choice?: unknown;
}

export interface ToolCallOut {
  name: string;
  arguments: string;
}

/** The text parts of a message's content, joined by line breaks (a string content is its own text). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: { type?: string; text?: string }) => (p?.type === 'text' ? (p.text ?? '') : ''))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

export function countImages(messages: ChatRequest['messages']): number {
  let n = 0;
  for (const m of messages ?? []) {
    if (Array.isArray(m.content)) n += m.content.filter((p: { type?: string }) => p?.type === 'image_url').length;
  }
  return n;
}

/** The output's `usage` (script.ts UsageSchema): none, the entry's counts, or counts estimated from the request. */
export function usageOf(c: { messages: ChatMessage[] }, usage: ScriptUsage | undefined, content: string) {
  if (usage === false) return {};
  if (usage) {
    const { prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens } = usage;
    return {
      usage: {
        prompt_tokens,
        completion_tokens,
        total_tokens: prompt_tokens + completion_tokens,
        ...(cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens } } : {}),
        ...(reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens } } : {}),
      },
    };
  }
  const text = c.messages.map((m) => textOf(m.content)).join('\n');
  const prompt = Math.ceil(text.length / 4) + 258 * countImages(c.messages);
  const completionTokens = Math.ceil(content.length / 4);
  return {
    usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens },
  };
}

export function completion(model: string, content: string, toolCalls?: ToolCallOut[], usage: object = {}) {
  const message = toolCalls
    ? {
        role: 'assistant',
        content: content === '' ? null : content,
        tool_calls: toolCalls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c })),
      }
    : { role: 'assistant', content };
  return {
    id: `chatcmpl-scripted-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: toolCalls ? 'tool_calls' : 'stop' }],
    ...usage,
  };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function sendError(res: http.ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: status < 500 ? 'invalid_request_error' : 'server_error' } });
}
