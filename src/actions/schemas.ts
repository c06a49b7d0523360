// The action space as strict zod schemas: one schema per action, and one discriminated union per Fara model family.
// These unions are the single source of truth: the tool schema shown to the model (tool-schema.ts) and the
// allowed-action list (fara.ts) are both derived from them.
import { z } from 'zod';

/** A point in the model's coordinate space, written by the model as `[x, y]`. */
export const coordinateSchema = z.tuple([z.number(), z.number()]);

/** Every action may carry the model's free-text reasoning; the parser fills it from the text before `<tool_call>`. */
const thoughts = z.string().optional();

const pointer = <N extends string>(name: N) =>
  z.strictObject({ action: z.literal(name), thoughts, coordinate: coordinateSchema });

// Pointer actions (both Fara families have left_click and mouse_move; the rest are Fara-1.5 only).
export const leftClickSchema = pointer('left_click').describe('Click the left mouse button at `coordinate`.');
export const mouseMoveSchema = pointer('mouse_move').describe(
  'Move the mouse pointer to `coordinate` without clicking.',
);
export const doubleClickSchema = pointer('double_click').describe(
  'Double-click the left mouse button at `coordinate`.',
);
export const rightClickSchema = pointer('right_click').describe(
  'Click the right mouse button at `coordinate` (opens context menus).',
);
export const tripleClickSchema = pointer('triple_click').describe(
  'Triple-click the left mouse button at `coordinate` (selects a whole line or field).',
);
/** Press at the current cursor position and drag to `coordinate` (the end point). */
export const leftClickDragSchema = pointer('left_click_drag').describe(
  'Hold the left mouse button down and drag the pointer to `coordinate`.',
);

// Keyboard and scrolling.
export const keySchema = z
  .strictObject({ action: z.literal('key'), thoughts, keys: z.array(z.string().min(1)).min(1) })
  .describe('Press a key or a key combination: the keys go down in the order given and come up in reverse.');

const TYPE_DESCRIPTION = 'Type text with the keyboard into the focused element.';
const typeFields = {
  action: z.literal('type'),
  thoughts,
  text: z.string(),
  press_enter: z.boolean().optional(),
  delete_existing_text: z.boolean().optional(),
  /** The field to click before typing (Fara-7B's `type`; accepted from any model, shown only in Fara-7B's prompt). */
  coordinate: coordinateSchema.optional(),
};
/** Fara-1.5 types at the focused element; a `coordinate` a model adds anyway is clicked first (see fara.ts). */
export const typeFara15Schema = z.strictObject(typeFields).describe(TYPE_DESCRIPTION);
/** Fara-7B may also name the field to click before typing. */
export const typeFara7bSchema = z.strictObject(typeFields).describe(TYPE_DESCRIPTION);

/** Vertical scroll; positive `pixels` scrolls up, negative down. */
export const scrollSchema = z
  .strictObject({ action: z.literal('scroll'), thoughts, pixels: z.number() })
  .describe('Turn the mouse wheel to scroll the page vertically.');
/** Horizontal scroll; like `scroll`, positive `pixels` moves toward the start (left), negative to the right. */
export const hscrollSchema = z
  .strictObject({ action: z.literal('hscroll'), thoughts, pixels: z.number() })
  .describe('Scroll the page sideways.');

// Browser navigation.
export const visitUrlSchema = z
  .strictObject({ action: z.literal('visit_url'), thoughts, url: z.string().min(1) })
  .describe('Open a web address in the current tab.');
export const historyBackSchema = z
  .strictObject({ action: z.literal('history_back'), thoughts })
  .describe("Go back one page in the browser's history.");
export const webSearchSchema = z
  .strictObject({ action: z.literal('web_search'), thoughts, query: z.string().min(1) })
  .describe('Search the web for a query and show the results page.');

// Cognition and control.
export const readPageAnswerQuestionSchema = z
  .strictObject({
    action: z.literal('read_page_answer_question'),
    thoughts,
    question: z.string().min(1),
  })
  .describe('Answer a question from the text of the whole current page, including parts not on screen.');
export const pauseAndMemorizeFactSchema = z
  .strictObject({
    action: z.literal('pause_and_memorize_fact'),
    thoughts,
    fact: z.string(),
  })
  .describe('Stop to write down a fact you will need in a later step.');
export const askUserQuestionSchema = z
  .strictObject({
    action: z.literal('ask_user_question'),
    thoughts,
    question: z.string().min(1),
  })
  .describe('Ask the user for missing information or for permission, then wait for the reply.');
export const waitSchema = z
  .strictObject({ action: z.literal('wait'), thoughts, time: z.number().nonnegative() })
  .describe('Do nothing for a number of seconds so the page can change.');
/** Fara-1.5 ends the task with a final answer text. */
export const terminateFara15Schema = z
  .strictObject({ action: z.literal('terminate'), thoughts, answer: z.string() })
  .describe('Finish the task and give the final answer.');
/** Fara-7B ends the task with a completion status. */
export const terminateFara7bSchema = z
  .strictObject({
    action: z.literal('terminate'),
    thoughts,
    status: z.enum(['success', 'failure']),
  })
  .describe('Finish the task and report whether it succeeded.');

/** The 18 Fara-1.5 actions, in the order the tool schema lists them. */
export const fara15ActionSchema = z.discriminatedUnion('action', [
  keySchema,
  typeFara15Schema,
  mouseMoveSchema,
  leftClickSchema,
  leftClickDragSchema,
  rightClickSchema,
  doubleClickSchema,
  tripleClickSchema,
  scrollSchema,
  hscrollSchema,
  visitUrlSchema,
  historyBackSchema,
  webSearchSchema,
  readPageAnswerQuestionSchema,
  pauseAndMemorizeFactSchema,
  askUserQuestionSchema,
  waitSchema,
  terminateFara15Schema,
]);

/** The 11 Fara-7B actions, in the order the tool schema lists them. */
export const fara7bActionSchema = z.discriminatedUnion('action', [
  keySchema,
  typeFara7bSchema,
  mouseMoveSchema,
  leftClickSchema,
  scrollSchema,
  visitUrlSchema,
  webSearchSchema,
  historyBackSchema,
  pauseAndMemorizeFactSchema,
  waitSchema,
  terminateFara7bSchema,
]);

export type Fara15Action = z.infer<typeof fara15ActionSchema>;
export type Fara7bAction = z.infer<typeof fara7bActionSchema>;
/** Any action of any Fara family. */
export type AgentAction = Fara15Action | Fara7bAction;
/** Every action name known to any Fara family. */
export type ActionName = AgentAction['action'];
/** One member schema of a Fara family's union. */
export type ActionObjectSchema =
  (typeof fara15ActionSchema)['options'][number] | (typeof fara7bActionSchema)['options'][number];
type KeysOfUnion<T> = T extends unknown ? keyof T : never;
/** Argument names other than the discriminator and the thoughts. */
export type ActionParamName = Exclude<KeysOfUnion<AgentAction>, 'action' | 'thoughts'>;
