// The `models` section of the configuration: each named endpoint (URL, model, key, price, prompt, identity, profile)
// and what a task may override per run (`modelOverrides`).
import { z } from 'zod';
import { identityError } from '../model/identities';
import { PROFILE_NAMES } from '../actions/profiles';
import { MAX_MODEL_TIMEOUT_SECONDS } from '../model/timeouts';

export const EndpointSchema = z
  .strictObject({
    baseUrl: z.url(),
    model: z.string().min(1),
    apiKey: z.string().optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
    /** The longest one model call may take (default 120 s; see src/model/timeouts.ts). */
    timeoutSeconds: z.number().positive().max(MAX_MODEL_TIMEOUT_SECONDS).optional(),
    /**
     * What the endpoint's tokens cost, in US dollars per million: `input` (prompt), `output` (completion, reasoning
     * included), `cachedInput` (prompt tokens the endpoint served from its cache; default: `input`). Each model call
     * then records its cost beside its usage (`usage.cost_usd`), and totals follow.
     */
    price: z
      .strictObject({
        input: z.number().min(0),
        output: z.number().min(0),
        cachedInput: z.number().min(0).optional(),
      })
      .optional(),
    /** A system prompt file replacing ours (e.g. the model's training prompt); see src/model/prompt.ts placeholders. */
    promptFile: z.string().min(1).optional(),
    /** The sentence after each screenshot (absent: the profile's, Fara's own; see src/model/context.ts). */
    stepPrompt: z
      .string()
      .refine((s) => s.trim() !== '', 'must not be empty')
      .optional(),
    /**
     * Who the model is told it is (src/model/identities.ts): a registry name, or a text of its own of at least 20
     * characters. A task may name another registry identity of its profile (`identity`), never give a text.
     */
    identity: z.string().min(1).optional(),
    /**
     * The profile this endpoint's model speaks. Its identity and prompt file are checked against it when the worker
     * starts (absent: against the profile of a registry identity, else fara-1.5, the tasks' default), and a task of
     * another profile is refused when it starts.
     */
    profile: z.enum(PROFILE_NAMES).optional(),
  })
  .superRefine((endpoint, ctx) => {
    if (endpoint.identity === undefined) return;
    const error = identityError(endpoint.identity, { profile: endpoint.profile, custom: true });
    if (error) ctx.addIssue({ code: 'custom', path: ['identity'], message: error.message });
  });

/** Per-task model overrides (`cua run --model-base-url/--model`); absent: allowed, to any URL (never with our keys). */
export const ModelOverridesSchema = z.strictObject({
  allow: z.boolean().default(true),
  /** When set, an overridden base URL must be one of these (exact, or a path under one). */
  allowedBaseUrls: z.array(z.url()).optional(),
});
