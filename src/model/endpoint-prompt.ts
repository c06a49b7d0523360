// The prompt settings of a model endpoint (the worker config's `models.<name>`: profile, identity, prompt file),
// checked against a profile: the endpoint's own when the worker starts, and the task's when a task starts, so a
// task that cannot run on its endpoint's settings fails at once with a one-line reason instead of at its first step.
import { getProfile } from '../actions/profiles';
import type { ProfileName } from '../actions/profiles';
import { smartResize } from '../image/smart-resize';
import { identityError, identityProfile } from './identities';
import { buildSystemPrompt, loadPromptOverride, promptActions } from './prompt';
import type { PromptActions } from './prompt';

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

/**
 * The actions a prompt file lets a model of `profile` use (src/model/prompt.ts promptActions), the file rendered as
 * for a task with the default viewport (the action list does not depend on the screen). Throws PromptFileError
 * (unreadable) or PromptActionsError (it offers an action the profile lacks).
 */
export async function promptFileActions(file: string, profile: ProfileName): Promise<PromptActions> {
  const model = getProfile(profile);
  const override = await loadPromptOverride(file);
  const screen = smartResize(900, 1440, { factor: model.resizeFactor });
  return promptActions(buildSystemPrompt({ profile: model, screen, override }), model);
}

/** The one line a worker says at start about a prompt file that narrows the actions (or lists none), or null. */
export function promptActionsNotice(name: string, profile: ProfileName, actions: PromptActions): string | null {
  const all = getProfile(profile).allowedActions.length;
  const where = `models.${name}.promptFile`;
  if (!actions.listed)
    return `${where}: the prompt lists no "enum" of actions; the model may use all ${all} of ${profile}'s`;
  if (actions.left.length === 0) return null;
  return (
    `${where}: the prompt offers ${actions.allowed.length} of ${profile}'s ${all} actions, and the model may use ` +
    `only those (left out: ${actions.left.join(', ')})`
  );
}
