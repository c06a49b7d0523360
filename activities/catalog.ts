// The activities, built by createActivities(deps) so the worker and tests inject the browser pool, the config and
// this worker's own queue name. Each is a thin shell over src/: run.ts (the run folder), session.ts (browsers),
// decide.ts (the model call).
import { createDecideActivity } from './decide';
import { createEvalActivities } from './eval';
import { createRunActivities } from './run';
import { createSessionActivities } from './session';
import { openRunStore } from '../src/trajectory/open-store';
import { RunFiles } from './support';
import type { ActivityDeps } from './support';

export type { ActivityDeps };

export function createActivities(deps: ActivityDeps) {
  const files = new RunFiles(deps.config.runsDir, openRunStore(deps.config));
  return {
    ...createRunActivities(deps, files),
    ...createSessionActivities(deps, files),
    ...createDecideActivity(deps, files),
    ...createEvalActivities(deps, files),
  };
}

export type Activities = ReturnType<typeof createActivities>;
