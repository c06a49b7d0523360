// The long task both the step and the history sections read: one workflow run of many clicks and scrolls on the
// static hotel home page, through the real workflow on the dev server (which suggests continue-as-new early, see
// SUGGEST_CAN_EVENTS), with its history chain fetched once it has completed.
import type { TaskResult } from '../../src/contract/task';
import type { Bench } from '../context';
import { continuedAfterSteps, fetchChain } from '../history';
import type { RunHistory } from '../history';
import { stepEntries, writeScript } from '../scripts';

export const LONG_STEPS = 24;

export interface LongRun {
  taskId: string;
  result: TaskResult;
  runs: RunHistory[];
  /** For each run that continued as new: the last step it ran. */
  continuedAfterSteps: number[];
  wallMs: number;
}

const cache = new WeakMap<Bench, Promise<LongRun>>();

/** The long task the step and history sections share (run once per benchmark). */
export function longWorkflowRun(b: Bench): Promise<LongRun> {
  let run = cache.get(b);
  if (!run) {
    run = runLongTask(b);
    cache.set(b, run);
  }
  return run;
}

/** Runs a new long task (the step section's repeats run one each). */
export async function runLongTask(b: Bench): Promise<LongRun> {
  const script = writeScript(b.scriptsDir, `steps-${LONG_STEPS}`, stepEntries(LONG_STEPS));
  const { client } = await b.temporal();
  const taskId = `long-${Date.now().toString(36)}`;
  b.log(`[bench] workflow: ${LONG_STEPS}-step task on the dev server (${taskId})`);
  const began = Date.now();
  const handle = await b.startTask({ taskId, script });
  const result = (await handle.result()) as TaskResult;
  const wallMs = Date.now() - began;
  const runs = await fetchChain(client, taskId, handle.firstExecutionRunId);
  return { taskId, result, runs, continuedAfterSteps: continuedAfterSteps(runs), wallMs };
}
