// The task workflow: parses its input, wires the state's handlers, runs the loop (workflows/agent-loop.ts: observe →
// decide → act per step, the stops in agent-stops.ts, durable waits for the user's reply, recovery from a lost worker,
// cancellation) and continues as new when the loop says so. Wiring only. State and handlers live in task-state.ts,
// the activity proxies and their retry policies in activity-proxies.ts. Deterministic: only @temporalio/workflow and
// pure modules.
import { ApplicationFailure, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { TaskInputSchema } from '../src/contract/task';
import type { TaskInput, TaskInputArgs, TaskResult } from '../src/contract/task';
import { AgentLoop } from './agent-loop';
import type { LoopEnd } from './agent-loop';
import { AgentTask } from './task-state';
import type { CarriedState } from './task-state';

export type { CarriedState };
export { CONTROL_PATCH, FOLD_OBSERVE_PATCH, HOLD_SESSION_PATCH, OPEN_QUEUE_PATCH } from './agent-loop';
export { LIMITS_PATCH } from './task-limits';

function validateInput(raw: TaskInputArgs): TaskInput {
  const parsed = TaskInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
    const message = `invalid task input: ${issues}`;
    const result: TaskResult = { status: 'failed', endReason: 'input', answer: null, steps: 0, error: message };
    throw ApplicationFailure.create({ message, type: 'InvalidTaskInput', nonRetryable: true, details: [result] });
  }
  // A scheduled run's id is the one its schedule gave it (`<schedule>-<scheduled time>`): the input, the same for
  // every run, names only the schedule.
  return parsed.data.schedule ? { ...parsed.data, runId: workflowInfo().workflowId } : parsed.data;
}

export async function agentTask(raw: TaskInputArgs, carried?: CarriedState): Promise<TaskResult> {
  const input = validateInput(raw);
  const task = new AgentTask(input, carried);
  task.installHandlers();
  const loop = new AgentLoop(task, Boolean(carried));
  let end: LoopEnd;
  try {
    end = await loop.run();
  } catch (err) {
    throw await loop.endOnError(err);
  }
  if ('carry' in end) return continueAsNew<typeof agentTask>(raw, end.carry);
  return end.result;
}
