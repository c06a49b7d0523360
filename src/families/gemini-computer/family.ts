// The gemini-computer family: Google's Gemini models through generateContent with the `computer_use` tool
// (environment ENVIRONMENT_BROWSER), either predefined function set: the 2.5 preview's (`tool: '2.5'`) or the 3.x
// models' (`tool: '3'`). Coordinates come on Gemini's 0–999 grid, our 'norm1000' space; several function calls in
// one candidate are a batch; a safety decision asking for confirmation becomes our question; a malformed function
// call is fed back. The conversation is ours, rebuilt from the history each step (conversation.ts).
import { ownPromptMembers } from '../native/own-prompt';
import { PROVIDER_FAMILY_ACTIONS } from '../native/actions';
import type { Tool } from '@google/genai';
import { Environment } from '@google/genai';
import { NORM_DISPLAY_SIZE } from '../../actions/fara';
import { fara15ActionSchema } from '../../actions/schemas';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  ToolCallJsonError,
  UnknownActionError,
} from '../../model/errors';
import type { ModelOutputError } from '../../model/errors';
import { faraOutcome } from '../fara-common/family';
import type { EndpointPromptSettings, ModelFamily } from '../family';
import { callGemini } from './call';
import type { GeminiRequestBody } from './call';
import { geminiContents } from './conversation';
import { EXCLUDED_FUNCTIONS, GEMINI_FUNCTION_SETS, SUPPORTED_FUNCTIONS } from './functions';
import type { GeminiFunctionSet } from './functions';
import { readGeminiOutput, recordedCandidateOf } from './read';

export const GEMINI_COMPUTER = 'gemini-computer';

/** Our actions the Gemini functions become (functions.ts), plus the question and the end of a text-only turn. */
export const GEMINI_ACTIONS = PROVIDER_FAMILY_ACTIONS;

/**
 * The function set a model name implies: `gemini-2…` models and the `…computer-use-preview…` models speak the 2.5
 * set, every other name the 3.x set, the newest (a stand-in's script name too). The docs group gemini-3-flash-preview
 * and gemini-3.1-pro-preview with 3.x; Google's reference code drives them with the 2.5 set: `tool: '2.5'` says so.
 */
export function functionSetForModel(model: string): GeminiFunctionSet {
  return /(^|\/)gemini-2[.-]/.test(model) || model.includes('computer-use-preview') ? '2.5' : '3';
}

/**
 * The endpoint's function set: its `tool`, else its model's name when the settings carry it (the worker passes its
 * `models.<name>` entry, which has `model`; a task's own model override is not seen here), else the 3.x set.
 */
export function functionSetOf(endpoint: EndpointPromptSettings | undefined): GeminiFunctionSet {
  const tool = endpoint?.tool;
  if (tool === '2.5' || tool === '3') return tool;
  const model: unknown = endpoint && 'model' in endpoint ? endpoint.model : undefined;
  return typeof model === 'string' ? functionSetForModel(model) : '3';
}

/** Our system prompt: what the model is doing, how it reaches a URL, when it asks the person, how it ends. */
export const GEMINI_SYSTEM_PROMPT = [
  'You operate a web browser to carry out a task for a person. After each action you get a screenshot of the page',
  'and its URL.',
  'The browser has no address bar you can type into: to open a web address, call navigate with the full URL.',
  'When you need something only the person can give (a choice, a login, personal details, a confirmation), end your',
  'turn with a question in plain text, ending with a question mark, and no function call; their reply comes next.',
  'Never make up personal data (names, addresses, phone numbers, email addresses, payment details): ask for it.',
  'When the task is done, give the final answer in plain text, with no function call and no question.',
].join(' ');

function requestBody(set: GeminiFunctionSet, contents: GeminiRequestBody['contents']): GeminiRequestBody {
  const excluded = EXCLUDED_FUNCTIONS[set];
  const tool: Tool = {
    computerUse: {
      environment: Environment.ENVIRONMENT_BROWSER,
      ...(excluded.length > 0 ? { excludedPredefinedFunctions: [...excluded] } : {}),
    },
  };
  return { systemInstruction: { parts: [{ text: GEMINI_SYSTEM_PROMPT }] }, contents, tools: [tool] };
}

const MALFORMED = 'finishReason MALFORMED_FUNCTION_CALL';

/** The one line the model reads after an output we could not carry out. */
export function geminiFeedback(error: ModelOutputError): string {
  const none = 'No action was taken.';
  if (error instanceof ToolCallJsonError) {
    return `Your function call was malformed and could not be carried out (${MALFORMED}). ${none} Call one computer-use function with valid arguments; points are on the 0–999 grid.`;
  }
  if (error instanceof UnknownActionError) {
    return `${error.action || 'That function'} cannot be carried out here. ${none} Use one of: ${SUPPORTED_FUNCTIONS.join(', ')}.`;
  }
  if (error instanceof InvalidActionArgumentsError) {
    return `The ${error.field} argument of ${error.action} ${error.detail.startsWith('is') ? '' : 'is '}${error.detail}. ${none} Points are x, y on the 0–999 grid.`;
  }
  if (error instanceof EmptyOutputError) {
    return `Your output had no function call and no text. ${none} Call a computer-use function, or answer in text.`;
  }
  return `Your output could not be read (${error.message}). ${none}`;
}
export const GEMINI_COMPUTER_FAMILY: ModelFamily = {
  name: GEMINI_COMPUTER,
  actionSchema: fara15ActionSchema,
  allowedActions: GEMINI_ACTIONS,
  coordinateSpace: 'norm1000',
  resizeFactor: 1,
  tools: GEMINI_FUNCTION_SETS,
  displaySize: () => ({ width: NORM_DISPLAY_SIZE, height: NORM_DISPLAY_SIZE }),
  // The token budget is not applied: the screenshots kept (`imagesKept`) bound the request, as in Google's reference.
  // No step sentence (`stepPrompt`) either: a function response carries the URL and the screenshot, nothing more.
  async request(input) {
    const contents = await geminiContents(input.history, input.screen, input.loadImage, input.imagesKept);
    return { messages: [], native: requestBody(functionSetOf(input.endpoint), contents), allowed: GEMINI_ACTIONS };
  },
  api: 'generate-content',
  call: (request, endpoint, signal) => callGemini(request.native as GeminiRequestBody, endpoint, signal),
  outputText: (output) => (output.native === undefined ? output.text : recordedCandidateOf(output)),
  read: (output, input) => readGeminiOutput(output, input.screen, input.allowed),
  feedback: (error) => geminiFeedback(error),
  outcome: faraOutcome,
  ...ownPromptMembers(GEMINI_COMPUTER),
};
