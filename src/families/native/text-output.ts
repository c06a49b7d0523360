// What the families that speak a provider's own API (openai-computer, anthropic-computer, gemini-computer) share
// about an output with text and no action: it either asks the person something (a question the task waits on, whose
// reply is the next user turn) or ends the task with the text as its answer. None of the three providers marks the
// difference on the wire, so the text decides: a question mark at the end of its last sentence.
import type { AgentAction } from '../../actions/schemas';

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

/** A text-only output as one of our actions: a question for the person, or the end of the task with its answer. */
export function textOnlyAction(text: string, thoughts = ''): AgentAction {
  const trimmed = text.trim();
  return asksPerson(trimmed)
    ? { action: 'ask_user_question', thoughts, question: trimmed }
    : { action: 'terminate', thoughts, answer: trimmed };
}
