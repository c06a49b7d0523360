// Reading a Gemini generateContent response: the first candidate's function calls become our actions (several calls
// in one candidate are a batch: the first action now, the rest in `then`), a safety decision asking for confirmation
// becomes a question to the person holding the whole batch, a candidate with text and no call is a question or the
// answer, and `finishReason: MALFORMED_FUNCTION_CALL` (Gemini could not form the call it meant) is an invalid output
// fed back to the model. Also the recorded form of a response (what is replayed as the model turn next steps).
import type { Candidate, Content, FunctionCall } from '@google/genai';
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import { EmptyOutputError, ToolCallJsonError, UnknownActionError } from '../../model/errors';
import type { BatchedAction, ModelOutput, ParsedOutput } from '../../model/parse';
import { textOnlyAction } from '../native/text-output';
import { actionsOfCall, confirmationOf, intentOf } from './functions';

export const MALFORMED_FUNCTION_CALL = 'MALFORMED_FUNCTION_CALL';

/** A model turn as recorded (raw_response) and replayed: the candidate's content as sent, and how it finished. */
export interface RecordedCandidate {
  content?: Content;
  finishReason?: string;
  finishMessage?: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The response's first candidate, or undefined when it has none (a blocked prompt). */
export function firstCandidate(native: unknown): Candidate | undefined {
  if (!isObject(native) || !Array.isArray(native.candidates)) return undefined;
  const first: unknown = native.candidates[0];
  return isObject(first) ? (first as Candidate) : undefined;
}

/** The recorded form of a response: compact, and never with image bytes (a response carries none). */
export function recordedCandidateOf(output: ModelOutput): string {
  const candidate = firstCandidate(output.native);
  if (!candidate) {
    const blocked = isObject(output.native) ? output.native.promptFeedback : undefined;
    return JSON.stringify({ finishReason: 'NO_CANDIDATE', ...(blocked ? { promptFeedback: blocked } : {}) });
  }
  const recorded: RecordedCandidate = {
    ...(candidate.content ? { content: candidate.content } : {}),
    ...(candidate.finishReason ? { finishReason: candidate.finishReason } : {}),
    ...(candidate.finishMessage ? { finishMessage: candidate.finishMessage } : {}),
  };
  return JSON.stringify(recorded);
}

/** A recorded model turn read back; null when the text is no recorded turn (then it is replayed as plain text). */
export function parseRecordedCandidate(text: string): RecordedCandidate | null {
  if (!text.trim().startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && ('content' in value || 'finishReason' in value) ? (value as RecordedCandidate) : null;
  } catch {
    return null;
  }
}

/** The function calls of a model content, in order. */
export function callsOf(content: Content | undefined): FunctionCall[] {
  return (content?.parts ?? []).flatMap((p) => (p.functionCall ? [p.functionCall] : []));
}

/** The content's texts: the answer or reasoning (`text`), and thought summaries (`thought: true`). */
function textsOf(content: Content | undefined): { text: string; thought: string } {
  const parts = content?.parts ?? [];
  const join = (thought: boolean) =>
    parts
      .filter((p) => typeof p.text === 'string' && !!p.thought === thought)
      .map((p) => (p.text ?? '').trim())
      .filter(Boolean)
      .join('\n');
  return { text: join(false), thought: join(true) };
}

/** The model's text and reasoning summary of a response, as NativeCompletion reports them. */
export function completionTexts(native: unknown): { text: string; reasoning: string | null } {
  const { text, thought } = textsOf(firstCandidate(native)?.content);
  return { text, reasoning: thought || null };
}

/** Each call's actions, in order; a call none of ours can carry out throws. */
export function batchOf(calls: readonly FunctionCall[], screen: ScreenSize, thoughts: string): BatchedAction[] {
  return calls.flatMap((call, i) => {
    const said = intentOf(call) ?? (i === 0 ? thoughts : '');
    return actionsOfCall(call, screen, said).map((action) => ({ action, native: call }));
  });
}

/** How many of our actions each call becomes (the request matches results to calls by it); null: unreadable. */
export function actionCounts(calls: readonly FunctionCall[], screen: ScreenSize): number[] | null {
  try {
    return calls.map((call) => actionsOfCall(call, screen, '').length);
  } catch {
    return null;
  }
}

function checkAllowed(actions: readonly AgentAction[], allowed: readonly string[]): void {
  const refused = actions.find((a) => !allowed.includes(a.action));
  if (refused) throw new UnknownActionError(refused.action, allowed);
}

/** The response read into our action (and the rest of the batch, or the question a safety decision asks). */
export function readGeminiOutput(output: ModelOutput, screen: ScreenSize, allowed: readonly string[]): ParsedOutput {
  // Without the response body (an output read back from its record), the recorded candidate stands for it.
  const recorded = output.native === undefined ? parseRecordedCandidate(output.text) : null;
  const candidate = recorded ? (recorded as Candidate) : firstCandidate(output.native);
  if (!candidate) throw new EmptyOutputError();
  if (candidate.finishReason === MALFORMED_FUNCTION_CALL) {
    const detail = candidate.finishMessage ? `: ${candidate.finishMessage}` : '';
    throw new ToolCallJsonError(candidate.finishMessage ?? '', `Gemini sent ${MALFORMED_FUNCTION_CALL}${detail}`);
  }
  const { text, thought } = textsOf(candidate.content);
  const calls = callsOf(candidate.content);
  if (calls.length === 0) {
    if (!text) throw new EmptyOutputError();
    const cutOff = candidate.finishReason === 'MAX_TOKENS' ? 'maxOutputTokens' : undefined;
    return { thoughts: thought, action: textOnlyAction(text, thought, cutOff), toolCallText: '' };
  }
  const thoughts = [thought, text].filter(Boolean).join('\n') || calls.map(intentOf).filter(Boolean).join('\n');
  const batch = batchOf(calls, screen, thoughts);
  checkAllowed(
    batch.map((b) => b.action),
    allowed,
  );
  const asking = calls.find((call) => confirmationOf(call));
  if (asking) {
    const explanation = confirmationOf(asking)?.explanation;
    const message = explanation || `Gemini asks you to confirm its next action (${asking.name ?? 'a function call'}).`;
    const question: AgentAction = { action: 'ask_user_question', thoughts, question: message };
    checkAllowed([question], allowed);
    return {
      thoughts,
      action: question,
      toolCallText: '',
      then: batch,
      check: {
        message,
        native: {
          name: asking.name,
          ...(asking.id ? { id: asking.id } : {}),
          safety_decision: asking.args?.safety_decision,
        },
      },
    };
  }
  const [first, ...rest] = batch;
  if (!first) throw new EmptyOutputError();
  return {
    thoughts,
    action: first.action,
    native: first.native,
    toolCallText: '',
    ...(rest.length > 0 ? { then: rest } : {}),
  };
}
