// The scripted model server: a TEST DOUBLE speaking the OpenAI chat-completions protocol, answering from
// script files instead of a model. Stateless per request (the entry index is the number of assistant
// messages already in the request), so it is deterministic across worker crashes and activity retries.
// Never a default for real work: it only knows what its script says.
// It also speaks the three providers' computer-use APIs (OpenAI Responses, Anthropic Messages, Gemini
// generateContent) from the same scripts: see provider-routes.ts. On chat completions it answers in the format the
// request speaks: Fara's (below), or UI-TARS-1.5's or Qwen-VL's (chat-detect.ts says which, chat-formats.ts answers).
// The desktop agent makes several calls per step (describe the screen, decide, ground clicks); it names the entry
// and the kind of call in two headers, and the server answers from that entry's `describe`, `tool_calls` or `ground`
// (desktop-entry.ts), here on chat completions and on Anthropic's and Gemini's function calling (provider-desktop.ts).
// A `malformed` tool-call entry is answered here as `<tool_call>` text of broken JSON with no native calls.
// An evaluation's LLM judge names its calls the same way (`key_points`, `relevance`, `verdict`, `rubric`) and is
// answered from a `judge` entry.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_URL_LABEL } from '../model/context';
import { renderToolCall } from '../model/toolcall';
import type { AgentAction } from '../actions/schemas';
import { fillFromPrompt, loadExtractReplies, loadScript, ScriptError } from './script';
import type { ScriptEntry } from './script';
import { ProviderRoutes } from './provider-routes';
import {
  CALL_KIND_HEADER,
  DEFAULT_DESCRIBE_OUTPUT,
  ENTRY_INDEX_HEADER,
  groundOutput,
  memoryReplyOf,
  withReply,
} from './desktop-entry';
import { completion, countImages, sendError, sendJson, textOf, usageOf } from './chat-wire';
import type { ChatRequest, ToolCallOut } from './chat-wire';
import { detectChatFormat } from './chat-detect';
import type { ChatFormat } from './chat-detect';
import { ChatFormatRoute } from './chat-formats';
import { JUDGE_CALL_KINDS, SCRIPTED_CALL_KINDS } from './recorded';
import type { RecordedRequest, ScriptedCallKind } from './recorded';

export { JUDGE_CALL_KINDS, SCRIPTED_CALL_KINDS } from './recorded';
export { CALL_KIND_HEADER, DEFAULT_DESCRIBE_OUTPUT, ENTRY_INDEX_HEADER, NO_GROUND_OUTPUT } from './desktop-entry';
export type { RecordedRequest, ScriptedCallKind } from './recorded';

/** Header a page-reading sub-call sends, carrying the main call's entry index (see activities). */
export const SUBCALL_INDEX_HEADER = 'x-cua-subcall-index';
type JudgeCallKind = (typeof JUDGE_CALL_KINDS)[number];
/** Header of a judge's relevance call: the 0-based position of the screenshot among those rated. */
export const JUDGE_ITEM_HEADER = 'x-cua-item';

export interface ScriptedModelServer {
  /** The chat-completions base URL (`http://host:port/v1`). */
  url: string;
  /**
   * The server's root (`http://host:port`): the base URL for every provider family, whose SDKs append their own
   * paths (`/responses`, `/v1/messages`, `/v1beta/models/…`); see provider-routes.ts.
   */
  root: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * The user's latest reply to an ask_user_question, in their own words: the user message that follows the
 * assistant message which asked, without its URL line. A script writes `{{reply}}` where the reply belongs.
 */
export function latestReply(messages: readonly { role: string; content: unknown }[]): string | undefined {
  let reply: string | undefined;
  for (let i = 1; i < messages.length; i++) {
    const prev = messages[i - 1];
    const m = messages[i];
    if (m?.role !== 'user' || prev?.role !== 'assistant' || !textOf(prev.content).includes('ask_user_question'))
      continue;
    const text = textOf(m.content);
    reply = text.startsWith(`${DEFAULT_URL_LABEL} `) ? text.slice(text.indexOf('\n') + 1) : text;
  }
  return reply?.trim();
}

/**
 * The user's latest reply as the desktop agent's memory carries it: the last `USER:` line of the user messages.
 * Used for `{{reply}}` in requests marked with CALL_KIND_HEADER.
 */
export function latestMemoryReply(messages: readonly { role: string; content: unknown }[]): string | undefined {
  return memoryReplyOf(messages.flatMap((m) => (m.role === 'user' ? [textOf(m.content)] : [])));
}

/** The kind of call a request is, from its header; an error text when the header has another value. */
function callKind(header: string | string[] | undefined): ScriptedCallKind | undefined | { error: string } {
  if (header === undefined) return undefined;
  const value = String(header);
  return (SCRIPTED_CALL_KINDS as readonly string[]).includes(value)
    ? (value as ScriptedCallKind)
    : { error: `${CALL_KIND_HEADER} must be one of ${SCRIPTED_CALL_KINDS.join(', ')}, got '${value}'` };
}

/** The entry index a request names in ENTRY_INDEX_HEADER, undefined without it, NaN when it is no index. */
function entryHeader(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = String(header);
  return /^\d+$/.test(value) ? Number(value) : NaN;
}

const isJudgeCall = (call: ScriptedCallKind | undefined): call is JudgeCallKind =>
  (JUDGE_CALL_KINDS as readonly string[]).includes(call ?? '');

/** A judge entry's output for one judge call (relevance by the screenshot's position, the last one repeating). */
function judgeOutput(entry: ScriptEntry, call: JudgeCallKind, item: number): string {
  const outputs = 'judge' in entry ? entry.judge : {};
  const output = outputs[call];
  if (output === undefined) return `This scripted test model has no ${call} output in this entry.`;
  if (typeof output === 'string') return output;
  return output[Math.min(item, output.length - 1)] ?? '';
}

function entryText(entry: ScriptEntry, reply: string | undefined): string {
  if ('raw' in entry) return entry.raw;
  if ('judge' in entry) return '';
  if ('tool_calls' in entry) return entry.content;
  const action = reply === undefined ? entry.action : withReply(entry.action, reply);
  return renderToolCall(entry.thoughts, action as AgentAction);
}

/** A native tool-call entry's calls, arguments as the JSON string servers send. */
function entryToolCalls(entry: ScriptEntry, reply: string | undefined): ToolCallOut[] | undefined {
  if (!('tool_calls' in entry)) return undefined;
  return entry.tool_calls.map((c) => {
    const args = reply === undefined ? c.arguments : withReply(c.arguments, reply);
    return { name: c.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
  });
}

/**
 * A `malformed` tool-call entry's output on chat completions: its first call as `<tool_call>` text whose JSON lost its
 * closing brace, and no native calls, as a server whose tool parser could not read the model's call sends it.
 */
function malformedToolCallText(entry: ScriptEntry, reply: string | undefined): string {
  const [first] = entryToolCalls(entry, reply) ?? [];
  const content = 'content' in entry ? entry.content : '';
  if (!first) return content;
  const broken = `{"name": ${JSON.stringify(first.name)}, "arguments": ${first.arguments}`;
  return [content, `<tool_call>\n${broken}\n</tool_call>`].filter((t) => t !== '').join('\n');
}

/** What a chat-completions request asks for: which script and entry, and which kind of call. */
interface ScriptedCall {
  script: string;
  messages: NonNullable<ChatRequest['messages']>;
  subcall: boolean;
  /** The call kind header as read (an error when it has another value). */
  kind: ReturnType<typeof callKind>;
  call: ScriptedCallKind | undefined;
  /** The 0-based entry (NaN when the entry header is no index). */
  index: number;
}

/** Reads the call from the request's body (model, messages) and headers (subcall, entry, call kind). */
function readCall(req: http.IncomingMessage, request: ChatRequest): ScriptedCall {
  const messages = request.messages ?? [];
  const subHeader = req.headers[SUBCALL_INDEX_HEADER];
  const subcall = typeof subHeader === 'string';
  const kind = callKind(req.headers[CALL_KIND_HEADER]);
  const named = entryHeader(req.headers[ENTRY_INDEX_HEADER]);
  return {
    script: request.model ?? '',
    messages,
    subcall,
    kind,
    call: typeof kind === 'object' ? undefined : kind,
    index: subcall ? Number(subHeader) : (named ?? messages.filter((m) => m.role === 'assistant').length),
  };
}

/** The request as recorded for assertions (GET /_requests). */
function recordOf(
  { script, index, subcall, call, messages }: ScriptedCall,
  request: ChatRequest,
  format: ChatFormat,
): RecordedRequest {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const toolNames = (request.tools ?? []).flatMap((t) =>
    typeof t?.function?.name === 'string' ? [t.function.name] : [],
  );
  return {
    format,
    script,
    index,
    subcall,
    ...(call ? { call } : {}),
    toolNames,
    ...(typeof request.tool_choice === 'string' ? { toolChoice: request.tool_choice } : {}),
    imageCount: countImages(messages),
    messageCount: messages.length,
    lastUserText: textOf(lastUser?.content),
    allText: messages.map((m) => textOf(m.content)).join('\n'),
    at: Date.now(),
  };
}

/** Answers a request that matched no fault from its entry (page answer, describe, ground, judge or decision). */
function answerFromEntry(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  c: ScriptedCall,
  entry: ScriptEntry,
  count: number,
): void {
  const { script, call, messages } = c;
  const send = (content: string, toolCalls?: ToolCallOut[]) =>
    sendJson(res, 200, completion(script, content, toolCalls, usageOf(c, entry.usage, content)));
  if (c.subcall) return send(entry.page_answer ?? 'The page does not say.');
  if (call === 'describe') return send(entry.describe ?? DEFAULT_DESCRIBE_OUTPUT);
  if (call === 'ground') return send(groundOutput(entry, count));
  if (isJudgeCall(call)) {
    const item = Number(req.headers[JUDGE_ITEM_HEADER] ?? 0);
    return send(judgeOutput(entry, call, Number.isInteger(item) ? item : 0));
  }
  const reply = latestReply(messages) ?? (call ? latestMemoryReply(messages) : undefined);
  if ('tool_calls' in entry && entry.malformed) return send(malformedToolCallText(entry, reply));
  return send(entryText(entry, reply), entryToolCalls(entry, reply));
}

/** The scripted model's state (the requests seen, in order and counted per entry for faults) and its routes. */
class ScriptedModel {
  readonly requests: RecordedRequest[] = [];
  /** "script#index[#sub]" → requests seen (for faults). */
  private readonly seen = new Map<string, number>();

  private readonly providers: ProviderRoutes;
  private readonly formats: ChatFormatRoute;

  constructor(
    private readonly scriptsDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.providers = new ProviderRoutes(scriptsDir, log, this.requests, this.seen);
    this.formats = new ChatFormatRoute(scriptsDir, log, this.seen);
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
    if (req.method === 'GET' && req.url?.startsWith('/_requests')) return sendJson(res, 200, this.requests);
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      return sendJson(res, 200, { object: 'list', data: [] });
    }
    const route = ProviderRoutes.route(req);
    if (route) return this.providers.handle(req, res, route, body);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      return sendError(res, 404, `scripted model: no route ${req.method} ${req.url}`);
    }
    let request: ChatRequest;
    try {
      request = JSON.parse(body) as ChatRequest;
    } catch {
      return sendError(res, 400, 'request body is not JSON');
    }
    const c = readCall(req, request);
    const detected = detectChatFormat(request);
    const record = recordOf(c, request, detected.format);
    this.requests.push(record);
    if (typeof c.kind === 'object') return sendError(res, 400, c.kind.error);
    if (Number.isNaN(c.index)) return sendError(res, 400, `${ENTRY_INDEX_HEADER} must be an entry index (0, 1, …)`);
    if (c.call === 'extract') return this.answerExtract(res, c);
    const plain = !c.subcall && c.kind === undefined && req.headers[ENTRY_INDEX_HEADER] === undefined;
    if (plain && detected.format !== 'fara') return this.formats.handle(res, c, detected, record);
    const entry = this.entryFor(res, c);
    if (entry) return this.answer(req, res, c, entry);
  }

  /** A task's output extraction: the script's `extract` reply for this try (the entry header), the last repeating. */
  private answerExtract(res: http.ServerResponse, c: ScriptedCall): void {
    let replies: string[];
    try {
      replies = loadExtractReplies(this.scriptsDir, c.script);
    } catch (err) {
      return sendError(res, err instanceof ScriptError ? 404 : 500, (err as Error).message);
    }
    const reply = replies[Math.min(c.index, replies.length - 1)];
    this.log(`scripted-model ${c.script} (extract, try ${c.index + 1})`);
    if (reply === undefined)
      return sendError(res, 400, `script '${c.script}' has no extract replies (its \`extract\`)`);
    let filled: string;
    try {
      filled = fillFromPrompt(reply, promptText(c.messages));
    } catch (err) {
      return sendError(res, 400, (err as Error).message);
    }
    return sendJson(res, 200, completion(c.script, filled, undefined, usageOf(c, undefined, filled)));
  }

  /** The script entry the call names; undefined once an error reply was sent. */
  private entryFor(res: http.ServerResponse, { script, index, call }: ScriptedCall): ScriptEntry | undefined {
    let entries: ScriptEntry[];
    try {
      entries = loadScript(this.scriptsDir, script);
    } catch (err) {
      sendError(res, err instanceof ScriptError ? 404 : 500, (err as Error).message);
      return undefined;
    }
    const entry = entries[index];
    if (!entry) {
      sendError(res, 400, `script '${script}' has ${entries.length} entries; this request asks for entry ${index + 1}`);
      return undefined;
    }
    if ('judge' in entry && !isJudgeCall(call)) {
      sendError(res, 400, `entry ${index + 1} of script '${script}' answers judge calls only (${CALL_KIND_HEADER})`);
      return undefined;
    }
    return entry;
  }

  /** Counts the call, then answers with the entry's fault for this count, or after its delay, from the entry. */
  private async answer(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    c: ScriptedCall,
    entry: ScriptEntry,
  ): Promise<void> {
    const { script, index, subcall, call } = c;
    // Faults, delays and {{reply}} belong to the decision call; describe and ground calls are counted on their own.
    // A judge entry's faults apply to each kind of judge call, counted per kind.
    const side = subcall ? 'sub' : call && call !== 'action' ? call : undefined;
    const key = `${script}#${index}${side ? `#${side}` : ''}`;
    const count = this.seen.get(key) ?? 0;
    this.seen.set(key, count + 1);
    const fault = side && !isJudgeCall(call) ? undefined : entry.faults?.[count];
    const what = subcall ? ' (page answer)' : call ? ` (${call})` : '';
    this.log(`scripted-model ${script}[${index}]${what}${fault ? ` fault ${JSON.stringify(fault)}` : ''}`);
    if (fault) {
      if ('status' in fault) return sendError(res, fault.status, fault.message ?? `scripted fault ${fault.status}`);
      if ('hang' in fault) return new Promise<void>((resolve) => res.once('close', resolve));
      return sendJson(res, 200, { ...completion(script, ''), choices: [] });
    }
    if (entry.delay_ms && !side) await new Promise((r) => setTimeout(r, entry.delay_ms));
    return answerFromEntry(req, res, c, entry, count);
  }
}

export async function startScriptedModelServer(opts: {
  scriptsDir: string;
  port?: number;
  host?: string;
  log?: (line: string) => void;
}): Promise<ScriptedModelServer> {
  const model = new ScriptedModel(opts.scriptsDir, opts.log ?? (() => undefined));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      model.handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, `scripted model crashed: ${String(err)}`);
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/v1`,
    root: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    requests: model.requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The text parts of a request's messages, one after another (what a `{{prompt:…}}` extract reply reads). */
function promptText(messages: ScriptedCall['messages']): string {
  return messages
    .flatMap((m) => {
      const content = (m as { content?: unknown }).content;
      if (typeof content === 'string') return [content];
      if (!Array.isArray(content)) return [];
      return content.flatMap((p: unknown) =>
        typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string'
          ? [(p as { text: string }).text]
          : [],
      );
    })
    .join('\n');
}
