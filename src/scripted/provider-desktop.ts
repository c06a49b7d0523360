// The scripted model server's answer to the desktop agent's calls on Anthropic's Messages API and Gemini's
// generateContent: a request to `…/messages` or `…/models/{model}:generateContent` carrying `x-cua-call`
// (provider-routes.ts sends it here). Stateless: the entry is the one `x-cua-entry` names, not a count of turns, and the kind
// of call (`describe`, `action`, `ground`) picks what of it is answered, as on the chat route.
// A request is checked in this order, each failure in the provider's own error shape: the key (401); the headers,
// the request's format (desktop-anthropic.ts, desktop-gemini.ts) and what its kind needs (a describe or ground call
// carries exactly one image; an action call declares tools), every problem named in one 400; the script (404) and the
// entry (400); then the entry against the request (400): an action call on a Fara action entry (not a desktop
// script), or a scripted call to a function the request does not declare or its tool choice forbids (a real model
// can only call what it is given). Faults (`status`, `empty`, `hang`) and `delay_ms` apply to the action call,
// counted per entry; ground calls are counted per entry for their list of outputs.
import type http from 'node:http';
import { loadScript, ScriptError } from './script';
import type { ScriptEntry } from './script';
import type { ProviderWire } from './provider-wire';
import { flatHeaders } from './provider-wire';
import type { RecordedRequest } from './recorded';
import type { StandInProvider } from './script-turns';
import {
  CALL_KIND_HEADER,
  DEFAULT_DESCRIBE_OUTPUT,
  desktopUsage,
  entryCallObjects,
  ENTRY_INDEX_HEADER,
  groundOutput,
  memoryReplyOf,
  withReply,
} from './desktop-entry';
import type { DesktopAnswer, DesktopCallWire, DesktopRequest } from './desktop-entry';
import { anthropicDesktop } from './desktop-anthropic';
import { geminiDesktop } from './desktop-gemini';

const DESKTOP_WIRES: Partial<Record<StandInProvider, DesktopCallWire>> = {
  anthropic: anthropicDesktop,
  gemini: geminiDesktop,
};
const DESKTOP_CALLS = ['describe', 'action', 'ground'] as const;
type DesktopCallKind = (typeof DESKTOP_CALLS)[number];

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The problems of the two headers, and what they name. */
function readHeaders(h: Record<string, string>): { call?: DesktopCallKind; index: number; problems: string[] } {
  const problems: string[] = [];
  const value = h[CALL_KIND_HEADER] ?? '';
  const call = DESKTOP_CALLS.find((c) => c === value);
  if (!call) problems.push(`${CALL_KIND_HEADER} '${value}' is not a desktop call (${DESKTOP_CALLS.join(', ')})`);
  const entry = h[ENTRY_INDEX_HEADER];
  const index = entry !== undefined && /^\d+$/.test(entry) ? Number(entry) : -1;
  if (index < 0) problems.push(`a desktop call names its 0-based script entry in ${ENTRY_INDEX_HEADER}`);
  return { ...(call ? { call } : {}), index, problems };
}

/** What the kind of call needs of the request. */
function kindProblems(call: DesktopCallKind | undefined, r: DesktopRequest): string[] {
  if (call === 'describe' || call === 'ground') {
    return r.imageCount === 1 ? [] : [`a ${call} call carries exactly one image; this request has ${r.imageCount}`];
  }
  if (call === 'action' && r.toolNames.length === 0)
    return ['an action call declares its tools; this request has none'];
  return [];
}

/** The scripted calls the request does not let the model make. */
function undeclared(r: DesktopRequest, names: string[]): string[] {
  return names.flatMap((n) => {
    if (!r.toolNames.includes(n))
      return [`the request does not declare tool ${n} (a model can only call declared tools)`];
    if (!r.callable.includes(n))
      return [`the request's tool choice (${r.toolChoice ?? '?'}) does not let the model call ${n}`];
    return [];
  });
}

function recordOf(provider: StandInProvider, r: DesktopRequest, call: DesktopCallKind | undefined, index: number) {
  const record: RecordedRequest & { problems: string[] } = {
    provider,
    script: r.script,
    index,
    subcall: false,
    ...(call ? { call } : {}),
    toolNames: r.toolNames,
    ...(r.toolChoice ? { toolChoice: r.toolChoice } : {}),
    problems: [],
    imageCount: r.imageCount,
    messageCount: r.messageCount,
    lastUserText: r.lastUserText,
    allText: r.allText,
    at: Date.now(),
  };
  return record;
}

export class DesktopRoutes {
  constructor(
    private readonly scriptsDir: string,
    private readonly log: (line: string) => void,
    private readonly requests: RecordedRequest[],
    /** Calls seen per key, for faults and ground lists (shared with the other routes' counts). */
    private readonly seen: Map<string, number>,
  ) {}

  async handle(req: http.IncomingMessage, res: http.ServerResponse, wire: ProviderWire, url: URL, body: unknown) {
    const fail = (status: number, message: string) => send(res, status, wire.error(status, message));
    const side = DESKTOP_WIRES[wire.provider];
    if (!side) {
      return fail(400, `${CALL_KIND_HEADER}: the desktop agent's calls are not spoken on the ${wire.provider} route`);
    }
    const headers = flatHeaders(req.headers);
    const r = side.read(headers, url, body);
    const { call, index, problems: headerProblems } = readHeaders(headers);
    const record = recordOf(wire.provider, r, call, index);
    this.requests.push(record);
    const refuse = (problems: string[]) => {
      record.problems.push(...problems);
      fail(400, `${wire.provider} request refused: ${problems.join('; ')}`);
    };
    if (!r.apiKey) return fail(401, `${wire.provider}: no API key in the request (see the provider's key header)`);
    const problems = [...headerProblems, ...r.problems, ...kindProblems(call, r)];
    if (problems.length > 0 || !call) return refuse(problems);
    const entry = this.entryFor(r.script, index, fail);
    if (!entry) return;
    let answer: DesktopAnswer | string[];
    const key = `desktop:${wire.provider}:${r.script}#${index}`;
    try {
      answer = this.answerOf(call, entry, index, r, key);
    } catch (err) {
      return fail(500, `script '${r.script}' entry ${index + 1}: ${(err as Error).message}`);
    }
    if (Array.isArray(answer)) return refuse(answer);
    const fault = call === 'action' ? entry.faults?.[this.count(key)] : undefined;
    this.log(
      `scripted-model ${wire.provider} ${r.script}[${index}] (${call})${fault ? ` fault ${JSON.stringify(fault)}` : ''}`,
    );
    const ctx = { script: r.script, entry: index };
    if (fault) {
      if ('status' in fault) return fail(fault.status, fault.message ?? `scripted fault ${fault.status}`);
      if ('hang' in fault) return new Promise<void>((resolve) => res.once('close', resolve));
      return send(res, 200, side.empty(ctx));
    }
    if (call === 'action' && entry.delay_ms) await new Promise((done) => setTimeout(done, entry.delay_ms));
    return send(res, 200, side.answer(answer, ctx));
  }

  /** Counts one more call for a key; the count before it. */
  private count(key: string): number {
    const count = this.seen.get(key) ?? 0;
    this.seen.set(key, count + 1);
    return count;
  }

  /** The script entry the call names; undefined once an error reply was sent. */
  private entryFor(script: string, index: number, fail: (s: number, m: string) => void): ScriptEntry | undefined {
    let entries: ScriptEntry[];
    try {
      entries = loadScript(this.scriptsDir, script);
    } catch (err) {
      const loading = err instanceof ScriptError && /^(invalid script name|no script named)/.test(err.message);
      fail(loading ? 404 : 500, (err as Error).message);
      return undefined;
    }
    const entry = entries[index];
    if (!entry) fail(400, `script '${script}' has ${entries.length} entries; this request asks for entry ${index + 1}`);
    return entry;
  }

  /** The answer to the call from its entry, or the problems of the entry against the request (throws ScriptError). */
  private answerOf(
    call: DesktopCallKind,
    entry: ScriptEntry,
    index: number,
    r: DesktopRequest,
    key: string,
  ): DesktopAnswer | string[] {
    if ('judge' in entry) return [`entry ${index + 1} of script '${r.script}' answers judge calls only`];
    const usage = (text: string, calls: DesktopAnswer['calls'] = []) =>
      desktopUsage(entry.usage, r, text + (calls.length > 0 ? JSON.stringify(calls) : ''));
    const textAnswer = (text: string): DesktopAnswer => ({ text, calls: [], malformed: false, usage: usage(text) });
    if (call === 'describe') return textAnswer(entry.describe ?? DEFAULT_DESCRIBE_OUTPUT);
    if (call === 'ground') return textAnswer(groundOutput(entry, this.count(`${key}#ground`)));
    if ('action' in entry) {
      return [`entry ${index + 1} of script '${r.script}' is a Fara action, not a desktop entry: not a desktop script`];
    }
    if ('raw' in entry) return textAnswer(entry.raw);
    const reply = memoryReplyOf(r.userTexts);
    const calls = entryCallObjects(entry, index, reply);
    const problems = undeclared(
      r,
      calls.map((c) => c.name),
    );
    if (problems.length > 0) return problems;
    const text = reply === undefined ? entry.content : String(withReply(entry.content, reply));
    return { text, calls, malformed: entry.malformed === true, usage: usage(text, calls) };
  }
}
