// A task's budgets (cost in US dollars, tokens, working minutes) and the questions the runtime asks when one is
// reached or the agent repeats itself on an unchanged page: what a reply to them may be (`continue`, an amount,
// `stop`) and what it does. Pure: the workflow's validator and loop, the client and the tests use it.
import { BUDGET_KINDS } from '../contract/task';
import type { BudgetKind, LimitQuestion } from '../contract/task';
import { dollars } from '../trajectory/usage';

/** Limits per kind (absent: no limit of that kind). */
export type BudgetLimits = Partial<Record<BudgetKind, number>>;

/** What a task has spent so far: model cost, tokens (prompt + completion), working milliseconds. */
export interface Spent {
  costUsd: number;
  tokens: number;
  workMs: number;
}

/** The amount of `kind` spent, in the unit its limit is written in. */
export function spentOf(kind: BudgetKind, spent: Spent): number {
  if (kind === 'cost') return spent.costUsd;
  return kind === 'tokens' ? spent.tokens : spent.workMs / 60_000;
}

/** The first budget used up, if any. */
export function reachedBudget(limits: BudgetLimits, spent: Spent): BudgetKind | undefined {
  return BUDGET_KINDS.find((kind) => limits[kind] !== undefined && spentOf(kind, spent) >= (limits[kind] as number));
}

/** An amount as the question writes it: `$0.50`, `20,000 tokens`, `5 minutes`. */
export function amountText(kind: BudgetKind, amount: number): string {
  if (kind === 'cost') return amount >= 0.01 ? `$${amount.toFixed(2)}` : dollars(amount);
  const n = kind === 'tokens' ? Math.round(amount).toLocaleString('en-US') : String(Math.round(amount * 100) / 100);
  return `${n} ${kind}`;
}

const EXAMPLE: Record<BudgetKind, string> = { cost: '`$1`', tokens: '`50000 tokens`', minutes: '`10 minutes`' };

/** The question when `kind`'s budget is used up, e.g. "I have spent $0.50 of $0.50; 12 steps so far; continue …?". */
export function budgetQuestion(kind: BudgetKind, limit: number, spent: Spent, steps: number, raiseBy: number): string {
  return (
    `I have spent ${amountText(kind, spentOf(kind, spent))} of ${amountText(kind, limit)}; ${steps} step` +
    `${steps === 1 ? '' : 's'} so far; continue with another ${amountText(kind, raiseBy)}? ` +
    `Reply \`continue\`, an amount (e.g. ${EXAMPLE[kind]}), or \`stop\`.`
  );
}

/** The question when the agent goes on repeating an action on a page it does not change. */
export function loopQuestion(action: string, times: number): string {
  return (
    `I have done the same thing (${action}) ${times} times in a row and the page did not change; ` +
    'I may be stuck. Reply `continue` to let me go on, or `stop` to end the task.'
  );
}

/** The note the model reads with its next observation when it repeats an action on an unchanged page. */
export function loopNote(action: string, times: number): string {
  return (
    `Note: you have taken the same action (${action}) ${times} times in a row and the page did not change. ` +
    'Repeating it will not help: try something different, or ask the user if you are stuck.'
  );
}

/** What a reply to a limit question does: go on (raising a budget by `raise`), or end the task. */
export type LimitReply = { kind: 'continue'; raise?: number } | { kind: 'stop' };

/** An amount of `kind` as a person writes it (`$1`, `1.5 usd`; `50000`, `50k tokens`; `10`, `10 min`), or NaN. */
function amountOf(kind: BudgetKind, text: string): number {
  const t = text.replace(/,/g, '');
  if (kind === 'cost') {
    const m = /^(?:\$\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:\$|usd|dollars?)?)$/.exec(t);
    return m ? Number(m[1] ?? m[2]) : NaN;
  }
  if (kind === 'tokens') {
    const m = /^(\d+(?:\.\d+)?)\s*(k|m)?\s*(?:tokens?)?$/.exec(t);
    return m ? Number(m[1]) * (m[2] === 'k' ? 1e3 : m[2] === 'm' ? 1e6 : 1) : NaN;
  }
  const m = /^(\d+(?:\.\d+)?)\s*(?:m|min|mins|minutes?)?$/.exec(t);
  return m ? Number(m[1]) : NaN;
}

/** Reads a reply to a limit question; `reason` is a one-line error naming what it accepts. */
export function parseLimitReply(
  raw: string,
  question: LimitQuestion,
): { ok: true; reply: LimitReply } | { ok: false; reason: string } {
  const text = raw.trim().toLowerCase().replace(/[.!]$/, '');
  if (text === 'stop') return { ok: true, reply: { kind: 'stop' } };
  if (question.kind === 'loop') {
    if (text === 'continue') return { ok: true, reply: { kind: 'continue' } };
    return { ok: false, reason: `reply \`continue\` or \`stop\` (got "${raw.trim().slice(0, 40)}")` };
  }
  const { budget, raiseBy } = question;
  if (text === 'continue') return { ok: true, reply: { kind: 'continue', raise: raiseBy } };
  const value = amountOf(budget, text);
  if (!(value > 0)) {
    return {
      ok: false,
      reason: `reply \`continue\`, an amount of ${budget} (e.g. ${EXAMPLE[budget]}), or \`stop\` (got "${raw.trim().slice(0, 40)}")`,
    };
  }
  return { ok: true, reply: { kind: 'continue', raise: value } };
}

/** Why a cost limit may not be set (above the worker's cap), or undefined when it may. */
export function costCapError(limit: number, cap: number | undefined, what: string): string | undefined {
  if (cap === undefined || limit <= cap + 1e-9) return undefined;
  return `${what} would be ${amountText('cost', limit)}, above this worker's cap of ${amountText('cost', cap)} (budget.costCap)`;
}

/** The budgets in force and what is spent of each, e.g. `$0.50 of $1.00 · 2.5 minutes of 10 minutes`; '' for none. */
export function budgetLine(limits: BudgetLimits, spent: Spent): string {
  return BUDGET_KINDS.filter((kind) => limits[kind] !== undefined)
    .map((kind) => `${amountText(kind, spentOf(kind, spent))} of ${amountText(kind, limits[kind] as number)}`)
    .join(' · ');
}
