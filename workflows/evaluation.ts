// The evaluation workflow: one child `agentTask` per task × trial, at most `concurrency` at a time. A run that ends
// by itself is scored (an activity checks its rules and records them in its run folder); an environment error starts
// the task again under a new task id, up to `maxRetries` times, then the trial is aborted (reported, not counted).
// A run that ended with an answer and whose task is judged then goes to the LLM judge (another activity, which reads
// the screenshots from the run folder): its verdict scores a task without rule checks and is kept beside the rules'.
// Long evaluations continue-as-new: children keep running (parent-close policy ABANDON) and the next run waits for
// them by id through an activity. The task set stays on disk; only a page of task inputs is in memory at a time.
// Wiring only: the phases are EvaluationRun's (evaluation-run.ts). Deterministic: only @temporalio/workflow and pure
// modules.
import { continueAsNew, setHandler } from '@temporalio/workflow';
import { evalProgressQuery, evalRecordsQuery } from './eval-messages';
import type { EvaluationInput, EvaluationResult } from '../src/eval/records';
import { EvaluationRun } from './evaluation-run';
import type { EvaluationState } from './evaluation-run';

export type { EvaluationState };

export async function evaluation(input: EvaluationInput, carried?: EvaluationState): Promise<EvaluationResult> {
  const run = await EvaluationRun.open(input, carried);
  setHandler(evalProgressQuery, () => run.progress());
  setHandler(evalRecordsQuery, () => run.records());
  run.tag();
  const end = await run.run();
  if ('carry' in end) return continueAsNew<typeof evaluation>(input, end.carry);
  return end.result;
}
