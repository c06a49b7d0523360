// The scripted model server's provider routes: the same scripts played as OpenAI's Responses API
// (`POST …/responses`), Anthropic's Messages API (`POST …/messages`) and Gemini's generateContent
// (`POST …/models/{model}:generateContent`). Each route matches on the path's end, so a client works whether its base
// URL is the server's root, `…/v1` or `…/v1beta`: the OpenAI SDK appends `/responses` to its base URL, the Anthropic
// SDK `/v1/messages`, the Gemini SDK `/v1beta/models/…`. Configure every family with the server's root URL.
// A request carrying `x-cua-call` is one of the desktop agent's calls (describe, action, ground) on Anthropic's or
// Gemini's function calling, answered from the entry `x-cua-entry` names: see provider-desktop.ts. The others are
// computer-use turns. Stateless, like the chat route: which turn a request asks for is read from the request itself, so a retried or
// resumed step on another worker gets the same answer:
// - OpenAI: the number of runs of consecutive model-output items (reasoning, computer_call, assistant message) in
//   `input` (the adapter replays every output item: no previous_response_id);
// - Anthropic: the number of `assistant` messages;
// - Gemini: the number of `user` contents minus one (a MALFORMED_FUNCTION_CALL candidate has no model content, and
//   the adapter answers every model call with exactly one user turn).
// A request is checked in this order, each failure answered in the provider's own error shape: the key in the
// provider's place (401), the request's format (400, naming every problem), the script (404), the turn asked for,
// the previous turn echoed and its pending safety check acknowledged or declined (400). Then the entry's faults
// (`status`, `empty`, `hang`) and `delay_ms` apply to its first turn, and the turn is answered (see script-turns.ts).
import type http from 'node:http';
import { loadScript, ScriptError } from './script';
import type { ScriptEntry } from './script';
import { scriptTurns } from './script-turns';
import type { ScriptTurns } from './script-turns';
import { flatHeaders, turnUsage } from './provider-wire';
import type { ProviderWire, WireCall } from './provider-wire';
import type { RecordedRequest } from './recorded';
import { openAiWire } from './wire-openai';
import { anthropicWire } from './wire-anthropic';
import { geminiWire } from './wire-gemini';
import { CALL_KIND_HEADER } from './desktop-entry';
import { DesktopRoutes } from './provider-desktop';

export const PROVIDER_WIRES: readonly ProviderWire[] = [geminiWire, openAiWire, anthropicWire];

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The recorded request of a provider call (its entry is filled in once the turn is known; -1 until then). */
function recordOf(wire: ProviderWire, c: WireCall): RecordedRequest & { problems: string[] } {
  return {
    provider: wire.provider,
    script: c.script,
    index: -1,
    turn: c.turn,
    subcall: false,
    toolNames: [],
    ...(c.tool ? { tool: c.tool } : {}),
    imageCount: c.imageCount,
    messageCount: c.messageCount,
    lastUserText: c.lastUserText,
    allText: c.allText,
    problems: [...c.problems],
    acknowledged: c.acknowledged,
    at: Date.now(),
  };
}

export class ProviderRoutes {
  /** "provider:script" whose dropped entries were logged. */
  private readonly logged = new Set<string>();
  /** The desktop agent's calls (`x-cua-call`), answered from the entry they name. */
  private readonly desktop: DesktopRoutes;

  constructor(
    private readonly scriptsDir: string,
    private readonly log: (line: string) => void,
    private readonly requests: RecordedRequest[],
    /** Requests seen per key, for faults (shared with the chat route's count). */
    private readonly seen: Map<string, number>,
  ) {
    this.desktop = new DesktopRoutes(scriptsDir, log, requests, seen);
  }

  /** The wire whose route a request is, or undefined. */
  static route(req: http.IncomingMessage): { wire: ProviderWire; url: URL } | undefined {
    if (req.method !== 'POST') return undefined;
    const url = new URL(req.url ?? '/', 'http://scripted.invalid');
    const wire = PROVIDER_WIRES.find((w) => w.matches(url.pathname));
    return wire ? { wire, url } : undefined;
  }

  async handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    route: { wire: ProviderWire; url: URL },
    text: string,
  ) {
    const { wire, url } = route;
    const fail = (status: number, message: string) => send(res, status, wire.error(status, message));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail(400, 'the request body is not JSON');
    }
    if (req.headers[CALL_KIND_HEADER] !== undefined) return this.desktop.handle(req, res, wire, url, body);
    const c = wire.read(flatHeaders(req.headers), url, body);
    const record = recordOf(wire, c);
    this.requests.push(record);
    if (!c.apiKey) return fail(401, `${wire.provider}: no API key in the request (see the provider's key header)`);
    if (c.problems.length > 0) return fail(400, `${wire.provider} request refused: ${c.problems.join('; ')}`);
    const played = this.turnsFor(c, wire, fail);
    if (!played) return;
    const turn = played.turns[c.turn];
    if (c.turn < 0 || !turn) {
      return fail(
        400,
        `script '${c.script}' plays ${played.turns.length} ${wire.provider} turns; this request asks for turn ${c.turn + 1}`,
      );
    }
    record.index = turn.entry;
    const prev = played.turns[c.turn - 1];
    let problems: string[];
    try {
      problems = prev ? c.againstPrevious(prev, c.turn - 1) : [];
    } catch (err) {
      return fail(500, `script '${c.script}' entry ${(prev?.entry ?? 0) + 1}: ${(err as Error).message}`);
    }
    if (problems.length > 0) {
      record.problems.push(...problems);
      return fail(400, `${wire.provider} request refused: ${problems.join('; ')}`);
    }
    const entry = played.entries[turn.entry];
    const key = `${wire.provider}:${c.script}#${c.turn}`;
    const count = this.seen.get(key) ?? 0;
    this.seen.set(key, count + 1);
    const fault = turn.first ? entry?.faults?.[count] : undefined;
    this.log(
      `scripted-model ${wire.provider} ${c.script} turn ${c.turn} [${turn.entry}] ${turn.kind}${fault ? ` fault ${JSON.stringify(fault)}` : ''}`,
    );
    if (fault) {
      if ('status' in fault) return fail(fault.status, fault.message ?? `scripted fault ${fault.status}`);
      if ('hang' in fault) return new Promise<void>((resolve) => res.once('close', resolve));
      return send(res, 200, c.empty(c.turn));
    }
    if (turn.first && entry?.delay_ms) await new Promise((r) => setTimeout(r, entry.delay_ms));
    let out: unknown;
    try {
      const usage = turnUsage(turn, body);
      out = c.respond({ ...turn.output, ...(usage ? { usage } : {}) }, c.turn);
    } catch (err) {
      return fail(500, `script '${c.script}' entry ${turn.entry + 1}: ${(err as Error).message}`);
    }
    return send(res, 200, out);
  }

  /** The script's turns for this provider; undefined once an error reply was sent. */
  private turnsFor(
    c: WireCall,
    wire: ProviderWire,
    fail: (s: number, m: string) => void,
  ): (ScriptTurns & { entries: ScriptEntry[] }) | undefined {
    let played: ScriptTurns;
    let entries: ScriptEntry[];
    try {
      entries = loadScript(this.scriptsDir, c.script);
      played = scriptTurns(entries, {
        provider: wire.provider,
        oneActionPerTurn: c.oneActionPerTurn,
        typeAtPointer: c.typeAtPointer,
        screen: c.screen,
        reply: c.reply,
      });
    } catch (err) {
      const loading = err instanceof ScriptError && /^(invalid script name|no script named)/.test(err.message);
      fail(loading ? 404 : 500, (err as Error).message);
      return undefined;
    }
    const key = `${wire.provider}:${c.script}`;
    if (played.dropped.length > 0 && !this.logged.has(key)) {
      this.logged.add(key);
      const list = played.dropped.map((d) => `entry ${d.entry + 1} ${d.action}`).join(', ');
      this.log(`scripted-model ${wire.provider} ${c.script}: no ${wire.provider} equivalent, dropped: ${list}`);
    }
    return { ...played, entries };
  }
}
