// Jaeger's all-in-one (v1.76.0, built by scripts/jaeger.sh into a cache outside the clone) with in-memory storage on
// free 127.0.0.1 ports: an OTLP/HTTP receiver and the query API (/api/traces), the real trace backend the traces test
// sends to and reads from. Not for production: point `telemetry.traces.otlpEndpoint` at your own collector there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './devserver';
import { startListening } from './listening-process';
import { jaegerPath } from './build-cache';

/** A span as Jaeger's query API returns it (the fields the tests read). */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  startTime: number;
  duration: number;
  tags: { key: string; type: string; value: unknown }[];
  processID: string;
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: { key: string; value: unknown }[] }>;
}

export interface Jaeger {
  /** Where to send spans: the OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT takes it). */
  otlpEndpoint: string;
  /** The query API and UI, e.g. http://127.0.0.1:41234 */
  queryUrl: string;
  /** The traces of a service (the newest first), as /api/traces?service=… returns them. */
  traces(service: string, opts?: { limit?: number; operation?: string }): Promise<JaegerTrace[]>;
  /** One trace by id; undefined when Jaeger has none. */
  trace(traceId: string): Promise<JaegerTrace | undefined>;
  stop(): Promise<void>;
}

export class JaegerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The collector configuration: an OTLP/HTTP receiver into memory, the query extension, nothing else listening. */
function configYaml(ports: { otlp: number; http: number; grpc: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: 127.0.0.1:${ports.http}
    grpc:
      endpoint: 127.0.0.1:${ports.grpc}
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new JaegerError(`${url}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

/** Starts Jaeger on free ports and waits until both the receiver and the query API accept connections. */
export async function startJaeger(opts: { timeoutMs?: number } = {}): Promise<Jaeger> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-jaeger-'));
  const ports = { otlp: await freePort(), http: await freePort(), grpc: await freePort() };
  const config = path.join(dir, 'jaeger.yaml');
  fs.writeFileSync(config, configYaml(ports));
  const served = await startListening(jaegerPath(), ['--config', config], {
    ports: [ports.otlp, ports.http],
    timeoutMs: opts.timeoutMs ?? 30_000,
    pollMs: 100,
    tailChars: 4000,
    cwd: dir,
    failure: (stderr) =>
      new JaegerError(`Jaeger did not start on 127.0.0.1:${ports.otlp}/${ports.http}: ${stderr || 'no output'}`),
  }).catch((err: unknown) => {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const stop = async () => {
    await served.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const queryUrl = `http://127.0.0.1:${ports.http}`;
  return {
    otlpEndpoint: `http://127.0.0.1:${ports.otlp}`,
    queryUrl,
    async traces(service, o = {}) {
      const q = new URLSearchParams({ service, limit: String(o.limit ?? 20), lookback: '1h' });
      if (o.operation) q.set('operation', o.operation);
      return (await getJson<JaegerTrace[] | null>(`${queryUrl}/api/traces?${q}`)) ?? [];
    },
    async trace(traceId) {
      const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
      if (res.status === 404) return undefined;
      if (!res.ok) throw new JaegerError(`trace ${traceId}: HTTP ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: JaegerTrace[] }).data[0];
    },
    stop,
  };
}
