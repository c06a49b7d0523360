// The activity that waits for a task run an earlier run of the evaluation started: a child is awaitable only from the
// run that started it, so after continue-as-new the evaluation waits for it here, through the client, heartbeating.
import type { Client } from '@temporalio/client';
import { connectClient } from '../../src/runtime/connect';
import type { TaskResult } from '../../src/contract/task';
import { outcomeOfResult } from '../../src/eval/records';
import type { AttemptOutcome, EvalActivities } from '../../src/eval/records';
import { outcomeOfFailure } from '../../workflows/eval-messages';
import { withHeartbeat } from '../support';
import type { ActivityDeps } from '../support';

export function createAwaitChildActivity(deps: Pick<ActivityDeps, 'config'>): Pick<EvalActivities, 'awaitEvalChild'> {
  let client: Promise<Client> | undefined;

  return {
    /** Waits for a task run started by an earlier run of the evaluation and returns how it ended. */
    async awaitEvalChild(req: { workflowId: string }): Promise<AttemptOutcome> {
      client ??= connectClient(deps.config);
      client.catch(() => (client = undefined));
      const handle = (await client).workflow.getHandle(req.workflowId);
      return withHeartbeat(async () => {
        try {
          return outcomeOfResult((await handle.result()) as TaskResult);
        } catch (err) {
          const outcome = outcomeOfFailure(err);
          // A failure that is no task outcome (the server went away mid-wait) is retried by Temporal.
          if (outcome.endReason === 'internal' && !isWorkflowFailure(err)) throw err;
          return outcome;
        }
      });
    },
  };
}

function isWorkflowFailure(err: unknown): boolean {
  return err instanceof Error && err.name === 'WorkflowFailedError';
}
