// A start policy: what the tasks a kind of caller starts may use (config `mcp.callers` for agents over MCP). It names
// the model endpoints, environments and most steps allowed, and a URL policy every such task carries as its own
// `urlPolicy` (the same narrowing a task may give itself), so the worker enforces it for the whole run and the start
// URL is checked against it when the task is validated. Pure: the client applies it to each task before it starts.
import { z } from 'zod';
import { narrowBoth, TaskUrlPolicySchema } from './url-policy';
import type { TaskInput } from './task';

export const StartPolicySchema = z.strictObject({
  /** The model endpoints (config `models` names) such tasks may use; absent: any. A task's own base URL is refused. */
  models: z.array(z.string().min(1)).min(1).optional(),
  /** The environments they may run in (browser, desktop, or one a worker hosts); absent: any. */
  environments: z.array(z.string().min(1)).min(1).optional(),
  /** The most steps one may ask for. */
  maxSteps: z.number().int().min(1).max(10_000).optional(),
  /** A narrowing of the workers' URL policy each such task carries (as a task's own `urlPolicy`). */
  urlPolicy: TaskUrlPolicySchema.optional(),
});
export type StartPolicy = z.output<typeof StartPolicySchema>;

export type StartPolicyVerdict =
  { ok: true; input: TaskInput } | { ok: false; field: 'model' | 'environment' | 'maxSteps'; reason: string };

/**
 * The task as the policy lets it start (its URL policy narrowed by the policy's), or the field it refuses and why.
 * `who` names the callers in the reason ("MCP callers"). The caller validates the result again (its start URL
 * against the narrowed URL policy).
 */
export function applyStartPolicy(policy: StartPolicy, input: TaskInput, who: string): StartPolicyVerdict {
  const endpoint = input.model.endpoint;
  if (policy.models && !policy.models.includes(endpoint)) {
    return {
      ok: false,
      field: 'model',
      reason: `${who} may use the models ${policy.models.join(', ')}, not '${endpoint}'`,
    };
  }
  if (policy.models && input.model.baseUrl !== undefined) {
    return { ok: false, field: 'model', reason: `${who} may use the configured models only, not a model by base URL` };
  }
  if (policy.environments && !policy.environments.includes(input.environment)) {
    const allowed = policy.environments.join(', ');
    return {
      ok: false,
      field: 'environment',
      reason: `${who} may use the environments ${allowed}, not '${input.environment}'`,
    };
  }
  if (policy.maxSteps !== undefined && input.maxSteps > policy.maxSteps) {
    return {
      ok: false,
      field: 'maxSteps',
      reason: `${who} may ask for at most ${policy.maxSteps} steps, not ${input.maxSteps}`,
    };
  }
  const urlPolicy = narrowBoth(input.urlPolicy, policy.urlPolicy);
  return { ok: true, input: { ...input, ...(urlPolicy === undefined ? {} : { urlPolicy }) } };
}
