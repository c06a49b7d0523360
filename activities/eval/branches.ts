// Best of N's activities (src/eval/branches.ts): the branches' task written as a one-task task set in the run store
// under the parent's id (the evaluation's scoring and judging activities read it from there, as any `store:KEY` set,
// on whichever worker runs them), and the parent's record beside it (what `cua show` and `cua view` read).
import { BRANCH_TASK_FILE, BRANCHES_FILE, branchTaskLine } from '../../src/eval/branches';
import type { BranchActivities } from '../../src/eval/branches';
import { STORE_SOURCE_PREFIX } from '../../src/eval/task-source';
import type { RunFiles } from '../support';

export function createBranchActivities(files: RunFiles): BranchActivities {
  return {
    async prepareBranches({ id, instruction, task }) {
      const key = `${id}/${BRANCH_TASK_FILE}`;
      await files.store.writeAtomic(key, `${branchTaskLine(instruction, task)}\n`);
      return { path: `${STORE_SOURCE_PREFIX}${key}`, format: 'local' };
    },
    async recordBranches(record) {
      await files.store.writeAtomic(`${record.id}/${BRANCHES_FILE}`, `${JSON.stringify(record, null, 2)}\n`);
    },
  };
}
