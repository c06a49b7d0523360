// Following a running evaluation from `cua eval`: a progress line whenever its figures change, until its result
// (waiting on through a lost connection, as while its server restarts).
import { WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { evalProgressQuery } from '../../workflows/eval-messages';
import type { EvalProgress, EvaluationResult } from '../../src/eval/records';
import type { evaluation } from '../../workflows/evaluation';

type Print = (line: string) => void;

function progressLine(p: EvalProgress): string {
  const rate = p.passRate === null ? '–' : `${Math.round(p.passRate * 100)}%`;
  return (
    `[eval] ${p.done}/${p.total} done · ${p.running} running · ${p.left} left · ` +
    `passed ${p.passed}/${p.scored} scored (${rate}) · aborted ${p.aborted}`
  );
}

/** The evaluation's result; waiting goes on through a lost connection (a restarting server), not through a failure. */
async function resultOf(handle: WorkflowHandle<typeof evaluation>): Promise<EvaluationResult> {
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      if (err instanceof WorkflowFailedError) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Waits for the evaluation's result, printing a progress line whenever the figures change. */
export async function follow(
  handle: WorkflowHandle<typeof evaluation>,
  print: Print,
  pollMs: number,
): Promise<EvaluationResult> {
  let last = '';
  let done = false;
  const result = resultOf(handle).finally(() => (done = true));
  result.catch(() => undefined);
  while (!done) {
    try {
      const line = progressLine(await handle.query(evalProgressQuery));
      if (line !== last) print((last = line));
    } catch {
      // Between runs (continue-as-new) or while the server restarts a query can fail; the next poll will do.
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, pollMs))]);
  }
  const final = await result;
  const line = progressLine(final.progress);
  if (line !== last) print(line);
  return final;
}
