// openai-computer: OpenAI's computer-use models through the Responses API, with the GA `computer` tool (a batch of
// actions per call) or the preview `computer_use_preview` tool (one action per call, `truncation: "auto"`). The model
// speaks pixels of the screenshot it is sent (the viewport's own size: OpenAI needs no downscaling for 1440x900), its
// actions become ours (actions.ts), its safety checks a question to the person (read.ts), and every step's request is
// rebuilt from the run's history (request.ts) and sent with the official SDK (call.ts).
import { ownPromptMembers } from '../native/own-prompt';
import { fara15ActionSchema } from '../../actions/schemas';
import { faraOutcome } from '../fara-common/family';
import type { ModelFamily } from '../family';
import { OPENAI_ALLOWED_ACTIONS } from './actions';
import { callOpenAi } from './call';
import { openAiFeedback, outputTextOf, readOpenAiOutput } from './read';
import { openAiRequestBody } from './request';
import { openAiPriceOf } from './prices';
import { OPENAI_COMPUTER, OPENAI_TOOLS, toolFor } from './wire';

export const OPENAI_COMPUTER_FAMILY: ModelFamily = {
  name: OPENAI_COMPUTER,
  actionSchema: fara15ActionSchema,
  allowedActions: OPENAI_ALLOWED_ACTIONS,
  coordinateSpace: 'resized-pixels',
  resizeFactor: 1,
  tools: OPENAI_TOOLS,
  // Pixels of the screenshot: scroll amounts pass through as pixels too (src/coords/viewport.ts).
  displaySize: (resized) => resized,
  async request(input) {
    const native = await openAiRequestBody(input, toolFor(input.endpoint));
    return { messages: [], native, allowed: OPENAI_ALLOWED_ACTIONS };
  },
  api: 'responses',
  call: callOpenAi,
  priceOf: openAiPriceOf,
  outputText: outputTextOf,
  // Fara's terminate-on-parse-error does not apply: an invalid output is fed back, as OpenAI's own loop does.
  read: (output, input) => readOpenAiOutput(output, input.screen, input.allowed),
  feedback: openAiFeedback,
  outcome: faraOutcome,
  ...ownPromptMembers(OPENAI_COMPUTER),
};
