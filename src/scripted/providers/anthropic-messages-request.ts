// The request half of the Anthropic Messages API stand-in (anthropic-messages.ts re-exports it): checks a
// `POST /v1/messages` request against the documented format (docs/provider-formats.md and the types of
// @anthropic-ai/sdk 1.17.0, never our adapters), one line per problem, and reads the newest screenshot's size from its
// bytes. Split from anthropic-messages.ts only to keep each file under 500 lines.
import { COMPUTER_MEMBER_NAME_VALUES } from '@anthropic-ai/sdk/resources/messages';
import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type { StandInRequestFacts } from './output';
import { readImageHeader } from './image-size';

/** The computer tools this stand-in speaks (computer_20241022, Sonnet 3.5's, it does not). */
export const ANTHROPIC_COMPUTER_TOOLS = [
  'computer_20250124',
  'computer_20251124',
  'computer_toolset_20260801',
] as const;
export type AnthropicComputerTool = (typeof ANTHROPIC_COMPUTER_TOOLS)[number];
export type AnthropicBetaComputerTool = Exclude<AnthropicComputerTool, 'computer_toolset_20260801'>;
export const COMPUTER_TOOLSET = 'computer_toolset_20260801';
/** The `toolset_name` every toolset tool_use carries and every tool_result must echo. */
export const TOOLSET_NAME = 'computer';

/** The `anthropic-beta` value each beta tool needs (docs/provider-formats.md, beta headers). */
export const COMPUTER_BETA_HEADERS: Record<AnthropicBetaComputerTool, AnthropicBeta> = {
  computer_20250124: 'computer-use-2025-01-24',
  computer_20251124: 'computer-use-2025-11-24',
};

/** Fields a toolset entry must not carry: the API answers `invalid_request_error`. */
const NOT_TOOLSET_FIELDS = ['name', 'display_width_px', 'display_height_px', 'display_number', 'enable_zoom'];
/** Image limits (docs/provider-formats.md): the toolset's models reject, not downscale, images over these. */
const TOOLSET_LONG_EDGE = 2576;
const TOOLSET_VISUAL_TOKENS = 4784;
/** With more than this many images in a request, each side must be ≤ MANY_IMAGES_SIDE. */
const MANY_IMAGES = 20;
const MANY_IMAGES_SIDE = 2000;

export interface Size {
  width: number;
  height: number;
}

/** What the caller expects the request to carry, from the stand-in's previous response and the script. */
export interface AnthropicExpectations {
  /** The tool the script is written for: a request offering another one is a problem. */
  tool?: AnthropicComputerTool;
  /** The tool_use ids of the stand-in's previous response: each must be echoed in the last assistant message. */
  toolUseIds?: string[];
  /** The person's reply to the previous response's question: the last user message's text must carry it. */
  reply?: string;
}

export interface AnthropicRequestFacts extends StandInRequestFacts {
  /** Always empty: Anthropic has no acknowledgement on the wire (the person's answer is `reply`). */
  acknowledged: string[];
  tool: AnthropicComputerTool | null;
  /** A beta tool's display_width_px × display_height_px: the model's coordinate space. */
  display: Size | null;
  /** Whether zoom is offered (`enable_zoom` on computer_20251124; the toolset unless its zoom config is off). */
  zoom: boolean;
  model: string | null;
  apiKey: string | null;
  /** Where the key came: `x-api-key` (the docs) or `authorization` (Bearer, as the SDK 1.17.0 sends it). */
  keyHeader: 'x-api-key' | 'authorization' | null;
  /** The `anthropic-beta` values, split at commas. */
  betas: string[];
  /** The last user message's text when it follows an assistant message without tool_use (a question's answer). */
  reply: string | null;
}

type Json = Record<string, unknown>;
const isRecord = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
const recordsOf = (x: unknown): Json[] => (Array.isArray(x) ? x.filter(isRecord) : []);
/** A message's content blocks (a string content is one text block). */
const blocksOf = (m: Json | undefined): Json[] =>
  typeof m?.content === 'string' ? [{ type: 'text', text: m.content }] : recordsOf(m?.content);
const toolUsesOf = (m: Json | undefined): Json[] => blocksOf(m).filter((b) => b.type === 'tool_use');
const isPositiveInt = (x: unknown): boolean => typeof x === 'number' && Number.isInteger(x) && x > 0;

/** Width, height and type of a PNG or JPEG, from its header (the stand-ins' one reader); null for anything else. */
export const imageSize = readImageHeader;

interface ToolFacts {
  tool: AnthropicComputerTool | null;
  display: Size | null;
  zoom: boolean;
}

function betaToolFacts(type: AnthropicBetaComputerTool, t: Json, problems: string[]): ToolFacts {
  if (t.name !== 'computer') problems.push(`${type} is named ${JSON.stringify(t.name)}, not "computer"`);
  for (const f of ['display_width_px', 'display_height_px']) {
    if (!isPositiveInt(t[f])) problems.push(`${type} ${f} missing or not a positive integer`);
  }
  if (type === 'computer_20250124' && 'enable_zoom' in t)
    problems.push('enable_zoom is not a field of computer_20250124');
  const display =
    isPositiveInt(t.display_width_px) && isPositiveInt(t.display_height_px)
      ? { width: Number(t.display_width_px), height: Number(t.display_height_px) }
      : null;
  return { tool: type, display, zoom: type === 'computer_20251124' && t.enable_zoom === true };
}

function toolsetFacts(t: Json, problems: string[]): ToolFacts {
  for (const f of NOT_TOOLSET_FIELDS) {
    if (f in t) problems.push(`${COMPUTER_TOOLSET} does not take ${f} (invalid_request_error)`);
  }
  const configs = isRecord(t.configs) ? t.configs : {};
  const members: readonly string[] = COMPUTER_MEMBER_NAME_VALUES;
  for (const k of Object.keys(configs)) {
    if (!members.includes(k)) problems.push(`configs.${k} is not a member of ${COMPUTER_TOOLSET}`);
  }
  const zoom = isRecord(configs.zoom) ? configs.zoom.enabled !== false : true;
  return { tool: COMPUTER_TOOLSET, display: null, zoom };
}

function readTools(tools: unknown, problems: string[]): ToolFacts {
  const computer = recordsOf(tools).filter((t) => typeof t.type === 'string' && t.type.startsWith('computer_'));
  const first = computer[0];
  if (!first) {
    problems.push('no computer tool');
    return { tool: null, display: null, zoom: false };
  }
  if (computer.length > 1)
    problems.push(`${computer.length} computer tools (${computer.map((t) => t.type).join(', ')})`);
  const known: readonly unknown[] = ANTHROPIC_COMPUTER_TOOLS;
  if (!known.includes(first.type)) {
    problems.push(`${String(first.type)} is not a computer tool this stand-in speaks`);
    return { tool: null, display: null, zoom: false };
  }
  return first.type === COMPUTER_TOOLSET
    ? toolsetFacts(first, problems)
    : betaToolFacts(first.type === 'computer_20251124' ? 'computer_20251124' : 'computer_20250124', first, problems);
}

/**
 * The API key: the documented `x-api-key`, or `Authorization: Bearer`, which is how @anthropic-ai/sdk 1.17.0 sends
 * `apiKey` (client.js `apiKeyAuth`); both are accepted.
 */
function keyOf(h: Record<string, string>): Pick<AnthropicRequestFacts, 'apiKey' | 'keyHeader'> {
  if (h['x-api-key']) return { apiKey: h['x-api-key'], keyHeader: 'x-api-key' };
  const bearer = /^Bearer\s+(\S+)$/i.exec(h.authorization ?? '')?.[1];
  return bearer ? { apiKey: bearer, keyHeader: 'authorization' } : { apiKey: null, keyHeader: null };
}

function headerProblems(h: Record<string, string>, tool: AnthropicComputerTool | null, betas: string[]): string[] {
  const problems: string[] = [];
  if (!keyOf(h).apiKey) problems.push('x-api-key header missing (nor Authorization: Bearer, as the SDK sends the key)');
  if (!h['anthropic-version']) problems.push('anthropic-version header missing');
  if (tool && tool !== COMPUTER_TOOLSET && !betas.includes(COMPUTER_BETA_HEADERS[tool])) {
    problems.push(`anthropic-beta header ${COMPUTER_BETA_HEADERS[tool]} missing for ${tool}`);
  }
  return problems;
}

/** The problems of one tool_result answering a tool_use: the toolset's echo and its text-and-image-only content. */
function toolResultProblems(use: Json, result: Json, tool: AnthropicComputerTool | null): string[] {
  if (tool !== COMPUTER_TOOLSET) return [];
  const problems: string[] = [];
  const id = String(use.id);
  if (use.toolset_name !== TOOLSET_NAME) problems.push(`tool_use ${id} lost its toolset_name "${TOOLSET_NAME}"`);
  if (result.toolset_name !== TOOLSET_NAME) {
    problems.push(`tool_result for ${id} does not echo toolset_name "${TOOLSET_NAME}"`);
  }
  for (const b of recordsOf(result.content).filter((c) => c.type !== 'text' && c.type !== 'image')) {
    problems.push(`tool_result for ${id} carries a ${String(b.type)} block (the toolset takes text and image only)`);
  }
  return problems;
}

/** Each tool_use is answered by a tool_result at the start of the next user message, and nothing else is. */
function pairingProblems(messages: Json[], tool: AnthropicComputerTool | null): string[] {
  const problems: string[] = [];
  messages.forEach((m, i) => {
    if (m.role !== 'user') return;
    const blocks = blocksOf(m);
    const uses = messages[i - 1]?.role === 'assistant' ? toolUsesOf(messages[i - 1]) : [];
    const results = blocks.filter((b) => b.type === 'tool_result');
    const lastResult = blocks.findLastIndex((b) => b.type === 'tool_result');
    const other = blocks.findIndex((b) => b.type !== 'tool_result');
    if (other >= 0 && other < lastResult) {
      problems.push(`a ${String(blocks[other]?.type)} block comes before a tool_result in message ${i}`);
    }
    for (const r of results.filter((r) => !uses.some((u) => u.id === r.tool_use_id))) {
      problems.push(`tool_result ${String(r.tool_use_id)} answers no tool_use of the message before it`);
    }
    for (const u of uses) {
      const result = results.find((r) => r.tool_use_id === u.id);
      if (!result) problems.push(`tool_use ${String(u.id)} has no tool_result in the next user message`);
      else problems.push(...toolResultProblems(u, result, tool));
    }
  });
  const last = messages[messages.length - 1];
  for (const u of last?.role === 'assistant' ? toolUsesOf(last) : []) {
    problems.push(`tool_use ${String(u.id)} has no tool_result (no user message follows)`);
  }
  return problems;
}

/** The newest screenshot: the last executed action's tool_result carries it (failed ones, `is_error`, may not). */
function screenshotProblems(messages: Json[]): string[] {
  const results = blocksOf(messages[messages.length - 1]).filter(
    (b) => b.type === 'tool_result' && b.is_error !== true,
  );
  const last = results[results.length - 1];
  if (!last || recordsOf(last.content).some((c) => c.type === 'image')) return [];
  return [`the last tool_result (${String(last.tool_use_id)}) carries no image`];
}

/** The caller's expectations: the previous response echoed, the person's reply as the next user message. */
function expectedProblems(messages: Json[], facts: ToolFacts, expect: AnthropicExpectations, reply: string | null) {
  const problems: string[] = [];
  if (expect.tool && facts.tool && expect.tool !== facts.tool) {
    problems.push(`the script is for ${expect.tool}, the request offers ${facts.tool}`);
  }
  const assistant = messages.findLast((m) => m.role === 'assistant');
  for (const id of expect.toolUseIds ?? []) {
    if (!toolUsesOf(assistant).some((u) => u.id === id)) {
      problems.push(`tool_use ${id} of the last response is not in the request's last assistant message`);
    }
  }
  if (expect.reply !== undefined && !(reply ?? '').includes(expect.reply)) {
    problems.push(`the person's reply ${JSON.stringify(expect.reply)} is not the text of the next user message`);
  }
  return problems;
}

/** The last user message's text, when the assistant message before it asked (text, no tool_use). */
function replyOf(messages: Json[]): string | null {
  const last = messages[messages.length - 1];
  const before = messages[messages.length - 2];
  if (last?.role !== 'user' || before?.role !== 'assistant' || toolUsesOf(before).length > 0) return null;
  const texts = blocksOf(last).filter((b) => b.type === 'text' && typeof b.text === 'string');
  return texts.length > 0 ? texts.map((b) => String(b.text)).join('\n') : null;
}

interface FoundImage {
  where: string;
  source: Json;
}

function imagesOf(messages: Json[]): FoundImage[] {
  return messages.flatMap((m, i) =>
    blocksOf(m).flatMap((b): FoundImage[] => {
      if (b.type === 'image' && isRecord(b.source)) return [{ where: `in message ${i}`, source: b.source }];
      if (b.type !== 'tool_result') return [];
      const where = `in the tool_result for ${String(b.tool_use_id)}`;
      return recordsOf(b.content).flatMap((c) =>
        c.type === 'image' && isRecord(c.source) ? [{ where, source: c.source }] : [],
      );
    }),
  );
}

/** Reads every base64 image's size (the newest is the screenshot), checking its media type and the size limits. */
function readImages(messages: Json[], tool: AnthropicComputerTool | null, problems: string[]): Size | null {
  const images = imagesOf(messages);
  let newest: Size | null = null;
  for (const { where, source } of images) {
    if (source.type !== 'base64') continue; // url and file sources: nothing to read here
    const size = imageSize(Buffer.from(String(source.data ?? ''), 'base64'));
    if (!size) {
      problems.push(`the image ${where} is neither PNG nor JPEG`);
      continue;
    }
    if (source.media_type !== size.mediaType) {
      problems.push(`the image ${where} says ${String(source.media_type)} but its bytes are ${size.mediaType}`);
    }
    const { width, height } = size;
    const tokens = Math.ceil(width / 28) * Math.ceil(height / 28);
    if (tool === COMPUTER_TOOLSET && (Math.max(width, height) > TOOLSET_LONG_EDGE || tokens > TOOLSET_VISUAL_TOKENS)) {
      problems.push(`the image ${where} is ${width}×${height}, over the toolset models' limit (rejected, not resized)`);
    }
    if (images.length > MANY_IMAGES && Math.max(width, height) > MANY_IMAGES_SIDE) {
      problems.push(
        `the image ${where} is ${width}×${height}: with over ${MANY_IMAGES} images each side must be ≤ 2000`,
      );
    }
    newest = { width, height };
  }
  return newest;
}

/**
 * Checks a `POST /v1/messages` request: the headers (`x-api-key`, `anthropic-version`, the beta header of a beta
 * tool), the computer tool's definition, each tool_use answered by a tool_result (the toolset's echoing
 * `toolset_name`), the newest screenshot present, and what `expect` names. Lists each problem in one line.
 */
export function readAnthropicRequest(
  headers: Record<string, string | undefined>,
  body: unknown,
  expect: AnthropicExpectations = {},
): AnthropicRequestFacts {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) h[k.toLowerCase()] = v;
  const betas = (h['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  const problems: string[] = [];
  const req = isRecord(body) ? body : {};
  if (!isRecord(body)) problems.push('the body is not a JSON object');
  const facts = readTools(req.tools, problems);
  problems.unshift(...headerProblems(h, facts.tool, betas));
  if (typeof req.model !== 'string' || req.model === '') problems.push('model missing');
  if (typeof req.max_tokens !== 'number') problems.push('max_tokens missing');
  const messages = recordsOf(req.messages);
  if (messages.length === 0) problems.push('messages missing');
  problems.push(...pairingProblems(messages, facts.tool), ...screenshotProblems(messages));
  const screenshot = readImages(messages, facts.tool, problems);
  const reply = replyOf(messages);
  problems.push(...expectedProblems(messages, facts, expect, reply));
  return {
    ...facts,
    screenshot,
    acknowledged: [],
    problems,
    model: typeof req.model === 'string' ? req.model : null,
    ...keyOf(h),
    betas,
    reply,
  };
}
