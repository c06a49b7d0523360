// A fork (`cua fork <id> --step N`, issue 27): a new task whose run folder starts with steps 1…N of another task's
// run (finished, failed or still running) and decides step N+1 anew, in the page (or desktop home) step N left, with
// its own instruction, model or hint if given. Its input is the source's first input; the source is never changed.
// Best of N (`--branches K`) starts K such forks as the children of one parent workflow (workflows/fork-branches.ts).
import { randomBytes } from 'node:crypto';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { z } from 'zod';
import type { TaskInput } from '../src/contract/task';
import { BRANCHES_WORKFLOW, MAX_BRANCHES } from '../src/eval/branches';
import type { BranchesInput, BranchesRecord, BranchTask } from '../src/eval/branches';
import type { JudgeSettings } from '../src/eval/judge';
import { CheckSchema, pageProbesOf, TaskJudgeSchema } from '../src/eval/task-set';
import { branchesQuery } from '../workflows/eval-messages';
import { InvalidTaskInputError, TaskAlreadyExistsError, TaskError } from './errors';
import { firstInput } from './control';
import { describeTask, startTask, validateTaskInput, withCallerPolicy } from './tasks';
import type { CallerPolicy } from './tasks';
import { readForkSource } from '../activities/fork-source';
import type { RunStore } from '../src/trajectory/store';

export interface ForkOptions {
  /** The source's last step the fork keeps (a whole number ≥ 1); the fork decides the next one. */
  step: number;
  /** The fork's instruction (default: the source's). */
  instruction?: string;
  /** The model name at the source's endpoint and base URL (default: the source's model). */
  model?: string;
  /** Told to the model with the fork's first observation (recorded as that step's retry feedback). */
  hint?: string;
  /** The fork's task id (default `<source id>-fork-<N>-<random>`). */
  id?: string;
  /** A start policy the fork must keep to (the source's model, environment and steps), its URL policy added. */
  policy?: CallerPolicy;
}

/** The fork's default id: the source's, its step and 6 random hex digits (the source's cut to fit 128 characters). */
export function forkId(sourceId: string, step: number): string {
  const tail = `-fork-${step}-${randomBytes(3).toString('hex')}`;
  return `${sourceId.slice(0, 128 - tail.length)}${tail}`;
}

/**
 * Starts a fork of task `sourceId` at `opts.step`. A step that is no whole number ≥ 1 is refused before anything is
 * started (InvalidTaskInputError); a step the source's run did not finish or saved no page for is refused by the
 * fork's first activity (the fork fails with end reason `input` and that one line).
 */
export async function forkTask(
  client: Client,
  sourceId: string,
  opts: ForkOptions,
): Promise<{ id: string; input: TaskInput }> {
  const { step } = opts;
  if (!Number.isSafeInteger(step) || step < 1) {
    throw new InvalidTaskInputError('step', `must be a whole number ≥ 1; got '${String(step)}'`);
  }
  const desc = await describeTask(client.workflow.getHandle(sourceId));
  const first = await firstInput(client, sourceId);
  const forked = validateTaskInput({
    ...first,
    runId: opts.id ?? forkId(sourceId, step),
    instruction: opts.instruction ?? first.instruction,
    model: opts.model === undefined ? first.model : { ...first.model, model: opts.model },
    // The source's budget counts its inherited steps too; a fork at its last step still takes one.
    maxSteps: Math.max(first.maxSteps, Math.min(10_000, step + 1)),
    forkOf: { runId: sourceId, step, ...(opts.hint === undefined ? {} : { hint: opts.hint }) },
  });
  const input = withCallerPolicy(forked, opts.policy);
  const summary = `fork of ${sourceId} at step ${step}: ${input.instruction}`;
  await startTask(client, desc.taskQueue, input, { summary });
  return { id: input.runId, input };
}

/**
 * The source's run folder checked through `store` before a fork (or best of N) starts: a step it did not finish or
 * saved no page for is thrown (TaskError, one line); false when the store cannot be read from here (then the fork's
 * own first activity decides).
 */
export async function checkForkSource(store: () => RunStore, source: string, step: number): Promise<boolean> {
  let found: Awaited<ReturnType<typeof readForkSource>>;
  try {
    found = await readForkSource(store(), source, step);
  } catch {
    return false;
  }
  if ('refused' in found) throw new TaskError(`cannot fork ${source} at step ${step}: ${found.refused}`);
  return true;
}

/** Best of N (`cua fork <id> --step N --branches K`): K forks scored as an evaluation scores a run. */
export interface BranchOptions {
  /** The source's last step every branch keeps. */
  step: number;
  /** How many branches (1…10). */
  branches: number;
  /** The branches' instruction (default: the source's). */
  instruction?: string;
  /** Model names at the source's endpoint: branch i takes `models[(i - 1) % models.length]` (default: the source's). */
  models?: string[];
  /** Hints, taken as the models are: branch i takes `hints[(i - 1) % hints.length]`. */
  hints?: string[];
  /** Rule checks in the task-set format (CheckSchema); without any, the judge scores. */
  checks?: unknown[];
  /** The task's own judge entry and reference answer, as a task-set line writes them. */
  taskJudge?: BranchTask['judge'];
  referenceAnswer?: string;
  /** The judge's kind and endpoint (as `cua eval --judge…`). */
  judge?: JudgeSettings;
  /** Once a branch passes, cancel those still running (default: every branch runs to its end). */
  cancelRest?: boolean;
  /** The parent's id (default `<source id>-best-<N>-<random>`); branch i is `<id>-b<i>`. */
  id?: string;
}

/** The parent's default id: the source's, its step and 6 random hex digits (room left for the branches' `-bK`). */
export function branchesId(sourceId: string, step: number): string {
  const tail = `-best-${step}-${randomBytes(3).toString('hex')}`;
  return `${sourceId.slice(0, 124 - tail.length)}${tail}`;
}

/** The branches' task (what scores them), checked as a task-set line is; a bad check is an InvalidTaskInputError. */
function branchTaskOf(opts: BranchOptions): BranchTask {
  const checks = z.array(CheckSchema).safeParse(opts.checks ?? []);
  if (!checks.success) {
    const issue = checks.error.issues[0];
    throw new InvalidTaskInputError(`checks.${issue?.path.join('.') ?? ''}`, issue?.message ?? 'invalid');
  }
  const judge = opts.taskJudge === undefined ? undefined : TaskJudgeSchema.safeParse(opts.taskJudge);
  if (judge && !judge.success) throw new InvalidTaskInputError('judge', judge.error.issues[0]?.message ?? 'invalid');
  const judged = (opts.judge?.kind ?? 'auto') !== 'none' && (opts.judge?.kind !== undefined || judge !== undefined);
  if (checks.data.length === 0 && !judged) {
    throw new InvalidTaskInputError(
      'checks',
      'best of N needs checks (--checks FILE) or a judge (--judge webjudge|rubric): nothing else tells the branches apart',
    );
  }
  return {
    checks: checks.data,
    ...(judge ? { judge: judge.data } : {}),
    ...(opts.referenceAnswer !== undefined ? { referenceAnswer: opts.referenceAnswer } : {}),
  };
}

/**
 * Starts best of N: a parent workflow (`forkBranches`) whose K children are forks of `sourceId` at `opts.step`, each
 * scored when it ends; the parent's result (and its `branches` query, and `<id>/branches.json` in the run store) names
 * the winner. Refused before anything starts: a step or a branch count out of range, bad checks, nothing to score by.
 */
export async function forkBranchesOf(
  client: Client,
  sourceId: string,
  opts: BranchOptions,
): Promise<{ id: string; branches: string[]; input: BranchesInput }> {
  const { step, branches: count } = opts;
  if (!Number.isSafeInteger(step) || step < 1) {
    throw new InvalidTaskInputError('step', `must be a whole number ≥ 1; got '${String(step)}'`);
  }
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_BRANCHES) {
    throw new InvalidTaskInputError('branches', `must be a whole number from 1 to ${MAX_BRANCHES}; got '${count}'`);
  }
  const task = branchTaskOf(opts);
  const id = opts.id ?? branchesId(sourceId, step);
  if (id.length > 124) throw new InvalidTaskInputError('id', 'at most 124 characters (the branches add -bK)');
  const desc = await describeTask(client.workflow.getHandle(sourceId));
  const first = await firstInput(client, sourceId);
  const instruction = opts.instruction ?? first.instruction;
  const probes = [...new Set([...(first.finalPageProbes ?? []), ...pageProbesOf(task.checks)])];
  const pick = <T>(list: readonly T[] | undefined, i: number) => (list?.length ? list[i % list.length] : undefined);
  const branches = Array.from({ length: count }, (_, i) => {
    const model = pick(opts.models, i);
    const hint = pick(opts.hints, i);
    return validateTaskInput({
      ...first,
      runId: `${id}-b${i + 1}`,
      instruction,
      model: model === undefined ? first.model : { ...first.model, model },
      maxSteps: Math.max(first.maxSteps, Math.min(10_000, step + 1)),
      ...(probes.length ? { finalPageProbes: probes } : {}),
      forkOf: {
        runId: sourceId,
        step,
        ...(hint === undefined ? {} : { hint }),
        branch: { parent: id, index: i + 1, of: count },
      },
    });
  });
  const input: BranchesInput = {
    id,
    source: { runId: sourceId, step },
    instruction,
    branches,
    task,
    ...(opts.judge ? { judge: opts.judge } : {}),
    ...(opts.cancelRest ? { cancelRest: true } : {}),
  };
  try {
    await client.workflow.start(BRANCHES_WORKFLOW, {
      taskQueue: desc.taskQueue,
      workflowId: id,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      staticSummary: `best of ${count}: forks of ${sourceId} at step ${step}: ${instruction}`.slice(0, 400),
      memo: { instruction: instruction.slice(0, 400), forkOf: { runId: sourceId, step }, branches: count },
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new TaskAlreadyExistsError(id);
    throw err;
  }
  return { id, branches: branches.map((b) => b.runId), input };
}

/** Best of N's record: live from its workflow's query while it runs, else its result. */
export async function branchesRecord(client: Client, id: string): Promise<BranchesRecord> {
  const handle = client.workflow.getHandle(id);
  const desc = await describeTask(handle);
  if (desc.type !== BRANCHES_WORKFLOW) throw new TaskError(`${id} is no best of N (its workflow is ${desc.type})`);
  if (desc.status.name === 'RUNNING') return handle.query(branchesQuery);
  return (await handle.result()) as BranchesRecord;
}
