// What the model is told when its output could not be carried out (seed 004's rule: an error is an observation the
// model can correct). One line that names the problem and what would have been accepted: the allowed actions, or
// the arguments of the action it meant. Recorded as the step's tool_output error and fed into the next step's chat.
import { actionOption } from '../actions/fara';
import type { FaraSpace } from '../actions/fara';
import type { ActionObjectSchema } from '../actions/schemas';
import type { ScreenSize } from '../actions/tool-schema';
import type { ModelOutputError } from './errors';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  MissingToolCallError,
  OutputTooLongError,
  ToolCallJsonError,
  UnknownActionError,
} from './errors';

const FORMAT_HINT =
  'End your output with one <tool_call>{"name": "computer_use", "arguments": {"action": …}}</tool_call>.';

function clip(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** "coordinate ([x, y], required), text (required), press_enter" for one action, as the prompt shows it. */
export function argumentList(family: FaraSpace, option: ActionObjectSchema): string {
  const action = option.shape.action.value;
  const hidden = family.hiddenArguments[action] ?? [];
  const parts = Object.entries(option.shape as Record<string, { safeParse(v: unknown): { success: boolean } }>)
    .filter(([name]) => name !== 'action' && name !== 'thoughts' && !hidden.includes(name))
    .map(([name, field]) => {
      const required = !field.safeParse(undefined).success;
      const shape = name === 'coordinate' ? '[x, y]' : name === 'keys' ? '["Control", "a"]' : '';
      const marks = [shape, required ? 'required' : ''].filter(Boolean).join(', ');
      return marks ? `${name} (${marks})` : name;
    });
  return parts.length > 0 ? parts.join(', ') : 'no arguments';
}

/** The one-line text the model reads after an output that was no valid action. */
export function invalidOutputFeedback(error: ModelOutputError, family: FaraSpace, screen?: ScreenSize): string {
  const noAction = 'No action was taken.';
  if (error instanceof EmptyOutputError) return `Your output was empty. ${noAction} ${FORMAT_HINT}`;
  if (error instanceof OutputTooLongError) {
    return `Your output was ${error.length} characters long, more than the ${error.limit} read. ${noAction} Think briefly, then ${FORMAT_HINT.charAt(0).toLowerCase()}${FORMAT_HINT.slice(1)}`;
  }
  if (error instanceof MissingToolCallError) return `Your output had no tool call. ${noAction} ${FORMAT_HINT}`;
  if (error instanceof UnknownActionError) {
    return `"${clip(error.action, 40)}" is not an available action. ${noAction} Use one of: ${error.allowedActions.join(', ')}.`;
  }
  if (error instanceof InvalidActionArgumentsError) {
    const option = actionOption(family, error.action);
    const space = screen ? family.displaySize(screen) : undefined;
    const within =
      space && error.field === 'coordinate'
        ? ` Coordinates go from 0 to ${space.width} (x) and 0 to ${space.height} (y).`
        : '';
    const args = option ? ` Arguments of ${error.action}: ${argumentList(family, option)}.` : '';
    return `The "${error.field}" argument of ${error.action} is ${clip(error.detail, 120)}. ${noAction}${within}${args}`;
  }
  if (error instanceof ToolCallJsonError) {
    return `Your tool call could not be read (${clip(error.message.replace(/^The tool call could not be read: /, ''), 120)}). ${noAction} ${FORMAT_HINT}`;
  }
  return `Your output could not be read (${clip(error.message, 120)}). ${noAction} ${FORMAT_HINT}`;
}
