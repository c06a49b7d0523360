// The list page's "Start a task" form: instruction, start URL, model endpoint by name, environment and max steps,
// started through the agent client exactly as `cua run` starts one (client/new-task.ts). A bad field is refused in one
// line before anything starts: an unknown endpoint name here, the rest by the task contract's own checks.
import type { AgentClient } from '../client/client';
import { InvalidTaskInputError } from '../client/client';
import { newTaskOf } from '../client/new-task';

/** The form's fields as posted (JSON); anything else is ignored. */
export interface StartForm {
  instruction?: unknown;
  startUrl?: unknown;
  endpoint?: unknown;
  environment?: unknown;
  maxSteps?: unknown;
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * Starts the task the form describes. `endpoints`: the names in the config's `models` (empty: the workers' own
 * `default`, which the console cannot see). Refusals are InvalidTaskInputError, one line.
 */
export async function startFromForm(
  agent: AgentClient,
  endpoints: readonly string[],
  form: StartForm,
  families: Readonly<Record<string, string>> = {},
): Promise<{ id: string }> {
  const endpoint = text(form.endpoint) || 'default';
  const known = endpoints.length ? endpoints : ['default'];
  if (!known.includes(endpoint)) {
    throw new InvalidTaskInputError(
      'model',
      `no endpoint named '${endpoint}' in the config's models (${known.join(', ')})`,
    );
  }
  const steps = text(form.maxSteps);
  const maxSteps = steps === '' ? undefined : Number(steps);
  if (maxSteps !== undefined && !Number.isInteger(maxSteps)) {
    throw new InvalidTaskInputError('maxSteps', `must be a whole number; got '${steps}'`);
  }
  const family = families[endpoint];
  const { id } = await agent.start({
    ...newTaskOf({
      instruction: text(form.instruction),
      environment: text(form.environment) || undefined,
      startUrl: text(form.startUrl) || undefined,
      maxSteps,
      endpoint,
    }),
    // A desktop task has no family; a browser task speaks its endpoint's.
    ...(family && text(form.environment) !== 'desktop' ? { family } : {}),
  });
  return { id };
}
