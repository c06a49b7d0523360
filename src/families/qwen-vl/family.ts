// The qwen-vl family: Qwen2.5-VL and Qwen3-VL served by vLLM's OpenAI chat completions, one family with the
// generation as the endpoint's setting (`tool: '2.5' | '3'`, else the model's name, else 3) and Qwen3-VL's grid as
// another (`grid: 999 | 1000`, default 999). Each step's chat is our system prompt with the `computer_use` function
// (prompt.ts), then the task, the model's recorded outputs and the newest screenshots (src/model/context.ts); no
// native `tools` are sent, so the call comes back as `<tool_call>` text, or as native tool calls when vLLM parses
// them anyway; both are read (read.ts). Our space is 'norm1000': read converts each generation's points into it.
import { NORM_DISPLAY_SIZE } from '../../actions/fara';
import { fara15ActionSchema, terminateFara7bSchema } from '../../actions/schemas';
import type { AgentAction } from '../../actions/schemas';
import type { ChatMessage } from '../../model/client';
import { buildChatMessages } from '../../model/context';
import { EmptyOutputError, MissingToolCallError } from '../../model/errors';
import type { ModelOutputError } from '../../model/errors';
import { outputAsText } from '../../model/parse';
import { faraOutcome } from '../fara-common/family';
import type { ModelFamily } from '../family';
import { ownPromptMembers } from '../native/own-prompt';
import { qwenSystemPrompt } from './prompt';
import { allowedActionsOf, readQwenOutput } from './read';
import { QWEN_GENERATIONS, QWEN_GRIDS, QWEN_VL, spaceOf } from './settings';
import type { z } from 'zod';

/** Every action of ours a Qwen-VL output may become (Qwen3-VL's set, the wider). */
export const QWEN_ALLOWED_ACTIONS: readonly string[] = allowedActionsOf('3');

/** Fara-1.5's actions, whose terminate gives an answer, and Fara-7B's terminate with a status (Qwen's `terminate`). */
const qwenActionSchema: z.ZodType<AgentAction> = fara15ActionSchema.or(terminateFara7bSchema);

const EXPECTED =
  'Call computer_use once, as a JSON object in a <tool_call> block: <tool_call>\n' +
  '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}\n</tool_call>';

/** The one line the model reads after an output that was no valid action: what was wrong, and the form expected. */
export function qwenFeedback(error: ModelOutputError): string {
  if (error instanceof EmptyOutputError) return `Your last output was empty, so nothing was done. ${EXPECTED}`;
  if (error instanceof MissingToolCallError) {
    return (
      `Your last output had no <tool_call> block, so nothing was done. To act: ${EXPECTED}. To ask the person, end ` +
      'your text with a question. When the task is done, call terminate.'
    );
  }
  return `Your last output was not carried out: ${error.message}. ${EXPECTED}`;
}

export const QWEN_VL_FAMILY: ModelFamily = {
  name: QWEN_VL,
  actionSchema: qwenActionSchema,
  allowedActions: QWEN_ALLOWED_ACTIONS,
  coordinateSpace: 'norm1000',
  resizeFactor: 28,
  tools: QWEN_GENERATIONS,
  grids: QWEN_GRIDS,
  displaySize: () => ({ width: NORM_DISPLAY_SIZE, height: NORM_DISPLAY_SIZE }),
  async request(input) {
    const space = spaceOf(input.endpoint, input.screen);
    const messages = await buildChatMessages(input.history, {
      systemPrompt: qwenSystemPrompt(space),
      ...(input.endpoint?.stepPrompt ? { nudge: input.endpoint.stepPrompt } : {}),
      maxImages: input.imagesKept,
      tokenBudget: input.tokenBudget,
      loadImage: input.loadImage,
    });
    return { messages: messages as ChatMessage[], allowed: allowedActionsOf(space.generation) };
  },
  // Native tool calls are recorded as the `<tool_call>` blocks Qwen writes itself.
  outputText: outputAsText,
  // Fara's terminate-on-parse-error does not apply: an invalid output is fed back.
  read: readQwenOutput,
  feedback: (error) => qwenFeedback(error),
  outcome: faraOutcome,
  ...ownPromptMembers(QWEN_VL),
};
