// The task's structured output (docs/output.md): a task with an output schema that ends with its answer, or at its
// step or cost budget (then `partial`), makes one extraction activity call before its end is recorded; the output (or
// why there is none) goes into the result, status.json and the status query. A task that fails has no output.
// Deterministic: only @temporalio/workflow and pure modules.
import { isCancellation, patched } from '@temporalio/workflow';
import type { EndReason } from '../../src/contract/task';
import { addSpent } from '../task-limits';
import type { TaskContext } from './context';

/**
 * Patch id: the extraction call at a task's end. Only tasks with an output schema make it, and no history recorded
 * before it has one; the patch keeps that so for any history.
 */
export const OUTPUT_PATCH = 'structured-output';

/** The ends that still extract an output, and whether it is partial (a budget stopped the work). */
const EXTRACTING_ENDS: Partial<Record<EndReason, { partial: boolean }>> = {
  complete: { partial: false },
  max_rounds: { partial: true },
  budget: { partial: true },
};

/** Extracts the task's output when its schema and its end call for one; sets the task's `output`/`outputError`. */
export async function extractOutput(ctx: TaskContext, endReason: EndReason): Promise<void> {
  const { input, task, state, proxies } = ctx;
  const end = EXTRACTING_ENDS[endReason];
  if (!input.outputSchema || !end || !patched(OUTPUT_PATCH)) return;
  try {
    const extracted = await proxies.model('extract output').extractOutput({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      answer: task.answer,
      partial: end.partial,
    });
    addSpent(state, extracted.usage);
    task.output = extracted.output;
    task.outputError = extracted.error ?? null;
  } catch (err) {
    // The task keeps its answer: a failed extraction leaves it without an output, saying why.
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    task.output = null;
    task.outputError = `the extraction failed: ${cause.split('\n')[0] ?? cause}`;
  }
}
