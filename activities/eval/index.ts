// The evaluation activities on the shared queue, assembled from one file per job: task-pages.ts (the task set's size
// and pages of task inputs), score.ts (scoring a finished run by its rules), judge.ts (judging it with an LLM) and
// await-child.ts (waiting for a task run an earlier run of the evaluation started). Run folders are read and written
// in the configured run store (the folder under runsDir, or S3), and so are a task set named `store:KEY`
// (src/eval/task-source.ts) and best of N's record and task set (branches.ts); the three that read the task set
// share one reader (task-reader.ts) and its cache.
import { openRunStore } from '../../src/trajectory/open-store';
import type { EvalActivities } from '../../src/eval/records';
import type { BranchActivities } from '../../src/eval/branches';
import { RunFiles } from '../support';
import type { ActivityDeps } from '../support';
import { createAwaitChildActivity } from './await-child';
import { createBranchActivities } from './branches';
import { createJudgeActivity } from './judge';
import { createScoreActivity } from './score';
import { createTaskPageActivities } from './task-pages';
import { createTaskReader } from './task-reader';

export { judgedRun, judgeEndpoint } from './judge';
export { RULES_VERIFIER } from './score';
export { taskSpec } from './task-pages';

/**
 * The evaluation's activities. `files` is the run store they read and write run folders in (the catalog may pass the
 * one its other activities share; default: one opened on the configured store for this activities object).
 */
export function createEvalActivities(
  deps: Pick<ActivityDeps, 'config'>,
  files: RunFiles = new RunFiles(deps.config.runsDir, openRunStore(deps.config)),
): EvalActivities & BranchActivities {
  const reader = createTaskReader(deps, files);
  return {
    ...createTaskPageActivities(reader),
    ...createScoreActivity(deps, files, reader),
    ...createJudgeActivity(deps, files, reader),
    ...createAwaitChildActivity(deps),
    ...createBranchActivities(files),
  };
}
