// An adoption's start (`cua adopt <folder>`, issue 28), on the shared queue: the task takes over the run folder its
// starter imported into the run store under the task's id (src/trajectory/fara-folder.ts), a folder the original
// (Fara) wrote. It counts the folder's steps and finds the question it waits on; the workflow waits for that reply,
// or goes on at the next step. Only the run store's copy is read, never the path the starter named.
import { pendingQuestion, stepsOf } from '../src/trajectory/fara-events';
import { TASK_FILE } from '../src/trajectory/layout';
import { loadStatus } from '../src/trajectory/reader';
import type { TaskInput } from '../src/contract/task';
import type { StartAdoptResult } from '../src/contract/activities';
import { checkEndpointFits, startFactsOf, openRunFolder } from './run';
import { nonRetryable } from './support';
import type { ActivityDeps, RunFiles } from './support';

export function createAdoptActivity(deps: ActivityDeps, files: RunFiles) {
  return {
    /**
     * Opens the imported folder (recording the task input beside it), and returns its steps and the question it waits
     * on. A folder that was running is marked running under this task. Idempotent: a retry finds the same.
     */
    async startAdopt(input: TaskInput): Promise<StartAdoptResult> {
      const { runId: taskId } = input;
      if (!input.adoptOf)
        nonRetryable(new Error(`task ${taskId} adopts no folder (input.adoptOf)`), 'InvalidTaskInput');
      if (!(await files.store.exists(`${taskId}/${TASK_FILE}`))) {
        const where = files.store.describe(taskId);
        const why = `no imported run folder '${taskId}' in the run store (${where}): \`cua adopt\` imports it before the task starts`;
        nonRetryable(new Error(why), 'InvalidTaskInput');
      }
      const w = await openRunFolder(files, input);
      const events = await w.events();
      const status = await loadStatus(files.store, taskId);
      const question = pendingQuestion(events, status.fileStatus, status.outcome);
      if (question === null) await w.writeStatus('running', null);
      await checkEndpointFits(deps, input);
      return { steps: stepsOf(events), ...(question === null ? {} : { question }), ...startFactsOf(deps, input) };
    },
  };
}
