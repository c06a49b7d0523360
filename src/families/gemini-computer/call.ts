// The generateContent call itself, through the official `@google/genai` SDK: a client built per call for the
// endpoint's base URL and key only (never a key from the environment, never Vertex AI from the environment), no
// retries of its own (the workflow's policy owns them), the caller's signal; and the usage Gemini reports mapped to
// ours (thought tokens are output tokens, billed as such), estimated when the response carries none.
import { GoogleGenAI } from '@google/genai';
import type { Content, GenerateContentConfig, GenerateContentResponseUsageMetadata, Tool } from '@google/genai';
import type { ModelEndpoint, NativeCompletion } from '../../model/client';
import { DEFAULT_IMAGE_TOKENS, estimateTextTokens } from '../../model/context';
import { completionTexts, firstCandidate } from './read';

/** The generateContent request body (REST, camelCase as the SDK writes it). */
export interface GeminiRequestBody {
  systemInstruction?: Content;
  contents: Content[];
  tools?: Tool[];
}

/** The API version every computer-use model is served under. */
const API_VERSION = 'v1beta';

/**
 * The SDK appends `/v1beta/models/{model}:generateContent` to its base URL: a base URL given with the version
 * (`https://generativelanguage.googleapis.com/v1beta`) loses it here, so both spellings reach the same address.
 */
export function sdkBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(new RegExp(`/${API_VERSION}$`), '');
}

/** A rough count for a response without usage: the texts by length, each image at the default image cost. */
function estimatedUsage(body: GeminiRequestBody, text: string): NativeCompletion['usage'] {
  let images = 0;
  const json = JSON.stringify([body.systemInstruction, body.contents], (key, value: unknown) => {
    if (key === 'inlineData') {
      images += 1;
      return undefined;
    }
    return value;
  });
  return {
    prompt_tokens: estimateTextTokens(json) + images * DEFAULT_IMAGE_TOKENS,
    completion_tokens: estimateTextTokens(text),
    reasoning_tokens: 0,
    estimated: true,
  };
}

/** Gemini's usage as ours: prompt (with tool-use prompt tokens), output with thoughts, thoughts, cached. */
export function usageOf(
  usage: GenerateContentResponseUsageMetadata | undefined,
  body: GeminiRequestBody,
  text: string,
): NativeCompletion['usage'] {
  if (!usage || typeof usage.promptTokenCount !== 'number') return estimatedUsage(body, text);
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const cached = usage.cachedContentTokenCount ?? 0;
  return {
    prompt_tokens: usage.promptTokenCount + (usage.toolUsePromptTokenCount ?? 0),
    completion_tokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    reasoning_tokens: thoughts,
    ...(cached > 0 ? { cached_tokens: cached } : {}),
  };
}

/**
 * One generateContent call with the request body; the response body comes back as `native`. `headers` go with the
 * request (the scripted server's entry and call kind; a real endpoint ignores them).
 */
export async function callGemini(
  body: GeminiRequestBody,
  endpoint: ModelEndpoint,
  signal: AbortSignal,
  headers?: Record<string, string>,
): Promise<NativeCompletion> {
  const client = new GoogleGenAI({
    vertexai: false, // not from GOOGLE_GENAI_USE_VERTEXAI: this endpoint is the Gemini API's
    apiKey: endpoint.apiKey ?? '', // never GOOGLE_API_KEY or GEMINI_API_KEY: the key goes to this endpoint only
    apiVersion: API_VERSION,
    httpOptions: {
      baseUrl: sdkBaseUrl(endpoint.baseUrl),
      apiVersion: API_VERSION,
      retryOptions: { attempts: 1 },
      ...(headers ? { headers } : {}),
    },
  });
  // Temperature only when the endpoint sets one: Google advises its default for the Gemini 3 models.
  const config: GenerateContentConfig = {
    systemInstruction: body.systemInstruction,
    tools: body.tools,
    abortSignal: signal,
    ...(endpoint.temperature !== undefined ? { temperature: endpoint.temperature } : {}),
    ...(endpoint.maxTokens ? { maxOutputTokens: endpoint.maxTokens } : {}),
  };
  const response = await client.models.generateContent({ model: endpoint.model, contents: body.contents, config });
  // The body as the API sent it (the SDK's class also carries the HTTP response and getters: left out).
  const native = JSON.parse(
    JSON.stringify({
      candidates: response.candidates,
      promptFeedback: response.promptFeedback,
      usageMetadata: response.usageMetadata,
      modelVersion: response.modelVersion,
      responseId: response.responseId,
    }),
  ) as unknown;
  const { text, reasoning } = completionTexts(native);
  return {
    text,
    native,
    reasoning,
    finishReason: firstCandidate(native)?.finishReason ?? null,
    usage: usageOf(response.usageMetadata, body, text),
    ...(response.modelVersion ? { responseModel: response.modelVersion } : {}),
    ...(response.responseId ? { responseId: response.responseId } : {}),
  };
}
