// Replies to the runtime's budget and loop questions (src/agent/budget.ts): what each accepts, what it raises by, and
// the one-line error for anything else; the question's wording and the worker's cost cap.
import { describe, expect, it } from 'vitest';
import { budgetLine, budgetQuestion, costCapError, parseLimitReply, reachedBudget } from '../../src/agent/budget';
import type { LimitQuestion } from '../../src/contract/task';

const cost: LimitQuestion = { kind: 'budget', budget: 'cost', limit: 0.5, raiseBy: 0.5 };
const tokens: LimitQuestion = { kind: 'budget', budget: 'tokens', limit: 10_000, raiseBy: 10_000 };
const minutes: LimitQuestion = { kind: 'budget', budget: 'minutes', limit: 5, raiseBy: 5 };
const loop: LimitQuestion = { kind: 'loop' };

describe('a reply to a limit question', () => {
  it.each([
    [cost, 'continue', { kind: 'continue', raise: 0.5 }],
    [cost, ' Continue. ', { kind: 'continue', raise: 0.5 }],
    [cost, '$1', { kind: 'continue', raise: 1 }],
    [cost, '$ 2.50', { kind: 'continue', raise: 2.5 }],
    [cost, '0.25 usd', { kind: 'continue', raise: 0.25 }],
    [cost, 'STOP', { kind: 'stop' }],
    [tokens, '50000 tokens', { kind: 'continue', raise: 50_000 }],
    [tokens, '20k', { kind: 'continue', raise: 20_000 }],
    [tokens, '1,000', { kind: 'continue', raise: 1000 }],
    [tokens, 'continue', { kind: 'continue', raise: 10_000 }],
    [minutes, '10 minutes', { kind: 'continue', raise: 10 }],
    [minutes, '3 min', { kind: 'continue', raise: 3 }],
    [loop, 'continue', { kind: 'continue' }],
    [loop, 'stop', { kind: 'stop' }],
  ] as const)('%j: %s', (question, text, reply) => {
    expect(parseLimitReply(text, question)).toEqual({ ok: true, reply });
  });

  it.each([
    [cost, 'yes please', /^reply `continue`, an amount of cost \(e\.g\. `\$1`\), or `stop` \(got "yes please"\)$/],
    [cost, '$0', /an amount of cost/],
    [cost, '-1', /an amount of cost/],
    [tokens, '$1', /an amount of tokens \(e\.g\. `50000 tokens`\)/],
    [minutes, '10 tokens', /an amount of minutes/],
    [loop, '$1', /^reply `continue` or `stop` \(got "\$1"\)$/],
  ] as const)('refuses %j: %s', (question, text, reason) => {
    const parsed = parseLimitReply(text, question);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.reason).toMatch(reason);
      expect(parsed.reason).not.toContain('\n');
    }
  });
});

describe('budgets', () => {
  it('asks in the words of the issue', () => {
    expect(budgetQuestion('cost', 0.5, { costUsd: 0.5, tokens: 0, workMs: 0 }, 12, 0.5)).toBe(
      'I have spent $0.50 of $0.50; 12 steps so far; continue with another $0.50? ' +
        'Reply `continue`, an amount (e.g. `$1`), or `stop`.',
    );
  });

  it('shows what is spent of each budget in force (cua status)', () => {
    const spent = { costUsd: 0.5, tokens: 250_000, workMs: 150_000 };
    expect(budgetLine({ cost: 1, minutes: 10 }, spent)).toBe('$0.50 of $1.00 · 2.5 minutes of 10 minutes');
    expect(budgetLine({ tokens: 500_000 }, spent)).toBe('250,000 tokens of 500,000 tokens');
    expect(budgetLine({}, spent)).toBe('');
  });

  it('is reached at its limit, in the order cost, tokens, minutes', () => {
    const spent = { costUsd: 0.2, tokens: 5000, workMs: 120_000 };
    expect(reachedBudget({ cost: 1, tokens: 5000, minutes: 1 }, spent)).toBe('tokens');
    expect(reachedBudget({ cost: 0.2, minutes: 1 }, spent)).toBe('cost');
    expect(reachedBudget({ cost: 1, tokens: 6000, minutes: 3 }, spent)).toBeUndefined();
    expect(reachedBudget({}, spent)).toBeUndefined();
  });

  it("refuses a cost limit above the worker's cap, in one line", () => {
    expect(costCapError(2, 2, 'the cost limit')).toBeUndefined();
    expect(costCapError(2, undefined, 'the cost limit')).toBeUndefined();
    expect(costCapError(2.5, 2, 'the cost limit')).toBe(
      "the cost limit would be $2.50, above this worker's cap of $2.00 (budget.costCap)",
    );
  });
});
