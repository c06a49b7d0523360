// What a task spends and when that asks the user: its budgets (cost, tokens, working minutes) from the task or the
// worker's defaults, the usage each step adds, and loop detection (the same action on an unchanged page, several
// times in a row). The bookkeeping lives in the carried state, so it survives worker restarts and continue-as-new;
// the loop (agent-loop.ts) asks the questions. Deterministic and pure apart from the carried state it updates.
import type { DecideCall, StepUsage, StartRunResult } from '../src/contract/activities';
import type { TaskInput } from '../src/contract/task';
import { budgetQuestion, loopQuestion, reachedBudget, spentOf as budgetSpent } from '../src/agent/budget';
import type { BudgetLimits, LimitReply, Spent } from '../src/agent/budget';
import type { LimitQuestion } from '../src/contract/task';

/**
 * Patch id: budgets that ask (a runtime question when one is reached), loop detection (a screen distance activity
 * when an action repeats, a note to the model, then a question) and the CuaCost search attribute.
 */
export const LIMITS_PATCH = 'budgets-loops-cost';

/** What the carried state keeps about spending and repeating. */
export interface LimitsState {
  spent?: Spent;
  /** The budgets in force (the task's or the worker's, raised by replies). */
  limits?: BudgetLimits;
  /** The worker's cap on a cost limit (config budget.costCap). */
  costCap?: number;
  /** The last step's action and page, and how many steps in a row took it on an unchanged page. */
  loop?: { key: string; summary: string; url: string; shot: string; count: number; told: boolean };
}

/** The budgets in force at the start: the task's own, else the worker's defaults; and the worker's cap. */
export function startLimits(state: LimitsState, input: TaskInput, started: StartRunResult | undefined): void {
  const worker = started?.budget;
  const own = input.budget;
  const limits: BudgetLimits = {};
  const cost = own?.maxCost ?? worker?.maxCost;
  const tokens = own?.maxTokens ?? worker?.maxTokens;
  const minutes = own?.maxMinutes ?? worker?.maxMinutes;
  if (cost !== undefined) limits.cost = cost;
  if (tokens !== undefined) limits.tokens = tokens;
  if (minutes !== undefined) limits.minutes = minutes;
  state.limits = limits;
  if (worker?.costCap !== undefined) state.costCap = worker.costCap;
}

export function spentOf(state: LimitsState): Spent {
  return (state.spent ??= { costUsd: 0, tokens: 0, workMs: 0 });
}

/** A step's model usage (from its decide) and working time, added to what the task spent. */
export function addSpent(state: LimitsState, usage: StepUsage | undefined, workMs = 0): void {
  const spent = spentOf(state);
  spent.costUsd += usage?.costUsd ?? 0;
  spent.tokens += usage?.tokens ?? 0;
  spent.workMs += workMs;
}

/** The question to ask when a budget is used up (the first one, in the order cost, tokens, minutes). */
export function budgetReached(
  state: LimitsState,
  input: TaskInput,
  steps: number,
): { text: string; expects: LimitQuestion } | undefined {
  const limits = state.limits ?? {};
  const kind = reachedBudget(limits, spentOf(state));
  if (kind === undefined) return undefined;
  const limit = limits[kind] as number;
  // `continue` raises by the task's first limit again (else by the one in force).
  const first = { cost: input.budget?.maxCost, tokens: input.budget?.maxTokens, minutes: input.budget?.maxMinutes };
  const raiseBy = first[kind] ?? limit;
  return {
    text: budgetQuestion(kind, limit, spentOf(state), steps, raiseBy),
    expects: { kind: 'budget', budget: kind, limit, raiseBy },
  };
}

/** A reply the validator accepted: raises the budget it is about (true), or says the task ends (false). */
export function applyLimitReply(state: LimitsState, expects: LimitQuestion, reply: LimitReply): boolean {
  if (reply.kind === 'stop') return false;
  if (expects.kind === 'loop') state.loop = undefined;
  else {
    const limits = (state.limits ??= {});
    limits[expects.budget] = raisedLimit(state, expects, reply.raise);
  }
  return true;
}

/**
 * The limit a reply to a budget question sets: another `raise` (absent: the question's own amount) on top of the
 * limit, or of what is spent when the last step went past it.
 */
export function raisedLimit(
  state: LimitsState,
  expects: Extract<LimitQuestion, { kind: 'budget' }>,
  raise: number | undefined,
): number {
  const kind = expects.budget;
  const base = Math.max(state.limits?.[kind] ?? 0, expects.limit, budgetSpent(kind, spentOf(state)));
  return base + (raise ?? expects.raiseBy);
}

/** A step's decision as loop detection compares it: its actions' names and arguments (no thoughts). */
export function loopKey(calls: readonly DecideCall[]): string {
  return JSON.stringify(calls.map((c) => c.action));
}

/** What loop detection does after a step: nothing, tell the model (the count reached `repeats`), or ask the user. */
export type LoopVerdict = 'none' | 'tell' | 'ask';

/**
 * Counts the step: `samePage` says whether the page was the one the previous (same) action was taken on. The first
 * time the count reaches `repeats` the model is told; a further repeat asks the user.
 */
export function countRepeat(
  state: LimitsState,
  step: { key: string; summary: string; url: string; shot: string },
  samePage: boolean,
  repeats: number,
): LoopVerdict {
  const prev = state.loop;
  const count = samePage && prev ? prev.count + 1 : 1;
  const told = samePage && prev ? prev.told : false;
  state.loop = { ...step, count, told };
  if (count < repeats) return 'none';
  if (!told) {
    state.loop.told = true;
    return 'tell';
  }
  return 'ask';
}

/** Whether the step repeats the previous one's action on its URL (then the screens are compared). */
export function repeatsLast(state: LimitsState, key: string, url: string): boolean {
  return state.loop !== undefined && state.loop.key === key && state.loop.url === url;
}

export { loopQuestion };
