// The Fara action spaces: which actions, tool schema and coordinate space each Fara model family speaks, and the
// sentence it reads after each screenshot. Fara-1.5 (Qwen3.5-based) sees a fixed 1000x1000 space; Fara-7B
// (Qwen2.5-VL-based) sees pixels of the resized screenshot, so its tool schema depends on the screenshot size.
// Each family's own space is defined in its folder (src/families/fara-1.5, fara-7b), with the seam the agent calls.
import type { z } from 'zod';
import type { ActionObjectSchema, AgentAction } from './schemas';
import { allowedActionsOf, buildToolSchema } from './tool-schema';
import type { HiddenArguments, ScreenSize, ToolSchema } from './tool-schema';

export type FaraName = 'fara-1.5' | 'fara-7b';
export const FARA_NAMES: readonly FaraName[] = ['fara-1.5', 'fara-7b'];

/** Side of the fixed square coordinate space Fara-1.5 speaks in. */
export const NORM_DISPLAY_SIZE = 1000;
/** The screenshot size Fara-7B sees for the default 1440x900 viewport (smart_resize with factor 28). */
export const FARA7B_DEFAULT_SCREEN: ScreenSize = { width: 1428, height: 896 };

/**
 * The sentence both Fara models were trained to read after each new screenshot, byte for byte as the originals send
 * it (the one text here taken verbatim: a model reads its training text best).
 */
export const FARA_STEP_PROMPT = 'Here is the next screenshot. Think about what to do next.';

export interface FaraSpace<A extends AgentAction = AgentAction> {
  name: FaraName;
  /** Discriminated union on `action` of exactly this family's actions (strict objects). */
  actionSchema: z.ZodType<A>;
  /** The member schemas of `actionSchema`, in the order the tool schema lists them. */
  actionOptions: readonly ActionObjectSchema[];
  /** The `action` enum of `toolSchema`, so the allowed list is what the model is told. */
  allowedActions: readonly string[];
  /** The tool schema for the family's default screen (see `toolSchemaFor` for another screenshot size). */
  toolSchema: ToolSchema;
  /** Rebuilds the tool schema for the size of the resized screenshot (only Fara-7B's text depends on it). */
  toolSchemaFor(resizedScreen: ScreenSize): ToolSchema;
  /** The coordinate space the model's numbers live in, given the resized screenshot size. */
  displaySize(resizedScreen: ScreenSize): ScreenSize;
  coordinateSpace: 'norm1000' | 'resized-pixels';
  /** smart_resize factor: 32 for Qwen3.5-based Fara-1.5, 28 for Qwen2.5-VL-based Fara-7B. */
  resizeFactor: 32 | 28;
  /** Arguments the validator accepts but the prompt does not show (the model was not trained on them). */
  hiddenArguments: HiddenArguments;
  /** The sentence asking for the next action after a screenshot (an endpoint's `stepPrompt` replaces it). */
  stepPrompt: string;
}

/** A Fara action space: its union's members, coordinate space, resize factor and the screen its default tool schema is for. */
export function makeFaraSpace<A extends AgentAction>(
  name: FaraName,
  actionSchema: z.ZodType<A>,
  options: readonly ActionObjectSchema[],
  space: Pick<FaraSpace, 'coordinateSpace' | 'resizeFactor' | 'hiddenArguments'>,
  defaultScreen: ScreenSize,
): FaraSpace<A> {
  const displaySize = (resized: ScreenSize): ScreenSize =>
    space.coordinateSpace === 'norm1000' ? { width: NORM_DISPLAY_SIZE, height: NORM_DISPLAY_SIZE } : { ...resized };
  const toolSchemaFor = (resized: ScreenSize): ToolSchema =>
    buildToolSchema(options, displaySize(resized), space.hiddenArguments);
  const toolSchema = toolSchemaFor(defaultScreen);
  return {
    name,
    actionSchema,
    actionOptions: options,
    allowedActions: allowedActionsOf(toolSchema),
    toolSchema,
    toolSchemaFor,
    displaySize,
    stepPrompt: FARA_STEP_PROMPT,
    ...space,
  };
}

/** The member schema of `space`'s union for an action name, if it has that action. */
export function actionOption(space: FaraSpace, name: string): ActionObjectSchema | undefined {
  return space.actionOptions.find((o) => o.shape.action.value === name);
}

export function isFaraName(s: string): s is FaraName {
  return (FARA_NAMES as readonly string[]).includes(s);
}
