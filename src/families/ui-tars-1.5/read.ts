// Reading a UI-TARS-1.5 output (`Thought: …` then `Action: …`, several actions split by blank lines) into our actions,
// and the one line the model reads after an output that was none.
//
// `@ui-tars/action-parser` reads the output: the thought (or a Reflection / Action_Summary), the action calls split on
// blank lines, each call's name and arguments, the box tokens, `point=`/`start_point=`/`end_point=` rewritten to
// boxes, `<point>x y</point>` and `<bbox>` written as boxes. Where it does not fit, we do it here:
// - a call it cannot read it logs to the console and returns as an empty action; so each call is checked to be a call
//   before it is handed over, and one that is not is a ModelOutputError naming it;
// - its coordinate conversion (to 0–1 fractions and to screen pixels, with its own smart_resize of the screen) is not
//   used: it is asked for the numbers as written (factor 1, no screen), which are our 'resized-pixels' (actions.ts);
// - a text argument is read from the call as written (it cuts a double-quoted text at a comma, keeps escapes).
import { actionParser } from '@ui-tars/action-parser';
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  ModelOutputError,
  OutputTooLongError,
  UnknownActionError,
} from '../../model/errors';
import { MAX_OUTPUT_CHARS } from '../../model/parse';
import type { ModelOutput, ParsedOutput } from '../../model/parse';
import { canonicalName, ourActions } from './actions';
import { UI_TARS_ACTION_NAMES, UI_TARS_FORMS } from './prompt';

/** The output has no `Action:` line. */
export class MissingActionError extends ModelOutputError {
  constructor() {
    super('The output has no "Action:" line');
  }
}

/** A part of the `Action:` line that is no call `name(arguments)`. */
export class ActionSyntaxError extends ModelOutputError {
  constructor(readonly line: string) {
    super(`The action "${line}" is not a call such as click(start_box='(x1,y1)')`);
  }
}

const ACTION_MARK = /Action[:：]/g;
const BOX_TOKENS = /<\|box_start\|>|<\|box_end\|>/g;
const CALL = /^\w+\(.*\)$/s;

function withThoughts(error: unknown, thoughts: string): unknown {
  if (error instanceof ModelOutputError && thoughts !== '') error.thoughts = thoughts;
  return error;
}

/** The text before the last `Action:` mark, and the calls after it (one per block split by a blank line). */
function splitOutput(text: string): { before: string; actionText: string; calls: string[] } {
  const marks = [...text.matchAll(ACTION_MARK)];
  const last = marks[marks.length - 1];
  if (!last) throw withThoughts(new MissingActionError(), text.replace(/^\s*Thought:\s*/, '').trim());
  const before = text.slice(0, last.index);
  // A closing code fence (the prompt shows the format inside one) is no part of the actions.
  const actionText = text
    .slice(last.index + last[0].length)
    .replace(/`{3}\s*$/, '')
    .trim();
  const calls = actionText
    .split('\n\n')
    .map((c) => c.trim())
    .filter(Boolean);
  return { before, actionText, calls };
}

/** Our actions up to and including the first that ends the task or asks the person; later ones are never reached. */
function untilStop(actions: AgentAction[]): AgentAction[] {
  const stop = actions.findIndex((a) => a.action === 'terminate' || a.action === 'ask_user_question');
  return stop < 0 ? actions : actions.slice(0, stop + 1);
}

/** A later action of a batch: without the thought, unless it is the answer or the question. */
function laterAction(action: AgentAction): AgentAction {
  if (action.action === 'terminate' || action.action === 'ask_user_question') return action;
  const bare = { ...action };
  delete bare.thoughts;
  return bare;
}

/** Reads an output (see the module comment); one that is no valid action throws a ModelOutputError. */
export function readUiTarsOutput(output: ModelOutput, screen: ScreenSize, allowed: readonly string[]): ParsedOutput {
  const text = output.text;
  if (text.trim() === '') throw new EmptyOutputError();
  if (text.length > MAX_OUTPUT_CHARS) throw new OutputTooLongError(text.length, MAX_OUTPUT_CHARS);
  const { before, actionText, calls } = splitOutput(text);
  const ownThoughts = before.replace(/^\s*(`{3}\s*)?Thought:\s*/, '').trim();
  const bad = calls.length === 0 ? '' : calls.find((c) => !CALL.test(c.replace(BOX_TOKENS, '').trim()));
  if (bad !== undefined) throw withThoughts(new ActionSyntaxError(bad), ownThoughts);
  const prediction = `${before}Action: ${calls.join('\n\n')}`;
  const parsed = actionParser({ prediction, factor: 1 }).parsed;
  const thoughts = parsed[0]?.thought.trim() || ownThoughts;
  let actions: AgentAction[];
  try {
    actions = parsed.flatMap((p, i) =>
      ourActions(
        { name: p.action_type, inputs: p.action_inputs, written: (calls[i] ?? '').replace(BOX_TOKENS, '') },
        screen,
        thoughts,
      ),
    );
  } catch (err) {
    throw withThoughts(err, thoughts);
  }
  actions = untilStop(actions);
  const refused = actions.find((a) => !allowed.includes(a.action));
  if (refused) throw withThoughts(new UnknownActionError(refused.action, allowed), thoughts);
  const [first, ...rest] = actions;
  if (!first) throw withThoughts(new ActionSyntaxError(actionText), thoughts);
  // The later actions of a batch are carried out as steps of their own; the thought is the first one's.
  const then = rest.map((action) => ({ action: laterAction(action) }));
  return { thoughts, action: first, toolCallText: actionText, ...(then.length > 0 ? { then } : {}) };
}

/** How an output should look, for the feedback line. */
function expected(screen: ScreenSize): string {
  return (
    'Write "Thought: ..." and then "Action: ..." with one action of the Action Space, such as ' +
    `${UI_TARS_FORMS.click}, with x1 and y1 in pixels of the ${screen.width}x${screen.height} screenshot.`
  );
}

function formOf(name: string): string | undefined {
  try {
    return UI_TARS_FORMS[canonicalName(name)];
  } catch {
    return undefined;
  }
}

/** The one line the model reads next step after an output that was no valid action. */
export function uiTarsFeedback(error: ModelOutputError, screen: ScreenSize): string {
  const none = 'No action was taken.';
  if (error instanceof EmptyOutputError) return `Your last output was empty. ${none} ${expected(screen)}`;
  if (error instanceof MissingActionError) return `Your last output had no "Action:" line. ${none} ${expected(screen)}`;
  if (error instanceof ActionSyntaxError) {
    return `The action "${error.line}" could not be read. ${none} ${expected(screen)}`;
  }
  if (error instanceof UnknownActionError) {
    const forms = UI_TARS_ACTION_NAMES.map((n) => UI_TARS_FORMS[n]).join(', ');
    return `${error.action || 'That action'} is not an action you can use. ${none} Use one of: ${forms}.`;
  }
  if (error instanceof InvalidActionArgumentsError) {
    const form = formOf(error.action);
    const points = form?.includes('_box')
      ? `, with points in pixels of the ${screen.width}x${screen.height} screenshot`
      : '';
    const how = form ? `Write it as ${form}${points}.` : expected(screen);
    return `The ${error.field} argument of ${error.action} is ${error.detail.replace(/^is /, '')}. ${none} ${how}`;
  }
  return `Your last output could not be read (${error.message}). ${none} ${expected(screen)}`;
}
