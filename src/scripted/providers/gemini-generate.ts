// The Gemini stand-in's two pure halves, for `POST /v1beta/models/{model}:generateContent` with the `computer_use`
// tool: readGeminiRequest checks a request against the documented format and reads its newest screenshot's size;
// geminiResponse turns a provider-neutral StandInOutput into the response body, with the coordinates on Gemini's
// normalized 0–999 grid, one functionCall part per action, and a safety decision in the call's args. Written from
// docs/provider-formats.md and the `@google/genai` types (2.32.0), never from our adapters.
// Casing: the REST docs write snake_case (`computer_use`, `function_response`, `inline_data`), the SDK sends
// camelCase (`computerUse`, `functionResponse`, `inlineData`); the API takes both, so the reader accepts both for
// every field. The response is camelCase, as the API sends it and the SDK reads it.
import { FinishReason } from '@google/genai';
import type { Candidate, FunctionCall, GenerateContentResponse, Part } from '@google/genai';
import type { ScreenAction, ScreenPoint, StandInRequestFacts, StandInOutput } from './output';
import { readImageHeader } from './image-size';

/** The URL path the stand-in answers (the SDK sends `/v1beta/models/{model}:generateContent`). */
export const GEMINI_PATH = /^\/v1beta\/models\/([^/:?]+):generateContent(?:\?.*)?$/;
/** The header that carries the API key (what `@google/genai` sends for `apiKey`). */
export const GEMINI_KEY_HEADER = 'x-goog-api-key';
/** The size assumed when a request carried no readable screenshot: the reference screen [G1, G2]. */
export const GEMINI_REFERENCE_SCREEN = { width: 1440, height: 900 } as const;
const ENVIRONMENTS = ['ENVIRONMENT_UNSPECIFIED', 'ENVIRONMENT_BROWSER', 'ENVIRONMENT_MOBILE', 'ENVIRONMENT_DESKTOP'];

/**
 * The two predefined function sets: '2.5' (`click_at`, `type_text_at`, …; gemini-2.5-computer-use-preview-10-2025)
 * and '3' (`click`, `type`, `hotkey`, …, each call with `intent`; gemini-3.5-flash and later).
 */
export type GeminiFunctionSet = '2.5' | '3';

/**
 * The function set a model name implies: `gemini-2*` and the `computer-use-preview` models speak '2.5', every other
 * model '3'. the sources leave gemini-3-flash-preview and gemini-3.1-pro-preview open (the reference repo drives
 * them with the 2.5 set, the docs group them with 3.x): a caller that knows better passes the set explicitly.
 */
export function geminiFunctionSetForModel(model: string): GeminiFunctionSet {
  return /^(models\/)?gemini-2/.test(model) || model.includes('computer-use-preview') ? '2.5' : '3';
}

/** The model named in a generateContent path, or null when the path is not one. */
export function geminiModelFromPath(path: string): string | null {
  return GEMINI_PATH.exec(path)?.[1] ?? null;
}

// ---------------------------------------------------------------------------------------------------------------
// The request reader

/** What the caller expects the request to carry. */
export interface GeminiExpect {
  /** The person said yes to the last turn's safety decision: its functionResponse must carry the acknowledgement. */
  safetyAcknowledgement?: boolean;
}

/** StandInRequestFacts plus what only a Gemini request says. */
export interface GeminiRequestFacts extends StandInRequestFacts {
  /** The computer_use tool's environment, when it had one. */
  environment: string | null;
  /** The tool's `excludedPredefinedFunctions` ([] when none): functions the model must not call. */
  excludedFunctions: string[];
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field under its camelCase name or its snake_case spelling (the API accepts both). */
function field(obj: Json, camel: string): unknown {
  return obj[camel] ?? obj[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** The size of a base64 PNG or JPEG, from its header; undefined when it is neither. */
export function imageSize(base64: string): { width: number; height: number } | undefined {
  const header = readImageHeader(Buffer.from(base64, 'base64'));
  return header ? { width: header.width, height: header.height } : undefined;
}

/** An image part's `inlineData`: its MIME type and base64 data. */
function inlineImage(part: Json): { mime: string; data: string } | undefined {
  const blob = field(part, 'inlineData');
  if (!isObject(blob)) return undefined;
  const mime = field(blob, 'mimeType');
  const data = blob.data;
  return typeof mime === 'string' && typeof data === 'string' ? { mime, data } : undefined;
}

/** Checks the tools; returns the environment and the excluded functions. */
function readTool(body: Json, problems: string[]): { environment: string | null; excluded: string[] } {
  const tool = objects(body.tools)
    .map((t) => field(t, 'computerUse'))
    .find(isObject);
  if (!tool) {
    problems.push('no computer_use tool in tools[]');
    return { environment: null, excluded: [] };
  }
  const environment = tool.environment;
  if (typeof environment !== 'string') problems.push('the computer_use tool has no environment');
  else if (!ENVIRONMENTS.includes(environment)) {
    problems.push(`computer_use environment ${environment} is not one of ${ENVIRONMENTS.join(', ')}`);
  }
  const excludedRaw = field(tool, 'excludedPredefinedFunctions') ?? [];
  const excluded = Array.isArray(excludedRaw) ? excludedRaw.filter((n): n is string => typeof n === 'string') : [];
  if (!Array.isArray(excludedRaw) || excluded.length !== excludedRaw.length) {
    problems.push('computer_use excludedPredefinedFunctions is not a list of names');
  }
  return { environment: typeof environment === 'string' ? environment : null, excluded };
}

const isAck = (value: unknown): boolean => value === true || value === 'true';

interface CallFacts {
  name: string;
  id?: string;
  asksConfirmation: boolean;
}

function callsOf(content: Json): CallFacts[] {
  return objects(content.parts)
    .map((p) => field(p, 'functionCall'))
    .filter(isObject)
    .map((call) => {
      const args = isObject(call.args) ? call.args : {};
      const decision = field(args, 'safetyDecision');
      return {
        name: String(call.name),
        id: typeof call.id === 'string' ? call.id : undefined,
        asksConfirmation: isObject(decision) && decision.decision === 'require_confirmation',
      };
    });
}

/** Checks the function responses of one user content against the model's calls before it. */
function checkResponses(calls: CallFacts[], user: Json, last: boolean, problems: string[], acked: string[]): void {
  const responses = objects(user.parts)
    .map((p) => field(p, 'functionResponse'))
    .filter(isObject);
  if (responses.length !== calls.length) {
    problems.push(`${calls.length} function call(s) answered by ${responses.length} functionResponse part(s)`);
  }
  calls.forEach((call, i) => {
    const answer = responses[i];
    if (!answer) return;
    if (answer.name !== call.name) {
      problems.push(`functionResponse ${i + 1} is named ${String(answer.name)}, the call was ${call.name}`);
    }
    if (call.id !== undefined && answer.id !== call.id) {
      problems.push(`functionResponse for ${call.name} does not echo the call's id ${call.id}`);
    }
    const response = answer.response;
    if (!isObject(response)) {
      problems.push(`functionResponse for ${call.name} has no response object`);
      return;
    }
    const ack = field(response, 'safetyAcknowledgement');
    if (ack !== undefined && !isAck(ack)) {
      problems.push(`safety_acknowledgement for ${call.name} is ${JSON.stringify(ack)}, not true or "true"`);
    }
    if (ack !== undefined && !call.asksConfirmation) {
      problems.push(`safety_acknowledgement sent for ${call.name}, whose call asked no confirmation`);
    }
    if (!last) return;
    if (isAck(ack)) acked.push(call.id ?? call.name);
    const images = objects(answer.parts).map(inlineImage);
    if (!images.some((image) => image?.mime === 'image/png')) {
      problems.push(`functionResponse for ${call.name} carries no screenshot (parts[].inlineData image/png)`);
    }
  });
}

/** The newest image in the contents: the last inlineData of a user part or of a function response's parts. */
function newestImage(contents: Json[]): { mime: string; data: string } | undefined {
  let newest: { mime: string; data: string } | undefined;
  for (const content of contents) {
    for (const part of objects(content.parts)) {
      const answer = field(part, 'functionResponse');
      for (const inner of isObject(answer) ? objects(answer.parts) : [part]) newest = inlineImage(inner) ?? newest;
    }
  }
  return newest;
}

/**
 * Checks a generateContent request against the documented computer-use format and reads its newest screenshot.
 * `expect.safetyAcknowledgement`: the person confirmed the last turn's safety decision, so the functionResponse of
 * the call that asked must carry `response.safety_acknowledgement` (true or "true"; docs/provider-formats.md: both are seen).
 */
export function readGeminiRequest(
  headers: Record<string, string | undefined>,
  body: unknown,
  expect: GeminiExpect = {},
): GeminiRequestFacts {
  const problems: string[] = [];
  const acknowledged: string[] = [];
  const key = Object.entries(headers).find(([name]) => name.toLowerCase() === GEMINI_KEY_HEADER)?.[1];
  if (!key) problems.push(`${GEMINI_KEY_HEADER} header missing`);
  if (!isObject(body)) {
    problems.push('the body is not a JSON object');
    return { screenshot: null, acknowledged, problems, environment: null, excludedFunctions: [] };
  }
  const { environment, excluded } = readTool(body, problems);
  const contents = objects(body.contents);
  if (contents.length === 0) problems.push('no contents');
  contents.forEach((content, i) => {
    const role = content.role ?? 'user';
    if (role !== 'user' && role !== 'model') problems.push(`contents[${i}] has role ${String(role)}`);
    if (objects(content.parts).length === 0) problems.push(`contents[${i}] has no parts`);
  });
  const lastIndex = contents.length - 1;
  if (contents[lastIndex]?.role === 'model') problems.push('the last content is the model’s, not the user’s');
  contents.forEach((content, i) => {
    const calls = content.role === 'model' ? callsOf(content) : [];
    const next = contents[i + 1];
    if (calls.length === 0 || !next) return;
    checkResponses(calls, next, i + 1 === lastIndex, problems, acknowledged);
    const pending = calls.find((c) => c.asksConfirmation);
    if (expect.safetyAcknowledgement && i + 1 === lastIndex && pending && acknowledged.length === 0) {
      problems.push(`pending safety decision on ${pending.name} not acknowledged (response.safety_acknowledgement)`);
    }
  });
  if (expect.safetyAcknowledgement && !contents.some((c) => c.role === 'model' && callsOf(c).length > 0)) {
    problems.push('a safety acknowledgement was expected, but the request echoes no model function call');
  }
  const image = newestImage(contents);
  const size = image ? imageSize(image.data) : undefined;
  if (!image) problems.push('the request carries no screenshot');
  else if (!size) problems.push(`the newest screenshot (${image.mime}) is neither PNG nor JPEG`);
  return { screenshot: size ?? null, acknowledged, problems, environment, excludedFunctions: excluded };
}

// ---------------------------------------------------------------------------------------------------------------
// The response builder

/** How the response is built. */
export interface GeminiResponseContext {
  /** The screenshot the request carried (readGeminiRequest's facts); null: the 1440×900 reference screen. */
  screenshot: { width: number; height: number } | null;
  functionSet: GeminiFunctionSet;
  /**
   * The 3.x set's argument names where the sources disagree (docs/provider-formats.md): 'docs' (default) sends
   * `scroll{…, magnitude_in_pixels}` and `drag_and_drop{start_x, start_y, end_x, end_y}`; 'reference' (the
   * computer-use-preview repo) sends `scroll{…, magnitude}` on the 0–999 grid and `drag_and_drop{x, y,
   * destination_x, destination_y}`. The 2.5 set has one spelling.
   */
  spelling?: 'docs' | 'reference';
  /** The tool's excluded functions: a turn that needs one throws. */
  excludedFunctions?: string[];
  /** `modelVersion` in the response (default: the function set's model). */
  model?: string;
  /** `responseId` (default `standin-response`); a deterministic server derives it from the request. */
  responseId?: string;
  /** Give each functionCall an `id` (`${responseId}-${n}`); the Gemini API leaves it out by default. */
  callIds?: boolean;
}

/** A StandInOutput the chosen function set cannot express (a scripting error, not a model error). */
export class GeminiStandInError extends Error {
  override name = 'GeminiStandInError';
}

/** The body geminiResponse returns: the SDK's response fields that the API sends (the class also has getters). */
export type GeminiResponseBody = Pick<
  GenerateContentResponse,
  'candidates' | 'usageMetadata' | 'modelVersion' | 'responseId'
>;

type Call = { name: string; args: Record<string, unknown> };
type Grid = (point: ScreenPoint) => { x: number; y: number };

/** Screenshot pixels to the 0–999 grid (the inverse of docs/provider-formats.md's `px = x/1000*width`), clamped. */
export function toGeminiGrid(point: ScreenPoint, size: { width: number; height: number }): { x: number; y: number } {
  const norm = (v: number, extent: number) => Math.min(999, Math.max(0, Math.round((v / extent) * 1000)));
  return { x: norm(point.x, size.width), y: norm(point.y, size.height) };
}

function scrollDirection(dx: number, dy: number): 'up' | 'down' | 'left' | 'right' {
  if (dx === 0 && dy === 0) throw new GeminiStandInError('a scroll with dx = dy = 0 has no direction');
  if (Math.abs(dy) >= Math.abs(dx)) return dy > 0 ? 'down' : 'up';
  return dx > 0 ? 'right' : 'left';
}

/** A scroll's length on the 0–999 grid along its axis (the 2.5 set's and the reference's `magnitude`). */
function gridMagnitude(a: Extract<ScreenAction, { kind: 'scroll' }>, size: { width: number; height: number }) {
  const vertical = Math.abs(a.dy) >= Math.abs(a.dx);
  return Math.round((Math.abs(vertical ? a.dy : a.dx) / (vertical ? size.height : size.width)) * 1000);
}

function unsupported(set: GeminiFunctionSet, what: string): never {
  throw new GeminiStandInError(`the Gemini ${set} function set has no ${what}`);
}

/**
 * One action as 2.5-set calls (each action is one call here). `press_enter` is always sent: the docs default it to
 * true, the reference code to false. `wait_5_seconds` waits 5 s whatever the turn asked.
 */
function calls25(a: ScreenAction, grid: Grid, size: { width: number; height: number }): Call[] {
  switch (a.kind) {
    case 'click':
      if (a.button !== 'left' || a.count !== 1) unsupported('2.5', `${a.button} click × ${a.count}`);
      if (a.keys?.length) unsupported('2.5', 'click with held keys');
      return [{ name: 'click_at', args: grid(a) }];
    case 'move':
      return [{ name: 'hover_at', args: grid(a) }];
    case 'drag': {
      const [from, to] = [a.path[0], a.path[a.path.length - 1]];
      if (!from || !to || a.path.length !== 2) unsupported('2.5', `drag along ${a.path.length} points`);
      const [start, end] = [grid(from), grid(to)];
      return [{ name: 'drag_and_drop', args: { ...start, destination_x: end.x, destination_y: end.y } }];
    }
    case 'type':
      if (!a.at) unsupported('2.5', 'typing without a point (type_text_at needs x, y)');
      return [{ name: 'type_text_at', args: { ...grid(a.at), text: a.text, press_enter: a.pressEnter ?? false } }];
    case 'keys':
      return [{ name: 'key_combination', args: { keys: a.keys.join('+') } }];
    case 'scroll':
      return [
        {
          name: 'scroll_at',
          args: { ...grid(a), direction: scrollDirection(a.dx, a.dy), magnitude: gridMagnitude(a, size) },
        },
      ];
    case 'wait':
      return [{ name: 'wait_5_seconds', args: {} }];
    case 'navigate':
      return [{ name: 'navigate', args: { url: a.url } }];
    case 'back':
      return [{ name: 'go_back', args: {} }];
    case 'screenshot':
      return unsupported('2.5', 'screenshot function (every call returns one)');
  }
}

const CLICKS_3: Record<string, string> = { 'left-1': 'click', 'left-2': 'double_click', 'left-3': 'triple_click' };

function click3(a: Extract<ScreenAction, { kind: 'click' }>, grid: Grid): Call[] {
  const name = a.count === 1 && a.button !== 'left' ? `${a.button}_click` : CLICKS_3[`${a.button}-${a.count}`];
  if (!name) unsupported('3', `${a.button} click × ${a.count}`);
  const held = a.keys ?? [];
  return [
    ...held.map((key) => ({ name: 'key_down', args: { key } })),
    { name, args: grid(a) },
    ...[...held].reverse().map((key) => ({ name: 'key_up', args: { key } })),
  ];
}

function drag3(path: ScreenPoint[], grid: Grid, spelling: 'docs' | 'reference'): Call[] {
  const [from, to] = [path[0], path[path.length - 1]];
  if (!from || !to || path.length < 2) throw new GeminiStandInError('a drag needs at least two points');
  if (path.length > 2) {
    const middle = path.slice(1, -1).map((p) => ({ name: 'move', args: grid(p) }));
    return [{ name: 'mouse_down', args: grid(from) }, ...middle, { name: 'mouse_up', args: grid(to) }];
  }
  const [start, end] = [grid(from), grid(to)];
  const args =
    spelling === 'docs'
      ? { start_x: start.x, start_y: start.y, end_x: end.x, end_y: end.y }
      : { ...start, destination_x: end.x, destination_y: end.y };
  return [{ name: 'drag_and_drop', args }];
}

/** One action as 3.x-set calls (without `intent`, added by the caller). */
function calls3(a: ScreenAction, grid: Grid, size: { width: number; height: number }, spelling: 'docs' | 'reference') {
  switch (a.kind) {
    case 'click':
      return click3(a, grid);
    case 'move':
      return [{ name: 'move', args: grid(a) }];
    case 'drag':
      return drag3(a.path, grid, spelling);
    case 'type': {
      const typed: Call = { name: 'type', args: { text: a.text, press_enter: a.pressEnter ?? false } };
      return a.at ? [{ name: 'click', args: grid(a.at) }, typed] : [typed];
    }
    case 'keys':
      return a.keys.length === 1
        ? [{ name: 'press_key', args: { key: a.keys[0] } }]
        : [{ name: 'hotkey', args: { keys: a.keys } }];
    case 'scroll': {
      const direction = scrollDirection(a.dx, a.dy);
      const pixels = Math.abs(direction === 'up' || direction === 'down' ? a.dy : a.dx);
      const magnitude = spelling === 'docs' ? { magnitude_in_pixels: pixels } : { magnitude: gridMagnitude(a, size) };
      return [{ name: 'scroll', args: { ...grid(a), direction, ...magnitude } }];
    }
    case 'wait':
      return [{ name: 'wait', args: { seconds: a.seconds } }];
    case 'navigate':
      return [{ name: 'navigate', args: { url: a.url } }];
    case 'back':
      return [{ name: 'go_back', args: {} }];
    case 'screenshot':
      return [{ name: 'take_screenshot', args: {} }];
  }
}

/** The turn's actions as calls in the chosen set, with the malformed kind and the safety decision applied. */
function outputCalls(out: StandInOutput, ctx: GeminiResponseContext): Call[] {
  const size = ctx.screenshot ?? GEMINI_REFERENCE_SCREEN;
  const grid: Grid = (p) => toGeminiGrid(p, size);
  const spelling = ctx.spelling ?? 'docs';
  const calls = out.actions.flatMap((a) =>
    ctx.functionSet === '2.5' ? calls25(a, grid, size) : calls3(a, grid, size, spelling),
  );
  if (ctx.functionSet === '3') {
    const intent = out.thoughts.trim();
    for (const call of calls) call.args = { ...call.args, intent: intent || call.name.replace(/_/g, ' ') };
  }
  const blocked = calls.find((c) => ctx.excludedFunctions?.includes(c.name));
  if (blocked) throw new GeminiStandInError(`the request excluded ${blocked.name}, which this turn needs`);
  if (out.malformed === 'unknown-action') {
    // A name from neither set, shaped like the set's own (a model mixing sets sends such names; `click_at` is 2.5's).
    calls.unshift({ name: ctx.functionSet === '2.5' ? 'double_click_at' : 'tap', args: grid({ x: 0, y: 0 }) });
  }
  if (out.safetyCheck) {
    const first = calls[0];
    if (!first) throw new GeminiStandInError('a safety check needs an action to sit on');
    first.args = {
      ...first.args,
      safety_decision: { decision: 'require_confirmation', explanation: out.safetyCheck.message },
    };
  }
  return calls;
}

/** The candidate of one out: text parts and functionCall parts, or a MALFORMED_FUNCTION_CALL with no call. */
function candidateOf(out: StandInOutput, ctx: GeminiResponseContext, responseId: string): Candidate {
  if (out.malformed === 'malformed-function-call') {
    const parts: Part[] = out.thoughts ? [{ text: out.thoughts }] : [];
    return {
      ...(parts.length ? { content: { role: 'model', parts } } : {}),
      finishReason: FinishReason.MALFORMED_FUNCTION_CALL,
      finishMessage: 'Malformed function call: the call could not be parsed.',
      index: 0,
    };
  }
  if (out.malformed === 'missing-coordinate' || out.malformed === 'off-screen' || out.malformed === 'unparsable') {
    throw new GeminiStandInError(
      `Gemini does not send a ${out.malformed} call (its malformed kinds: malformed-function-call, unknown-action)`,
    );
  }
  const calls = outputCalls(out, ctx);
  const texts = [out.thoughts, calls.length === 0 ? out.final?.text : undefined].filter((t): t is string => !!t);
  const parts: Part[] = [
    ...texts.map((text) => ({ text })),
    ...calls.map((call, n): Part => {
      const functionCall: FunctionCall = { name: call.name, args: call.args };
      if (ctx.callIds) functionCall.id = `${responseId}-${n + 1}`;
      return { functionCall };
    }),
  ];
  if (parts.length === 0) parts.push({ text: '' });
  return { content: { role: 'model', parts }, finishReason: FinishReason.STOP, index: 0 };
}

/**
 * The generateContent response body for one out. Several actions are several functionCall parts of one candidate
 * (Gemini batches); an action the set lacks as one call becomes several where it can (3.x: held keys as key_down /
 * key_up around the click, a click before `type`, a multi-point drag as mouse_down / move / mouse_up) and throws
 * GeminiStandInError where it cannot (2.5: right and double clicks, typing without a point, a screenshot).
 * Text-only turns are one text part (the thoughts, then the final text), finishReason STOP.
 */
export function geminiResponse(out: StandInOutput, ctx: GeminiResponseContext): GeminiResponseBody {
  const responseId = ctx.responseId ?? 'standin-response';
  const usage = out.usage ?? { input: 0, output: 0 };
  return {
    candidates: [candidateOf(out, ctx, responseId)],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      totalTokenCount: usage.input + usage.output,
      ...(usage.cachedInput !== undefined ? { cachedContentTokenCount: usage.cachedInput } : {}),
    },
    modelVersion:
      ctx.model ?? (ctx.functionSet === '2.5' ? 'gemini-2.5-computer-use-preview-10-2025' : 'gemini-3.5-flash'),
    responseId,
  };
}
