// What the Fara families share behind the family seam: the request (our Fara system prompt or an endpoint's prompt
// file, the chat of src/model/context.ts with the screenshots resized for the family), the output read from a
// `<tool_call>` block (src/model/parse.ts) and recorded with native tool calls written out as such blocks, the
// feedback line, and the questions: Fara-1.5 asks the person with ask_user_question, Fara-7B has no such action and
// stops with terminate at a critical point.
import type { FaraSpace } from '../../actions/fara';
import type { AgentAction } from '../../actions/schemas';
import type { ScreenSize } from '../../actions/tool-schema';
import type { ChatMessage } from '../../model/client';
import { buildChatMessages } from '../../model/context';
import { promptFileActions } from '../../model/endpoint-prompt';
import { invalidOutputFeedback } from '../../model/feedback';
import { identityError } from '../../model/identities';
import { parseModelOutput, outputAsText } from '../../model/parse';
import { buildSystemPrompt, loadPromptOverride, promptActions } from '../../model/prompt';
import { RequestRefusedError } from '../family';
import type { EndpointPromptSettings, ModelFamily, Outcome, RequestInput } from '../family';

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * The system prompt of a step (ours, or the endpoint's prompt file filled in) and the actions the model may use: a
 * prompt file's `"enum"` list, when it offers fewer than the family (src/model/prompt.ts promptActions). What
 * startRun checked can still fail here when the file changed since: then the task ends (InvalidTaskInput).
 */
async function systemPromptOf(
  space: FaraSpace,
  endpoint: EndpointPromptSettings | undefined,
  taskIdentity: string | undefined,
  screen: ScreenSize,
): Promise<{ systemPrompt: string; allowed: readonly string[] }> {
  const override = endpoint?.promptFile
    ? await loadPromptOverride(endpoint.promptFile).catch((err: unknown) => {
        throw new RequestRefusedError(asError(err), asError(err).name);
      })
    : undefined;
  try {
    const identity = taskIdentity ?? endpoint?.identity;
    const systemPrompt = buildSystemPrompt({ family: space, screen, identity, ...(override ? { override } : {}) });
    return { systemPrompt, allowed: override ? promptActions(systemPrompt, space).allowed : space.allowedActions };
  } catch (err) {
    throw new RequestRefusedError(asError(err), 'InvalidTaskInput');
  }
}

/** A question for the person (ask_user_question) or an end (terminate: its answer, else its status). */
export function faraOutcome(action: AgentAction): Outcome {
  if (action.action === 'terminate') {
    return { kind: 'terminate', text: 'answer' in action ? action.answer : `Task ended: ${action.status}` };
  }
  if (action.action === 'ask_user_question') return { kind: 'ask', text: action.question };
  return { kind: 'act', text: null };
}

/** The model family speaking a Fara action space. */
export function faraFamily(space: FaraSpace): ModelFamily {
  return {
    name: space.name,
    actionSchema: space.actionSchema,
    allowedActions: space.allowedActions,
    coordinateSpace: space.coordinateSpace,
    resizeFactor: space.resizeFactor,
    displaySize: (resized) => space.displaySize(resized),
    async request(input: RequestInput) {
      const { systemPrompt, allowed } = await systemPromptOf(space, input.endpoint, input.identity, input.screen);
      const messages = await buildChatMessages(input.history, {
        systemPrompt,
        nudge: input.endpoint?.stepPrompt ?? space.stepPrompt,
        maxImages: input.imagesKept,
        tokenBudget: input.tokenBudget,
        loadImage: input.loadImage,
      });
      return { messages: messages as ChatMessage[], allowed };
    },
    outputText: outputAsText,
    read: (output, input) =>
      parseModelOutput(output, space, {
        terminateOnParseError: input.terminateOnParseError,
        screen: input.screen,
        allowedActions: input.allowed,
      }),
    feedback: (error, screen) => invalidOutputFeedback(error, space, screen),
    outcome: faraOutcome,
    identityIssue: (identity, custom) => identityError(identity, { family: space.name, custom })?.message ?? null,
    promptFileActions: (file) => promptFileActions(file, space),
  };
}
