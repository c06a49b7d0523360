// Which chat-completions format a request to the scripted model server speaks, read from the request alone, and what
// the format needs from it: the coordinate space its answer is written in, the person's reply, and the request's
// problems against the format. Written from the providers' documented formats (UI-TARS-1.5's prompt and output,
// Qwen-Agent's `computer_use` function), never from our families.
//
// The detection rule, in order:
// 1. UI-TARS-1.5: a system message, or the first user message, whose text holds UI-TARS's prompt: `You are a GUI
//    agent`, then `## Output Format`, then `Action:`.
// 2. Qwen-VL: a `computer_use` function, in the request's `tools` (native tool calls) or as JSON inside
//    `<tools></tools>` in a system message (`<tool_call>` text), whose action enum has none of Fara's own actions
//    (visit_url, web_search, history_back, pause_and_memorize_fact, read_page_answer_question, ask_user_question):
//    Fara's prompt carries a `computer_use` function too, always with some of these. The generation comes from the
//    function's description, "The screen's resolution is WxH.": 999x999 or 1000x1000 is Qwen3-VL's relative grid of
//    that size, any other size Qwen2.5-VL's absolute pixels of the resized screenshot. Without the sentence, an enum
//    with Qwen3's additions (answer, triple_click, hscroll) is Qwen3 on the 999 grid, else Qwen2.5.
// 3. Anything else is Fara's format (the route as it always was).
import { DEFAULT_URL_LABEL } from '../model/context';
import { smartResize } from '../image/smart-resize';
import type { SmartResizeOptions } from '../image/smart-resize';
import { readImageHeader } from './providers/image-size';
import { textOf } from './chat-wire';
import type { ChatMessage, ChatRequest } from './chat-wire';
import type { Size } from './script-turns';

export const CHAT_FORMATS = ['fara', 'ui-tars-1.5', 'qwen2.5-vl', 'qwen3-vl'] as const;
export type ChatFormat = (typeof CHAT_FORMATS)[number];

/** The actions only Fara's `computer_use` offers: a function with any of them is Fara's. */
const FARA_ONLY_ACTIONS = [
  'visit_url',
  'web_search',
  'history_back',
  'pause_and_memorize_fact',
  'read_page_answer_question',
  'ask_user_question',
];
/** Qwen3-VL's additions to Qwen2.5-VL's action enum. */
const QWEN3_ACTIONS = ['answer', 'triple_click', 'hscroll'];
/** UI-TARS-1.5's smart_resize bounds (docs/provider-formats.md): factor 28, 100·28² to 16384·28² pixels. */
const UI_TARS_RESIZE = { factor: 28, minPixels: 100 * 28 * 28, maxPixels: 16384 * 28 * 28 };
const QWEN25_RESIZE = { factor: 28 };
const UI_TARS_PROMPT = /You are a GUI agent[\s\S]*## Output Format[\s\S]*Action:/;
const RESOLUTION = /resolution is (\d+)\s*x\s*(\d+)/;

/** Qwen-VL's `computer_use` function as a request offers it. */
export interface QwenTool {
  /** Its action enum; empty when it has none. */
  actions: string[];
  /** The size its description's resolution sentence states, or null. */
  resolution: Size | null;
  /** Offered in the request's `tools` (the answer is native `tool_calls`), not in the system prompt's `<tools>`. */
  native: boolean;
}

/** What the route needs to answer a request in its format. */
export interface ChatFormatCall {
  format: ChatFormat;
  /** Qwen-VL: the function offered. */
  qwen?: QwenTool;
  /** The space the answer's points are written in (resized pixels, or Qwen3's grid); null without a screenshot. */
  space: Size | null;
  /** The request's problems against its format (empty for Fara's: its route checks nothing). */
  problems: string[];
  /** The person's latest reply: the text of the user message after the assistant turn that asked. */
  reply: string | undefined;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A function tool object (`{type, function: {…}}` or the bare `{name, …}`) when it is `computer_use`. */
function computerUseOf(tool: unknown): Json | undefined {
  const fn = isRecord(tool) && isRecord(tool.function) ? tool.function : tool;
  return isRecord(fn) && fn.name === 'computer_use' ? fn : undefined;
}

/** The JSON objects inside `<tools></tools>` blocks: one per line as Qwen-Agent writes them, or the whole block. */
function promptTools(system: string): unknown[] {
  const parse = (s: string): unknown => {
    try {
      return JSON.parse(s);
    } catch {
      return undefined;
    }
  };
  // The prompt names the tags in its prose too (`within <tools></tools> XML tags`): empty blocks hold nothing.
  return [...system.matchAll(/<tools>([\s\S]*?)<\/tools>/g)].flatMap(([, block = '']) => {
    if (!block.trim()) return [];
    const whole = parse(block);
    if (whole !== undefined) return Array.isArray(whole) ? whole : [whole];
    return block.split('\n').flatMap((line) => (line.trim() ? [parse(line.trim())] : []));
  });
}

function qwenToolOf(fn: Json, native: boolean): QwenTool {
  const params = isRecord(fn.parameters) ? fn.parameters : {};
  const props = isRecord(params.properties) ? params.properties : {};
  const action = isRecord(props.action) ? props.action : {};
  const actions = Array.isArray(action.enum) ? action.enum.map(String) : [];
  const found = RESOLUTION.exec(typeof fn.description === 'string' ? fn.description : '');
  const resolution = found ? { width: Number(found[1]), height: Number(found[2]) } : null;
  return { actions, resolution, native };
}

const systemTexts = (messages: ChatMessage[]): string[] =>
  messages.filter((m) => m.role === 'system').map((m) => textOf(m.content));

/** The request's Qwen `computer_use` function, or undefined (none, or Fara's). */
function qwenTool(request: ChatRequest, messages: ChatMessage[]): QwenTool | undefined {
  const native = (request.tools ?? []).map(computerUseOf).find(isRecord);
  const inPrompt = systemTexts(messages).flatMap(promptTools).map(computerUseOf).find(isRecord);
  const fn = native ?? inPrompt;
  if (!fn) return undefined;
  const tool = qwenToolOf(fn, native !== undefined);
  return tool.actions.some((a) => FARA_ONLY_ACTIONS.includes(a)) ? undefined : tool;
}

/** Qwen's generation, and its grid (Qwen3) — see the module comment. */
function qwenFormat(tool: QwenTool): { format: ChatFormat; grid?: number } {
  const r = tool.resolution;
  if (r && r.width === r.height && (r.width === 999 || r.width === 1000)) return { format: 'qwen3-vl', grid: r.width };
  if (r) return { format: 'qwen2.5-vl' };
  return tool.actions.some((a) => QWEN3_ACTIONS.includes(a))
    ? { format: 'qwen3-vl', grid: 999 }
    : { format: 'qwen2.5-vl' };
}

/** The newest image of the request, as its parts' `image_url.url` (or a bare string) in order. */
function imageUrls(m: ChatMessage | undefined): string[] {
  if (!m || !Array.isArray(m.content)) return [];
  return m.content.flatMap((p: unknown) => {
    if (!isRecord(p) || p.type !== 'image_url') return [];
    const url = isRecord(p.image_url) ? p.image_url.url : p.image_url;
    return [typeof url === 'string' ? url : ''];
  });
}

/** The newest screenshot's size after smart_resize, from its bytes; a problem when there is none to read. */
function screenshotOf(messages: ChatMessage[], resize: SmartResizeOptions): { size: Size | null; problem?: string } {
  const last = messages.findLast((m) => m.role === 'user');
  const url = imageUrls(last).pop();
  if (url === undefined) return { size: null, problem: 'the last user message carries no screenshot (image_url)' };
  const data = /^data:image\/[a-z]+;base64,(.*)$/s.exec(url)?.[1];
  const header = data ? readImageHeader(Buffer.from(data, 'base64')) : null;
  if (!header) return { size: null, problem: 'the newest screenshot is no PNG or JPEG data URL' };
  try {
    const { width, height } = smartResize(header.height, header.width, resize);
    return { size: { width, height } };
  } catch (err) {
    return { size: null, problem: `the newest screenshot cannot be resized: ${(err as Error).message}` };
  }
}

const BOX = /(start_box|end_box)='([^']*)'/g;
const WRAPPED = /^<\|box_start\|>[\s\S]*<\|box_end\|>$/;

/** UI-TARS: the prompt's instruction, and every box of an earlier assistant turn re-wrapped in box tokens. */
function uiTarsProblems(messages: ChatMessage[]): string[] {
  const problems: string[] = [];
  const prompt = [...systemTexts(messages), textOf(messages.find((m) => m.role === 'user')?.content)].join('\n');
  if (!prompt.includes('## User Instruction')) problems.push('the UI-TARS prompt has no `## User Instruction` part');
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    for (const [, name, value] of textOf(m.content).matchAll(BOX)) {
      if (!WRAPPED.test(value ?? '')) {
        problems.push(
          `message ${i + 1} (assistant): ${name}='${value}' is not re-wrapped as '<|box_start|>${value}<|box_end|>'`,
        );
      }
    }
  });
  return problems;
}

/** Qwen: the schema present, with its enum and resolution sentence, and the format's instructions. */
function qwenProblems(tool: QwenTool, messages: ChatMessage[], space: Size | null, grid?: number): string[] {
  const problems: string[] = [];
  if (tool.actions.length === 0) problems.push('the computer_use function has no action enum');
  const r = tool.resolution;
  if (!r) problems.push('the computer_use description has no "The screen\'s resolution is WxH." sentence');
  else if (!grid && space && (r.width !== space.width || r.height !== space.height)) {
    problems.push(
      `the resolution sentence says ${r.width}x${r.height}, but the screenshot resized (factor 28) is ${space.width}x${space.height}`,
    );
  }
  if (!tool.native && !systemTexts(messages).some((t) => t.includes('<tool_call>'))) {
    problems.push('the system prompt does not ask for <tool_call></tool_call> blocks');
  }
  return problems;
}

/** The text of the user message after the latest assistant message that asked, without a leading URL line. */
function replyAfter(messages: ChatMessage[], asked: (m: ChatMessage) => boolean): string | undefined {
  let reply: string | undefined;
  messages.forEach((m, i) => {
    const before = messages[i - 1];
    if (m.role !== 'user' || before?.role !== 'assistant' || !asked(before)) return;
    const text = textOf(m.content);
    reply = (text.startsWith(`${DEFAULT_URL_LABEL} `) ? text.slice(text.indexOf('\n') + 1) : text).trim();
  });
  return reply;
}

const hasToolCall = (m: ChatMessage): boolean =>
  (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || textOf(m.content).includes('<tool_call>');

/** The request's format and what answering it needs (see the module comment). */
export function detectChatFormat(request: ChatRequest): ChatFormatCall {
  const messages = request.messages ?? [];
  const prompts = [...systemTexts(messages), textOf(messages.find((m) => m.role === 'user')?.content)];
  if (prompts.some((t) => UI_TARS_PROMPT.test(t))) {
    const shot = screenshotOf(messages, UI_TARS_RESIZE);
    const space = shot.size;
    const problems = [...(shot.problem ? [shot.problem] : []), ...uiTarsProblems(messages)];
    const reply = replyAfter(messages, (m) => textOf(m.content).includes('call_user('));
    return { format: 'ui-tars-1.5', space, problems, reply };
  }
  const tool = qwenTool(request, messages);
  if (!tool) return { format: 'fara', space: null, problems: [], reply: undefined };
  const { format, grid } = qwenFormat(tool);
  const shot = screenshotOf(messages, QWEN25_RESIZE);
  const resized = shot.size;
  const space = grid ? { width: grid, height: grid } : resized;
  const problems = [...(shot.problem ? [shot.problem] : []), ...qwenProblems(tool, messages, resized, grid)];
  return { format, qwen: tool, space, problems, reply: replyAfter(messages, (m) => !hasToolCall(m)) };
}
