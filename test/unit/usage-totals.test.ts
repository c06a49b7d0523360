// Specification of a run's usage totals (src/trajectory/usage.ts): every model call counts once, wherever its record
// sits: an action's conversation and tool_sub_calls, a tool output's tool_sub_calls (the desktop's grounding call),
// a verification result's model_calls (the LLM judge's); a reused action or sub-call counts nothing, nor does a fork's
// inherited step.
import { describe, expect, it } from 'vitest';
import { actionEvent, toolOutput } from '../../src/trajectory/events';
import { usageTotals } from '../../src/trajectory/usage';

const usage = (prompt: number, completion: number, cost?: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  reasoning_tokens: 0,
  ...(cost !== undefined ? { cost_usd: cost } : {}),
});
const message = (u: ReturnType<typeof usage>) => ({ raw_response: '', reasoning: '', finish_reason: 'stop', usage: u });
const subCall = (u: ReturnType<typeof usage>, reused = false) => ({
  tool: 'ground',
  model: 'm',
  messages: [message(u)],
  ...(reused ? { reused_from: 'run-1' } : {}),
});
const action = (extra: { subs?: unknown[]; reused?: boolean } = {}) =>
  actionEvent(
    1,
    {
      action_name: 'click',
      content: { action: 'click', arguments: {} },
      llm_conversation: { messages: [message(usage(100, 10, 0.001))] },
      ...(extra.subs ? { tool_sub_calls: extra.subs } : {}),
    },
    extra.reused ? { metadata: { replay: { how: 'replayed' } } } : {},
  );

describe('usageTotals', () => {
  it.each([
    ['a decision', [action()], {}, { calls: 1, promptTokens: 100, completionTokens: 10 }],
    [
      'a decision and its tool sub-call',
      [action({ subs: [subCall(usage(50, 5))] })],
      {},
      { calls: 2, promptTokens: 150 },
    ],
    [
      'a reused decision and a reused sub-call',
      [action({ reused: true, subs: [subCall(usage(50, 5), true)] })],
      {},
      { calls: 0 },
    ],
    [
      "a tool output's grounding call",
      [action(), toolOutput(1, 'a', { output: 'Clicked' }, { metadata: { tool_sub_calls: [subCall(usage(800, 6))] } })],
      {},
      { calls: 2, promptTokens: 900, completionTokens: 16, unpricedCalls: 1 },
    ],
    [
      "the judge's calls, from the verification results",
      [action()],
      { webjudge: { metadata: { model_calls: [{ stage: 'verdict', usage: usage(2000, 40, 0.01) }] } } },
      { calls: 2, promptTokens: 2100, completionTokens: 50, costUsd: 0.011, unpricedCalls: 0 },
    ],
    ['a verification without model calls (a rule check)', [], { rules: { metadata: { checks: [] } } }, { calls: 0 }],
    [
      "a fork's inherited step (its source's calls) and its own next step",
      [
        { ...action({ subs: [subCall(usage(50, 5))] }), metadata: { inherited_from: { run_id: 'src', step: 1 } } },
        {
          ...toolOutput(1, 'a', { output: 'x' }, { metadata: { tool_sub_calls: [subCall(usage(800, 6))] } }),
          metadata: { inherited_from: { run_id: 'src', step: 1 }, tool_sub_calls: [subCall(usage(800, 6))] },
        },
        action(),
      ],
      {},
      { calls: 1, promptTokens: 100 },
    ],
  ])('%s', (_what, events, verification, expected) => {
    const totals = usageTotals(events, verification);
    expect({ ...totals, costUsd: Math.round(totals.costUsd * 1e6) / 1e6 }).toMatchObject(expected);
  });
});
