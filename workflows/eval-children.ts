// An evaluation's children and its task set, as the evaluation run (evaluation-run.ts) reaches them: the task set's
// size and its pages (read once, a few kept), one attempt started as a child `agentTask` and awaited, and a child an
// earlier run started, awaited by id through an activity. Deterministic.
import { ParentClosePolicy, WorkflowIdReusePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { upToLongestStoreWait } from './activity-proxies';
import type { Activities } from './activity-proxies';
import { AGENT_WORKFLOW } from '../src/contract/task';
import type { TaskInputArgs, TaskResult } from '../src/contract/task';
import { STATUS_SEARCH_ATTRIBUTE, STEP_SEARCH_ATTRIBUTE } from './messages';
import { EVALUATION_SEARCH_ATTRIBUTE, outcomeOfFailure } from './eval-messages';
import { outcomeOfResult } from '../src/eval/records';
import type { AttemptOutcome, EvalTaskSpec, EvaluationInput } from '../src/eval/records';

export const { evalTaskCount, evalTaskPage } = proxyActivities<Activities>({
  startToCloseTimeout: upToLongestStoreWait(2),
  heartbeatTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});
export const { awaitEvalChild } = proxyActivities<Activities>({
  startToCloseTimeout: '7 days',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** What the task set's activities apply to every task. */
export type TaskSetOptions = Parameters<Activities['evalTaskPage']>[0]['options'];

/** The task set's pages read so far (a few are kept): a slot's retries come back to its page, later slots move on. */
export class TaskPages {
  private readonly pages = new Map<number, Promise<EvalTaskSpec[]>>();

  constructor(
    private readonly input: EvaluationInput,
    private readonly pageSize: number,
    private readonly options: TaskSetOptions,
  ) {}

  /** The task at `index` of the task set, from its page (read once). */
  specOf(index: number): Promise<EvalTaskSpec> {
    const { pages, pageSize } = this;
    const page = Math.floor(index / pageSize);
    let p = pages.get(page);
    if (!p) {
      p = evalTaskPage({
        taskSet: this.input.taskSet,
        options: this.options,
        offset: page * pageSize,
        limit: pageSize,
      });
      pages.set(page, p);
      for (const key of pages.keys()) if (key < page - 2) pages.delete(key);
    }
    return p.then((list) => {
      const spec = list[index - page * pageSize];
      if (!spec) throw new Error(`task #${index} is missing from its page (the task set changed?)`);
      return spec;
    });
  }
}

/** One attempt to start as a child. */
export interface ChildAttempt {
  input: EvaluationInput;
  spec: EvalTaskSpec;
  taskId: string;
  trial: number;
  /** The evaluation and its tasks carry the CuaEvaluation search attribute. */
  tagRuns: boolean;
}

/**
 * Starts one attempt as a child and waits for it (`started` is called once it runs); an id started before (a
 * replayed start) is awaited by id.
 */
export async function runChild(a: ChildAttempt, started: () => void): Promise<AttemptOutcome> {
  const { input, spec, taskId, trial } = a;
  const args: TaskInputArgs = { ...spec.input, runId: taskId };
  let handle;
  try {
    handle = await startChild(AGENT_WORKFLOW, {
      workflowId: taskId,
      args: [args],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      staticSummary: `${input.evalId} · ${spec.taskId} · trial ${trial}: ${spec.input.instruction}`.slice(0, 400),
      typedSearchAttributes: a.tagRuns
        ? [
            { key: EVALUATION_SEARCH_ATTRIBUTE, value: input.evalId },
            { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
            { key: STEP_SEARCH_ATTRIBUTE, value: 0 },
          ]
        : [],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    started();
    return awaitEvalChild({ workflowId: taskId });
  }
  started();
  try {
    return outcomeOfResult((await handle.result()) as TaskResult);
  } catch (err) {
    return outcomeOfFailure(err);
  }
}
