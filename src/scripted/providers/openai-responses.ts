// The OpenAI Responses API stand-in (`POST /v1/responses`), its two pure halves: `readOpenAiRequest` checks a request
// against the documented format (docs/provider-formats.md and the `openai` SDK's types) and reads the newest
// screenshot's size; `openAiResponse` turns a scripted StandInOutput into the response body, for the GA `computer` tool
// (one computer_call, batched `actions[]`, screenshot pixels) and the preview `computer_use_preview` tool (one
// `action` per computer_call, in the display_width×display_height space). Written from the docs and the SDK's types,
// never from our adapters (src/families/), so an adapter bug cannot hide behind it.
import type {
  ComputerAction,
  Response,
  ResponseComputerToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseUsage,
} from 'openai/resources/responses/responses';
import type { ScreenAction, ScreenPoint, StandInRequestFacts, StandInOutput } from './output';
import { readImageHeader } from './image-size';

export type OpenAiComputerTool = 'computer' | 'computer_use_preview';
export interface Size {
  width: number;
  height: number;
}

/** The response body on the wire: the SDK's Response less `output_text`, which the SDK computes on the client. */
export type OpenAiResponseBody = Omit<Response, 'output_text'>;

/**
 * Modifier keys held during a mouse action: on the wire since SDK 6.33.0 (`keys` on click, double_click, move, drag,
 * scroll); the pinned 6.30.1 does not declare them, so the field is added here.
 */
type WithKeys<A> = A & { keys?: string[] | null };

export interface OpenAiResponseContext {
  /** The computer tool the request declared (readOpenAiRequest's `tool`). */
  tool: OpenAiComputerTool;
  /** The newest screenshot's size, from the request. */
  screenshot: Size | null;
  /** The preview tool's display_width×display_height (its coordinate space), from the request. */
  display?: Size | null;
  /** This response's number in the conversation: ids (resp_, rs_, msg_, cu_, call_, cs_) are built from it. */
  sequence: number;
  model?: string;
  /** Unix seconds for `created_at`; a fixed time by default, so a response is the same on every replay. */
  createdAt?: number;
  /** The request asked for `include: ["reasoning.encrypted_content"]`: reasoning items carry encrypted content. */
  encryptedReasoning?: boolean;
}

const FIXED_CREATED_AT = 1_767_225_600; // 2026-01-01T00:00:00Z
const pad = (n: number): string => String(n).padStart(4, '0');

/** OpenAI's key names (upper case, as the guide's key maps read them: CTRL, META, ARROWLEFT, ESC, ENTER). */
const KEY_NAMES: Record<string, string> = { control: 'CTRL', escape: 'ESC', ' ': 'SPACE', meta: 'META', alt: 'ALT' };
export const openAiKey = (key: string): string => KEY_NAMES[key.toLowerCase()] ?? key.toUpperCase();

/**
 * The turn's actions in OpenAI's action set, one ScreenAction per native action. OpenAI has no navigate, back or
 * typing at a point: `type` with `at` is a click then the text (then ENTER); navigate is CTRL+L, the URL, ENTER; back is
 * ALT+ARROWLEFT. A triple click has no OpenAI action and is refused.
 */
export function expandForOpenAi(actions: readonly ScreenAction[]): ScreenAction[] {
  return actions.flatMap((a): ScreenAction[] => {
    switch (a.kind) {
      case 'type': {
        const click: ScreenAction[] = a.at ? [{ kind: 'click', button: 'left', count: 1, ...a.at }] : [];
        const enter: ScreenAction[] = a.pressEnter ? [{ kind: 'keys', keys: ['Enter'] }] : [];
        return [...click, { kind: 'type', text: a.text }, ...enter];
      }
      case 'navigate':
        return [
          { kind: 'keys', keys: ['Control', 'l'] },
          { kind: 'type', text: a.url },
          { kind: 'keys', keys: ['Enter'] },
        ];
      case 'back':
        return [{ kind: 'keys', keys: ['Alt', 'ArrowLeft'] }];
      case 'click':
        if (a.count === 3) throw new Error('OpenAI has no triple click: script a double_click and a click, or keys');
        return [a];
      default:
        return [a];
    }
  });
}

/**
 * The preview tool sends one action per computer_call and one computer_call per response, so a batch is scripted as
 * consecutive responses: this splits a turn into one turn per native action (thoughts and the safety check on the
 * first, the final text and usage on the last). The server plays them as consecutive entries.
 */
export function splitForPreview(scripted: StandInOutput): StandInOutput[] {
  const actions = expandForOpenAi(scripted.actions);
  if (actions.length <= 1) return [scripted];
  return actions.map((a, i) => ({
    thoughts: i === 0 ? scripted.thoughts : '',
    actions: [a],
    ...(i === 0 && scripted.safetyCheck ? { safetyCheck: scripted.safetyCheck } : {}),
    ...(i === 0 && scripted.malformed ? { malformed: scripted.malformed } : {}),
    ...(i === actions.length - 1 && scripted.usage ? { usage: scripted.usage } : {}),
  }));
}

/** Screenshot pixels to the tool's space: GA uses the screenshot's pixels; preview the display size it declared. */
function toNativeSpace(ctx: OpenAiResponseContext): (p: ScreenPoint) => ScreenPoint {
  const { screenshot, display } = ctx;
  if (ctx.tool === 'computer' || !screenshot || !display) return (p) => ({ x: Math.round(p.x), y: Math.round(p.y) });
  const sx = display.width / screenshot.width;
  const sy = display.height / screenshot.height;
  return (p) => ({ x: Math.round(p.x * sx), y: Math.round(p.y * sy) });
}

function withKeys<A extends object>(action: A, keys: string[] | undefined): WithKeys<A> {
  return keys && keys.length > 0 ? { ...action, keys: keys.map(openAiKey) } : action;
}

/** One expanded ScreenAction as OpenAI's action object (the same union serves `action` and `actions[]`). */
function nativeAction(a: ScreenAction, map: (p: ScreenPoint) => ScreenPoint): ComputerAction {
  switch (a.kind) {
    case 'click': {
      const at = map(a);
      if (a.count === 2) return withKeys<ComputerAction.DoubleClick>({ type: 'double_click', ...at }, a.keys);
      const button = a.button === 'middle' ? 'wheel' : a.button;
      return withKeys<ComputerAction.Click>({ type: 'click', button, ...at }, a.keys);
    }
    case 'move':
      return { type: 'move', ...map(a) };
    case 'drag':
      return { type: 'drag', path: a.path.map(map) };
    case 'type':
      return { type: 'type', text: a.text };
    case 'keys':
      return { type: 'keypress', keys: a.keys.map(openAiKey) };
    case 'scroll': {
      const at = map(a);
      const by = map({ x: a.dx, y: a.dy }); // a distance scales as the points do
      return { type: 'scroll', ...at, scroll_x: by.x, scroll_y: by.y };
    }
    case 'wait':
      return { type: 'wait' }; // OpenAI's wait has no duration
    case 'screenshot':
      return { type: 'screenshot' };
    default:
      throw new Error(`OpenAI has no ${a.kind} action (expandForOpenAi first)`);
  }
}

function usageOf(usage: StandInOutput['usage']): ResponseUsage | undefined {
  if (!usage) return undefined;
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cachedInput ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  };
}

function reasoningItem(text: string, ctx: OpenAiResponseContext): ResponseReasoningItem {
  const item: ResponseReasoningItem = {
    id: `rs_${pad(ctx.sequence)}`,
    type: 'reasoning',
    summary: [{ type: 'summary_text', text }],
  };
  if (ctx.encryptedReasoning) item.encrypted_content = `standin:${Buffer.from(text).toString('base64')}`;
  return item;
}

function messageItem(text: string, ctx: OpenAiResponseContext): ResponseOutputMessage {
  return {
    id: `msg_${pad(ctx.sequence)}`,
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

/** The computer_call items: one with `actions[]` (GA), or one with `action` (preview, which cannot batch). */
function computerCalls(scripted: StandInOutput, ctx: OpenAiResponseContext): ResponseComputerToolCall[] {
  const actions = expandForOpenAi(scripted.actions).map((a) => nativeAction(a, toNativeSpace(ctx)));
  const checks: ResponseComputerToolCall.PendingSafetyCheck[] = scripted.safetyCheck
    ? [{ id: `cs_${pad(ctx.sequence)}`, code: scripted.safetyCheck.code, message: scripted.safetyCheck.message }]
    : [];
  const call = { id: `cu_${pad(ctx.sequence)}`, call_id: `call_${pad(ctx.sequence)}`, type: 'computer_call' as const };
  if (ctx.tool === 'computer') return [{ ...call, status: 'completed', pending_safety_checks: checks, actions }];
  const [action, ...rest] = actions;
  if (!action || rest.length > 0) {
    throw new Error(`computer_use_preview sends one action per computer_call, not ${actions.length}: splitForPreview`);
  }
  return [{ ...call, status: 'completed', pending_safety_checks: checks, action }];
}

/** The typed body: reasoning (when the turn has thoughts), then the computer_call, or a message for a text turn. */
function typedResponse(scripted: StandInOutput, ctx: OpenAiResponseContext): OpenAiResponseBody {
  const output: ResponseOutputItem[] = [];
  const text = scripted.final?.text;
  if (scripted.actions.length > 0) {
    if (scripted.thoughts !== '') output.push(reasoningItem(scripted.thoughts, ctx));
    output.push(...computerCalls(scripted, ctx));
  } else {
    if (scripted.safetyCheck) throw new Error('a safety check rides on a computer_call: the turn has no action');
    if (text !== undefined && scripted.thoughts !== '') output.push(reasoningItem(scripted.thoughts, ctx));
    output.push(messageItem(text ?? scripted.thoughts, ctx));
  }
  const usage = usageOf(scripted.usage);
  return {
    id: `resp_${pad(ctx.sequence)}`,
    object: 'response',
    created_at: ctx.createdAt ?? FIXED_CREATED_AT,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    model: ctx.model ?? (ctx.tool === 'computer' ? 'gpt-5.4' : 'computer-use-preview'),
    output,
    parallel_tool_calls: true,
    temperature: 1,
    top_p: 1,
    tool_choice: 'auto',
    tools: [ctx.tool === 'computer' ? { type: 'computer' } : previewTool(ctx)],
    truncation: ctx.tool === 'computer' ? 'disabled' : 'auto',
    ...(usage ? { usage } : {}),
  };
}

function previewTool(ctx: OpenAiResponseContext): Response['tools'][number] {
  const size = ctx.display ?? ctx.screenshot ?? { width: 1024, height: 768 };
  return {
    type: 'computer_use_preview',
    display_width: size.width,
    display_height: size.height,
    environment: 'browser',
  };
}

/**
 * Breaks the first action the way OpenAI really does (issue 41): `unknown-action` renames its type to one OpenAI's set
 * lacks (`triple_click`), keeping its point; `missing-coordinate` drops `y` from the first pointer action.
 */
function malform(body: OpenAiResponseBody, kind: NonNullable<StandInOutput['malformed']>): unknown {
  const wire = JSON.parse(JSON.stringify(body)) as { output: Array<Record<string, unknown>> };
  const call = wire.output.find((o) => o.type === 'computer_call');
  const actions = (call?.actions ?? (call?.action ? [call.action] : [])) as Array<Record<string, unknown>>;
  if (kind === 'unknown-action') {
    const first = actions[0];
    if (!first) throw new Error('unknown-action needs an action in the turn');
    const at = 'x' in first ? { x: first.x, y: first.y } : { x: 0, y: 0 };
    for (const key of Object.keys(first)) delete first[key];
    Object.assign(first, { type: 'triple_click', ...at });
  } else if (kind === 'missing-coordinate') {
    const pointer = actions.find((a) => 'x' in a && 'y' in a);
    if (!pointer) throw new Error('missing-coordinate needs a pointer action (click, move, scroll) in the turn');
    delete pointer.y;
  } else {
    throw new Error(`OpenAI does not send the malformed kind ${kind} (its kinds: unknown-action, missing-coordinate)`);
  }
  return wire;
}

/** The response body for one scripted turn (see the module comment); typed by the SDK unless deliberately malformed. */
export function openAiResponse(scripted: StandInOutput, ctx: OpenAiResponseContext): unknown {
  const body = typedResponse(scripted, ctx);
  return scripted.malformed ? malform(body, scripted.malformed) : body;
}

// ---- The request reader ----

/** What the caller expects a request to carry, from the responses the stand-in sent before in this conversation. */
export interface OpenAiRequestExpectations {
  /** Pending safety check ids the newest computer_call_output must acknowledge. */
  acknowledge?: readonly string[];
  /**
   * The output items of earlier responses, in order, that the request must replay (no previous_response_id here):
   * every reasoning and computer_call item by id, in order, a reasoning item directly before the item that followed
   * it, with its summary (and encrypted_content) unchanged, and each computer_call with its call_id and actions.
   */
  replayed?: readonly unknown[];
}

export interface OpenAiRequestFacts extends StandInRequestFacts {
  /** The computer tool declared (null: none, or two). */
  tool: OpenAiComputerTool | null;
  /** The preview tool's display size. */
  display: Size | null;
  /** The Bearer token. */
  apiKey: string | null;
  /** `include` asks for reasoning.encrypted_content. */
  encryptedReasoning: boolean;
}

type Item = Record<string, unknown>;
const isRecord = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPositiveInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v > 0;
const ENVIRONMENTS = ['windows', 'mac', 'linux', 'ubuntu', 'browser'];

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

function readAuth(headers: Record<string, string | undefined>, problems: string[]): string | null {
  const auth = header(headers, 'authorization');
  if (auth === undefined) return (problems.push('Authorization header missing'), null);
  const m = /^Bearer (\S+)$/.exec(auth);
  if (!m?.[1]) return (problems.push('Authorization is not "Bearer <key>"'), null);
  return m[1];
}

function readTool(body: Item, problems: string[]): { tool: OpenAiComputerTool | null; display: Size | null } {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
  const ga = tools.filter((t) => t.type === 'computer');
  const preview = tools.filter((t) => t.type === 'computer_use_preview');
  if (tools.some((t) => t.type === 'computer_use'))
    problems.push('tool type computer_use is not a tool type (computer)');
  if (ga.length + preview.length === 0) return (problems.push('no computer tool'), { tool: null, display: null });
  if (ga.length + preview.length > 1) problems.push('more than one computer tool');
  if (ga[0]) {
    const extra = Object.keys(ga[0]).filter((k) => k !== 'type');
    if (extra.length > 0) problems.push(`the computer tool takes no fields besides type (got ${extra.join(', ')})`);
    return { tool: 'computer', display: null };
  }
  const t = preview[0] as Item;
  for (const f of ['display_width', 'display_height']) {
    if (!isPositiveInt(t[f])) problems.push(`computer_use_preview needs a positive integer ${f}`);
  }
  if (!ENVIRONMENTS.includes(t.environment as string)) {
    problems.push(`computer_use_preview needs environment ${ENVIRONMENTS.join('|')}`);
  }
  if (body.truncation !== 'auto') problems.push('computer_use_preview needs truncation "auto"');
  const display = isPositiveInt(t.display_width) && isPositiveInt(t.display_height);
  return {
    tool: 'computer_use_preview',
    display: display ? { width: t.display_width as number, height: t.display_height as number } : null,
  };
}

/** The image an input item carries: a computer_call_output's screenshot or a user message's input_image parts. */
function imagesOf(item: Item, problems: string[]): Item[] {
  if (item.type === 'computer_call_output') {
    const out = isRecord(item.output) ? item.output : {};
    // computer_screenshot is the SDK's; input_image is the 2025 sample app's (docs/provider-formats.md: UNVERIFIED, both accepted).
    if (out.type !== 'computer_screenshot' && out.type !== 'input_image') {
      problems.push(`computer_call_output ${String(item.call_id)}: output type is not computer_screenshot`);
    }
    if (typeof out.image_url !== 'string' && typeof out.file_id !== 'string') {
      problems.push(`computer_call_output ${String(item.call_id)} carries no image`);
      return [];
    }
    return [out];
  }
  const isMessage = item.type === 'message' || (item.type === undefined && 'role' in item);
  const parts = isMessage && Array.isArray(item.content) ? item.content.filter(isRecord) : [];
  return parts.filter((p) => p.type === 'input_image');
}

/** The size of a base64 PNG or JPEG data URL, read from its header; null when it is neither. */
export function imageSizeOf(dataUrl: string): Size | null {
  const m = /^data:image\/[\w.+-]+;base64,(.*)$/s.exec(dataUrl);
  if (!m?.[1]) return null;
  const header = readImageHeader(Buffer.from(m[1], 'base64'));
  return header ? { width: header.width, height: header.height } : null;
}

function screenshotSize(image: Item | undefined, problems: string[]): Size | null {
  if (!image) return null;
  if (typeof image.image_url !== 'string') {
    problems.push('the newest screenshot is a file_id: the stand-in reads only base64 data URLs');
    return null;
  }
  const size = imageSizeOf(image.image_url);
  if (!size) problems.push('the newest screenshot is not a base64 PNG or JPEG data URL');
  return size;
}

const idsOf = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter(isRecord).flatMap((c) => (typeof c.id === 'string' ? [c.id] : [])) : [];

/** Every computer_call answered by a later computer_call_output, and each acknowledgement raised by its call. */
function checkCalls(items: Item[], problems: string[]): void {
  const calls = new Map<string, Item>();
  const answered = new Set<string>();
  for (const item of items) {
    const callId = String(item.call_id);
    if (item.type === 'computer_call') calls.set(callId, item);
    if (item.type !== 'computer_call_output') continue;
    answered.add(callId);
    const call = calls.get(callId);
    if (!call) {
      problems.push(`computer_call_output ${callId} answers no earlier computer_call in the input`);
      continue;
    }
    const raised = idsOf(call.pending_safety_checks);
    for (const id of idsOf(item.acknowledged_safety_checks)) {
      if (!raised.includes(id))
        problems.push(`computer_call_output ${callId} acknowledges ${id}, which was not pending`);
    }
  }
  for (const callId of calls.keys()) {
    if (!answered.has(callId)) problems.push(`computer_call ${callId} has no computer_call_output`);
  }
}

/** A stable JSON (keys sorted), to compare a replayed item with the one sent. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    isRecord(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  );

/** See OpenAiRequestExpectations.replayed. */
function checkReplayed(items: Item[], sent: Item[], problems: string[]): void {
  let last = -1;
  sent.forEach((s, k) => {
    if (s.type !== 'reasoning' && s.type !== 'computer_call') return;
    const at = items.findIndex((i) => i.id === s.id);
    const item = items[at];
    if (!item) return void problems.push(`${String(s.type)} ${String(s.id)} of an earlier response is not replayed`);
    if (at < last) problems.push(`${String(s.type)} ${String(s.id)} is replayed out of order`);
    last = Math.max(last, at);
    if (item.type !== s.type)
      problems.push(`${String(s.id)} is replayed as ${String(item.type)}, not ${String(s.type)}`);
    if (s.type === 'computer_call') {
      const same =
        item.call_id === s.call_id && canonical(item.actions ?? item.action) === canonical(s.actions ?? s.action);
      if (!same) problems.push(`computer_call ${String(s.id)} is replayed with another call_id or actions`);
      return;
    }
    const next = sent[k + 1];
    if (next && items[at + 1]?.id !== next.id) {
      problems.push(`reasoning ${String(s.id)} is not followed by ${String(next.id)} as in its response`);
    }
    if (canonical(item.summary) !== canonical(s.summary)) problems.push(`reasoning ${String(s.id)}'s summary changed`);
    if (s.encrypted_content !== undefined && item.encrypted_content !== s.encrypted_content) {
      problems.push(`reasoning ${String(s.id)} lost its encrypted_content`);
    }
  });
}

/** Reads and checks one `POST /v1/responses` request (see the module comment and OpenAiRequestExpectations). */
export function readOpenAiRequest(
  headers: Record<string, string | undefined>,
  body: unknown,
  expect: OpenAiRequestExpectations = {},
): OpenAiRequestFacts {
  const problems: string[] = [];
  const apiKey = readAuth(headers, problems);
  const facts = { apiKey, tool: null, display: null, screenshot: null, acknowledged: [], encryptedReasoning: false };
  if (!isRecord(body)) return { ...facts, problems: [...problems, 'the body is not a JSON object'] };
  if (typeof body.model !== 'string' || body.model === '') problems.push('no model');
  const { tool, display } = readTool(body, problems);
  if (body.previous_response_id != null) {
    problems.push('previous_response_id is set: the stand-in stores no response (replay the output items)');
  }
  const items = Array.isArray(body.input) ? body.input.filter(isRecord) : [];
  const images = items.flatMap((i) => imagesOf(i, problems));
  const screenshot = screenshotSize(images[images.length - 1], problems);
  checkCalls(items, problems);
  const outputs = items.filter((i) => i.type === 'computer_call_output');
  const acknowledged = idsOf(outputs[outputs.length - 1]?.acknowledged_safety_checks);
  for (const id of expect.acknowledge ?? []) {
    if (!acknowledged.includes(id)) problems.push(`pending safety check ${id} not acknowledged`);
  }
  checkReplayed(items, (expect.replayed ?? []).filter(isRecord), problems);
  for (const r of items.filter((i) => i.type === 'reasoning')) {
    if (body.store === false && typeof r.encrypted_content !== 'string') {
      problems.push(`reasoning ${String(r.id)} replayed with store:false carries no encrypted_content`);
    }
  }
  const include = Array.isArray(body.include) ? body.include : [];
  const encryptedReasoning = include.includes('reasoning.encrypted_content');
  return { ...facts, tool, display, screenshot, acknowledged, encryptedReasoning, problems };
}
