// The list page's "Start a task" form: instruction, start URL, model endpoint by name, environment, max steps, a
// saved sign-in and an output schema, started through the agent client exactly as `cua run` starts one
// (client/new-task.ts). A bad field is refused in one line before anything starts: an unknown endpoint or sign-in
// name here, the rest (a bad output schema too) by the task contract's own checks.
import type { AgentClient, NewTask } from '../client/client';
import { InvalidTaskInputError } from '../client/client';
import { newTaskOf } from '../client/new-task';
import { SigninStore } from '../src/trajectory/signins';
import type { RunStore } from '../src/trajectory/store';

/** The form's fields as posted (JSON); anything else is ignored. */
export interface StartForm {
  instruction?: unknown;
  startUrl?: unknown;
  endpoint?: unknown;
  environment?: unknown;
  maxSteps?: unknown;
  /** A saved sign-in's name ('' or absent: none). */
  signin?: unknown;
  /** Save the task's last page state back under the sign-in when it ends. */
  signinRefresh?: unknown;
  /** The output schema's JSON text ('' or absent: none; docs/output.md). */
  outputSchema?: unknown;
}

/**
 * The names of the saved sign-ins, from the run store's index (plain: no key is needed to read names), or null when
 * the store cannot be read from here (then the form offers none, and a worker checks a name it is given).
 */
export async function savedSigninNames(store: () => RunStore): Promise<string[] | null> {
  try {
    return (await new SigninStore(store()).list()).map((s) => s.name);
  } catch {
    return null;
  }
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * The new task the form describes, as `cua run` builds it (client/new-task.ts); the schedule form builds each run's
 * task through it too. `endpoints`: the names in the config's `models` (empty: the workers' own `default`, which the
 * console cannot see). Refusals are InvalidTaskInputError, one line.
 */
export async function taskFromForm(
  endpoints: readonly string[],
  form: StartForm,
  families: Readonly<Record<string, string>> = {},
  signins: () => Promise<readonly string[] | null> = async () => null,
): Promise<Omit<NewTask, 'id'>> {
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
  const signin = await signinOf(form, signins);
  const family = families[endpoint];
  return {
    ...newTaskOf({
      instruction: text(form.instruction),
      environment: text(form.environment) || undefined,
      startUrl: text(form.startUrl) || undefined,
      maxSteps,
      endpoint,
      outputSchema: text(form.outputSchema) || undefined,
    }),
    // A desktop task has no family; a browser task speaks its endpoint's.
    ...(family && text(form.environment) !== 'desktop' ? { family } : {}),
    ...signin,
  };
}

/** Starts the task the form describes (taskFromForm); refusals are InvalidTaskInputError, one line. */
export async function startFromForm(
  agent: AgentClient,
  endpoints: readonly string[],
  form: StartForm,
  families: Readonly<Record<string, string>> = {},
  signins: () => Promise<readonly string[] | null> = async () => null,
): Promise<{ id: string }> {
  const { id } = await agent.start(await taskFromForm(endpoints, form, families, signins));
  return { id };
}

/** The form's sign-in fields as task input; a name that is not saved is refused (when the store can be read). */
async function signinOf(
  form: StartForm,
  signins: () => Promise<readonly string[] | null>,
): Promise<{ signin?: string; signinRefresh?: true }> {
  const name = text(form.signin);
  const refresh = form.signinRefresh === true || form.signinRefresh === 'on';
  if (name === '') return refresh ? { signinRefresh: true } : {}; // the task contract refuses a refresh of nothing
  const saved = await signins();
  if (saved && !saved.includes(name)) {
    const how = saved.length
      ? `saved: ${saved.join(', ')}`
      : 'none is saved; save one with: npx cua signin save <task-id> NAME';
    throw new InvalidTaskInputError('signin', `no saved sign-in named '${name}' (${how})`);
  }
  return { signin: name, ...(refresh ? { signinRefresh: true as const } : {}) };
}
