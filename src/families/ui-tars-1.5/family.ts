// The ui-tars-1.5 family: ByteDance's UI-TARS-1.5 served on an OpenAI-compatible chat endpoint (vLLM, TGI). Its
// prompt is the one it was trained on (prompt.ts), its chat is rebuilt from the history each step with the boxes of
// past outputs re-wrapped in box tokens (chat.ts), its `Thought: … / Action: …` output is read with
// `@ui-tars/action-parser` (read.ts) into our actions (actions.ts). It speaks absolute pixels of the screenshot after
// smart_resize with factor 28 (our 'resized-pixels'); call_user() asks the person, finished() ends the task.
// Not used from the endpoint's settings: a prompt file or identity (refused: the prompt is the trained one), a step
// sentence, the token budget (the screenshots kept bound the chat), and Fara's terminate-on-parse-error (an invalid
// output is fed back, so the model writes it again).
import { fara15ActionSchema } from '../../actions/schemas';
import { faraOutcome } from '../fara-common/family';
import type { ModelFamily } from '../family';
import { ownPromptMembers } from '../native/own-prompt';
import { uiTarsMessages } from './chat';
import { readUiTarsOutput, uiTarsFeedback } from './read';

export const UI_TARS = 'ui-tars-1.5';

/** The smart_resize factor of UI-TARS-1.5's vision encoder (Qwen2.5-VL's: patch 14 × merge 2). */
export const UI_TARS_RESIZE_FACTOR = 28;

/** Our actions its outputs become (actions.ts), in the order of the shared action list. */
export const UI_TARS_ACTIONS = [
  'key',
  'type',
  'mouse_move',
  'left_click',
  'left_click_drag',
  'right_click',
  'double_click',
  'scroll',
  'hscroll',
  'wait',
  'ask_user_question',
  'terminate',
] as const;

export const UI_TARS_FAMILY: ModelFamily = {
  name: UI_TARS,
  actionSchema: fara15ActionSchema,
  allowedActions: UI_TARS_ACTIONS,
  coordinateSpace: 'resized-pixels',
  resizeFactor: UI_TARS_RESIZE_FACTOR,
  // Pixels of the resized screenshot; scroll amounts are viewport pixels already (actions.ts).
  displaySize: (resized) => resized,
  async request(input) {
    const messages = await uiTarsMessages(input.history, input.loadImage, input.imagesKept);
    return { messages, allowed: UI_TARS_ACTIONS };
  },
  outputText: (output) => output.text,
  read: (output, input) => readUiTarsOutput(output, input.screen, input.allowed),
  feedback: uiTarsFeedback,
  outcome: faraOutcome,
  ...ownPromptMembers(UI_TARS),
};
