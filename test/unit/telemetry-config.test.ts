// The traces section of the configuration and the standard OTEL_* variables that set it: off unless an endpoint is
// given, the variables over the file, a way to turn it off, and a one-line error for an endpoint that is no URL.
import { describe, expect, it } from 'vitest';
import { configFromObject } from '../../src/runtime/config';
import { tracesUrl } from '../../src/telemetry/config';

const machine = { cores: 2, memoryBytes: 24 * 1024 ** 3 };
const traces = (raw: object, env: NodeJS.ProcessEnv = {}) => configFromObject(raw, { env, machine }).telemetry?.traces;

describe('telemetry.traces', () => {
  it('is off by default, and on with an endpoint from the file or OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    expect(traces({})).toBeUndefined();
    expect(traces({}, { OTEL_SERVICE_NAME: 'alone' })).toBeUndefined();
    expect(traces({ telemetry: { traces: { otlpEndpoint: 'http://collector:4318' } } })).toEqual({
      otlpEndpoint: 'http://collector:4318',
      serviceName: 'durable-cua',
    });
    expect(
      traces(
        { telemetry: { traces: { otlpEndpoint: 'http://file:4318', serviceName: 'file' } } },
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'https://env:4318',
          OTEL_SERVICE_NAME: 'env',
          OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b, tenant=t1',
        },
      ),
    ).toEqual({ otlpEndpoint: 'https://env:4318', serviceName: 'env', headers: { 'x-api-key': 'a b', tenant: 't1' } });
    expect(traces({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/v1/traces' })?.otlpEndpoint).toBe(
      'http://t:4318/v1/traces',
    );
  });

  it('OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns it off whatever the file says', () => {
    const file = { telemetry: { traces: { otlpEndpoint: 'http://collector:4318' } } };
    expect(traces(file, { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(
      traces(file, { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }),
    ).toBeUndefined();
  });

  it('refuses an endpoint that is no http(s) URL, and bad headers, in one line', () => {
    expect(() => traces({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toThrow(
      /^invalid configuration: telemetry\.traces\.otlpEndpoint: an http\(s\) URL of an OTLP\/HTTP receiver/,
    );
    expect(() =>
      traces({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }),
    ).toThrow('OTEL_EXPORTER_OTLP_HEADERS entry 1 must be key=value (entries separated by commas)');
  });

  it('sends to /v1/traces under the base URL, or to the traces URL as given', () => {
    expect(tracesUrl('http://c:4318')).toBe('http://c:4318/v1/traces');
    expect(tracesUrl('http://c:4318/')).toBe('http://c:4318/v1/traces');
    expect(tracesUrl('https://c/otlp/v1/traces')).toBe('https://c/otlp/v1/traces');
  });
});
