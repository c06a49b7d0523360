// The `models` section of the configuration: each named endpoint (URL, model, key, price, prompt, identity, family)
// and what a task may override per run (`modelOverrides`).
import { z } from 'zod';
import { identityError } from '../model/identities';
import { isFaraName } from '../actions/fara';
import { familyNames, familyOf, isFamilyName, UnknownFamilyError } from '../families/registry';
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
    /** The sentence after each screenshot (absent: the family's, Fara's own; see src/model/context.ts). */
    stepPrompt: z
      .string()
      .refine((s) => s.trim() !== '', 'must not be empty')
      .optional(),
    /**
     * Who the model is told it is (src/model/identities.ts): a registry name, or a text of its own of at least 20
     * characters. A task may name another registry identity of its family (`identity`), never give a text.
     */
    identity: z.string().min(1).optional(),
    /**
     * The model family this endpoint's model speaks (src/families; `family` is the same key's newer name, give one).
     * Its identity and prompt file are checked against it when the worker starts (absent: against the family of a
     * registry identity, else fara-1.5, the tasks' default), and a task of another family is refused when it starts.
     */
    profile: z.string().min(1).optional(),
    family: z.string().min(1).optional(),
    /**
     * The provider's computer-use tool the endpoint's model speaks, for a family with several (openai-computer:
     * `computer`, `computer_use_preview`; anthropic-computer: `computer_20250124`, `computer_20251124`,
     * `computer_toolset_20260801`; gemini-computer: `2.5`, `3`; qwen-vl: the generation, `2.5` or `3`). Absent: the
     * family picks by the model's name.
     */
    tool: z.string().min(1).optional(),
    /**
     * The grid a relative-coordinate model's points lie on, for a family with several (qwen-vl's Qwen3-VL: `999`, the
     * default, as Qwen's own cookbook scales, or `1000`, as some agent prompts say). Absent: the family's default.
     * Qwen2.5-VL points in pixels of the screenshot and ignores it.
     */
    grid: z.union([z.literal(999), z.literal(1000)]).optional(),
  })
  .superRefine((endpoint, ctx) => {
    const { profile, family } = endpoint;
    if (profile !== undefined && family !== undefined && profile !== family) {
      ctx.addIssue({ code: 'custom', path: ['family'], message: `is ${family} but profile is ${profile}; give one` });
    }
    const name = family ?? profile;
    if (name !== undefined && !isFamilyName(name)) {
      const message = new UnknownFamilyError(name, familyNames()).message;
      ctx.addIssue({ code: 'custom', path: [family !== undefined ? 'family' : 'profile'], message });
    }
    const tools = name !== undefined && isFamilyName(name) ? familyOf(name).tools : undefined;
    if (endpoint.tool !== undefined && !tools?.includes(endpoint.tool)) {
      const message = tools
        ? `is ${endpoint.tool}; family ${name} speaks ${tools.join(', ')}`
        : `is for a family with several computer-use tools; ${name ?? 'fara-1.5'} has one`;
      ctx.addIssue({ code: 'custom', path: ['tool'], message });
    }
    const grids = name !== undefined && isFamilyName(name) ? familyOf(name).grids : undefined;
    if (endpoint.grid !== undefined && !grids?.includes(endpoint.grid)) {
      const message = grids
        ? `is ${endpoint.grid}; family ${name} speaks ${grids.join(', ')}`
        : `is for a family with relative coordinates on a choice of grids; ${name ?? 'fara-1.5'} has none`;
      ctx.addIssue({ code: 'custom', path: ['grid'], message });
    }
    if (endpoint.identity === undefined || (name !== undefined && !isFaraName(name))) return;
    const error = identityError(endpoint.identity, { family: name, custom: true });
    if (error) ctx.addIssue({ code: 'custom', path: ['identity'], message: error.message });
  })
  // One key in the config the worker uses: `profile` (the wire name).
  .transform(({ family, ...endpoint }) => (family === undefined ? endpoint : { ...endpoint, profile: family }));

/** The family each endpoint declares (`models.<name>.family`), for the tasks started on it that name none. */
export function endpointFamilies(models: Readonly<Record<string, { profile?: string | undefined }>>) {
  return Object.fromEntries(
    Object.entries(models).flatMap(([name, e]) => (e.profile === undefined ? [] : [[name, e.profile]])),
  ) as Record<string, string>;
}

/** Per-task model overrides (`cua run --model-base-url/--model`); absent: allowed, to any URL (never with our keys). */
export const ModelOverridesSchema = z.strictObject({
  allow: z.boolean().default(true),
  /** When set, an overridden base URL must be one of these (exact, or a path under one). */
  allowedBaseUrls: z.array(z.url()).optional(),
});
