// The trajectory viewer's view-model of a run (view.ts), built from its events, task.json and run state: the run's
// settings (run-settings.ts), its steps (decisions.ts) with their markers (markers.ts), its outcome and usage.
import { usageLine, usageTotals } from '../trajectory/usage';
import { approvalsOf } from './approvals';
import { buildSteps } from '../trajectory/steps';
import { environmentOf, screenOf } from './desktop';
import type { Size } from './markers';
import { spaceOf } from './markers';
import { decisionViews, displayValue, groupDecisions, joinStepCalls, userMessagesOf } from './decisions';
import type { DecisionContext } from './decisions';
import { profileOf, replayView, viewportOf } from './run-settings';
import type { TrajectoryView, ViewInput } from './view';

/**
 * The view of a run. `sizeOf` gives the pixel size of a run-relative screenshot (undefined when it cannot be read);
 * markers are placed on that size, or on the viewport's when unknown.
 */
export function buildTrajectoryView(run: ViewInput, sizeOf: (screenshot: string) => Size | undefined): TrajectoryView {
  const environment = environmentOf(run);
  const screen = environment === 'desktop' ? screenOf(run) : null;
  const profile = profileOf(run);
  const viewport = screen ?? viewportOf(run);
  const instruction = run.task.instruction;
  const replay = replayView(run);
  const ctx: DecisionContext = {
    profile,
    space: spaceOf(profile, viewport),
    viewport,
    screen,
    instruction,
    sizeOf,
    replay: replay !== null,
    approvals: approvalsOf(run.events, run.requestJournal),
  };
  const all = buildSteps(run.events);
  const actionSteps = all.filter((s) => s.action !== null);
  const steps = groupDecisions(joinStepCalls(decisionViews(ctx, run.events, actionSteps)));
  const tail = all.at(-1);
  return {
    taskId: run.taskId,
    instruction,
    environment,
    screen,
    startUrl: displayValue(run.task.environment_config['start_url'] ?? ''),
    profile,
    viewport,
    status: run.status,
    endReason: run.endReason ?? '',
    endDetail: run.endDetail ?? '',
    answer: run.outcome ? run.outcome.answer : null,
    output:
      run.output === undefined
        ? null
        : run.output === null
          ? { missing: run.outputError ?? 'no output' }
          : { json: JSON.stringify(run.output.value, null, 2), partial: run.output.partial },
    verification: Object.entries(run.verification).map(([name, v]) => ({
      name,
      score: v.score,
      reasoning: v.reasoning ?? '',
    })),
    warnings: run.warnings.map((w) => `${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`),
    steps,
    after: tail && tail.action === null ? userMessagesOf(tail.pre, instruction) : [],
    replay,
    usage: usageLine(usageTotals(run.events, run.verification)),
  };
}
