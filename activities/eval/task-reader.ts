// The evaluation activities' view of the task set: read on every call (a file, or an object in the run store:
// src/eval/task-source.ts), parsed and filtered again only when its text changed. The paging, scoring and judging
// activities of one activities object share one reader, so they share its cache.
import { createHash } from 'node:crypto';
import { filterTasks, parseTaskSet, TaskSetError } from '../../src/eval/task-set';
import type { EvalTask } from '../../src/eval/task-set';
import { readTaskSetSources, workerTaskSetFolders } from '../../src/eval/task-source';
import type { TaskSetRef } from '../../src/eval/records';
import { nonRetryable } from '../support';
import type { ActivityDeps, RunFiles } from '../support';

export interface TaskReader {
  /**
   * The filtered task set; a bad or missing set is a non-retryable TaskSetError, a store that cannot be reached is
   * retried.
   */
  tasksOf(ref: TaskSetRef): Promise<EvalTask[]>;
  /** The task at `index` of the filtered set; none there any more is a non-retryable TaskSetError. */
  taskAt(ref: TaskSetRef, index: number): Promise<EvalTask>;
}

export function createTaskReader(deps: Pick<ActivityDeps, 'config'>, files: RunFiles): TaskReader {
  const cache = new Map<string, { version: string; tasks: EvalTask[] }>();

  async function tasksOf(ref: TaskSetRef): Promise<EvalTask[]> {
    try {
      const { set, answers } = await readTaskSetSources(
        ref,
        () => files.store,
        workerTaskSetFolders(deps.config.evaluation.taskSetDirs),
      );
      const version = createHash('sha256')
        .update(set.text)
        .update('\0')
        .update(answers?.text ?? '')
        .digest('hex');
      const key = JSON.stringify([ref.path, ref.format, ref.answers, ref.filter]);
      const hit = cache.get(key);
      if (hit && hit.version === version) return hit.tasks;
      const tasks = filterTasks(parseTaskSet(set, { format: ref.format, ...(answers ? { answers } : {}) }), ref.filter);
      cache.set(key, { version, tasks });
      return tasks;
    } catch (err) {
      if (err instanceof TaskSetError) nonRetryable(err);
      throw err;
    }
  }

  async function taskAt(ref: TaskSetRef, index: number): Promise<EvalTask> {
    const task = (await tasksOf(ref))[index];
    if (!task) nonRetryable(new TaskSetError(`the task set has no task #${index} any more (was it edited?)`));
    return task;
  }

  return { tasksOf, taskAt };
}
