// What each task of the shipped local task set (eval/tasks/local.jsonl) is known to score with its scripted model,
// shared by the evaluation's integration tests.
import type { EvalResultsFile } from '../../src/eval/results';

/** What each shipped task's script is known to do. */
export const EXPECTED: Record<string, 'pass' | 'fail' | 'aborted'> = {
  'fx-lisbon-price': 'pass',
  'fx-alfama-price': 'pass',
  'fx-porto-price': 'pass',
  'fx-approx-price': 'pass',
  'fx-book-harbor': 'pass',
  'fx-wrong-price': 'fail',
  'fx-wrong-page': 'fail',
  'fx-out-of-steps': 'fail',
  'fx-garbage': 'fail',
  'fx-flaky-endpoint': 'pass',
  'fx-dead-endpoint': 'aborted',
  'demo-site-name': 'pass',
  'demo-booking': 'pass',
  'demo-no-booking': 'fail',
};

export function verdicts(results: EvalResultsFile): Record<string, string> {
  return Object.fromEntries(
    results.tasks.map((t) => {
      const r = t.trials[0];
      return [t.taskId, r?.outcome === 'aborted' ? 'aborted' : r?.score === 1 ? 'pass' : 'fail'];
    }),
  );
}
