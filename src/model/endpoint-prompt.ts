// The prompt settings of a model endpoint (the worker config's `models.<name>`: family, identity, prompt file),
// checked against a model family: the endpoint's own when the worker starts, and the task's when a task starts, so a
// task that cannot run on its endpoint's settings fails at once with a one-line reason instead of at its first step.
import type { FaraSpace } from '../actions/fara';
import { smartResize } from '../image/smart-resize';
import { identityProfile } from './identities';
import { buildSystemPrompt, loadPromptOverride, promptActions } from './prompt';
import type { PromptActions } from './prompt';

/** The part of an endpoint's configuration that shapes its prompt. */
export interface EndpointPromptSettings {
  /** The family its model speaks (config `models.<name>.profile`, or `.family`). */
  profile?: string | undefined;
  identity?: string | undefined;
  promptFile?: string | undefined;
}

/** What these checks need of a model family (src/families/family.ts). */
export interface FamilyChecks {
  name: string;
  allowedActions: readonly string[];
  identityIssue(identity: string, custom: boolean): string | null;
}

/** The tasks' family when they name none (the task input's default). */
const TASK_DEFAULT_FAMILY = 'fara-1.5';

/**
 * The family an endpoint's settings are checked against when the worker starts: its `profile`, else the family
 * its registry identity belongs to, else the tasks' default.
 */
export function endpointFamily(settings: EndpointPromptSettings): string {
  const ofIdentity = settings.identity === undefined ? undefined : identityProfile(settings.identity);
  return settings.profile ?? ofIdentity ?? TASK_DEFAULT_FAMILY;
}

/**
 * Why a task of `family` cannot use endpoint `name` (its declared family is another, or its identity is another
 * family's), or null. `taskIdentity`: the task's own choice, which replaces the endpoint's identity.
 */
export function endpointFamilyIssue(
  name: string,
  settings: EndpointPromptSettings,
  family: FamilyChecks,
  taskIdentity?: string,
): string | null {
  if (settings.profile !== undefined && settings.profile !== family.name) {
    return `model endpoint '${name}' speaks ${settings.profile} (models.${name}.profile); this task's profile is ${family.name}`;
  }
  if (taskIdentity !== undefined || settings.identity === undefined) return null;
  const issue = family.identityIssue(settings.identity, true);
  return issue ? `model endpoint '${name}': ${issue} (models.${name}.identity)` : null;
}

/**
 * The actions a prompt file lets a model of the Fara action space use (src/model/prompt.ts promptActions), the file
 * rendered as for a task with the default viewport (the action list does not depend on the screen). Throws
 * PromptFileError (unreadable) or PromptActionsError (it offers an action the family lacks).
 */
export async function promptFileActions(file: string, space: FaraSpace): Promise<PromptActions> {
  const override = await loadPromptOverride(file);
  const screen = smartResize(900, 1440, { factor: space.resizeFactor });
  return promptActions(buildSystemPrompt({ family: space, screen, override }), space);
}

/** The one line a worker says at start about a prompt file that narrows the actions (or lists none), or null. */
export function promptActionsNotice(name: string, family: FamilyChecks, actions: PromptActions): string | null {
  const all = family.allowedActions.length;
  const where = `models.${name}.promptFile`;
  if (!actions.listed)
    return `${where}: the prompt lists no "enum" of actions; the model may use all ${all} of ${family.name}'s`;
  if (actions.left.length === 0) return null;
  return (
    `${where}: the prompt offers ${actions.allowed.length} of ${family.name}'s ${all} actions, and the model may use ` +
    `only those (left out: ${actions.left.join(', ')})`
  );
}
