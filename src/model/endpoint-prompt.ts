// The prompt settings of a model endpoint (the worker config's `models.<name>`: profile, identity, prompt file),
// checked against a profile: the endpoint's own when the worker starts, and the task's when a task starts, so a
// task that cannot run on its endpoint's settings fails at once with a one-line reason instead of at its first step.
import type { ProfileName } from '../actions/profiles';
import { identityError, identityProfile } from './identities';

/** The part of an endpoint's configuration that shapes its prompt. */
export interface EndpointPromptSettings {
  profile?: ProfileName | undefined;
  identity?: string | undefined;
  promptFile?: string | undefined;
}

/** The tasks' profile when they name none (the task input's default). */
const TASK_DEFAULT_PROFILE: ProfileName = 'fara-1.5';

/**
 * The profile an endpoint's settings are checked against when the worker starts: its `profile`, else the profile
 * its registry identity belongs to, else the tasks' default.
 */
export function endpointProfile(settings: EndpointPromptSettings): ProfileName {
  const ofIdentity = settings.identity === undefined ? undefined : identityProfile(settings.identity);
  return settings.profile ?? ofIdentity ?? TASK_DEFAULT_PROFILE;
}

/**
 * Why a task of `profile` cannot use endpoint `name` (its declared profile is another, or its identity is another
 * profile's), or null. `taskIdentity`: the task's own choice, which replaces the endpoint's identity.
 */
export function endpointProfileIssue(
  name: string,
  settings: EndpointPromptSettings,
  profile: ProfileName,
  taskIdentity?: string,
): string | null {
  if (settings.profile !== undefined && settings.profile !== profile) {
    return `model endpoint '${name}' speaks ${settings.profile} (models.${name}.profile); this task's profile is ${profile}`;
  }
  if (taskIdentity !== undefined || settings.identity === undefined) return null;
  const error = identityError(settings.identity, { profile, custom: true });
  return error ? `model endpoint '${name}': ${error.message} (models.${name}.identity)` : null;
}
