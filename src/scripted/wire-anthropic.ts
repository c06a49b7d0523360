// The Anthropic Messages API's wire for the scripted model server (`POST …/messages`): reads a request with the
// stand-in's readAnthropicRequest, counts its turn (assistant messages), finds the person's reply (the user message
// after a text-only assistant message: how a question, and a provider check, are answered on Anthropic), checks that
// the previous turn's tool_use blocks are echoed, and answers in Anthropic's message and error shapes.
import { anthropicContext, anthropicResponse, readAnthropicRequest } from './providers/anthropic-messages';
import type { StandInOutput } from './providers/output';
import { isRecord, recordsOf, textsAndImages } from './provider-wire';
import type { Json, ProviderWire, WireCall } from './provider-wire';
import type { ProviderTurn } from './script-turns';

/** The screen assumed when a request carried no screenshot nor display size (a recommended web display). */
const FALLBACK_SCREEN = { width: 1280, height: 800 };

const blocksOf = (m: Json | undefined): Json[] =>
  typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : recordsOf(m?.content);
const toolUsesOf = (m: Json | undefined): Json[] => blocksOf(m).filter((b) => b.type === 'tool_use');
const textsOf = (m: Json | undefined): string[] =>
  blocksOf(m).flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : []));

/** The first text of the latest user message that follows an assistant message without tool_use. */
function latestReply(messages: Json[]): string | undefined {
  let reply: string | undefined;
  messages.forEach((m, i) => {
    const before = messages[i - 1];
    if (m.role !== 'user' || before?.role !== 'assistant' || toolUsesOf(before).length > 0) return;
    reply = textsOf(m)[0] ?? reply;
  });
  return reply;
}

type Facts = ReturnType<typeof readAnthropicRequest>;

/** The last assistant message against the turn before: its tool_use blocks echoed by id, or none for a text turn. */
function againstPrevious(messages: Json[], facts: Facts, prev: ProviderTurn, prevIndex: number): string[] {
  const last = messages.findLast((m) => m.role === 'assistant');
  const echoed = toolUsesOf(last).map((u) => String(u.id));
  const sent = anthropicResponse(prev.output, anthropicContext(facts, prevIndex));
  const ids = recordsOf(sent.content).flatMap((b) => (b.type === 'tool_use' ? [String(b.id)] : []));
  const problems = ids
    .filter((id) => !echoed.includes(id))
    .map((id) => `tool_use ${id} of turn ${prevIndex + 1} is not in the request's last assistant message`);
  if (ids.length === 0 && echoed.length > 0) {
    problems.push(`the last assistant message has tool_use blocks, but turn ${prevIndex + 1} sent text only`);
  }
  return problems;
}

function read(headers: Record<string, string | undefined>, _url: URL, body: unknown): WireCall {
  const facts = readAnthropicRequest(headers, body);
  const req = isRecord(body) ? body : {};
  const messages = recordsOf(req.messages);
  const { texts, images } = textsAndImages(req.messages);
  const script = typeof req.model === 'string' ? req.model : '';
  return {
    script,
    apiKey: facts.apiKey,
    problems: facts.problems.filter((p) => !p.startsWith('x-api-key header missing')),
    acknowledged: [],
    tool: facts.tool,
    screen: facts.screenshot ?? facts.display ?? FALLBACK_SCREEN,
    turn: messages.filter((m) => m.role === 'assistant').length,
    reply: latestReply(messages),
    lastUserText: textsOf(messages.findLast((m) => m.role === 'user')).join('\n'),
    allText: texts.join('\n'),
    imageCount: images,
    messageCount: messages.length,
    oneActionPerTurn: false,
    typeAtPointer: false,
    againstPrevious: (prev, prevIndex) => againstPrevious(messages, facts, prev, prevIndex),
    respond: (output: StandInOutput, index: number) =>
      anthropicResponse(output, { ...anthropicContext(facts, index), model: script }),
    empty: (index: number) => ({
      ...anthropicResponse({ thoughts: '', actions: [] }, { ...anthropicContext(facts, index), model: script }),
      content: [],
    }),
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** Anthropic's error body: `{ type: "error", error: { type, message } }`. */
function error(status: number, message: string): unknown {
  const type = ERROR_TYPES[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
  return { type: 'error', error: { type, message } };
}

export const anthropicWire: ProviderWire = {
  provider: 'anthropic',
  matches: (path) => path.endsWith('/messages'),
  read,
  error,
};
