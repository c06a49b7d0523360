// Best of N (`cua fork <id> --step N --branches K`, issue 27): K forks of one run at one step, run side by side as
// child tasks of one parent workflow, each scored like an evaluation's run (rule checks in the task-set format, or
// the LLM judge), the best one reported. This file is the parent's input and record between the client, the workflow
// and its activities, and the pure choice of the winner. Pure.
import type { TaskInputArgs } from '../contract/task';
import type { z } from 'zod';
import type { JudgeSettings } from './judge';
import type { TaskSetRef } from './records';
import type { Check, TaskJudgeSchema } from './task-set';

export const BRANCHES_WORKFLOW = 'forkBranches';

/** The parent's record in the run store, `<parent id>/branches.json` (read by `cua show` and `cua view`). */
export const BRANCHES_FILE = 'branches.json';
/** The branches' task as a one-task task set in the run store, `<parent id>/branch-task.jsonl` (what scoring reads). */
export const BRANCH_TASK_FILE = 'branch-task.jsonl';

/** At most this many branches per parent. */
export const MAX_BRANCHES = 10;

/** How a branch is scored: the task-set task the scoring activities read (its checks, judge, reference answer). */
export interface BranchTask {
  /** Rule checks in the task-set format (src/eval/task-set.ts CheckSchema); empty: the judge scores. */
  checks: Check[];
  /** The task's own judge entry, as the task-set format writes it (`"webjudge"`, or `{ kind, model, rubric }`). */
  judge?: z.infer<typeof TaskJudgeSchema>;
  /** What the judge compares the answer with (`reference_answer`). */
  referenceAnswer?: string;
}

export interface BranchesInput {
  /** The parent's workflow id (also the folder of its record in the run store). */
  id: string;
  /**
   * The source task's id and the step forked at. `runId`: wire name (workflow input, branches.json, the query), kept
   * so recorded histories replay and records still read.
   */
  source: { runId: string; step: number };
  /** The forks' instruction (the source's, unless the forks were given another). */
  instruction: string;
  /** One fork input per branch, in branch order (each with its own task id and `forkOf`). */
  branches: TaskInputArgs[];
  task: BranchTask;
  /** The judge's kind and endpoint (as `cua eval --judge…`); absent: `auto`. */
  judge?: JudgeSettings;
  /** Once a branch passes, cancel the branches still running (default: let every branch run to its end). */
  cancelRest?: boolean;
}

export type BranchState = 'running' | 'scoring' | 'done' | 'cancelled';

/** One branch as the parent records it. */
export interface BranchRecord {
  /** 1…K. */
  index: number;
  /** The branch's task id; wire name (branches.json, the query), kept so records still read. */
  runId: string;
  model: string | null;
  hint: string | null;
  state: BranchState;
  endReason: string | null;
  steps: number | null;
  answer: string | null;
  /** 1 passed, 0 failed, null not scored (cancelled, aborted, or nothing to score by). */
  score: number | null;
  scoredBy: 'rules' | 'judge' | null;
  reasoning: string | null;
}

/** The parent's record (branches.json) and its result. */
export interface BranchesRecord {
  id: string;
  /** As BranchesInput.source (`runId`: wire name). */
  source: { runId: string; step: number };
  instruction: string;
  cancelRest: boolean;
  state: 'running' | 'done';
  branches: BranchRecord[];
  /** The winner's task id once one is known (the best score, then the fewest steps, then the first branch). */
  winner: string | null;
  /** Why this one won, or why none did. */
  verdict: string;
}

/** The branches' task as a line of a local task set (what the scoring activities read back through a task reader). */
export function branchTaskLine(instruction: string, task: BranchTask): string {
  return JSON.stringify({
    id: 'branch',
    instruction,
    checks: task.checks,
    ...(task.judge !== undefined ? { judge: task.judge } : {}),
    ...(task.referenceAnswer !== undefined ? { reference_answer: task.referenceAnswer } : {}),
  });
}

/** Whether a score is a pass (as the evaluation counts it). */
export const passes = (score: number | null): boolean => score !== null && score >= 0.5;

/**
 * The winner among the scored branches: the highest score that passes, then the fewest steps, then the lowest index;
 * none when no branch passed.
 */
export function pickWinner(branches: readonly BranchRecord[]): BranchRecord | null {
  const passed = branches.filter((b) => b.state === 'done' && passes(b.score));
  passed.sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || (a.steps ?? 0) - (b.steps ?? 0) || a.index - b.index);
  return passed[0] ?? null;
}

/** The verdict line: who won and why, or why none did. */
export function verdictOf(branches: readonly BranchRecord[], done: boolean): string {
  const winner = pickWinner(branches);
  const total = branches.length;
  const passed = branches.filter((b) => b.state === 'done' && passes(b.score)).length;
  if (winner) {
    const by = winner.scoredBy === 'judge' ? 'the judge' : 'its checks';
    const others = passed > 1 ? ` (${passed} of ${total} passed; the fewest steps wins a tie)` : '';
    return `branch ${winner.index} (${winner.runId}) passes ${by} in ${winner.steps ?? '?'} steps${others}`;
  }
  if (!done)
    return `${branches.filter((b) => b.state === 'running' || b.state === 'scoring').length} of ${total} running`;
  const unscored = branches.filter((b) => b.score === null).length;
  return `no branch passed (${total - unscored} scored, ${unscored} not scored)`;
}

/** The parent's activities (activities/eval/branches.ts): its task set and its record in the run store. */
export interface BranchActivities {
  /** Writes the branches' task as a one-task set in the run store; returns its reference for the scoring activities. */
  prepareBranches(req: { id: string; instruction: string; task: BranchTask }): Promise<TaskSetRef>;
  /** Writes the parent's record (branches.json). */
  recordBranches(record: BranchesRecord): Promise<void>;
}
