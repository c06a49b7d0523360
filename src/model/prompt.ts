// The system prompt: identity, critical points, and the function-call format with the family's tool schema inside
// <tools></tools>. Rebuilt for every model call. A user may replace the whole text with a prompt file of their own
// (e.g. to match a model's training prompt byte for byte); such a file may use the placeholders listed below.
import { readFile, stat } from 'node:fs/promises';
import type { FaraSpace, FaraName } from '../actions/fara';
import type { ScreenSize } from '../actions/tool-schema';
import { PromptActionsError, PromptFileError } from './errors';
import { resolveIdentity } from './identities';
import { formatJson } from './toolcall';

const CRITICAL_POINTS_FARA15 = [
  'A critical point is a moment when you must stop and ask the user for information or for permission before going on. There are three kinds:',
  'Case 1: Missing user information. The task needs personal details the user has not given (an email address, a phone number, an address, payment details, and so on). Never invent or guess personal details. Fill in what the user did give, then ask for what is still missing. For example, if a form wants a name, an email and a phone number and you only have the first two, fill those in and ask for the phone number. If the user gave everything needed, carry on without asking.',
  'Case 2: Underspecified task. The task leaves open something you have to decide at the current step. Ask for clarification; for example, if asked to book a flight with no destination, ask where to. If the instructions settle the current decision, carry on without asking.',
  'Case 3: Irreversible action. The next action cannot be undone: submitting a form, paying for a purchase, sending a message, deleting data. If the user clearly authorised it ("submit the form", "buy it", "you may send it"), go ahead. If not, stop and ask first. For example, "fill out the form" means fill it and then ask before submitting, while "fill out and submit the form" means do both without asking.',
  "Stop only when (1) required information is missing, (2) the task is ambiguous at this step, or (3) an irreversible action lacks the user's explicit permission. When you have everything you need and the permission to act, keep going without interrupting the user.",
].join('\n\n');

const CRITICAL_POINTS_FARA7B = [
  'A critical point is a moment when you must not go on without the user: personal information the task needs but the user did not give (never make it up), a choice the task leaves open, or an action that cannot be undone (submitting, paying, sending, deleting) that the user did not explicitly allow.',
  'At a critical point, stop with `terminate` and say in your reasoning what you need from the user. When the user has given all the information and permission needed, keep going without stopping.',
].join('\n\n');

export const CRITICAL_POINTS: Readonly<Record<FaraName, string>> = {
  'fara-1.5': CRITICAL_POINTS_FARA15,
  'fara-7b': CRITICAL_POINTS_FARA7B,
};

/** The function-call format section; `{tools}` is replaced by the tool schema JSON. */
const FUNCTION_CALL_FORMAT = [
  'The function you can call is described as JSON inside <tools></tools> tags:',
  '<tools>',
  '{tools}',
  '</tools>',
  '',
  'Write your reasoning first. Then call the function by putting one JSON object, with the function name and its arguments, between <tool_call></tool_call> tags:',
  '<tool_call>',
  '{"name": <function-name>, "arguments": <arguments-object>}',
  '</tool_call>',
].join('\n');

/**
 * Placeholders a prompt file may use; each is replaced wherever it appears, anything else in braces is left alone.
 * - `{tools}`: the tool schema as one line of JSON
 * - `{screen_width}`, `{screen_height}`: the coordinate space the model speaks (1000x1000 for Fara-1.5, the resized
 *   screenshot for Fara-7B)
 * - `{allowed_actions}`: the family's action names, comma-separated
 * - `{identity}`, `{critical_points}`: the texts the built-in prompt would use
 */
export const PROMPT_PLACEHOLDERS = [
  '{tools}',
  '{screen_width}',
  '{screen_height}',
  '{allowed_actions}',
  '{identity}',
  '{critical_points}',
] as const;

type Placeholder = (typeof PROMPT_PLACEHOLDERS)[number];

export interface SystemPromptOptions {
  family: FaraSpace;
  /** Size of the resized screenshot sent to the model (Fara-7B's coordinate space; ignored by Fara-1.5). */
  screen: ScreenSize;
  /** A registry key of this family, or a custom identity text; defaults to the family's default identity. */
  identity?: string;
  /** A full replacement text (see `loadPromptOverride`), with placeholders filled in. */
  override?: string;
}

function fillPlaceholders(template: string, values: Record<Placeholder, string>): string {
  let text = template;
  for (const placeholder of PROMPT_PLACEHOLDERS) text = text.split(placeholder).join(values[placeholder]);
  return text;
}

/** Builds the system prompt for one model call. */
export function buildSystemPrompt(opts: SystemPromptOptions): string {
  const { family } = opts;
  const display = family.displaySize(opts.screen);
  const identity = resolveIdentity(family.name, opts.identity);
  const criticalPoints = CRITICAL_POINTS[family.name];
  const template = opts.override ?? [identity, criticalPoints, FUNCTION_CALL_FORMAT].join('\n\n');
  return fillPlaceholders(template, {
    '{tools}': formatJson(family.toolSchemaFor(opts.screen)),
    '{screen_width}': String(display.width),
    '{screen_height}': String(display.height),
    '{allowed_actions}': family.allowedActions.join(', '),
    '{identity}': identity,
    '{critical_points}': criticalPoints,
  });
}

/**
 * The action names a rendered prompt offers: the first `"enum": [...]` list in it (the tool schema's `action` enum),
 * or undefined when there is none. Lets a caller check a prompt file against the family's allowed actions.
 */
export function allowedActionsInPrompt(prompt: string): string[] | undefined {
  const match = /"enum":\s*(\[[^\]]*\])/.exec(prompt);
  if (!match?.[1]) return undefined;
  try {
    const values: unknown = JSON.parse(match[1]);
    return Array.isArray(values) ? values.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/** The actions a rendered prompt lets the model use, measured against the family's (what the runtime can do). */
export interface PromptActions {
  /** The actions the model may use: the prompt's `"enum"` list, or the family's when the prompt lists none. */
  allowed: readonly string[];
  /** The family's actions the prompt leaves out (the narrowing), in the family's order. */
  left: readonly string[];
  /** False when the prompt has no `"enum"` list (the family's actions stand). */
  listed: boolean;
}

/**
 * The prompt is the whitelist, as in the original: the actions its `"enum"` list offers are the ones the model may
 * use. One the family lacks (the runtime could not carry it out) is a PromptActionsError naming both lists; fewer
 * than the family's narrow the allowed set. A prompt with no list leaves the family's actions allowed.
 */
export function promptActions(prompt: string, family: Pick<FaraSpace, 'name' | 'allowedActions'>): PromptActions {
  const offered = allowedActionsInPrompt(prompt);
  if (offered === undefined) return { allowed: family.allowedActions, left: [], listed: false };
  const unknown = offered.filter((a) => !family.allowedActions.includes(a));
  if (unknown.length > 0) throw new PromptActionsError(family.name, unknown, family.allowedActions);
  const allowed = [...new Set(offered)];
  return { allowed, left: family.allowedActions.filter((a) => !allowed.includes(a)), listed: true };
}

/**
 * Reads a prompt file for `SystemPromptOptions.override`. The text is used as it is, except that one final line
 * break (which editors add) is dropped. Fails with a PromptFileError when the file is missing, not a regular file,
 * unreadable, or empty (whitespace only).
 */
export async function loadPromptOverride(path: string): Promise<string> {
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new PromptFileError(path, 'not-a-file');
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof PromptFileError) throw error;
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT';
    throw new PromptFileError(path, missing ? 'missing' : 'unreadable', { cause: error });
  }
  if (text.trim() === '') throw new PromptFileError(path, 'empty');
  return text.replace(/\r?\n$/, '');
}
