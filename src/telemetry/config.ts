// The `telemetry.traces` section of the configuration (worker and client alike) and the standard OpenTelemetry
// environment variables that set it. Absent: no tracing at all (nothing is loaded, no span is kept).
import { z } from 'zod';

/** Where spans go: an OTLP/HTTP receiver (a Collector, Jaeger, Tempo, …) and how this process names itself there. */
export const TracesSchema = z.strictObject({
  /**
   * The receiver's OTLP/HTTP address, as OTEL_EXPORTER_OTLP_ENDPOINT gives it (http://collector:4318: spans are sent to
   * /v1/traces under it), or the full traces URL (ending in /v1/traces). Spans go as protobuf over HTTP.
   */
  otlpEndpoint: z.url({
    protocol: /^https?$/,
    error: 'an http(s) URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318',
  }),
  /** The `service.name` the spans carry (OTEL_SERVICE_NAME). */
  serviceName: z.string().min(1).default('durable-cua'),
  /** Headers sent with every export, e.g. an API key of a hosted backend (OTEL_EXPORTER_OTLP_HEADERS). */
  headers: z.record(z.string().min(1), z.string()).optional(),
});
export type TracesSettings = z.infer<typeof TracesSchema>;
export type TracesInput = z.input<typeof TracesSchema>;

/** The URL spans are POSTed to: the endpoint's /v1/traces, unless it names that path already. */
export function tracesUrl(otlpEndpoint: string): string {
  if (/\/v1\/traces\/?$/.test(otlpEndpoint)) return otlpEndpoint;
  return `${otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** `key=value,key2=value2` (values percent-encoded), as the OpenTelemetry specification writes OTLP headers. */
function parseHeaders(text: string, fail: (message: string) => Error): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, entry] of text.split(',').entries()) {
    if (entry.trim() === '') continue;
    const at = entry.indexOf('=');
    if (at <= 0)
      throw fail(`OTEL_EXPORTER_OTLP_HEADERS entry ${i + 1} must be key=value (entries separated by commas)`);
    out[entry.slice(0, at).trim()] = decodeURIComponent(entry.slice(at + 1).trim());
  }
  return out;
}

/**
 * The traces section with the environment applied: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL) or
 * OTEL_EXPORTER_OTLP_ENDPOINT (the base) turns tracing on; OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS fill in
 * the rest; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns it off, whatever the file says. Undefined: the
 * section as written (or absent).
 */
export function tracesEnvOverride(
  section: unknown,
  env: NodeJS.ProcessEnv,
  fail: (message: string) => Error,
): Record<string, unknown> | null | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim() === 'none') {
    return null;
  }
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const current = typeof section === 'object' && section !== null ? (section as Record<string, unknown>) : undefined;
  if (!endpoint && !current) return undefined;
  const out: Record<string, unknown> = { ...current };
  if (endpoint) out.otlpEndpoint = endpoint;
  if (env.OTEL_SERVICE_NAME) out.serviceName = env.OTEL_SERVICE_NAME;
  if (env.OTEL_EXPORTER_OTLP_HEADERS) {
    out.headers = { ...(out.headers as object | undefined), ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, fail) };
  }
  return out;
}
