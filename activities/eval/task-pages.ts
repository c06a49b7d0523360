// The activities that hand the evaluation workflow its task set in pages (its size first, then pages of task
// inputs), so the set itself never enters workflow history whole; taskSpec turns one task into its task input.
import { pageProbesOf, substituteSites, TaskSetError } from '../../src/eval/task-set';
import type { EvalTask } from '../../src/eval/task-set';
import { TaskInputSchema } from '../../src/contract/task';
import type { EvalActivities, EvalTaskSpec, SpecOptions, TaskSetRef } from '../../src/eval/records';
import { nonRetryable } from '../support';
import type { TaskReader } from './task-reader';

/** The task-input fields of a task (the workflow adds its task id); a field no task input accepts is an error. */
export function taskSpec(task: EvalTask, index: number, ref: TaskSetRef, opts: SpecOptions): EvalTaskSpec {
  const sites = ref.sites ?? {};
  const where = `task ${task.id}`;
  const baseUrl = task.model?.baseUrl ? substituteSites(task.model.baseUrl, sites, where) : undefined;
  const model = {
    endpoint: task.model?.endpoint ?? opts.model?.endpoint ?? 'default',
    ...((baseUrl ?? opts.model?.baseUrl) ? { baseUrl: baseUrl ?? opts.model?.baseUrl } : {}),
    ...((task.model?.model ?? opts.model?.model) ? { model: task.model?.model ?? opts.model?.model } : {}),
  };
  const maxSteps = task.maxSteps ?? opts.maxSteps;
  const probes = pageProbesOf(task.checks);
  const input: EvalTaskSpec['input'] = {
    ...opts.taskDefaults,
    instruction: task.instruction,
    ...(task.startUrl ? { startUrl: substituteSites(task.startUrl, sites, where) } : {}),
    ...(maxSteps ? { maxSteps } : {}),
    ...(task.autoReply ? { autoReply: task.autoReply } : {}),
    ...(probes.length ? { finalPageProbes: probes } : {}),
    ...(task.signin !== undefined ? { signin: task.signin } : {}),
    ...(task.signinRefresh ? { signinRefresh: true } : {}),
    ...(task.outputSchema ? { outputSchema: task.outputSchema } : {}),
    model,
  };
  const parsed = TaskInputSchema.safeParse({ ...input, runId: 'check' });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TaskSetError(`${where}: field '${issue?.path.join('.') || 'input'}': ${issue?.message ?? 'invalid'}`);
  }
  return { index, taskId: task.id, input };
}

export function createTaskPageActivities(reader: TaskReader): Pick<EvalActivities, 'evalTaskCount' | 'evalTaskPage'> {
  async function specs(ref: TaskSetRef, opts: SpecOptions, offset: number, limit: number): Promise<EvalTaskSpec[]> {
    const tasks = await reader.tasksOf(ref);
    try {
      return tasks.slice(offset, offset + limit).map((t, i) => taskSpec(t, offset + i, ref, opts));
    } catch (err) {
      if (err instanceof TaskSetError) nonRetryable(err);
      throw err;
    }
  }

  return {
    /** How many tasks the (filtered) set has; every task's input is checked here, so a bad one fails the start. */
    async evalTaskCount(req: { taskSet: TaskSetRef; options: SpecOptions }): Promise<number> {
      return (await specs(req.taskSet, req.options, 0, Number.MAX_SAFE_INTEGER)).length;
    },

    async evalTaskPage(req: {
      taskSet: TaskSetRef;
      options: SpecOptions;
      offset: number;
      limit: number;
    }): Promise<EvalTaskSpec[]> {
      return specs(req.taskSet, req.options, req.offset, req.limit);
    },
  };
}
