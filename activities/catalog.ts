// The activities, built by createActivities(deps) so the worker and tests inject the browser pool, the config and
// this worker's own queue name. Each is a thin shell over src/: run.ts (the run folder), session.ts (the sessions),
// decide.ts (the model call), the last two routed to the task's environment driver (environments/), and notify.ts
// (the webhook). Every one runs in `asActivity` (heartbeats; a run store that stayed unusable is final) and reaches
// the run store through one store per worker that waits out a full or unreachable store.
import { createAdoptActivity } from './adopt';
import { createDecideActivity } from './decide';
import { createEvalActivities } from './eval';
import { createForkActivity } from './fork';
import { createNotifyActivity } from './notify';
import { createOutputActivity } from './output';
import { createMonitorActivities } from './monitor';
import { createRunActivities } from './run';
import { createSessionActivities } from './session';
import { createSigninActivities } from './signin';
import { createEnvironments } from './environments/table';
import { openRunStore } from '../src/trajectory/open-store';
import { asActivity, RunFiles, storeWaitHooks } from './support';
import type { ActivityDeps } from './support';
import type { TaskActivities } from '../src/contract/activities';
import type { EvalActivities } from '../src/eval/records';
import type { BranchActivities } from '../src/eval/branches';
import type { MonitorActivities } from '../src/contract/monitor';

export type { ActivityDeps };

/** Each activity in its shell (see asActivity), with its name and type unchanged. */
function shelled<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities))
    out[name] = asActivity(fn as (...a: unknown[]) => Promise<unknown>);
  return out as T;
}

export function createActivities(deps: ActivityDeps): Activities {
  const store = openRunStore(deps.config, process.env, {
    hooks: storeWaitHooks,
    ...(deps.log ? { log: deps.log } : {}),
  });
  const files = new RunFiles(deps.config.runsDir, store);
  const environments = createEnvironments(deps, files);
  return shelled({
    ...createRunActivities(deps, files),
    ...createOutputActivity(deps, files),
    ...createForkActivity(deps, files),
    ...createAdoptActivity(deps, files),
    ...createSessionActivities(deps, files, environments),
    ...createDecideActivity(files, environments),
    ...createEvalActivities(deps, files),
    ...createNotifyActivity(deps),
    ...createMonitorActivities(files),
    ...createSigninActivities(deps, files),
  });
}

export type Activities = TaskActivities & EvalActivities & BranchActivities & MonitorActivities;
