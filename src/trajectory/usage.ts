// What a run's model calls used and cost, from its run folder: every decision's call (`llm_conversation`: the
// desktop's describe call too), every call a tool made (an action's `tool_sub_calls`, e.g. read_page's question; a
// tool_output's `metadata.tool_sub_calls`, e.g. the desktop's grounding call, made after its action was recorded) and
// the LLM judge's calls (a verification result's `metadata.model_calls`), with the tokens the endpoint reported (or
// the estimate, when it reported none) and the cost its price gave. A reused action (a replay's, the cache's) made no
// call: its usage is zero and it is not counted; nor is an inherited event (a fork's copy of its source's steps: the
// source made and paid for those calls). Pure.
import type { Event, VerificationResult } from './schema';

export interface UsageTotals {
  /** Model calls made. */
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Calls whose endpoint sent no usage (their tokens are estimates). */
  estimatedCalls: number;
  /** US dollars of the calls that had a price. */
  costUsd: number;
  /** Calls without a price: the cost is unknown for them (costUsd covers the others). */
  unpricedCalls: number;
}

export const emptyUsage = (): UsageTotals => ({
  calls: 0,
  promptTokens: 0,
  cachedTokens: 0,
  completionTokens: 0,
  reasoningTokens: 0,
  estimatedCalls: 0,
  costUsd: 0,
  unpricedCalls: 0,
});

type Usage = {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  reasoning_tokens?: unknown;
  cached_tokens?: unknown;
  estimated?: unknown;
  cost_usd?: unknown;
};

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Adds one call's usage to `t`. */
export function addUsage(t: UsageTotals, u: Usage): void {
  t.calls += 1;
  t.promptTokens += num(u.prompt_tokens);
  t.completionTokens += num(u.completion_tokens);
  t.reasoningTokens += num(u.reasoning_tokens);
  t.cachedTokens += num(u.cached_tokens);
  if (u.estimated === true) t.estimatedCalls += 1;
  if (typeof u.cost_usd === 'number') t.costUsd += u.cost_usd;
  else t.unpricedCalls += 1;
}

/** The usage records of `tool_sub_calls` entries (a reused one's excluded). */
export function subCallsOf(list: unknown): Usage[] {
  return (Array.isArray(list) ? list : []).flatMap((c) => {
    const call = (c ?? {}) as { messages?: unknown; reused_from?: unknown };
    if (call.reused_from || !Array.isArray(call.messages)) return [];
    return call.messages.map((m) => ((m as { usage?: Usage } | null)?.usage ?? {}) as Usage);
  });
}

/** The usage records of an action's own call and of the calls its tool made (a reused one's excluded). */
export function callsOf(e: Extract<Event, { type: 'action' }>): Usage[] {
  const reused = ((e.metadata ?? {}) as { replay?: unknown }).replay !== undefined;
  const own = reused ? [] : e.llm_conversation.messages.map((m) => (m.usage ?? {}) as Usage);
  return [...own, ...subCallsOf(e.tool_sub_calls)];
}

/** The usage records of an event: an action's calls, or those a tool made after its action was recorded. */
function eventCalls(e: Event): Usage[] {
  if ((e.metadata as { inherited_from?: unknown } | undefined)?.inherited_from !== undefined) return [];
  if (e.type === 'action') return callsOf(e);
  if (e.type === 'observation' && e.observation_type === 'tool_output') {
    return subCallsOf((e.metadata as { tool_sub_calls?: unknown } | undefined)?.tool_sub_calls);
  }
  return [];
}

/** The usage records of a verification result's model calls (the LLM judge's: `metadata.model_calls`). */
function verificationCalls(v: Pick<VerificationResult, 'metadata'>): Usage[] {
  const calls = (v.metadata as { model_calls?: unknown } | undefined)?.model_calls;
  return (Array.isArray(calls) ? calls : []).map((c) => ((c as { usage?: Usage } | null)?.usage ?? {}) as Usage);
}

/**
 * A run's totals (or a part of it: the events given), with its verification results' model calls (the LLM judge's)
 * when given.
 */
export function usageTotals(
  events: readonly Event[],
  verification: Readonly<Record<string, Pick<VerificationResult, 'metadata'>>> = {},
): UsageTotals {
  const t = emptyUsage();
  for (const e of events) for (const u of eventCalls(e)) addUsage(t, u);
  for (const v of Object.values(verification)) for (const u of verificationCalls(v)) addUsage(t, u);
  return t;
}

const count = (n: number) => n.toLocaleString('en-US');

/** A cost in dollars as people read it: cents for larger sums, more digits for small ones. */
export function dollars(usd: number): string {
  if (usd === 0) return '$0';
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2)}`;
}

/** The totals in one line, e.g. `4 model calls · 12,040 prompt (2,000 cached) + 310 completion tokens · $0.0036`. */
export function usageLine(t: UsageTotals): string {
  if (t.calls === 0) return 'no model calls';
  const cached = t.cachedTokens ? ` (${count(t.cachedTokens)} cached)` : '';
  const tokens = `${count(t.promptTokens)} prompt${cached} + ${count(t.completionTokens)} completion tokens`;
  const cost =
    t.unpricedCalls === t.calls
      ? 'cost unknown (no price for its endpoint: models.<name>.price)'
      : `${dollars(t.costUsd)}${t.unpricedCalls ? ` + unknown for ${t.unpricedCalls} unpriced call(s)` : ''}`;
  const estimated = t.estimatedCalls ? ` · ${t.estimatedCalls} call(s) estimated (the endpoint sent no usage)` : '';
  return `${t.calls} model call${t.calls === 1 ? '' : 's'} · ${tokens} · ${cost}${estimated}`;
}

/** One step's figures, short, for a report's step header: `1,204 + 38 tokens · $0.0011` ('' when it made no call). */
export function stepUsageLine(t: UsageTotals): string {
  if (t.calls === 0) return '';
  const calls = t.calls > 1 ? `${t.calls} calls · ` : '';
  const cost = t.unpricedCalls === t.calls ? '' : ` · ${dollars(t.costUsd)}`;
  const estimated = t.estimatedCalls ? ' (estimated)' : '';
  return `${calls}${count(t.promptTokens)} + ${count(t.completionTokens)} tokens${estimated}${cost}`;
}
