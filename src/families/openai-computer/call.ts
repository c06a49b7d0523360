// The openai-computer family's model call: the step's Responses API body sent with the official `openai` SDK to the
// endpoint's base URL with the endpoint's key (nothing read from the environment), no retries of the SDK's own (the
// workflow retries), and the response read into a NativeCompletion: its text, reasoning summary, usage and ids.
import OpenAI from 'openai';
import type { Response } from 'openai/resources/responses/responses';
import type { ModelEndpoint, NativeCompletion } from '../../model/client';
import { DEFAULT_IMAGE_TOKENS, estimateTextTokens } from '../../model/context';
import type { FamilyRequest } from '../family';
import type { OpenAiRequestBody } from './request';
import { isRecord, messageText, reasoningText } from './wire';

function isRequestBody(v: unknown): v is OpenAiRequestBody {
  return isRecord(v) && Array.isArray(v.input) && Array.isArray(v.tools);
}

/** A client for this endpoint only: its URL and key, never OPENAI_* environment variables (key, org, project). */
export function clientFor(endpoint: ModelEndpoint): OpenAI {
  return new OpenAI({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey || 'not-needed',
    organization: null,
    project: null,
    maxRetries: 0,
  });
}

/** Tokens the endpoint did not report, estimated: the text of the request and the output, and each image. */
function estimatedUsage(body: OpenAiRequestBody, response: Response): NativeCompletion['usage'] {
  const sent = JSON.stringify(body.input, (_k, v: unknown) =>
    typeof v === 'string' && v.startsWith('data:') ? '' : v,
  );
  const images = (sent.match(/"(input_image|computer_screenshot)"/g) ?? []).length;
  return {
    prompt_tokens: estimateTextTokens(`${body.instructions ?? ''}${sent}`) + images * DEFAULT_IMAGE_TOKENS,
    completion_tokens: estimateTextTokens(JSON.stringify(response.output ?? [])),
    reasoning_tokens: 0,
    estimated: true,
  };
}

function usageOf(body: OpenAiRequestBody, response: Response): NativeCompletion['usage'] {
  const u = response.usage;
  if (!u) return estimatedUsage(body, response);
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    reasoning_tokens: u.output_tokens_details?.reasoning_tokens ?? 0,
    cached_tokens: u.input_tokens_details?.cached_tokens ?? 0,
  };
}

/**
 * The call. The endpoint's `maxTokens` becomes `max_output_tokens` (reasoning included); its temperature is not sent:
 * the computer-use models reason, and reasoning models refuse sampling settings.
 */
export async function callOpenAi(
  request: FamilyRequest,
  endpoint: ModelEndpoint,
  signal: AbortSignal,
): Promise<NativeCompletion> {
  if (!isRequestBody(request.native)) throw new Error('openai-computer: the request carries no Responses API body');
  const body: OpenAiRequestBody = {
    ...request.native,
    model: endpoint.model,
    ...(endpoint.maxTokens ? { max_output_tokens: endpoint.maxTokens } : {}),
  };
  const response = await clientFor(endpoint).responses.create(body, { signal });
  const output = Array.isArray(response.output) ? response.output : [];
  const said = output.flatMap((i) => (i.type === 'message' ? [messageText(i)] : [])).join('\n');
  const reasoning = output.flatMap((i) => (i.type === 'reasoning' ? [reasoningText(i)] : [])).join('\n');
  return {
    text: said,
    native: response,
    reasoning: reasoning || null,
    finishReason: response.incomplete_details?.reason ?? response.status ?? null,
    usage: usageOf(body, response),
    responseModel: response.model,
    responseId: response.id,
  };
}
