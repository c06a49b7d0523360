// Reading a Qwen-VL output into one of our actions. The `computer_use` call (locate.ts) names a Qwen action; each
// becomes ours: the pointer actions, key, type, scroll, hscroll and wait as they are, `terminate` (status) as our
// terminate with a status, `answer` (text) as our terminate with that answer; middle_click, which we cannot carry
// out, is refused. Coordinates are converted to our 'norm1000' space (thousandths of the screen): Qwen2.5-VL's from
// pixels of the resized screenshot, Qwen3-VL's from its grid (999 or 1000, settings.ts); scroll amounts likewise, as
// thousandths of the screen's height (hscroll: its width), a small amount (under 20) taken as wheel notches of 100
// units each. A text with no call that asks something is a question to the person (Qwen has no action for it); any
// other is a missing call, fed back like every malformed output.
import type { AgentAction, ActionObjectSchema } from '../../actions/schemas';
import {
  doubleClickSchema,
  hscrollSchema,
  keySchema,
  leftClickDragSchema,
  leftClickSchema,
  mouseMoveSchema,
  rightClickSchema,
  scrollSchema,
  terminateFara15Schema,
  terminateFara7bSchema,
  tripleClickSchema,
  typeFara15Schema,
  waitSchema,
} from '../../actions/schemas';
import { normalizeArguments } from '../../actions/normalize';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  MissingToolCallError,
  ModelOutputError,
  OutputTooLongError,
  ToolCallJsonError,
  UnknownActionError,
} from '../../model/errors';
import { MAX_OUTPUT_CHARS } from '../../model/parse';
import type { ModelOutput, ParsedOutput } from '../../model/parse';
import { asksPerson, textOnlyAction } from '../native/text-output';
import type { ReadInput } from '../family';
import { findCall } from './locate';
import type { FoundCall } from './locate';
import { COMPUTER_USE, QWEN_ACTIONS } from './prompt';
import { spaceOf } from './settings';
import type { QwenGeneration, QwenSpace } from './settings';

/** Our schema for each Qwen action we carry out (answer: our terminate with an answer). */
const SCHEMAS: Readonly<Record<string, ActionObjectSchema>> = {
  key: keySchema,
  type: typeFara15Schema,
  mouse_move: mouseMoveSchema,
  left_click: leftClickSchema,
  left_click_drag: leftClickDragSchema,
  right_click: rightClickSchema,
  double_click: doubleClickSchema,
  triple_click: tripleClickSchema,
  scroll: scrollSchema,
  hscroll: hscrollSchema,
  wait: waitSchema,
  terminate: terminateFara7bSchema,
  answer: terminateFara15Schema,
};

/** Our actions a generation's outputs become: its Qwen actions', and a question to the person before the end. */
export function allowedActionsOf(generation: QwenGeneration): string[] {
  const acts = QWEN_ACTIONS[generation].filter((a) => a !== 'answer' && a !== 'terminate');
  return [...acts, 'ask_user_question', 'terminate'];
}

/**
 * The generation a step is read for: the endpoint's, when the read is given it; else the one the step's request
 * offered (only Qwen3-VL is offered hscroll), so request and read agree.
 */
function spaceFor(input: ReadInput): QwenSpace {
  if (input.endpoint) return spaceOf(input.endpoint, input.screen);
  const generation: QwenGeneration = input.allowed.includes('hscroll') ? '3' : '2.5';
  return spaceOf({ tool: generation }, input.screen);
}

/** Normalises an action name as written: case, spaces and dashes ("Left-Click" → "left_click"). */
function actionName(value: unknown): string | undefined {
  return typeof value === 'string'
    ? value
        .trim()
        .toLowerCase()
        .replace(/[\s-]+/g, '_')
    : undefined;
}

/** The Qwen action the call names: its `action` argument, or a function named after the action. */
function qwenActionOf(call: FoundCall, offered: readonly string[]): string {
  const named = actionName(call.args.action);
  if (named) return named;
  const byName = actionName(call.name);
  if (byName && byName !== COMPUTER_USE && offered.includes(byName)) return byName;
  throw new ToolCallJsonError(call.body, 'the arguments have no string "action"');
}

/** The call's arguments rewritten into ours for the action: answer's `text` is our terminate's `answer`. */
function argumentsFor(qwen: string, args: Record<string, unknown>, coerced: string[]): Record<string, unknown> {
  const { action: _action, ...rest } = args;
  if (qwen === 'answer') {
    const { text, ...others } = rest;
    return { ...others, action: 'terminate', ...(text !== undefined ? { answer: text } : {}) };
  }
  if (qwen === 'terminate' && rest.status === undefined) {
    coerced.push('status: (missing) → "success"');
    return { ...rest, action: 'terminate', status: 'success' };
  }
  return { ...rest, action: qwen };
}

/** Rounded to a tenth: finer than any pixel, and readable in the record. */
const tenth = (n: number): number => Math.round(n * 10) / 10;

/** A point in the model's space as thousandths of the screen; outside the space: refused. */
function toThousandths(action: string, point: readonly [number, number], space: QwenSpace): [number, number] {
  const [x, y] = point;
  if (x < 0 || y < 0 || x > space.width || y > space.height) {
    const where = space.generation === '2.5' ? 'the screenshot' : 'the grid';
    const detail = `[${x}, ${y}] is outside ${where} (0-${space.width}, 0-${space.height})`;
    throw new InvalidActionArgumentsError(action, 'coordinate', detail);
  }
  return [tenth((x * 1000) / space.width), tenth((y * 1000) / space.height)];
}

/**
 * Below this, a scroll amount is read as wheel notches, not pixels: Qwen's agent data was recorded with pyautogui,
 * whose scroll takes notches, and models write both (`-5` and `-500`); no one means a scroll of a few pixels.
 */
const NOTCH_LIMIT = 20;
/** One wheel notch, in units of the model's space (a browser scrolls about 100 pixels per notch). */
const NOTCH = 100;

/** The validated action with its point and scroll amount in our 'norm1000' space. */
function inOurSpace(action: AgentAction, space: QwenSpace, coerced: string[]): AgentAction {
  if ('coordinate' in action && action.coordinate) {
    return { ...action, coordinate: toThousandths(action.action, action.coordinate, space) };
  }
  if (action.action === 'scroll' || action.action === 'hscroll') {
    const extent = action.action === 'scroll' ? space.height : space.width;
    let amount = action.pixels;
    if (amount !== 0 && Math.abs(amount) < NOTCH_LIMIT) {
      amount *= NOTCH;
      coerced.push(`pixels: ${action.pixels} notches → ${amount}`);
    }
    return { ...action, pixels: Math.round((amount * 1000) / extent) };
  }
  return action;
}

/** Our action for a found call; a call that is none throws, carrying what the model wrote. */
function actionOfCall(call: FoundCall, space: QwenSpace, allowed: readonly string[]): ParsedOutput {
  const offered = QWEN_ACTIONS[space.generation];
  const qwen = qwenActionOf(call, offered);
  const schema = offered.includes(qwen) ? SCHEMAS[qwen] : undefined;
  if (!schema) throw new UnknownActionError(String(call.args.action ?? call.name), offered);
  const coerced: string[] = [];
  const { args, ignored, coerced: rewrites } = normalizeArguments(schema, argumentsFor(qwen, call.args, coerced));
  const result = schema.safeParse({ ...args, thoughts: call.thoughts });
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = String(issue?.path[0] ?? '(arguments)');
    const written = field === 'answer' ? call.args.text : args[field];
    const reason = (issue?.message ?? 'not valid').replace(/^Invalid input: /, '');
    const detail = written === undefined ? 'missing' : `${JSON.stringify(written)}, which is not valid (${reason})`;
    throw new InvalidActionArgumentsError(qwen, field === 'answer' ? 'text' : field, detail, { cause: result.error });
  }
  const action = inOurSpace(result.data as AgentAction, space, coerced);
  if (!allowed.includes(action.action)) throw new UnknownActionError(qwen, offered);
  return {
    thoughts: call.thoughts,
    action,
    toolCallText: call.body,
    notes: {
      source: call.source,
      reading: call.reading,
      ...(call.shape ? { shape: call.shape } : {}),
      ignoredArguments: ignored,
      coerced: [...coerced, ...rewrites],
      extraToolCalls: call.extraCalls,
    },
  };
}

/**
 * A text with no call: a question to the person when it asks one. Otherwise Qwen3-VL, which has `answer`, missed its
 * call (fed back); Qwen2.5-VL has no action that carries an answer, so its text is the task's answer.
 */
function textOnly(text: string, allowed: readonly string[], generation: QwenGeneration): ParsedOutput {
  if (text === '') throw new EmptyOutputError();
  const asks = asksPerson(text) && allowed.includes('ask_user_question');
  if (!asks && generation !== '2.5') throw Object.assign(new MissingToolCallError(), { thoughts: text });
  return { thoughts: '', action: textOnlyAction(text), toolCallText: '' };
}

/** Reads an output (see the module comment); one that is no valid action throws a ModelOutputError. */
export function readQwenOutput(output: ModelOutput, input: ReadInput): ParsedOutput {
  const length =
    output.text.length + (output.toolCalls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  if (length > MAX_OUTPUT_CHARS) throw new OutputTooLongError(length, MAX_OUTPUT_CHARS);
  const found = findCall(output);
  if ('text' in found) return textOnly(found.text, input.allowed, spaceFor(input).generation);
  try {
    return actionOfCall(found, spaceFor(input), input.allowed);
  } catch (err) {
    if (err instanceof ModelOutputError) {
      err.thoughts ??= found.thoughts;
      err.written ??= found.args;
    }
    throw err;
  }
}
