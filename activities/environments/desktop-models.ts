// The desktop agent's model calls (describe, decide, ground) in the API each endpoint's family speaks: OpenAI chat
// completions, Anthropic's Messages API or Gemini's generateContent (src/desktop/agent/provider-apis.ts builds the
// bodies and reads the calls back). Provider calls go through the same clients as the browser families (their
// official SDKs, src/families) and ModelClient.completeNative: one time limit, one error classification, cost and
// metrics for every API. The scripted model's entry and call-kind headers go with every call.
import {
  generateContentBody,
  generateContentProblem,
  generateContentToolCalls,
  messagesBody,
  messagesToolCalls,
} from '../../src/desktop/agent/provider-apis';
import type { DesktopApi } from '../../src/desktop/agent/provider-apis';
import type { DesktopTool } from '../../src/desktop/agent';
import { openAiTools } from '../../src/desktop/agent';
import { sendMessages } from '../../src/families/anthropic-computer/call';
import { callGemini } from '../../src/families/gemini-computer/call';
import { toolUseApi } from '../../src/families/family';
import { familyOf, isFamilyName } from '../../src/families/registry';
import { ModelRequestError } from '../../src/model/client';
import type { ChatMessage, Completion, ModelClient } from '../../src/model/client';
import type { Config } from '../../src/runtime/config';
import type { TaskInput } from '../../src/contract/task';
import { callModel, callNative, endpointFamily, endpointFor, nonRetryable } from '../support';

const API_NAMES: Record<DesktopApi, string> = {
  chat: 'OpenAI chat completions',
  messages: "Anthropic's Messages API",
  'generate-content': "Gemini's generateContent API",
};

/** One of the desktop agent's models: the endpoint's client and the API it is spoken to in. */
export interface DesktopModel {
  client: ModelClient;
  api: DesktopApi;
  /** The endpoint's name in `models`, for error messages. */
  name: string;
}

/** The model behind a named endpoint (the vision or grounding one), or the task's own endpoint. */
export function desktopModel(config: Config, input: TaskInput, named?: string): DesktopModel {
  const client = endpointFor(config, input, named);
  const family = endpointFamily(config, input, named);
  const api = toolUseApi(family && isFamilyName(family) ? familyOf(family) : undefined) ?? 'chat';
  const name = named ?? input.model.endpoint;
  // A provider's own API needs a key; a task's own base URL never gets the worker's.
  if (api !== 'chat' && !client.endpoint.apiKey) {
    nonRetryable(
      new ModelRequestError(
        `model endpoint '${name}' has no API key, and the desktop agent calls it in ${API_NAMES[api]} (the API ` +
          `its family, ${family}, speaks), which needs one: set models.${name}.apiKey (any text for a server ` +
          'that takes none)' +
          (!named && input.model.baseUrl ? "; a base URL the task gives itself never gets the worker's key" : ''),
        401,
      ),
    );
  }
  return { client, api, name };
}

/** A desktop model's output, and why a provider could not return a call it tried to make (else undefined). */
export interface DesktopOutput {
  completion: Completion;
  /** Gemini's MALFORMED_FUNCTION_CALL (or UNEXPECTED_TOOL_CALL): what to tell the model at the next step. */
  malformed?: string;
}

/**
 * One call to a desktop model: the messages (and, for the action model, the tools) in its API. Native function calls
 * come back as `toolCalls`.
 */
export async function askDesktopModel(
  model: DesktopModel,
  messages: ChatMessage[],
  headers: Record<string, string>,
  tools?: readonly DesktopTool[],
): Promise<DesktopOutput> {
  const { client, api } = model;
  if (api === 'chat') {
    return { completion: await callModel(client, messages, headers, tools ? { tools: openAiTools() } : {}) };
  }
  if (api === 'messages') {
    const body = messagesBody(messages, tools);
    const completion = await callNative(client, (endpoint, signal) => sendMessages(body, endpoint, signal, headers));
    return { completion: withCalls(completion, messagesToolCalls(completion.native)) };
  }
  const body = generateContentBody(messages, tools);
  const completion = await callNative(client, (endpoint, signal) => callGemini(body, endpoint, signal, headers));
  const malformed = generateContentProblem(completion.native);
  return {
    completion: withCalls(completion, generateContentToolCalls(completion.native)),
    ...(malformed ? { malformed } : {}),
  };
}

function withCalls(completion: Completion, calls: { name: string; arguments: string }[]): Completion {
  return calls.length > 0 ? { ...completion, toolCalls: calls } : completion;
}
