// The Anthropic Messages API stand-in (`POST /v1/messages`), both pure halves: the response body for a scripted
// model output, and the check of a request against the documented format. It speaks the beta computer tools
// `computer_20250124` and `computer_20251124` (zoom; coordinates in the tool's display_width_px × display_height_px)
// and the GA `computer_toolset_20260801` (no beta header; one tool_use per action, named after it, with
// `toolset_name: "computer"`; coordinates in screenshot pixels). Written from docs/provider-formats.md and the
// types of @anthropic-ai/sdk 1.17.0, never from our adapters. Anthropic has no confirmation field: a question (and a
// provider check, which Anthropic's model raises in plain text) is a text-only message with stop_reason end_turn.
import type {
  ComputerMemberName,
  ComputerToolUseBlock,
  ContentBlock,
  Message,
  ToolUseBlock,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';
import type {
  BetaContentBlock,
  BetaMessage,
  BetaToolUseBlock,
  BetaUsage,
} from '@anthropic-ai/sdk/resources/beta/messages';
import type { ScreenAction, ScreenPoint, StandInOutput } from './output';

import { COMPUTER_TOOLSET, TOOLSET_NAME } from './anthropic-messages-request';
import type { AnthropicComputerTool, AnthropicRequestFacts, Size } from './anthropic-messages-request';

export {
  ANTHROPIC_COMPUTER_TOOLS,
  COMPUTER_BETA_HEADERS,
  COMPUTER_TOOLSET,
  TOOLSET_NAME,
  readAnthropicRequest,
} from './anthropic-messages-request';
export type {
  AnthropicBetaComputerTool,
  AnthropicComputerTool,
  AnthropicExpectations,
  AnthropicRequestFacts,
  Size,
} from './anthropic-messages-request';

/** A scripted scroll's pixels per wheel click (`scroll_amount` counts wheel clicks; a Chromium notch is 100 px). */
export const SCROLL_PIXELS_PER_CLICK = 100;
/** The action (beta) or member name (toolset) of an `unknown-action` output: a plausible name not in the set. */
export const UNKNOWN_ACTION = 'click';
/** How far past the right edge an `off-screen` output's point lands, in the provider's coordinate space. */
export const OFF_SCREEN_MARGIN = 40;

/** Zoom, which output.ts's ScreenAction lacks (computer_20251124, the toolset): a region in screenshot pixels. */
export interface ZoomAction {
  kind: 'zoom';
  from: ScreenPoint;
  to: ScreenPoint;
}

/** A StandInOutput whose actions may also zoom (every StandInOutput is one). */
export interface AnthropicScriptedOutput extends Omit<StandInOutput, 'actions'> {
  actions: Array<ScreenAction | ZoomAction>;
}

export interface AnthropicResponseContext {
  tool: AnthropicComputerTool;
  /** The screenshot the request carried: the scripted points are in its pixels. Null: none seen (= the display). */
  screenshot: Size | null;
  /** Beta tools: display_width_px × display_height_px, the model's coordinate space. */
  display?: Size | null;
  /** Whether the request offered zoom (`enable_zoom: true`; the toolset unless `configs.zoom.enabled: false`). */
  zoom?: boolean;
  /** The request's index in the script: ids are `msg_standin_<index>` and `toolu_standin_<index>_<k>`. */
  index: number;
  model: string;
}

/** A computer action in the provider's space: a toolset member's name and its input, typed by the SDK. */
type ComputerCall = {
  [N in ComputerMemberName]: { name: N; input: Extract<ComputerToolUseBlock, { name: N }>['input'] };
}[ComputerMemberName];
type Place = (p: ScreenPoint) => number[];

/** Key names as a person writes them → xdotool's, which Anthropic's `key`/`text` use (`ctrl+s`, `Return`). */
const XDOTOOL_KEYS: Record<string, string> = {
  control: 'ctrl',
  ctrl: 'ctrl',
  shift: 'shift',
  alt: 'alt',
  option: 'alt',
  meta: 'super',
  command: 'super',
  cmd: 'super',
  super: 'super',
  enter: 'Return',
  return: 'Return',
  escape: 'Escape',
  esc: 'Escape',
  backspace: 'BackSpace',
  tab: 'Tab',
  delete: 'Delete',
  space: 'space',
  arrowup: 'Up',
  arrowdown: 'Down',
  arrowleft: 'Left',
  arrowright: 'Right',
  pageup: 'Page_Up',
  pagedown: 'Page_Down',
  home: 'Home',
  end: 'End',
};

export function xdotoolKeys(keys: string[]): string {
  return keys.map((k) => XDOTOOL_KEYS[k.toLowerCase()] ?? k).join('+');
}

function clickCalls(a: Extract<ScreenAction, { kind: 'click' }>, place: Place): ComputerCall[] {
  const text = a.keys && a.keys.length > 0 ? { text: xdotoolKeys(a.keys) } : {};
  const input = { coordinate: place(a), ...text };
  if (a.button === 'left') {
    return [{ name: a.count === 1 ? 'left_click' : a.count === 2 ? 'double_click' : 'triple_click', input }];
  }
  // Anthropic has no right or middle double click: the clicks are repeated.
  const name = a.button === 'right' ? 'right_click' : 'middle_click';
  return Array.from({ length: a.count }, () => ({ name, input }));
}

/** A two-point drag is `left_click_drag`; a longer path is held down and moved through (20250124+). */
function dragCalls(path: ScreenPoint[], place: Place): ComputerCall[] {
  const first = path[0];
  const last = path[path.length - 1];
  if (!first || !last) throw new Error('a drag needs a path of at least one point');
  if (path.length <= 2)
    return [{ name: 'left_click_drag', input: { start_coordinate: place(first), coordinate: place(last) } }];
  return [
    { name: 'mouse_move', input: { coordinate: place(first) } },
    { name: 'left_mouse_down', input: {} },
    ...path.slice(1).map((p): ComputerCall => ({ name: 'mouse_move', input: { coordinate: place(p) } })),
    { name: 'left_mouse_up', input: {} },
  ];
}

function scrollCalls(a: Extract<ScreenAction, { kind: 'scroll' }>, place: Place): ComputerCall[] {
  const clicks = (d: number): number => Math.max(1, Math.round(Math.abs(d) / SCROLL_PIXELS_PER_CLICK));
  const coordinate = place(a);
  const calls: ComputerCall[] = [];
  if (a.dy !== 0)
    calls.push({
      name: 'scroll',
      input: { coordinate, scroll_direction: a.dy > 0 ? 'down' : 'up', scroll_amount: clicks(a.dy) },
    });
  if (a.dx !== 0)
    calls.push({
      name: 'scroll',
      input: { coordinate, scroll_direction: a.dx > 0 ? 'right' : 'left', scroll_amount: clicks(a.dx) },
    });
  return calls;
}

/** One scripted action as Anthropic's computer actions, in order. */
export function computerCalls(a: ScreenAction | ZoomAction, place: Place): ComputerCall[] {
  const key = (text: string): ComputerCall => ({ name: 'key', input: { text } });
  switch (a.kind) {
    case 'click':
      return clickCalls(a, place);
    case 'move':
      return [{ name: 'mouse_move', input: { coordinate: place(a) } }];
    case 'drag':
      return dragCalls(a.path, place);
    case 'type': {
      const click: ComputerCall[] = a.at ? [{ name: 'left_click', input: { coordinate: place(a.at) } }] : [];
      return [...click, { name: 'type', input: { text: a.text } }, ...(a.pressEnter ? [key('Return')] : [])];
    }
    case 'keys':
      return [key(xdotoolKeys(a.keys))];
    case 'scroll':
      return scrollCalls(a, place);
    case 'wait':
      return [{ name: 'wait', input: { duration: a.seconds } }];
    case 'navigate': // no navigate action: the model goes through the address bar, as on a desktop
      return [key('ctrl+l'), { name: 'type', input: { text: a.url } }, key('Return')];
    case 'back':
      return [key('alt+Left')];
    case 'screenshot':
      return [{ name: 'screenshot', input: {} }];
    case 'zoom':
      return [{ name: 'zoom', input: { region: [...place(a.from), ...place(a.to)] } }];
  }
}

/** The model's coordinate space: the beta tool's display size, else the screenshot's. */
function spaceOf(ctx: AnthropicResponseContext): Size | null {
  return (ctx.tool !== COMPUTER_TOOLSET ? ctx.display : null) ?? ctx.screenshot;
}

/** Screenshot pixels → the model's space; an `off-screen` output's first point lands past the right edge. */
function placer(ctx: AnthropicResponseContext, offScreen: boolean): Place {
  const space = spaceOf(ctx);
  const from = ctx.screenshot ?? space;
  let wild = offScreen;
  return (p) => {
    if (!space || !from) {
      if (wild) throw new Error('an off-screen output needs the screenshot or display size');
      return [Math.round(p.x), Math.round(p.y)];
    }
    if (wild) {
      wild = false;
      return [space.width + OFF_SCREEN_MARGIN, Math.round(space.height / 2)];
    }
    return [Math.round((p.x * space.width) / from.width), Math.round((p.y * space.height) / from.height)];
  };
}

function checkScript(out: AnthropicScriptedOutput, ctx: AnthropicResponseContext): void {
  const notSent = ['missing-coordinate', 'malformed-function-call', 'unparsable'];
  if (out.malformed && notSent.includes(out.malformed)) {
    // Clicks without a coordinate are valid since computer_20250124 (the cursor position is used).
    throw new Error(`malformed '${out.malformed}' is not a kind Anthropic sends (unknown-action, off-screen)`);
  }
  if (out.actions.some((a) => a.kind === 'zoom') && (ctx.tool === 'computer_20250124' || ctx.zoom === false)) {
    throw new Error(`zoom is not offered by this request (${ctx.tool}${ctx.zoom === false ? ', zoom off' : ''})`);
  }
}

/** The scripted actions as computer calls, with the malformed kind applied; `unknown`: the first call's is renamed. */
function scriptedCalls(out: AnthropicScriptedOutput, ctx: AnthropicResponseContext): ComputerCall[] {
  const place = placer(ctx, out.malformed === 'off-screen');
  const calls = out.actions.flatMap((a) => computerCalls(a, place));
  const pointless = !calls.some((c) => 'coordinate' in c.input || 'start_coordinate' in c.input);
  if ((out.malformed === 'off-screen' && pointless) || (out.malformed === 'unknown-action' && calls.length === 0)) {
    const shot = ctx.screenshot ?? spaceOf(ctx);
    const centre = { x: (shot?.width ?? 0) / 2, y: (shot?.height ?? 0) / 2 };
    calls.unshift({ name: 'left_click', input: { coordinate: place(centre) } });
  }
  return calls;
}

function usageOf(out: AnthropicScriptedOutput): Usage {
  return anthropicUsage(out.usage);
}

/** Scripted counts as Anthropic's `usage` (zeros when none). */
export function anthropicUsage(usage: { input: number; output: number; cachedInput?: number } | undefined): Usage {
  const cached = usage?.cachedInput ?? 0;
  return {
    // The scripted `input` counts every prompt token; Anthropic's input_tokens excludes those read from the cache.
    input_tokens: (usage?.input ?? 0) - cached,
    output_tokens: usage?.output ?? 0,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  };
}

/** The text the message opens with: the thoughts; a text-only message adds its answer or question. */
function textOf(out: AnthropicScriptedOutput, textOnly: boolean): string {
  const tail = textOnly ? (out.safetyCheck?.message ?? out.final?.text ?? '') : '';
  return [out.thoughts, tail].filter((t) => t !== '').join('\n\n');
}

function toolsetBlock(call: ComputerCall, id: string): ComputerToolUseBlock {
  return { ...call, id, type: 'tool_use', caller: { type: 'direct' }, toolset_name: TOOLSET_NAME };
}

function gaMessage(out: AnthropicScriptedOutput, calls: ComputerCall[], ctx: AnthropicResponseContext): Message {
  const text = textOf(out, calls.length === 0);
  const content: ContentBlock[] = text === '' ? [] : [{ type: 'text', text, citations: null }];
  calls.forEach((call, k) => {
    const block: ToolUseBlock = toolsetBlock(call, `toolu_standin_${ctx.index}_${k}`);
    content.push(k === 0 && out.malformed === 'unknown-action' ? { ...block, name: UNKNOWN_ACTION } : block);
  });
  return standInMessage(`msg_standin_${ctx.index}`, ctx.model, content, usageOf(out));
}

/** A GA `Message` of the stand-in: `stop_reason` is `tool_use` when the content calls a tool, else `end_turn`. */
export function standInMessage(id: string, model: string, content: ContentBlock[], usage: Usage): Message {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    container: null,
    diagnostics: null,
    stop_details: null,
    stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage,
  };
}

function betaMessage(out: AnthropicScriptedOutput, calls: ComputerCall[], ctx: AnthropicResponseContext): BetaMessage {
  const text = textOf(out, calls.length === 0);
  const content: BetaContentBlock[] = text === '' ? [] : [{ type: 'text', text, citations: null }];
  calls.forEach((call, k) => {
    const action = k === 0 && out.malformed === 'unknown-action' ? UNKNOWN_ACTION : call.name;
    const block: BetaToolUseBlock = {
      type: 'tool_use',
      id: `toolu_standin_${ctx.index}_${k}`,
      caller: { type: 'direct' },
      name: 'computer',
      input: { action, ...call.input },
    };
    content.push(block);
  });
  const usage: BetaUsage = { ...usageOf(out), fallback_credit: null, iterations: null };
  return {
    id: `msg_standin_${ctx.index}`,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    container: null,
    context_management: null,
    diagnostics: null,
    stop_details: null,
    stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage,
  };
}

/**
 * The Messages API response body for one scripted output. Several actions are several tool_use blocks in one
 * message (the toolset batches by design; the beta tools allow parallel tool_use blocks, which the quickstart's loop
 * answers one tool_result each). A provider check (`safetyCheck`) has no field on Anthropic: the model asks in plain
 * text, so it becomes a text-only message with the check's message and no tool_use, like a question.
 */
export function anthropicResponse(out: AnthropicScriptedOutput, ctx: AnthropicResponseContext): Message | BetaMessage {
  checkScript(out, ctx);
  const calls = out.safetyCheck ? [] : scriptedCalls(out, ctx);
  return ctx.tool === COMPUTER_TOOLSET ? gaMessage(out, calls, ctx) : betaMessage(out, calls, ctx);
}

/** The response context from what the request showed (`model` and `tool` fall back to the toolset's GA defaults). */
export function anthropicContext(facts: AnthropicRequestFacts, index: number): AnthropicResponseContext {
  return {
    tool: facts.tool ?? COMPUTER_TOOLSET,
    screenshot: facts.screenshot,
    display: facts.display,
    zoom: facts.zoom,
    index,
    model: facts.model ?? 'claude-sonnet-5',
  };
}
