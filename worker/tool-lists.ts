// The worker's start lines saying what the model may do in each environment it hosts: the browser agent's actions
// for each model family, the desktop agent's tools (when this worker hosts desktops), and the environments an
// application brought, which take the browser agent's actions. The original prints its tool list at start too.
import { familyNames, familyOf } from '../src/families/registry';
import { DESKTOP_TOOL_NAMES } from '../src/desktop/agent';

export interface HostedEnvironments {
  /** Whether this worker opens desktops (its pool exists). */
  desktop: boolean;
  /** The names of the application's own environments (CustomEnvironment), in registration order. */
  environments: readonly string[];
}

/** One line per model family, one for the desktop, one for the application's environments. */
export function toolListLines({ desktop, environments }: HostedEnvironments): string[] {
  const lines = familyNames().map((name) => {
    const actions = familyOf(name).allowedActions;
    return `browser actions (${name}, ${actions.length}): ${actions.join(', ')}`;
  });
  if (desktop) lines.push(`desktop tools (${DESKTOP_TOOL_NAMES.length}): ${DESKTOP_TOOL_NAMES.join(', ')}`);
  if (environments.length > 0) {
    lines.push(
      `environments beside the browser: ${environments.join(', ')} (each takes the browser actions of the task's family)`,
    );
  }
  return lines;
}
