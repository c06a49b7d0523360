// The chat route's other formats: a chat-completions request that speaks UI-TARS-1.5 or Qwen-VL (chat-detect.ts says
// which) is answered from the same script entries as Fara's, played as that format's turns (script-turns.ts, then
// chat-render.ts) with points in its space: UI-TARS the pixels of the newest screenshot after smart_resize (factor 28),
// Qwen2.5-VL the same (default bounds), Qwen3-VL its 999 or 1000 grid. Stateless: the turn asked for is the number of
// assistant messages in the request, counted on the format's own turns (a batch split into several Qwen turns, an
// extra malformed turn, a dropped entry change the count); the recorded request names the entry it came from.
// A request is checked in this order: its problems against the format (400, naming each), the script (404), the turn
// asked for (400). Then the entry's faults (`status`, `empty`, `hang`) and `delay_ms` apply to its first turn.
// Qwen's answer is `<tool_call>` text in the content, or native `tool_calls` when the request offered the function in
// `tools` (as vLLM sends with a tool parser); a malformed call of broken JSON stays in the content either way, as
// vLLM's parser leaves a call it cannot read.
import type http from 'node:http';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN, formatJson } from '../model/toolcall';
import { completion, sendError, sendJson, usageOf } from './chat-wire';
import type { ChatMessage, ToolCallOut } from './chat-wire';
import type { ChatFormatCall } from './chat-detect';
import { renderQwen, renderUiTars } from './chat-render';
import type { QwenCall } from './chat-render';
import type { RecordedRequest } from './recorded';
import { loadScript, ScriptError } from './script';
import type { ScriptEntry, ScriptUsage } from './script';
import { scriptTurns } from './script-turns';
import type { DroppedAction, ProviderTurn, Size } from './script-turns';

/** One model turn of a chat format, ready to send. */
export interface ChatTurn {
  entry: number;
  kind: ProviderTurn['kind'];
  /** The entry's first turn: its faults and delay apply here. */
  first: boolean;
  usage: ScriptUsage | undefined;
  /** The assistant message's content. */
  content: string;
  /** Native tool calls (Qwen with request `tools`). */
  toolCalls?: ToolCallOut[];
}

const TOOL = 'computer_use';

/** Whether an entry's final text is a terminate's bare status (no answer). */
function statusOnly(entry: ScriptEntry | undefined): boolean {
  return !!entry && 'action' in entry && entry.action.action === 'terminate' && entry.action.answer === undefined;
}

/** A Qwen call's JSON with the closing quote of its action's name left out: no JSON reader can mend it. */
const brokenJson = (json: string): string => json.replace(/("action": "[^"]*)"/, '$1');

/** One Qwen call as an assistant message: `<tool_call>` text, or native tool calls. */
function qwenMessage(
  call: QwenCall,
  thoughts: string,
  native: boolean,
  unparsable: boolean,
): Omit<ChatTurn, 'entry' | 'kind' | 'first' | 'usage'> {
  if ('text' in call) return { content: call.text };
  const json = formatJson({ name: TOOL, arguments: call.args });
  if (native && !unparsable)
    return { content: thoughts, toolCalls: [{ name: TOOL, arguments: formatJson(call.args) }] };
  const block = `${TOOL_CALL_OPEN}\n${unparsable ? brokenJson(json) : json}\n${TOOL_CALL_CLOSE}`;
  return { content: thoughts ? `${thoughts}\n${block}` : block };
}

/** The script as the format's turns, points in `space` (see the module comment); throws ScriptError on a bad entry. */
export function chatTurns(
  entries: readonly ScriptEntry[],
  call: ChatFormatCall,
  space: Size,
): { turns: ChatTurn[]; dropped: DroppedAction[] } {
  const uiTars = call.format === 'ui-tars-1.5';
  const played = scriptTurns(entries, { provider: uiTars ? 'ui-tars' : 'qwen-vl', screen: space, reply: call.reply });
  const dropped = [...played.dropped];
  const turns: ChatTurn[] = [];
  for (const pt of played.turns) {
    const ctx = { space, statusOnly: statusOnly(entries[pt.entry]) };
    const base = { entry: pt.entry, kind: pt.kind, usage: pt.usage, first: false };
    if (uiTars) {
      const r = renderUiTars(pt.output, ctx);
      dropped.push(...r.dropped.map((action) => ({ entry: pt.entry, action })));
      r.calls.forEach((content) => turns.push({ ...base, content }));
      continue;
    }
    const r = renderQwen(pt.output, { ...ctx, offered: call.qwen?.actions ?? [] });
    dropped.push(...r.dropped.map((action) => ({ entry: pt.entry, action })));
    r.calls.forEach((c, i) => {
      const thoughts = i === 0 ? pt.output.thoughts.trim() : '';
      const unparsable = i === 0 && pt.output.malformed === 'unparsable';
      turns.push({ ...base, ...qwenMessage(c, thoughts, !!call.qwen?.native, unparsable) });
    });
  }
  // An entry's first turn is its first one played here (a turn the format could not say is left out).
  const started = new Set<number>();
  for (const t of turns) {
    t.first = !started.has(t.entry);
    started.add(t.entry);
  }
  return { turns, dropped };
}

/** Answers the chat requests of the UI-TARS and Qwen-VL formats (see the module comment). */
export class ChatFormatRoute {
  /** "format:script" whose dropped entries were logged. */
  private readonly logged = new Set<string>();

  constructor(
    private readonly scriptsDir: string,
    private readonly log: (line: string) => void,
    /** Requests seen per key, for faults (shared with the other routes). */
    private readonly seen: Map<string, number>,
  ) {}

  async handle(
    res: http.ServerResponse,
    c: { script: string; messages: ChatMessage[] },
    call: ChatFormatCall,
    record: RecordedRequest,
  ): Promise<void> {
    const { script, messages } = c;
    record.problems = [...call.problems];
    if (call.problems.length > 0 || !call.space) {
      return sendError(res, 400, `${call.format} request refused: ${call.problems.join('; ')}`);
    }
    const played = this.turnsFor(res, script, call, call.space);
    if (!played) return;
    const n = messages.filter((m) => m.role === 'assistant').length;
    record.turn = n;
    const turn = played.turns[n];
    if (!turn) {
      const count = played.turns.length;
      return sendError(
        res,
        400,
        `script '${script}' plays ${count} ${call.format} turns; this request asks for turn ${n + 1}`,
      );
    }
    record.index = turn.entry;
    const entry = played.entries[turn.entry];
    const key = `${call.format}:${script}#${n}`;
    const count = this.seen.get(key) ?? 0;
    this.seen.set(key, count + 1);
    const fault = turn.first ? entry?.faults?.[count] : undefined;
    this.log(
      `scripted-model ${call.format} ${script} turn ${n} [${turn.entry}] ${turn.kind}${fault ? ` fault ${JSON.stringify(fault)}` : ''}`,
    );
    if (fault) {
      if ('status' in fault) return sendError(res, fault.status, fault.message ?? `scripted fault ${fault.status}`);
      if ('hang' in fault) return new Promise<void>((resolve) => res.once('close', resolve));
      return sendJson(res, 200, { ...completion(script, ''), choices: [] });
    }
    if (turn.first && entry?.delay_ms) await new Promise((r) => setTimeout(r, entry.delay_ms));
    const written = turn.content + (turn.toolCalls ?? []).map((t) => t.arguments).join('');
    const usage = usageOf({ messages }, turn.usage, written);
    return sendJson(res, 200, completion(script, turn.content, turn.toolCalls, usage));
  }

  /** The script's turns in the request's format; undefined once an error reply was sent. */
  private turnsFor(
    res: http.ServerResponse,
    script: string,
    call: ChatFormatCall,
    space: Size,
  ): { turns: ChatTurn[]; entries: ScriptEntry[] } | undefined {
    let entries: ScriptEntry[];
    let played: ReturnType<typeof chatTurns>;
    try {
      entries = loadScript(this.scriptsDir, script);
      played = chatTurns(entries, call, space);
    } catch (err) {
      const loading = err instanceof ScriptError && /^(invalid script name|no script named)/.test(err.message);
      sendError(res, loading ? 404 : 500, (err as Error).message);
      return undefined;
    }
    const key = `${call.format}:${script}`;
    if (played.dropped.length > 0 && !this.logged.has(key)) {
      this.logged.add(key);
      const list = played.dropped.map((d) => `entry ${d.entry + 1} ${d.action}`).join(', ');
      this.log(`scripted-model ${call.format} ${script}: no ${call.format} equivalent, dropped: ${list}`);
    }
    return { turns: played.turns, entries };
  }
}
