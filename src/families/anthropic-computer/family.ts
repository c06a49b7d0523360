// The anthropic-computer family: Anthropic's Messages API with its computer-use tool (the beta computer_20250124 and
// computer_20251124, or the GA computer_toolset_20260801; tools.ts says which an endpoint gets). The model speaks
// pixels of the screenshot it is sent, capped at 1280x800's pixels (Anthropic's recommended size for web tasks),
// so the family's space is 'resized-pixels' with no smart_resize rounding. Its request is rebuilt from the history
// every step (request.ts, turns.ts), its call goes through the SDK (call.ts), its output's tool_use blocks become our
// actions, several a batch (actions.ts). Anthropic has no confirmation field: a message with text and no tool_use is
// a question to the person (ending with `?`) or the task's end, and the person's reply is the next user message.
// Fara's settings do not apply: no identity, no prompt file (both refused), no step prompt (ignored: the page URL and
// what the step left go with each screenshot instead), no terminate-on-parse-error (an invalid output is fed back).
import { ownPromptMembers } from '../native/own-prompt';
import { PROVIDER_FAMILY_ACTIONS } from '../native/actions';
import { fara15ActionSchema } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import { ModelOutputError } from '../../model/errors';
import type { ModelOutput, ParsedOutput } from '../../model/parse';
import { faraOutcome } from '../fara-common/family';
import type { ModelFamily } from '../family';
import { textOnlyAction } from '../native/text-output';
import { blocksOf, readTurn, thinkingOf } from './actions';
import { callMessages } from './call';
import { anthropicPrice } from './prices';
import { requestBody } from './request';
import { ANTHROPIC_TOOLS } from './tools';

export const ANTHROPIC_COMPUTER = 'anthropic-computer';

/** Our actions its outputs become. */
export const ANTHROPIC_ALLOWED_ACTIONS = PROVIDER_FAMILY_ACTIONS;

/** Anthropic's recommended screenshot size for web tasks, 1280x800, as a pixel cap (a 1440x900 page: 1280x800). */
export const ANTHROPIC_MAX_PIXELS = 1280 * 800;

type Recorded = { content?: unknown; stop_reason?: unknown };

/** The response body the call returned; for an output without one, our record of it (outputText's JSON). */
function messageOf(output: ModelOutput): Recorded {
  if (typeof output.native === 'object' && output.native !== null) return output.native as Recorded;
  try {
    const parsed = JSON.parse(output.text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && 'content' in parsed) return parsed as Recorded;
  } catch {
    // plain text: read as a text-only message
  }
  return { content: output.text };
}

/** What is recorded and replayed: the message's content blocks as sent, and its stop reason. */
function outputText(output: ModelOutput): string {
  const message = messageOf(output);
  return JSON.stringify({ content: blocksOf(message.content), stop_reason: message.stop_reason ?? null });
}

/** The output as our first action, the rest of its batch in `then`; a text-only one is a question or the end. */
function read(output: ModelOutput, screen: ScreenSize, allowed: readonly string[]): ParsedOutput {
  const message = messageOf(output);
  let reading;
  try {
    reading = readTurn(message.content, screen, allowed);
  } catch (err) {
    if (err instanceof ModelOutputError) err.thoughts ??= String(output.text ?? '').trim();
    throw err;
  }
  const [first, ...rest] = reading.actions;
  if (!first) {
    const cutOff = message.stop_reason === 'max_tokens' ? 'max_tokens' : undefined;
    return { thoughts: '', action: textOnlyAction(reading.text, '', cutOff), toolCallText: '' };
  }
  // The thoughts: the text before the actions, else the thinking the message shows.
  const thoughts = reading.text || thinkingOf(blocksOf(message.content));
  return {
    thoughts,
    action: thoughts === '' ? first.action : { ...first.action, thoughts },
    toolCallText: '',
    native: first.native,
    ...(rest.length > 0 ? { then: rest.map(({ action, native }) => ({ action, native })) } : {}),
  };
}

/** The line the model reads after an output that was no valid action. */
function feedback(error: ModelOutputError, screen: ScreenSize): string {
  const message = error.message.replace(/\s+/g, ' ').replace(/\.$/, '');
  return `${message}. Use the computer tool's actions, with coordinates inside the ${screen.width}x${screen.height} screenshot.`;
}

export const ANTHROPIC_COMPUTER_FAMILY: ModelFamily = {
  name: ANTHROPIC_COMPUTER,
  actionSchema: fara15ActionSchema,
  allowedActions: ANTHROPIC_ALLOWED_ACTIONS,
  coordinateSpace: 'resized-pixels',
  resizeFactor: 1,
  maxPixels: ANTHROPIC_MAX_PIXELS,
  tools: ANTHROPIC_TOOLS,
  displaySize: (resized) => resized,
  async request(input) {
    const native = await requestBody(input, ANTHROPIC_ALLOWED_ACTIONS);
    return { messages: [], native, allowed: ANTHROPIC_ALLOWED_ACTIONS };
  },
  api: 'messages',
  call: callMessages,
  priceOf: anthropicPrice,
  outputText,
  // Fara's terminate-on-parse-error does not apply: an invalid output is fed back as an error tool_result.
  read: (output, input) => read(output, input.screen, input.allowed),
  feedback,
  outcome: faraOutcome,
  ...ownPromptMembers(ANTHROPIC_COMPUTER),
};
