// The desktop agent's calls in a provider's own API (pure). Its action model may be reached by OpenAI-compatible chat
// completions (the default), by Anthropic's Messages API with tool use, or by Gemini's generateContent with function
// calling; its vision (and grounding) model the same. As open-computer-use does, the one tool table
// (tools.ts DESKTOP_TOOLS) becomes each API's function schema: Anthropic `tools[]` of `{name, description,
// input_schema}`, Gemini `tools[{functionDeclarations}]` with the schema as `parametersJsonSchema`. The chat messages
// the prompts build (a system text, user texts, screenshots as `data:` URLs) become Anthropic's top-level `system`
// and content blocks, or Gemini's `systemInstruction` and parts; the calls in a response come back in the chat
// completion's `toolCalls` shape (a name and its arguments as JSON text), so reading them (parse.ts) is the same for
// all three. Which API an endpoint speaks is its family's (src/families/family.ts toolUseApi).
import type { ChatMessage } from '../../model/client';
import type { DesktopTool } from './tools';

/** The API a desktop call is made in. */
export type DesktopApi = 'chat' | 'messages' | 'generate-content';

/** Anthropic's default output cap for a desktop call (open-computer-use's 4096); the endpoint's maxTokens wins. */
export const DESKTOP_MAX_TOKENS = 4096;

type Block = { type: 'text'; text: string } | { type: 'image'; url: string };

/** The text and image parts of one chat message's content. */
function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: unknown): Block[] => {
    const p = part as { type?: unknown; text?: unknown; image_url?: { url?: unknown } };
    if (p.type === 'text' && typeof p.text === 'string') return [{ type: 'text', text: p.text }];
    if (p.type === 'image_url' && typeof p.image_url?.url === 'string')
      return [{ type: 'image', url: p.image_url.url }];
    return [];
  });
}

/** A `data:` URL's media type and base64 payload, or undefined for any other URL. */
export function dataUrlParts(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1] ?? '', data: m[2] ?? '' } : undefined;
}

/** The system texts, and the other messages with consecutive ones of one role merged (both APIs alternate roles). */
function split(messages: readonly ChatMessage[]): {
  system: string;
  conversation: { role: 'user' | 'assistant'; blocks: Block[] }[];
} {
  const system: string[] = [];
  const conversation: { role: 'user' | 'assistant'; blocks: Block[] }[] = [];
  for (const m of messages) {
    const blocks = blocksOf(m.content);
    if (m.role === 'system' || m.role === 'developer') {
      system.push(...blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])));
      continue;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = conversation.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else conversation.push({ role, blocks });
  }
  return { system: system.join('\n\n'), conversation: conversation.filter((t) => t.blocks.length > 0) };
}

// ---- Anthropic Messages ------------------------------------------------------------------------

/** A Messages API request body for the desktop agent's call (the model is the endpoint's, set when it is sent). */
export interface DesktopMessagesBody {
  max_tokens: number;
  system?: string;
  messages: { role: 'user' | 'assistant'; content: Record<string, unknown>[] }[];
  tools?: { name: string; description: string; input_schema: Record<string, unknown> }[];
}

/** The chat messages (and, for the action model, the tools) as a Messages body. */
export function messagesBody(messages: readonly ChatMessage[], tools?: readonly DesktopTool[]): DesktopMessagesBody {
  const { system, conversation } = split(messages);
  const block = (b: Block): Record<string, unknown> => {
    if (b.type === 'text') return { type: 'text', text: b.text };
    const data = dataUrlParts(b.url);
    return {
      type: 'image',
      source: data ? { type: 'base64', media_type: data.mediaType, data: data.data } : { type: 'url', url: b.url },
    };
  };
  return {
    max_tokens: DESKTOP_MAX_TOKENS,
    ...(system ? { system } : {}),
    messages: conversation.map((t) => ({ role: t.role, content: t.blocks.map(block) })),
    ...(tools?.length
      ? { tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) }
      : {}),
  };
}

/** The `tool_use` blocks of a Messages response as calls (arguments as JSON text). */
export function messagesToolCalls(native: unknown): { name: string; arguments: string }[] {
  const content = (native as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) return [];
  return content.flatMap((b: unknown) => {
    const block = b as { type?: unknown; name?: unknown; input?: unknown };
    if (block.type !== 'tool_use' || typeof block.name !== 'string') return [];
    return [{ name: block.name, arguments: JSON.stringify(block.input ?? {}) }];
  });
}

// ---- Gemini generateContent --------------------------------------------------------------------

type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { fileUri: string; mimeType?: string } };

/** A generateContent request body for the desktop agent's call (REST field names, as the SDK writes them). */
export interface DesktopGenerateContentBody {
  systemInstruction?: { parts: { text: string }[] };
  contents: { role: 'user' | 'model'; parts: GeminiPart[] }[];
  tools?: { functionDeclarations: { name: string; description: string; parametersJsonSchema: unknown }[] }[];
}

/** The chat messages (and, for the action model, the tools) as a generateContent body. */
export function generateContentBody(
  messages: readonly ChatMessage[],
  tools?: readonly DesktopTool[],
): DesktopGenerateContentBody {
  const { system, conversation } = split(messages);
  const part = (b: Block): GeminiPart => {
    if (b.type === 'text') return { text: b.text };
    const data = dataUrlParts(b.url);
    return data ? { inlineData: { mimeType: data.mediaType, data: data.data } } : { fileData: { fileUri: b.url } };
  };
  return {
    ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    contents: conversation.map((t) => ({ role: t.role === 'assistant' ? 'model' : 'user', parts: t.blocks.map(part) })),
    ...(tools?.length
      ? {
          tools: [
            {
              functionDeclarations: tools.map((t) => ({
                name: t.name,
                description: t.description,
                parametersJsonSchema: t.parameters,
              })),
            },
          ],
        }
      : {}),
  };
}

/** The `functionCall` parts of a generateContent response's first candidate as calls (arguments as JSON text). */
export function generateContentToolCalls(native: unknown): { name: string; arguments: string }[] {
  const candidates = (native as { candidates?: unknown } | null)?.candidates;
  const first = Array.isArray(candidates)
    ? (candidates[0] as { content?: { parts?: unknown } } | undefined)
    : undefined;
  const parts = first?.content?.parts;
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((p: unknown) => {
    const call = (p as { functionCall?: { name?: unknown; args?: unknown } }).functionCall;
    if (!call || typeof call.name !== 'string') return [];
    return [{ name: call.name, arguments: JSON.stringify(call.args ?? {}) }];
  });
}

/** A generateContent response that ended without an output the agent can use, and why (e.g. a malformed call). */
export function generateContentProblem(native: unknown): string | undefined {
  const candidates = (native as { candidates?: unknown } | null)?.candidates;
  const first = Array.isArray(candidates)
    ? (candidates[0] as { finishReason?: unknown; finishMessage?: unknown } | undefined)
    : undefined;
  const reason = typeof first?.finishReason === 'string' ? first.finishReason : undefined;
  if (reason !== 'MALFORMED_FUNCTION_CALL' && reason !== 'UNEXPECTED_TOOL_CALL') return undefined;
  const detail = typeof first?.finishMessage === 'string' && first.finishMessage ? ` (${first.finishMessage})` : '';
  return `Your function call could not be read${detail}. Call one of the declared functions with JSON arguments.`;
}
