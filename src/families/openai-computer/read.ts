// Reading one Responses API output into our actions: its computer_call items' actions as a batch (the first action
// now, the rest as `then`), a pending safety check as a question to the person that holds the whole batch, or a turn
// with text and no call as a question or the task's end. Also the record of an output (its replayed items as JSON) and
// the one line the model reads after an output that was no valid action.
import type { ResponseComputerToolCall } from 'openai/resources/responses/responses';
import type { ScreenSize } from '../../actions/tool-schema';
import { EmptyOutputError, ModelOutputError, UnknownActionError } from '../../model/errors';
import type { BatchedAction, ModelOutput, ParsedOutput } from '../../model/parse';
import { textOnlyAction } from '../native/text-output';
import { OPENAI_ACTION_TYPES, ourBatch } from './actions';
import { callsOf, isRecord, messageText, reasoningText, recordedItems, replayItemsOf } from './wire';
import type { JsonObject, ReplayItem } from './wire';

export type PendingCheck = ResponseComputerToolCall.PendingSafetyCheck;

/** The output's items: from the response body, else from its record (a replayed decision), else none. */
export function itemsOf(output: ModelOutput): ReplayItem[] {
  if (output.native !== undefined) return replayItemsOf(output.native);
  return recordedItems(output.text) ?? [];
}

/** The JSON recorded for an output and sent back in later requests: its replayed items, unchanged, in order. */
export function outputTextOf(output: ModelOutput): string {
  if (output.native === undefined && recordedItems(output.text) === null) return output.text;
  return JSON.stringify(itemsOf(output));
}

/** A call's OpenAI actions: GA `actions[]`, else the preview's single `action`. */
export function nativeActionsOf(call: ResponseComputerToolCall): JsonObject[] {
  const actions: unknown[] = Array.isArray(call.actions) ? call.actions : call.action ? [call.action] : [];
  return actions.filter(isRecord);
}

/** The checks a turn's calls hold, in order. */
export function checksOf(items: readonly ReplayItem[]): PendingCheck[] {
  return callsOf(items).flatMap((c) => (Array.isArray(c.pending_safety_checks) ? c.pending_safety_checks : []));
}

/** What the person is asked for the checks: the provider's messages (its codes where it sent no message). */
export function checkQuestion(checks: readonly PendingCheck[]): string {
  const lines = checks.map((c) => c.message?.trim() || `OpenAI's safety check ${c.code ?? c.id} asks to confirm.`);
  return [...new Set(lines)].join('\n');
}

/** The turn's thoughts: its reasoning summaries, and any text said beside its calls. */
function thoughtsOf(items: readonly ReplayItem[], withMessages: boolean): string {
  return items
    .map((i) =>
      i.type === 'reasoning' ? reasoningText(i) : withMessages && i.type === 'message' ? messageText(i) : '',
    )
    .filter(Boolean)
    .join('\n')
    .trim();
}

/** The batch of a turn's calls: our actions, the first carrying the thoughts. Throws a ModelOutputError. */
export function batchOf(items: readonly ReplayItem[], screen: ScreenSize): BatchedAction[] {
  const calls = callsOf(items);
  const natives = calls.flatMap(nativeActionsOf);
  // The preview tool's call carries one `action` and no `actions[]`.
  const preview = calls.length === 1 && calls.every((c) => !Array.isArray(c.actions) && isRecord(c.action));
  // A call with no action asks for nothing but the screen: a screenshot, as the GA guide's first turn does.
  return natives.length > 0
    ? ourBatch(natives, screen, preview)
    : [{ action: { action: 'wait', time: 0 }, native: {} }];
}

function withThoughts(error: unknown, thoughts: string): unknown {
  if (error instanceof ModelOutputError && thoughts !== '') error.thoughts = thoughts;
  return error;
}

/** Reads an output (see the module comment); an output that is no valid action throws a ModelOutputError. */
export function readOpenAiOutput(output: ModelOutput, screen: ScreenSize, allowed: readonly string[]): ParsedOutput {
  const items = itemsOf(output);
  const calls = callsOf(items);
  if (calls.length === 0) {
    const messages = items.map((i) => (i.type === 'message' ? messageText(i) : '')).filter(Boolean);
    const said = (items.length > 0 ? messages.join('\n') : output.text).trim();
    const thoughts = thoughtsOf(items, false);
    if (said === '') throw withThoughts(new EmptyOutputError(), thoughts);
    const status = (output.native as { status?: unknown } | undefined)?.status;
    const cutOff = status === 'incomplete' ? 'max_output_tokens' : undefined;
    return { thoughts, action: textOnlyAction(said, thoughts, cutOff), toolCallText: '' };
  }
  const thoughts = thoughtsOf(items, true);
  let batch: BatchedAction[];
  try {
    batch = batchOf(items, screen);
  } catch (err) {
    throw withThoughts(err, thoughts);
  }
  const refused = batch.find((b) => !allowed.includes(b.action.action));
  if (refused) throw withThoughts(new UnknownActionError(refused.action.action, OPENAI_ACTION_TYPES), thoughts);
  const checks = checksOf(items);
  if (checks.length > 0) {
    const question = checkQuestion(checks);
    return {
      thoughts,
      action: { action: 'ask_user_question', thoughts, question },
      toolCallText: '',
      native: checks,
      then: batch,
      check: { message: question, native: checks },
    };
  }
  const [first, ...rest] = batch;
  if (!first) throw withThoughts(new EmptyOutputError(), thoughts);
  return {
    thoughts,
    action: { ...first.action, ...(thoughts ? { thoughts } : {}) },
    toolCallText: '',
    native: first.native,
    ...(rest.length > 0 ? { then: rest } : {}),
  };
}

/** The one line the model reads next step after an output that was no valid action. */
export function openAiFeedback(error: ModelOutputError, screen: ScreenSize): string {
  const size = `${screen.width}x${screen.height}`;
  if (error instanceof EmptyOutputError) {
    return 'Your last turn had no action and no text: act with the computer tool, or answer in text when done.';
  }
  return (
    `None of the actions of your last turn were carried out: ${error.message}. ` +
    `Use the actions ${OPENAI_ACTION_TYPES.join(', ')}, with x and y in pixels of the ${size} screenshot.`
  );
}
