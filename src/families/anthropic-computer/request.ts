// One step's Messages API request body: our system prompt, the endpoint's computer tool, and the conversation rebuilt
// from the history (turns.ts) with its screenshots loaded. History limit: the screenshots of the newest `imagesKept`
// user messages (default 3; 0 or less: all) are sent; an older one is replaced by a short text, so a tool_result
// keeps its text and stays a valid result (the API takes a tool_result of text only, or of no content at all). The
// token budget is not applied: the kept screenshots bound the request's size, and the provider counts its own tokens.
import type { ScreenSize } from '../../actions/tool-schema';
import { DEFAULT_MAX_IMAGES } from '../../model/context';
import type { ImageLoader } from '../../model/context';
import type { RequestInput } from '../family';
import { imageBlock, zoomBlock } from './images';
import type { ImageBlock } from './images';
import { chooseTool, systemPrompt, toolEntry } from './tools';
import type { AnthropicTool } from './tools';
import { draftsOf } from './turns';
import type { Draft, Part, ResultDraft } from './turns';

/**
 * max_tokens when the endpoint sets none (the call sends the endpoint's `maxTokens` when it has one): a ceiling, not
 * a spend, high enough for the thinking that newer models do by default before their answer.
 */
export const DEFAULT_MAX_TOKENS = 16_384;
/** What an older screenshot becomes. */
export const OMITTED_SCREENSHOT = '(older screenshot omitted)';

type TextBlock = { type: 'text'; text: string };
type ContentBlock = TextBlock | ImageBlock;

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  system: string;
  tools: Record<string, unknown>[];
  messages: Array<{ role: 'user' | 'assistant'; content: unknown[] }>;
}

const partsOf = (d: Draft): Part[] =>
  d.role === 'user' ? [...d.user.results.flatMap((r) => r.parts), ...d.user.parts] : [];

/** Drops the screenshots of all but the newest `kept` user messages that carry one (each becomes a short text). */
function keepNewest(drafts: Draft[], kept: number): Draft[] {
  if (kept <= 0) return drafts;
  let seen = 0;
  const drop = (parts: Part[]): Part[] =>
    parts.map((p): Part => (p.type === 'shot' ? { type: 'text', text: OMITTED_SCREENSHOT } : p));
  return drafts
    .slice()
    .reverse()
    .map((d): Draft => {
      if (d.role !== 'user' || !partsOf(d).some((p) => p.type === 'shot')) return d;
      if (++seen <= kept) return d;
      const results = d.user.results.map((r) => ({ ...r, parts: drop(r.parts) }));
      return { role: 'user', user: { results, parts: drop(d.user.parts) } };
    })
    .reverse();
}

/** Renders parts with their screenshots loaded (a zoom's region cropped); consecutive texts stay separate blocks. */
async function render(parts: Part[], load: (ref: string) => Promise<string>, screen: ScreenSize) {
  return Promise.all(
    parts.map(async (p): Promise<ContentBlock> => {
      if (p.type === 'text') return p;
      const url = await load(p.ref);
      return p.region ? zoomBlock(url, p.region, screen) : imageBlock(url);
    }),
  );
}

async function resultBlock(r: ResultDraft, load: (ref: string) => Promise<string>, screen: ScreenSize) {
  const content = await render(r.parts, load, screen);
  // The toolset's results echo the toolset_name its tool_use carried.
  const toolset = typeof r.use.toolset_name === 'string' ? { toolset_name: r.use.toolset_name } : {};
  return {
    type: 'tool_result',
    tool_use_id: r.use.id,
    ...(content.length > 0 ? { content } : {}),
    ...(r.isError ? { is_error: true } : {}),
    ...toolset,
  };
}

/** The messages of the request, screenshots loaded once each. */
async function messagesOf(drafts: Draft[], loadImage: ImageLoader, screen: ScreenSize) {
  const cache = new Map<string, Promise<string>>();
  const load = (ref: string): Promise<string> => {
    let hit = cache.get(ref);
    if (!hit) cache.set(ref, (hit = loadImage(ref)));
    return hit;
  };
  return Promise.all(
    drafts.map(async (d): Promise<AnthropicRequestBody['messages'][number]> => {
      if (d.role === 'assistant') return { role: 'assistant', content: d.content };
      const results = await Promise.all(d.user.results.map((r) => resultBlock(r, load, screen)));
      return { role: 'user', content: [...results, ...(await render(d.user.parts, load, screen))] };
    }),
  );
}

/** The endpoint's model name, when its settings carry one (the worker config's endpoint does). */
export function modelOf(endpoint: RequestInput['endpoint']): string | undefined {
  return endpoint && 'model' in endpoint && typeof endpoint.model === 'string' ? endpoint.model : undefined;
}

/** The tool the step speaks: the endpoint's `tool`, else by its model's name (tools.ts), else the toolset. */
export function toolOf(input: Pick<RequestInput, 'endpoint'>): AnthropicTool {
  return chooseTool(input.endpoint?.tool, modelOf(input.endpoint));
}

/** The request body of one step. `model` and `max_tokens` are the call's to set from the endpoint. */
export async function requestBody(input: RequestInput, allowed: readonly string[]): Promise<AnthropicRequestBody> {
  const tool = toolOf(input);
  const drafts = keepNewest(draftsOf(input.history, input.screen, allowed), input.imagesKept ?? DEFAULT_MAX_IMAGES);
  return {
    model: modelOf(input.endpoint) ?? '',
    max_tokens: DEFAULT_MAX_TOKENS,
    system: systemPrompt(tool, input.screen),
    tools: [toolEntry(tool, input.screen)],
    messages: await messagesOf(drafts, input.loadImage, input.screen),
  };
}
