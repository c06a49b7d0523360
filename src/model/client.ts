// The OpenAI-compatible chat client (vLLM serving Fara, Azure, OpenAI, Ollama, LM Studio, our scripted
// test double). Classifies failures so the workflow retries what can succeed later and nothing else.
import OpenAI from 'openai';
import { DEFAULT_MODEL_TIMEOUT_SECONDS } from './timeouts';
import { estimateTextTokens, estimateTokens } from './context';
import type { TokenCountable } from './context';
import { recordModelCall } from '../common/metrics';
import { withModelCallSpan } from '../telemetry/spans';

export interface ModelEndpoint {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Sampling temperature; Fara is usually run at 0. */
  temperature?: number;
  maxTokens?: number;
  /** The longest one call may take, from sending the request to the last byte of the response (default 120 s). */
  timeoutSeconds?: number;
  /** US dollars per million tokens (config models.<name>.price): each call's cost is recorded with its usage. */
  price?: ModelPrice;
}

export interface ModelPrice {
  input: number;
  output: number;
  /** Prompt tokens served from the endpoint's cache (default: `input`). */
  cachedInput?: number;
}

/**
 * A call's tokens as the endpoint reported them, or `estimated` (the endpoint sent no usage: counted from the prompt
 * and the output, src/model/context.ts estimateTokens), and what they cost when the endpoint has a price.
 */
export type CallUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** Prompt tokens the endpoint served from its prompt cache (part of prompt_tokens). */
  cached_tokens?: number;
  /** The endpoint sent no usage: these counts are estimates, not billing figures. */
  estimated?: true;
  /** US dollars, from the endpoint's price (absent: no price configured). */
  cost_usd?: number;
};

/** What a call's usage costs at `price` (US dollars). */
export function costOf(usage: Omit<CallUsage, 'cost_usd'>, price: ModelPrice): number {
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  const dollars =
    ((usage.prompt_tokens - cached) * price.input +
      cached * (price.cachedInput ?? price.input) +
      usage.completion_tokens * price.output) /
    1_000_000;
  return Math.round(dollars * 1e8) / 1e8;
}

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** A tool offered to the model for native function calling (OpenAI `tools` entry). */
export type ChatCompletionTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface Completion {
  /** The message content ('' when the endpoint sent none, e.g. with native tool calls only). */
  text: string;
  /** A provider's own response body (a native family's call: Responses, Messages, generateContent). */
  native?: unknown;
  /** Native function calls (`message.tool_calls`), when the endpoint returned them (vLLM with a tool parser). */
  toolCalls?: { name: string; arguments: string }[];
  reasoning: string | null;
  finishReason: string | null;
  usage: CallUsage;
}

/** A request the endpoint refused as malformed (400-class): retrying cannot help. */
export class ModelRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The endpoint failed or answered nothing usable (5xx, network, empty choices): worth retrying. */
export class ModelUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The endpoint took longer than the call's limit: it may be overloaded or hung. Worth retrying. */
export class ModelTimeoutError extends ModelUnavailableError {
  constructor(endpoint: ModelEndpoint, limitMs: number) {
    super(
      `model endpoint ${endpoint.baseUrl} sent no answer within ${Math.round(limitMs / 1000)} s (the call's limit, ` +
        `models.<name>.timeoutSeconds): it may be overloaded or hung`,
    );
    this.name = new.target.name;
  }
}

/**
 * What a native family's call returns (src/families/family.ts `call`): the completion, its usage as the provider
 * reported it (the client adds the cost), the provider's response body in `native`, and the response's model and id.
 */
export interface NativeCompletion extends Omit<Completion, 'usage' | 'native'> {
  native: unknown;
  usage: Omit<CallUsage, 'cost_usd'>;
  responseModel?: string;
  responseId?: string;
}

/** A call made with a provider's own SDK: the endpoint (URL, model, key) and the signal that cancels it. */
export type NativeCall = (endpoint: ModelEndpoint, signal: AbortSignal) => Promise<NativeCompletion>;

export interface CompleteOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Function tools for native tool calling; sent only when given. */
  tools?: ChatCompletionTool[];
  /** Whether the model may, must or must not call a tool; sent only when given. */
  toolChoice?: 'auto' | 'required' | 'none';
}

export class ModelClient {
  private readonly client: OpenAI;

  constructor(readonly endpoint: ModelEndpoint) {
    this.client = new OpenAI({
      baseURL: endpoint.baseUrl,
      apiKey: endpoint.apiKey || 'not-needed',
      maxRetries: 0, // Temporal's retry policy owns retries
      timeout: this.timeoutMs() + 5_000, // ours (complete's own timer) comes first and says what happened
    });
  }

  private timeoutMs(): number {
    return (this.endpoint.timeoutSeconds ?? DEFAULT_MODEL_TIMEOUT_SECONDS) * 1000;
  }

  /**
   * One chat completion: its latency, tokens and cost go to the worker's metrics (src/common/metrics.ts), and it is
   * traced as a `chat <model>` span (src/telemetry/spans.ts) when tracing is on.
   */
  async complete(messages: ChatMessage[], opts: CompleteOptions = {}): Promise<Completion> {
    return this.measured(() => this.completeOnce(messages, opts));
  }

  /**
   * One call through a provider's own SDK (a native family's `call`), under the same rules as `complete`: the call's
   * time limit beside the caller's signal, failures classified (a 4xx other than 408 and 429 is the request's fault,
   * anything else worth retrying), the cost from the endpoint's price, metrics and the span.
   */
  async completeNative(call: NativeCall, opts: Pick<CompleteOptions, 'signal'> = {}): Promise<Completion> {
    return this.measured(() =>
      this.limited(opts.signal, async (signal) => {
        const { responseModel, responseId, usage, ...rest } = await call(this.endpoint, signal);
        const priced = this.endpoint.price ? { ...usage, cost_usd: costOf(usage, this.endpoint.price) } : usage;
        return {
          completion: { ...rest, usage: priced },
          ...(responseModel ? { responseModel } : {}),
          ...(responseId ? { responseId } : {}),
        };
      }),
    );
  }

  private async measured(
    once: () => Promise<{ completion: Completion; responseModel?: string; responseId?: string }>,
  ): Promise<Completion> {
    const started = performance.now();
    const { baseUrl, model, temperature, maxTokens } = this.endpoint;
    try {
      const traced = await withModelCallSpan(
        { baseUrl, model, temperature: temperature ?? 0, ...(maxTokens ? { maxTokens } : {}) },
        once,
        ({ completion: { finishReason, usage }, responseModel, responseId }) => ({
          responseModel,
          responseId,
          finishReason,
          inputTokens: usage.prompt_tokens,
          outputTokens: usage.completion_tokens,
          cachedInputTokens: usage.cached_tokens,
          reasoningTokens: usage.reasoning_tokens,
          estimated: usage.estimated,
          costUsd: usage.cost_usd,
        }),
      );
      const { usage } = traced.completion;
      recordModelCall({ model, ms: performance.now() - started, ok: true, usage, costUsd: usage.cost_usd });
      return traced.completion;
    } catch (err) {
      recordModelCall({ model, ms: performance.now() - started, ok: false });
      throw err;
    }
  }

  /** Runs `send` under the call's own time limit beside the caller's signal; its failures classified. */
  private async limited<T>(caller: AbortSignal | undefined, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const limit = new AbortController();
    const timer = setTimeout(
      () => limit.abort(new ModelTimeoutError(this.endpoint, this.timeoutMs())),
      this.timeoutMs(),
    );
    const signal = caller ? AbortSignal.any([caller, limit.signal]) : limit.signal;
    try {
      return await send(signal);
    } catch (err) {
      if (limit.signal.aborted && !caller?.aborted) throw limit.signal.reason as ModelTimeoutError;
      throw classify(err, this.endpoint);
    } finally {
      clearTimeout(timer);
    }
  }

  private async completeOnce(
    messages: ChatMessage[],
    opts: CompleteOptions,
  ): Promise<{ completion: Completion; responseModel?: string; responseId?: string }> {
    // The call's own limit, from the request to the last byte of the answer, beside the caller's cancellation.
    const response = await this.limited(opts.signal, (signal) =>
      this.client.chat.completions.create(
        {
          model: this.endpoint.model,
          messages,
          temperature: this.endpoint.temperature ?? 0,
          ...(this.endpoint.maxTokens ? { max_tokens: this.endpoint.maxTokens } : {}),
          ...(opts.tools ? { tools: opts.tools } : {}),
          ...(opts.toolChoice ? { tool_choice: opts.toolChoice } : {}),
        },
        { signal, headers: opts.headers },
      ),
    );
    const choice = response.choices?.[0];
    if (!choice) throw new ModelUnavailableError(`model ${this.endpoint.model} returned no choices`);
    const message = choice.message as {
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: { type?: string; function?: { name?: unknown; arguments?: unknown } }[] | null;
    };
    const toolCalls = (message.tool_calls ?? []).flatMap((c) =>
      c?.function && typeof c.function.name === 'string'
        ? [{ name: c.function.name, arguments: argumentsText(c.function.arguments) }]
        : [],
    );
    const text = message.content ?? '';
    const usage = usageOf(response.usage, messages, text, toolCalls);
    const completion: Completion = {
      text,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      reasoning: message.reasoning_content ?? null,
      finishReason: choice.finish_reason ?? null,
      usage: this.endpoint.price ? { ...usage, cost_usd: costOf(usage, this.endpoint.price) } : usage,
    };
    return {
      completion,
      ...(typeof response.model === 'string' && response.model ? { responseModel: response.model } : {}),
      ...(typeof response.id === 'string' && response.id ? { responseId: response.id } : {}),
    };
  }
}

type ReportedUsage = OpenAI.CompletionUsage & {
  completion_tokens_details?: { reasoning_tokens?: number };
  prompt_tokens_details?: { cached_tokens?: number };
};

/**
 * The call's usage as the endpoint reported it; when it reported none (some servers do not), estimated from the
 * prompt and the output and marked so: a missing usage is no free call.
 */
function usageOf(
  reported: ReportedUsage | undefined,
  messages: readonly ChatMessage[],
  text: string,
  toolCalls: readonly { name: string; arguments: string }[],
): CallUsage {
  if (reported && typeof reported.prompt_tokens === 'number') {
    const cached = reported.prompt_tokens_details?.cached_tokens;
    return {
      prompt_tokens: reported.prompt_tokens,
      completion_tokens: reported.completion_tokens ?? 0,
      reasoning_tokens: reported.completion_tokens_details?.reasoning_tokens ?? 0,
      ...(typeof cached === 'number' && cached > 0 ? { cached_tokens: cached } : {}),
    };
  }
  const output = text + toolCalls.map((c) => `${c.name}${c.arguments}`).join('');
  return {
    prompt_tokens: estimateTokens(messages as unknown as TokenCountable[]),
    completion_tokens: estimateTextTokens(output),
    reasoning_tokens: 0,
    estimated: true,
  };
}

/** Tool-call arguments as text: servers send a JSON string; a few send the object itself. */
function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/** The HTTP status an SDK's error carries (OpenAI's, Anthropic's and Google's API errors all have `status`). */
function statusOf(err: unknown): number | undefined {
  if (err instanceof OpenAI.APIError) return err.status;
  const status = (err as { status?: unknown } | null)?.status;
  return err instanceof Error && typeof status === 'number' ? status : undefined;
}

function classify(err: unknown, endpoint: ModelEndpoint): Error {
  // Already classified (a native family's call may say itself that its request cannot be sent).
  if (err instanceof ModelRequestError || err instanceof ModelUnavailableError) return err;
  const status = statusOf(err);
  // 408 (timeout) and 429 (rate limit) are transient; the rest of the 4xx class is the request's fault.
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    const detail = err instanceof Error ? err.message : String(err);
    return new ModelRequestError(
      `model endpoint ${endpoint.baseUrl} rejected the request (${status}): ${detail}`,
      status,
      {
        cause: err,
      },
    );
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new ModelUnavailableError(`model endpoint ${endpoint.baseUrl} failed: ${detail}`, { cause: err });
}
