// The agent's own spans, beside the Temporal interceptors' workflow and activity spans: one per model call (GenAI
// semantic conventions: operation, model, tokens, server; the span's duration is the call's latency) and one per
// action carried out in a browser, a desktop or an application's environment (the action, the page's URL). Written
// against the OpenTelemetry API only: with no tracer provider registered (tracing off) every call here is a no-op.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';

/** The instrumentation scope of the agent's spans. */
export const AGENT_TRACER = 'durable-cua';

const tracer = () => trace.getTracer(AGENT_TRACER);

/** Runs `fn` in an active span named `name`; a throw ends it with status ERROR and `error.type`, and is rethrown. */
async function inSpan<T>(
  name: string,
  opts: { kind: SpanKind; attributes: Attributes },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, opts, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** What a model call's span says about the request (gen_ai.request.*, server.*). */
export interface ModelCallRequest {
  baseUrl: string;
  model: string;
  temperature?: number;
  maxTokens?: number;
}

/** What it says about the response (gen_ai.response.*, gen_ai.usage.*). */
export interface ModelCallResponse {
  responseModel?: string | undefined;
  responseId?: string | undefined;
  finishReason: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number | undefined;
  reasoningTokens?: number | undefined;
  /** The endpoint sent no usage: the counts are estimates. */
  estimated?: boolean | undefined;
  costUsd?: number | undefined;
}

/** server.address and server.port of a base URL (the scheme's default port when it names none). */
function serverOf(baseUrl: string): Attributes {
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { 'server.address': url.hostname, 'server.port': port };
  } catch {
    return {};
  }
}

/**
 * One chat completion as a CLIENT span named `chat <model>`, with the GenAI semantic conventions' attributes. No
 * prompt or reply text goes into it (the run folder has them); `cua.usage.estimated` marks counts the endpoint did
 * not send.
 */
export function withModelCallSpan<T>(
  req: ModelCallRequest,
  call: () => Promise<T>,
  response: (result: T) => ModelCallResponse,
): Promise<T> {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': req.model,
    ...(req.temperature !== undefined ? { 'gen_ai.request.temperature': req.temperature } : {}),
    ...(req.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': req.maxTokens } : {}),
    ...serverOf(req.baseUrl),
  };
  return inSpan(`chat ${req.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const result = await call();
    const res = response(result);
    span.setAttributes({
      ...(res.responseModel ? { 'gen_ai.response.model': res.responseModel } : {}),
      ...(res.responseId ? { 'gen_ai.response.id': res.responseId } : {}),
      ...(res.finishReason ? { 'gen_ai.response.finish_reasons': [res.finishReason] } : {}),
      'gen_ai.usage.input_tokens': res.inputTokens,
      'gen_ai.usage.output_tokens': res.outputTokens,
      ...(res.cachedInputTokens ? { 'gen_ai.usage.cache_read.input_tokens': res.cachedInputTokens } : {}),
      ...(res.reasoningTokens ? { 'cua.usage.reasoning_tokens': res.reasoningTokens } : {}),
      ...(res.estimated ? { 'cua.usage.estimated': true } : {}),
      ...(res.costUsd !== undefined ? { 'cua.usage.cost_usd': res.costUsd } : {}),
    });
    return result;
  });
}

/** The action a span is about and where it happened. */
export interface ActionSpanInfo {
  /** browser, desktop, or an application's environment name. */
  environment: string;
  /** The action's (or desktop tool's) name: left_click, visit_url, run_command, … */
  action: string;
  taskId: string;
  step: number;
  /** The page's URL before the action (browser and page-like environments). */
  url?: string;
}

/** A URL without its user and password, which never belong in a trace. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** What the action's span records once it is done: the URL after it, and the error the model is told, if any. */
export interface ActionSpanOutcome {
  url?: string;
  error?: string | null;
}

/**
 * One action carried out as an INTERNAL span `<environment> <action>` (e.g. `browser left_click`) with `cua.action`,
 * `cua.step`, `cua.run_id` and `url.full` (before) / `cua.url.after`. An action that failed in a way the model is
 * told about (`error`) gets status ERROR with that text; the act itself goes on.
 */
export function withActionSpan<T>(
  info: ActionSpanInfo,
  run: () => Promise<T>,
  outcome: (result: T) => ActionSpanOutcome,
): Promise<T> {
  const attributes: Attributes = {
    'cua.environment': info.environment,
    'cua.action': info.action,
    'cua.run_id': info.taskId,
    'cua.step': info.step,
    ...(info.url ? { 'url.full': withoutCredentials(info.url) } : {}),
  };
  return inSpan(`${info.environment} ${info.action}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    const result = await run();
    const { url, error } = outcome(result);
    if (url) span.setAttribute('cua.url.after', withoutCredentials(url));
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    return result;
  });
}
