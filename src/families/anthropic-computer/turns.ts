// The conversation of a Messages API request, rebuilt from our neutral history on every step (no state kept at the
// provider): the task and first screenshot, then per model call the assistant message as the provider sent it (our
// record of it, replayed unchanged) and exactly one user message answering it. That message has a tool_result per
// tool_use (the toolset's echoing `toolset_name`): the actions carried out, with the screenshot and URL after the last
// of them; those a batch cut short or an invalid output left undone, as errors the model reads. After a message with
// no tool_use (a question, or an output that was no action), the user message is the person's reply (its own words
// first), then the screenshot and URL. The screenshots are drafted here as refs and loaded in request.ts.
import type { ScreenSize } from '../../actions/tool-schema';
import type { HistoryEntry } from '../../model/context';
import { truncateObservation } from '../../model/context';
import { ModelOutputError } from '../../model/errors';
import { readTurn, toolUsesOf, blocksOf } from './actions';
import type { Region, TurnReading, ToolUse } from './actions';

type Observation = Extract<HistoryEntry, { kind: 'observation' }>;

/** A part of a user message or tool_result before its screenshot is loaded. */
export type Part = { type: 'text'; text: string } | { type: 'shot'; ref: string; region?: Region };

export interface ResultDraft {
  use: ToolUse;
  isError: boolean;
  parts: Part[];
}

/** A user message: tool_results first (the API wants them first), then other parts. */
export interface UserDraft {
  results: ResultDraft[];
  parts: Part[];
}

export type Draft = { role: 'user'; user: UserDraft } | { role: 'assistant'; content: Record<string, unknown>[] };

/** One model call and what followed it: the steps that continued it and the observation after each. */
interface Turn {
  recorded: string;
  continued: number;
  observations: Observation[];
  replies: string[];
}

/** Longest URL the model is shown (a query string is kept: it is often the page's state). */
const MAX_URL_CHARS = 500;
/** The recorded content replayed for a call that returned none (the API refuses an empty assistant message). */
const NO_OUTPUT = '(no output)';

const text = (t: string): Part[] => (t.trim() === '' ? [] : [{ type: 'text', text: t }]);
const shot = (ref: string | undefined): Part[] => (ref === undefined ? [] : [{ type: 'shot', ref }]);

/** The URL line and the text the step left (an error, a note): what the model reads beside a screenshot. */
function observed(o: Observation | undefined): Part[] {
  const url = o?.url ? `Current URL: ${o.url.slice(0, MAX_URL_CHARS)}` : '';
  const note = o?.textObservation ? truncateObservation(o.textObservation) : '';
  return text([url, note].filter(Boolean).join('\n'));
}

/** The assistant message's content from our record (`{content, stop_reason}` JSON); other text as one text block. */
export function recordedContent(recorded: string): Record<string, unknown>[] {
  let content: Record<string, unknown>[];
  try {
    const parsed = JSON.parse(recorded) as { content?: unknown };
    content = blocksOf(parsed.content);
  } catch {
    content = blocksOf(recorded);
  }
  return content.length > 0 && !content.every((b) => b.type === 'text' && String(b.text).trim() === '')
    ? content
    : [{ type: 'text', text: NO_OUTPUT }];
}

/** The history's model calls, each with the continuing steps and observations after it. */
function turnsOf(history: readonly HistoryEntry[]): { task: Part[]; turns: Turn[] } {
  const task: Part[] = [];
  const turns: Turn[] = [];
  for (const entry of history) {
    const turn = turns[turns.length - 1];
    if (entry.kind === 'task') task.push(...text(entry.text), ...shot(entry.screenshot));
    else if (entry.kind === 'assistant' && !entry.continues) {
      turns.push({ recorded: entry.text, continued: 0, observations: [], replies: [] });
    } else if (entry.kind === 'assistant') {
      if (turn) turn.continued++;
    } else if (entry.kind === 'user_reply') {
      if (turn) turn.replies.push(entry.text);
      else task.push(...text(entry.text));
    } else if (turn) turn.observations.push(entry);
    else task.push(...observed(entry), ...shot(entry.screenshot));
  }
  return { task, turns };
}

/** The person's words in a turn's observations (a reply, a message said to the task), in order. */
function repliesOf(turn: Turn): string[] {
  return [...turn.observations.flatMap((o) => (o.userReply ? [o.userReply] : [])), ...turn.replies];
}

/** For each tool_use, the index of the last of our actions that carries it out (-1: none needed). */
function lastActionOf(reading: TurnReading): number[] {
  let last = -1;
  return reading.toolUses.map((_, u) => {
    reading.actions.forEach((a, i) => {
      if (a.owners.includes(u)) last = Math.max(last, i);
    });
    return last;
  });
}

/** The results of a turn whose actions were read: done ones, the screenshot after the last, undone ones as errors. */
function resultsOf(turn: Turn, reading: TurnReading): UserDraft {
  const carried = Math.min(1 + turn.continued, reading.actions.length);
  const final = turn.observations[turn.observations.length - 1];
  const lastAction = lastActionOf(reading);
  const done = lastAction.map((i) => i < carried);
  const carrier = lastIndex(done, (d, u) => d && !reading.zooms.has(u)) ?? lastIndex(done, (d) => d);
  const reason = final?.textObservation ? truncateObservation(final.textObservation) : 'the task stopped first';
  const results = reading.toolUses.map((use, u): ResultDraft => {
    if (!done[u]) return { use, isError: true, parts: text(`Not executed: ${reason}`) };
    const region = reading.zooms.get(u);
    const zoom: Part[] = region && final?.screenshot ? [{ type: 'shot', ref: final.screenshot, region }] : [];
    if (u === carrier) return { use, isError: false, parts: [...zoom, ...shot(final?.screenshot), ...observed(final)] };
    const own = turn.observations[lastAction[u] ?? -1];
    const note = own && own !== final && own.textObservation ? truncateObservation(own.textObservation) : '';
    return { use, isError: false, parts: [...zoom, ...text(note)] };
  });
  const parts = carrier === undefined ? [...shot(final?.screenshot), ...observed(final)] : [];
  return { results, parts: [...parts, ...repliesOf(turn).flatMap(text)] };
}

function lastIndex<T>(xs: readonly T[], test: (x: T, i: number) => boolean): number | undefined {
  for (let i = xs.length - 1; i >= 0; i--) if (test(xs[i] as T, i)) return i;
  return undefined;
}

/** The user message answering one model call. */
function userDraftOf(turn: Turn, screen: ScreenSize, allowed: readonly string[]): UserDraft {
  const content = recordedContent(turn.recorded);
  const uses = toolUsesOf(content);
  const final = turn.observations[turn.observations.length - 1];
  const after = [...shot(final?.screenshot), ...observed(final)];
  if (uses.length === 0) {
    // A question's reply (or a note said to the task) first, as the person's own words; then the page.
    const replies = repliesOf(turn).flatMap(text);
    return { results: [], parts: replies.length + after.length > 0 ? [...replies, ...after] : text(NO_OUTPUT) };
  }
  let reading: TurnReading;
  try {
    reading = readTurn(content, screen, allowed);
  } catch (err) {
    if (!(err instanceof ModelOutputError)) throw err;
    // The output was no valid action: every tool_use is answered with the error the model reads (our feedback).
    const feedback = final?.textObservation ?? err.message;
    const results = uses.map((use): ResultDraft => ({ use, isError: true, parts: text(feedback) }));
    const url = final?.url ? `Current URL: ${final.url.slice(0, MAX_URL_CHARS)}` : '';
    return { results, parts: [...shot(final?.screenshot), ...text(url), ...repliesOf(turn).flatMap(text)] };
  }
  return resultsOf(turn, reading);
}

/** The request's messages as drafts: the task, then each model call and the user message answering it. */
export function draftsOf(history: readonly HistoryEntry[], screen: ScreenSize, allowed: readonly string[]): Draft[] {
  const { task, turns } = turnsOf(history);
  const drafts: Draft[] = [{ role: 'user', user: { results: [], parts: task.length > 0 ? task : text(NO_OUTPUT) } }];
  for (const turn of turns) {
    drafts.push({ role: 'assistant', content: recordedContent(turn.recorded) });
    drafts.push({ role: 'user', user: userDraftOf(turn, screen, allowed) });
  }
  return drafts;
}
