// The saved sign-in's activities (shared queue): checking, before a task takes its lock, that its sign-in can be
// loaded on this worker; loading it for a session's first open; and saving a task's last page state back under the
// name when it ends (`signinRefresh`). The state moves between the run store and the browser only: the workflow
// carries the name.
import { signinStoreFor } from '../src/runtime/signins';
import { SigninError, taskPageStorage } from '../src/trajectory/signins';
import type { Signin } from '../src/trajectory/signins';
import { nonRetryable } from './support';
import type { ActivityDeps, RunFiles } from './support';

/** The task's sign-in, loaded; a missing one or one this worker cannot open fails the task (InvalidTaskInput). */
export async function loadSignin(deps: ActivityDeps, files: RunFiles, name: string): Promise<Signin> {
  let signin: Signin | undefined;
  try {
    signin = await signinStoreFor(deps.config, files.store).load(name);
  } catch (err) {
    if (err instanceof SigninError) nonRetryable(err, 'InvalidTaskInput');
    throw err;
  }
  if (!signin) {
    nonRetryable(new Error(`no saved sign-in named '${name}' (see cua signin list)`), 'InvalidTaskInput');
  }
  return signin;
}

export function createSigninActivities(deps: ActivityDeps, files: RunFiles) {
  return {
    async checkSignin(req: { name: string }): Promise<void> {
      await loadSignin(deps, files, req.name);
    },

    async refreshSignin(req: { taskId: string; name: string }): Promise<boolean> {
      const page = await taskPageStorage(files.store, req.taskId);
      if (!page) {
        deps.log?.(`${req.taskId}: no page state saved, sign-in '${req.name}' not refreshed`);
        return false;
      }
      await signinStoreFor(deps.config, files.store).save(req.name, page.storage, req.taskId);
      deps.log?.(`${req.taskId}: sign-in '${req.name}' saved back from the task's last page`);
      return true;
    },
  };
}
