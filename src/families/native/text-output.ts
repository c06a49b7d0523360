// What the families that speak a provider's own API (openai-computer, anthropic-computer, gemini-computer) share
// about an output with text and no action: it either asks the person something (a question the task waits on, whose
// reply is the next user turn) or ends the task with the text as its answer. None of the three providers marks the
// difference on the wire, so the text decides: a question mark at the end of its last sentence.
import type { AgentAction } from '../../actions/schemas';
import { EmptyOutputError, ModelOutputError } from '../../model/errors';

/**
 * A text with no action that the provider cut off at its token limit: no answer to end the task with, nor a question
 * to ask. It is fed back, so the model says it again, shorter.
 */
export class CutOffOutputError extends ModelOutputError {
  constructor(limit: string) {
    super(`The output was cut off at the ${limit} limit before it named an action or finished its answer`);
  }
}

/** Whether a text-only output asks the person something: its last non-empty line ends with a question mark. */
export function asksPerson(text: string): boolean {
  const last = text
    .trim()
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .pop();
  return last !== undefined && /[?？]["'”’)\]]*$/.test(last);
}

/**
 * A text-only output as one of our actions: a question for the person, or the end of the task with its answer. An
 * empty one is no output, and one the provider cut off (`cutOff`: the limit's name) is no answer: both are fed back.
 */
export function textOnlyAction(text: string, thoughts = '', cutOff?: string): AgentAction {
  const trimmed = text.trim();
  if (cutOff !== undefined) throw Object.assign(new CutOffOutputError(cutOff), { thoughts: trimmed || thoughts });
  if (trimmed === '') throw Object.assign(new EmptyOutputError(), { thoughts });
  return asksPerson(trimmed)
    ? { action: 'ask_user_question', thoughts, question: trimmed }
    : { action: 'terminate', thoughts, answer: trimmed };
}
