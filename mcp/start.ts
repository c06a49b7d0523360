// start_task's arguments as the task the typed client starts: the same fields, defaults and refusals as `cua run` and
// the console's form (client/new-task.ts), with the model named by its endpoint in the config, a saved sign-in
// checked by name, the budgets and the output schema. A refusal is one line, before anything starts.
import { InvalidTaskInputError } from '../client/client';
import type { NewTask } from '../client/client';
import { newTaskOf } from '../client/new-task';
import { savedSigninNames } from '../console/start';
import type { McpDeps } from './deps';
import { DEFAULT_MAX_STEPS } from '../src/contract/task';

export interface StartArgs {
  instruction: string;
  start_url?: string | undefined;
  model?: string | undefined;
  max_steps?: number | undefined;
  environment?: string | undefined;
  signin?: string | undefined;
  max_cost?: number | undefined;
  max_minutes?: number | undefined;
  output_schema?: Record<string, unknown> | undefined;
}

/** The task to start, or InvalidTaskInputError naming what is wrong. */
export async function newTaskFrom(deps: McpDeps, args: StartArgs): Promise<NewTask> {
  // No model named: the first the server lets its callers use, else the workers' default.
  const endpoint = args.model?.trim() || deps.policy?.rules.models?.[0] || 'default';
  const known = deps.endpoints.length ? deps.endpoints : ['default'];
  if (!known.includes(endpoint)) {
    throw new InvalidTaskInputError(
      'model',
      `no endpoint named '${endpoint}' in the config's models (${known.join(', ')})`,
    );
  }
  const environment = args.environment?.trim() || undefined;
  const family = deps.families[endpoint];
  const budget = {
    ...(args.max_cost !== undefined ? { maxCost: args.max_cost } : {}),
    ...(args.max_minutes !== undefined ? { maxMinutes: args.max_minutes } : {}),
  };
  return {
    ...newTaskOf({
      instruction: args.instruction,
      environment,
      startUrl: args.start_url?.trim() || undefined,
      // Callers limited to fewer steps than the default get their limit when they name none.
      maxSteps: args.max_steps ?? capped(deps.policy?.rules.maxSteps),
      endpoint,
      outputSchema: args.output_schema,
    }),
    // A desktop task has no family; a browser task speaks its endpoint's.
    ...(family && environment !== 'desktop' ? { family } : {}),
    ...(Object.keys(budget).length ? { budget } : {}),
    ...(await signinOf(deps, args.signin)),
  };
}

/** A saved sign-in by name; a name not saved is refused (when the run store can be read from here). */
async function signinOf(deps: McpDeps, signin: string | undefined): Promise<{ signin?: string }> {
  const name = signin?.trim() ?? '';
  if (name === '') return {};
  const saved = await savedSigninNames(deps.store);
  if (saved && !saved.includes(name)) {
    const how = saved.length
      ? `saved: ${saved.join(', ')}`
      : 'none is saved; save one with: npx cua signin save <task-id> NAME';
    throw new InvalidTaskInputError('signin', `no saved sign-in named '${name}' (${how})`);
  }
  return { signin: name };
}

function capped(limit: number | undefined): number | undefined {
  return limit !== undefined && limit < DEFAULT_MAX_STEPS ? limit : undefined;
}
