// A fork (`cua fork <id> --step N`, issue 27): a new task whose run folder starts with steps 1…N of another task's
// run (finished, failed or still running) and decides step N+1 anew, in the page (or desktop home) step N left, with
// its own instruction, model or hint if given. Its input is the source's first input; the source is never changed.
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { TaskInput } from '../src/contract/task';
import { InvalidTaskInputError } from './errors';
import { firstInput } from './control';
import { describeTask, startTask, validateTaskInput } from './tasks';

export interface ForkOptions {
  /** The source's last step the fork keeps (a whole number ≥ 1); the fork decides the next one. */
  step: number;
  /** The fork's instruction (default: the source's). */
  instruction?: string;
  /** The model name at the source's endpoint and base URL (default: the source's model). */
  model?: string;
  /** Told to the model with the fork's first observation (recorded as that step's retry feedback). */
  hint?: string;
  /** The fork's task id (default `<source id>-fork-<N>-<random>`). */
  id?: string;
}

/** The fork's default id: the source's, its step and 6 random hex digits (the source's cut to fit 128 characters). */
export function forkId(sourceId: string, step: number): string {
  const tail = `-fork-${step}-${randomBytes(3).toString('hex')}`;
  return `${sourceId.slice(0, 128 - tail.length)}${tail}`;
}

/**
 * Starts a fork of task `sourceId` at `opts.step`. A step that is no whole number ≥ 1 is refused before anything is
 * started (InvalidTaskInputError); a step the source's run did not finish or saved no page for is refused by the
 * fork's first activity (the fork fails with end reason `input` and that one line).
 */
export async function forkTask(
  client: Client,
  sourceId: string,
  opts: ForkOptions,
): Promise<{ id: string; input: TaskInput }> {
  const { step } = opts;
  if (!Number.isSafeInteger(step) || step < 1) {
    throw new InvalidTaskInputError('step', `must be a whole number ≥ 1; got '${String(step)}'`);
  }
  const desc = await describeTask(client.workflow.getHandle(sourceId));
  const first = await firstInput(client, sourceId);
  const input = validateTaskInput({
    ...first,
    runId: opts.id ?? forkId(sourceId, step),
    instruction: opts.instruction ?? first.instruction,
    model: opts.model === undefined ? first.model : { ...first.model, model: opts.model },
    // The source's budget counts its inherited steps too; a fork at its last step still takes one.
    maxSteps: Math.max(first.maxSteps, Math.min(10_000, step + 1)),
    forkOf: { runId: sourceId, step, ...(opts.hint === undefined ? {} : { hint: opts.hint }) },
  });
  const summary = `fork of ${sourceId} at step ${step}: ${input.instruction}`;
  await startTask(client, desc.taskQueue, input, { summary });
  return { id: input.runId, input };
}
