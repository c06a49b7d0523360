// The Messages API call with the official SDK (@anthropic-ai/sdk): a client per call for the endpoint's base URL and
// key only (never a key from the environment or a local credential file), no retries of its own (the model client
// retries), the beta endpoint with its `anthropic-beta` header for a beta tool, the GA endpoint for the toolset. The
// response body comes back as `native`, with its text, thinking, stop reason and usage.
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming as BetaParams } from '@anthropic-ai/sdk/resources/beta/messages';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import type { ModelEndpoint, NativeCompletion } from '../../model/client';
import type { FamilyRequest } from '../family';
import { blocksOf, textOf, thinkingOf } from './actions';
import type { AnthropicRequestBody } from './request';
import { DEFAULT_MODEL_TIMEOUT_SECONDS } from '../../model/timeouts';
import { acceptsTemperature, betaHeaderOf, toolOfBody } from './tools';

/** The SDK client that never looks for credentials beyond the key it is given (environment, profile files). */
class EndpointClient extends Anthropic {
  protected override _shouldResolveDefaultCredentials(): boolean {
    return false;
  }
}

/**
 * The SDK's base URL: the endpoint's, without a trailing `/v1` (the SDK adds `/v1/messages`; OpenAI-style endpoints
 * are often written with it).
 */
export function sdkBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function clientFor(endpoint: ModelEndpoint): Anthropic {
  const key = endpoint.apiKey !== undefined && endpoint.apiKey !== '' ? endpoint.apiKey : null;
  return new EndpointClient({
    apiKey: key,
    authToken: null,
    baseURL: sdkBaseUrl(endpoint.baseUrl),
    maxRetries: 0,
    // The model client's limit (the signal) comes first; an explicit timeout also spares the SDK's refusal of a
    // non-streaming call whose max_tokens it guesses would take longer than 10 minutes.
    timeout: ((endpoint.timeoutSeconds ?? DEFAULT_MODEL_TIMEOUT_SECONDS) + 5) * 1000,
    // No key (a local endpoint): no Authorization header at all, rather than the SDK's search for one.
    ...(key === null ? { defaultHeaders: { Authorization: null } } : {}),
  });
}

/** The fields of a response the completion is read from (GA and beta messages alike). */
interface MessageLike {
  id: string;
  model: string;
  content: unknown;
  stop_reason: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
    output_tokens_details?: { thinking_tokens?: number } | null;
  };
}

/** The response as a completion. Anthropic's input_tokens leaves out cache reads and writes: the prompt adds them. */
export function completionOf(message: MessageLike): NativeCompletion {
  const blocks = blocksOf(message.content);
  const thinking = thinkingOf(blocks);
  const u = message.usage;
  const cached = u.cache_read_input_tokens ?? 0;
  return {
    text: textOf(blocks),
    native: message,
    reasoning: thinking === '' ? null : thinking,
    finishReason: message.stop_reason,
    usage: {
      prompt_tokens: u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0),
      completion_tokens: u.output_tokens,
      reasoning_tokens: u.output_tokens_details?.thinking_tokens ?? 0,
      cached_tokens: cached,
    },
    responseModel: message.model,
    responseId: message.id,
  };
}

/**
 * Sends the request's Messages body to the endpoint: its model, max tokens, and temperature (at most 1 here) where the
 * model takes one (tools.ts acceptsTemperature).
 */
export async function callMessages(
  request: FamilyRequest,
  endpoint: ModelEndpoint,
  signal: AbortSignal,
): Promise<NativeCompletion> {
  return sendMessages(request.native as AnthropicRequestBody, endpoint, signal);
}

/** The fields of a Messages body this call reads or passes on. */
export interface MessagesBody {
  max_tokens: number;
  messages: readonly unknown[];
  system?: unknown;
  tools?: readonly unknown[];
  tool_choice?: unknown;
}

/**
 * One Messages call with a body built elsewhere (a family's request, or the desktop agent's tool use): the GA endpoint
 * unless the body offers a beta computer tool. `headers` go with the request (the scripted server's entry and call
 * kind; a real endpoint ignores them).
 */
export async function sendMessages(
  body: MessagesBody,
  endpoint: ModelEndpoint,
  signal: AbortSignal,
  headers?: Record<string, string>,
): Promise<NativeCompletion> {
  const params = {
    ...body,
    model: endpoint.model,
    max_tokens: endpoint.maxTokens ?? body.max_tokens,
    ...(endpoint.temperature !== undefined && acceptsTemperature(endpoint.model)
      ? { temperature: Math.min(1, endpoint.temperature) }
      : {}),
  };
  const client = clientFor(endpoint);
  const tool = toolOfBody(body);
  const beta = tool ? betaHeaderOf(tool) : null;
  const options = { signal, ...(headers ? { headers } : {}) };
  // The body was built to the documented format (request.ts); the SDK's param types are not re-derived here.
  const message = beta
    ? await client.beta.messages.create({ ...params, betas: [beta] } as unknown as BetaParams, options)
    : await client.messages.create(params as unknown as MessageCreateParamsNonStreaming, options);
  return completionOf(message);
}
