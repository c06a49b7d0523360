// The desktop agent's calls on Anthropic's Messages API with custom tool use (`POST …/messages` with `x-cua-call`):
// the request checked against the documented format, one line per problem, and the answer as a `Message`. Written
// from Anthropic's tool-use documentation and the types of @anthropic-ai/sdk 1.17 (`resources/messages`: `Tool`,
// `ToolChoice`, `MessageParam`, `ImageBlockParam`, `Base64ImageSource`, `ToolUseBlock`, `Message`), never from our
// adapters. The route itself is provider-desktop.ts.
import type { ContentBlock, Message } from '@anthropic-ai/sdk/resources/messages';
import type { Base64ImageSource } from '@anthropic-ai/sdk/resources/messages';
import { isRecord, recordsOf } from './provider-wire';
import type { Json } from './provider-wire';
import type { DesktopAnswer, DesktopAnswerContext, DesktopCallWire, DesktopRequest } from './desktop-entry';
import { anthropicUsage, standInMessage } from './providers/anthropic-messages';

/** A custom tool's name (the API's pattern). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_TYPES: readonly Base64ImageSource['media_type'][] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** Content block types a request may carry (others are refused, so a typo does not pass unseen). */
const BLOCK_TYPES = ['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'];
const CHOICE_TYPES = ['auto', 'any', 'none', 'tool'];

/** A message's content blocks (a string content is one text block). */
const blocksOf = (m: Json | undefined): Json[] =>
  typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : recordsOf(m?.content);
const textsOf = (m: Json | undefined): string[] =>
  blocksOf(m).flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : []));

/** The documented `x-api-key`, or `Authorization: Bearer` (how the SDK may send `apiKey`); both are accepted. */
function keyOf(h: Record<string, string>): string | null {
  return h['x-api-key'] || /^Bearer\s+(\S+)$/i.exec(h.authorization ?? '')?.[1] || null;
}

/** An image block's problems: a base64 source with a real image media type, or a URL source. */
function imageProblems(b: Json, where: string): string[] {
  const s = isRecord(b.source) ? b.source : {};
  if (s.type === 'url')
    return typeof s.url === 'string' && s.url !== '' ? [] : [`${where}: a url image source needs url`];
  if (s.type !== 'base64') return [`${where}: image source type ${JSON.stringify(s.type)} (base64 or url)`];
  const problems: string[] = [];
  if (!(IMAGE_TYPES as readonly unknown[]).includes(s.media_type)) {
    problems.push(`${where}: media_type ${JSON.stringify(s.media_type)} is not one of ${IMAGE_TYPES.join(', ')}`);
  }
  if (typeof s.data !== 'string' || !BASE64.test(s.data)) problems.push(`${where}: image data is not base64`);
  return problems;
}

/** The problems of one content block of a message; counts its images. */
function blockProblems(b: Json, role: unknown, where: string, prevToolUses: string[], count: { images: number }) {
  const problems: string[] = [];
  if (!BLOCK_TYPES.includes(String(b.type))) return [`${where}: unknown content block type ${JSON.stringify(b.type)}`];
  if (b.type === 'text' && (typeof b.text !== 'string' || b.text === '')) problems.push(`${where}: empty text block`);
  if (b.type === 'image') {
    count.images++;
    problems.push(...imageProblems(b, where));
  }
  if (b.type === 'tool_use' && role !== 'assistant') problems.push(`${where}: tool_use in a ${String(role)} message`);
  if (b.type === 'tool_result') {
    if (role !== 'user') problems.push(`${where}: tool_result in a ${String(role)} message`);
    if (!prevToolUses.includes(String(b.tool_use_id))) {
      problems.push(`${where}: tool_result ${String(b.tool_use_id)} answers no tool_use of the message before it`);
    }
    recordsOf(b.content).forEach((c, k) => {
      if (c.type === 'image') {
        count.images++;
        problems.push(...imageProblems(c, `${where}.content[${k}]`));
      }
    });
  }
  return problems;
}

function messagesProblems(messages: unknown, count: { images: number }): string[] {
  if (!Array.isArray(messages) || messages.length === 0) return ['messages missing or empty'];
  const problems: string[] = [];
  let prevToolUses: string[] = [];
  messages.forEach((m: unknown, i) => {
    const where = `messages[${i}]`;
    if (!isRecord(m)) return problems.push(`${where} is not an object`);
    if (m.role === 'system') problems.push(`${where}: role system (the system prompt is the top-level system field)`);
    else if (m.role !== 'user' && m.role !== 'assistant') problems.push(`${where}: role ${JSON.stringify(m.role)}`);
    if (i === 0 && m.role !== 'user') problems.push('the first message is not a user message');
    const empty = typeof m.content === 'string' ? m.content === '' : !Array.isArray(m.content) || !m.content.length;
    const finalAssistant = i === messages.length - 1 && m.role === 'assistant';
    if (empty && !finalAssistant) problems.push(`${where}: empty content`);
    blocksOf(m).forEach((b, k) =>
      problems.push(...blockProblems(b, m.role, `${where}.content[${k}]`, prevToolUses, count)),
    );
    const answered = blocksOf(m).flatMap((b) => (b.type === 'tool_result' ? [String(b.tool_use_id)] : []));
    for (const id of prevToolUses.filter((id) => m.role !== 'user' || !answered.includes(id))) {
      problems.push(`${where}: tool_use ${id} of the message before has no tool_result here`);
    }
    prevToolUses = blocksOf(m).flatMap((b) => (b.type === 'tool_use' ? [String(b.id)] : []));
  });
  for (const id of prevToolUses) problems.push(`tool_use ${id} has no tool_result (no user message follows)`);
  return problems;
}

function systemProblems(system: unknown): string[] {
  if (system === undefined || typeof system === 'string') return [];
  if (!Array.isArray(system)) return ['system is neither a string nor a list of text blocks'];
  return system.flatMap((b: unknown, k) =>
    isRecord(b) && b.type === 'text' && typeof b.text === 'string' ? [] : [`system[${k}] is not a text block`],
  );
}

/** The tools' problems, and their names. */
function toolsProblems(tools: unknown): { problems: string[]; names: string[] } {
  if (tools === undefined) return { problems: [], names: [] };
  if (!Array.isArray(tools)) return { problems: ['tools is not a list'], names: [] };
  const problems: string[] = [];
  const names: string[] = [];
  tools.forEach((t: unknown, i) => {
    const where = `tools[${i}]`;
    if (!isRecord(t)) return problems.push(`${where} is not an object`);
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      problems.push(`${where}: type ${JSON.stringify(t.type)} is not a custom tool (the desktop declares functions)`);
    }
    const name = typeof t.name === 'string' ? t.name : '';
    if (!TOOL_NAME.test(name)) problems.push(`${where}: name ${JSON.stringify(t.name)} does not match ${TOOL_NAME}`);
    else if (names.includes(name)) problems.push(`${where}: tool name ${name} declared twice`);
    names.push(name);
    if (t.description !== undefined && typeof t.description !== 'string') {
      problems.push(`${where}: description is not a string`);
    }
    if (!isRecord(t.input_schema)) problems.push(`${where}: input_schema missing`);
    else if (t.input_schema.type !== 'object') problems.push(`${where}: input_schema.type is not "object"`);
  });
  return { problems, names };
}

/** The tool_choice's problems, the names it lets the model call, and its word. */
function choiceOf(choice: unknown, names: string[]): { problems: string[]; callable: string[]; word?: string } {
  if (choice === undefined) return { problems: [], callable: names };
  if (!isRecord(choice) || !CHOICE_TYPES.includes(String(choice.type))) {
    return { problems: [`tool_choice type is not one of ${CHOICE_TYPES.join(', ')}`], callable: names };
  }
  const problems: string[] = [];
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean') {
    problems.push('tool_choice.disable_parallel_tool_use is not a boolean');
  }
  if (choice.type === 'none') return { problems, callable: [], word: 'none' };
  if (choice.type !== 'tool') return { problems, callable: names, word: String(choice.type) };
  const name = String(choice.name);
  if (!names.includes(name)) problems.push(`tool_choice names ${name}, which the request does not declare`);
  return { problems, callable: [name], word: `tool:${name}` };
}

function read(headers: Record<string, string>, _url: URL, body: unknown): DesktopRequest {
  const req = isRecord(body) ? body : {};
  const problems: string[] = isRecord(body) ? [] : ['the body is not a JSON object'];
  if (!headers['anthropic-version']) problems.push('anthropic-version header missing');
  if (typeof req.model !== 'string' || req.model === '') problems.push('model missing');
  const max = req.max_tokens;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1)
    problems.push('max_tokens is not a positive integer');
  const count = { images: 0 };
  problems.push(...messagesProblems(req.messages, count), ...systemProblems(req.system));
  const tools = toolsProblems(req.tools);
  const choice = choiceOf(req.tool_choice, tools.names);
  problems.push(...tools.problems, ...choice.problems);
  const messages = recordsOf(req.messages);
  const users = messages.filter((m) => m.role === 'user');
  const system = typeof req.system === 'string' ? [req.system] : recordsOf(req.system).map((b) => String(b.text));
  return {
    script: typeof req.model === 'string' ? req.model : '',
    apiKey: keyOf(headers),
    problems,
    toolNames: tools.names,
    callable: choice.callable,
    ...(choice.word ? { toolChoice: choice.word } : {}),
    imageCount: count.images,
    userTexts: users.flatMap(textsOf),
    lastUserText: textsOf(users[users.length - 1]).join('\n'),
    allText: [...system, ...messages.flatMap(textsOf)].join('\n'),
    messageCount: messages.length,
  };
}

function message(content: ContentBlock[], ctx: DesktopAnswerContext, a: DesktopAnswer): Message {
  return standInMessage(`msg_standin_desktop_${ctx.entry}`, ctx.script, content, anthropicUsage(a.usage));
}

/**
 * The answer as a `Message`: a text block (when there is text), then one `tool_use` block per call, `stop_reason`
 * `tool_use` (`end_turn` for text only). Malformed: only the first call, its `input` empty (required arguments
 * missing), as a model that lost its arguments sends it.
 */
function answer(a: DesktopAnswer, ctx: DesktopAnswerContext): Message {
  const content: ContentBlock[] = a.text === '' ? [] : [{ type: 'text', text: a.text, citations: null }];
  const calls = a.malformed ? a.calls.slice(0, 1).map((c) => ({ ...c, args: {} })) : a.calls;
  calls.forEach((c, k) => {
    const id = `toolu_standin_${ctx.entry}_${k}`;
    content.push({ type: 'tool_use', id, caller: { type: 'direct' }, name: c.name, input: c.args });
  });
  return message(content, ctx, a);
}

export const anthropicDesktop: DesktopCallWire = {
  read,
  answer,
  empty: (ctx) => message([], ctx, { text: '', calls: [], malformed: false }),
};
