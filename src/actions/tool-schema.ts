// Derives the JSON function-tool schema shown to the model from a family's zod action union, so the prompt, the
// allowed-action list and the validator can never disagree. The schema follows the Qwen computer-use convention:
// one function, `computer_use`, whose flat argument object is told apart by `action` (the only required field).
import { z } from 'zod';
import type { ActionObjectSchema, ActionParamName } from './schemas';

export const TOOL_NAME = 'computer_use';

export interface ScreenSize {
  width: number;
  height: number;
}

export interface ToolParameter {
  type: 'string' | 'number' | 'boolean' | 'array';
  description: string;
  enum?: string[];
}

export interface ToolSchema {
  type: 'function';
  function: {
    name: typeof TOOL_NAME;
    description: string;
    parameters: {
      type: 'object';
      properties: { action: ToolParameter & { enum: string[] } } & Record<string, ToolParameter>;
      required: ['action'];
    };
  };
}

/**
 * What each argument means. A function receives the names of the actions using the argument in this family, so
 * the text never mentions an action the family lacks. Which actions need the argument is appended afterwards.
 */
const PARAM_DESCRIPTIONS: Record<ActionParamName, string | ((actions: readonly string[]) => string)> = {
  keys: 'Key names, e.g. ["Enter"] or ["Control", "a"].',
  text: 'The text to type.',
  press_enter: 'If true, press Enter after typing.',
  delete_existing_text: "If true, clear the field's current content before typing.",
  coordinate: (actions) =>
    '[x, y]: x counted from the left edge of the screen, y from the top edge.' +
    (actions.includes('type') ? ' For `type`, the field to click before typing.' : '') +
    (actions.includes('left_click_drag') ? ' For `left_click_drag`, where the drag ends.' : ''),
  pixels: (actions) =>
    'How far to scroll. For `scroll`, positive goes up and negative down.' +
    (actions.includes('hscroll') ? ' For `hscroll`, positive goes left and negative right.' : ''),
  url: 'The web address to open.',
  query: 'The search terms.',
  question: 'The question to answer from the page, or to put to the user.',
  fact: 'The fact to keep for later steps.',
  time: 'How many seconds to wait.',
  answer: 'The final answer to give the user.',
  status: 'Whether the task was completed.',
};

/** The general part of the tool description; the screen size is the coordinate space the model must speak. */
function toolDescription(screen: ScreenSize): string {
  return [
    'Drive a web browser with the mouse and keyboard while looking at screenshots of it.',
    '* Only the browser is available: there is no terminal, desktop or other application.',
    '* Pages can take a while to load or react. If nothing seems to have changed yet, wait and look at the next screenshot.',
    `* The screen resolution is ${screen.width}x${screen.height}; every coordinate you give is in this space.`,
    '* Find the element in the latest screenshot before pointing at it, and aim for its centre rather than its border.',
    '* If a click did not take effect, move the position so the pointer tip sits on the element and try again.',
  ].join('\n');
}

interface ParamUsage {
  type: ToolParameter['type'];
  enum?: string[];
  requiredBy: string[];
  optionalFor: string[];
}

/** The literal value of an action schema's discriminator. */
export function actionNameOf(schema: ActionObjectSchema): string {
  return schema.shape.action.value;
}

function jsonTypeOf(field: z.ZodType): Pick<ToolParameter, 'type' | 'enum'> {
  const json = z.toJSONSchema(field) as { type?: unknown; enum?: unknown };
  if (json.type !== 'string' && json.type !== 'number' && json.type !== 'boolean' && json.type !== 'array') {
    throw new Error(`Unsupported tool parameter type: ${String(json.type)}`);
  }
  return Array.isArray(json.enum) ? { type: json.type, enum: json.enum.map(String) } : { type: json.type };
}

/** Arguments an action accepts but the prompt does not show, per action name (e.g. Fara-1.5's `type` coordinate). */
export type HiddenArguments = Readonly<Partial<Record<string, readonly string[]>>>;

function collectParams(options: readonly ActionObjectSchema[], hidden: HiddenArguments): Map<string, ParamUsage> {
  const params = new Map<string, ParamUsage>();
  for (const option of options) {
    const action = actionNameOf(option);
    for (const [name, field] of Object.entries(option.shape as Record<string, z.ZodType>)) {
      if (name === 'action' || name === 'thoughts' || hidden[action]?.includes(name)) continue;
      const usage = params.get(name) ?? { ...jsonTypeOf(field), requiredBy: [], optionalFor: [] };
      (field.safeParse(undefined).success ? usage.optionalFor : usage.requiredBy).push(action);
      params.set(name, usage);
    }
  }
  return params;
}

function usageSentence(usage: ParamUsage): string {
  const list = (actions: string[]) => actions.map((a) => `\`action=${a}\``).join(', ');
  const parts: string[] = [];
  if (usage.requiredBy.length > 0) parts.push(`Required by ${list(usage.requiredBy)}.`);
  if (usage.optionalFor.length > 0) parts.push(`Optional for ${list(usage.optionalFor)}.`);
  return parts.join(' ');
}

function isParamName(name: string): name is ActionParamName {
  return Object.hasOwn(PARAM_DESCRIPTIONS, name);
}

function describeParam(name: string, usage: ParamUsage): string {
  if (!isParamName(name)) throw new Error(`No tool description for action argument "${name}"`);
  const text = PARAM_DESCRIPTIONS[name];
  return typeof text === 'function' ? text([...usage.requiredBy, ...usage.optionalFor]) : text;
}

function actionParameter(options: readonly ActionObjectSchema[]): ToolParameter & { enum: string[] } {
  const lines = options.map((o) => `* \`${actionNameOf(o)}\`: ${o.description ?? ''}`);
  return {
    type: 'string',
    description: ['The action to perform. One of:', ...lines].join('\n'),
    enum: options.map(actionNameOf),
  };
}

/**
 * Builds the tool schema for a family's action options, declaring `screen` as the model's coordinate space.
 * `hidden` arguments are accepted by the validator but left out of the schema the model is shown.
 */
export function buildToolSchema(
  options: readonly ActionObjectSchema[],
  screen: ScreenSize,
  hidden: HiddenArguments = {},
): ToolSchema {
  const properties: ToolSchema['function']['parameters']['properties'] = { action: actionParameter(options) };
  for (const [name, usage] of collectParams(options, hidden)) {
    const description = `${describeParam(name, usage)} ${usageSentence(usage)}`;
    properties[name] = usage.enum
      ? { type: usage.type, description, enum: usage.enum }
      : { type: usage.type, description };
  }
  return {
    type: 'function',
    function: {
      name: TOOL_NAME,
      description: toolDescription(screen),
      parameters: { type: 'object', properties, required: ['action'] },
    },
  };
}

/** The action names a tool schema allows (its `action` enum). */
export function allowedActionsOf(schema: ToolSchema): readonly string[] {
  return [...schema.function.parameters.properties.action.enum];
}
