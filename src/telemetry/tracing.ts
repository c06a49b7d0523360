// The process's tracing when `telemetry.traces` is configured: an OpenTelemetry SDK tracer provider exporting over
// OTLP/HTTP (protobuf) in batches, registered as the process's global provider (so the agent's own spans,
// src/telemetry/spans.ts, reach it), with the async-hooks context manager (a span started in an activity is the parent
// of the model calls and actions inside it) and the W3C trace-context propagator (the Temporal interceptors carry the
// context in headers with it). One per process, shared by the worker and the client in it; started only when tracing
// is on. Query and describe spans are dropped: a client polling a task's status would otherwise make a trace a poll.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import type { Context, Tracer } from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtlpExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type * as Resources from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConfigError } from '../common/config-error';
import { PROJECT_ROOT } from '../infra/paths';
import { tracesUrl } from './config';
import type { TracesSettings } from './config';

/** The tracer the Temporal interceptors' spans are made with. */
export const TEMPORAL_TRACER = '@temporalio/interceptors-opentelemetry';

export interface Tracing {
  /** For the Temporal interceptors (client, activities). */
  readonly tracer: Tracer;
  /** Where the workflow's spans, made in its sandbox and handed out through a sink, are ended. */
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  /** The URL spans are sent to. */
  readonly url: string;
  /** Sends the spans ended so far. */
  flush(): Promise<void>;
  /** One user of the process's tracing is done: the last one flushes, shuts the exporter down and unregisters it. */
  release(): Promise<void>;
}

/**
 * The OpenTelemetry SDK and its OTLP exporter, loaded at the first start: ~150 ms to load, which every `cua` command
 * and worker start (both import this module) would otherwise pay with tracing off. Plain packages, so Node's own
 * require finds them under tsx, vitest and the compiled build alike.
 */
function sdk() {
  /* eslint-disable @typescript-eslint/no-require-imports */
  return {
    ...(require('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks),
    ...(require('@opentelemetry/core') as typeof OtelCore),
    ...(require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpExporter),
    ...(require('@opentelemetry/resources') as typeof Resources),
    ...(require('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Spans of reads (queries, describes): dropped, see the header. */
const READ_SPANS = /^(QueryWorkflow|HandleQuery|DescribeWorkflow)(:|$)/;

/** A processor passing every span but the reads on to `inner`. */
class WithoutReads implements SpanProcessor {
  constructor(private readonly inner: SpanProcessor) {}
  onStart(span: Span, parent: Context): void {
    this.inner.onStart(span, parent);
  }
  onEnd(span: ReadableSpan): void {
    if (!READ_SPANS.test(span.name)) this.inner.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

interface Active {
  key: string;
  tracing: Tracing;
  users: number;
}
let active: Active | undefined;

/**
 * The process's tracing for these settings: started at the first call, shared by later ones (each then calls
 * `release` once). Settings that differ from the running ones are a ConfigError: a process exports to one place.
 */
export function startTracing(settings: TracesSettings): Tracing {
  const key = JSON.stringify([settings.otlpEndpoint, settings.serviceName, settings.headers ?? {}]);
  if (active) {
    if (active.key !== key) {
      throw new ConfigError(
        `tracing is already on in this process, exporting to ${active.tracing.url}; one process exports to one place`,
      );
    }
    active.users++;
    return active.tracing;
  }
  const url = tracesUrl(settings.otlpEndpoint);
  const version = packageVersion();
  const {
    AsyncLocalStorageContextManager,
    BasicTracerProvider,
    BatchSpanProcessor,
    OTLPTraceExporter,
    Resource,
    W3CTraceContextPropagator,
  } = sdk();
  const resource = new Resource({
    'service.name': settings.serviceName,
    'service.version': version,
    'service.instance.id': `${os.hostname()}-${process.pid}`,
    'host.name': os.hostname(),
    'process.pid': process.pid,
  });
  const exporter = new OTLPTraceExporter({ url, ...(settings.headers ? { headers: settings.headers } : {}) });
  const processor = new WithoutReads(new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 }));
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  // Each global is taken only where nothing holds it yet: an application's own OpenTelemetry setup stays in place.
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const ownContext = context.setGlobalContextManager(contextManager);
  if (!ownContext) contextManager.disable();
  const ownPropagator = propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const ownProvider = trace.setGlobalTracerProvider(provider);
  const flushAtExit = () => void provider.forceFlush().catch(() => undefined);
  // A command that ends (`cua run`) sends what it traced before the process exits.
  process.once('beforeExit', flushAtExit);
  const tracing: Tracing = {
    tracer: provider.getTracer(TEMPORAL_TRACER, version),
    processor,
    resource,
    url,
    flush: () => provider.forceFlush(),
    async release() {
      if (!active || active.tracing !== tracing || --active.users > 0) return;
      active = undefined;
      process.removeListener('beforeExit', flushAtExit);
      await provider.shutdown().catch(() => undefined);
      if (ownProvider) trace.disable();
      if (ownPropagator) propagation.disable();
      if (ownContext) context.disable();
    },
  };
  active = { key, tracing, users: 1 };
  return tracing;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Sends what the process's tracing (if on) has ended so far. */
export async function flushTracing(): Promise<void> {
  await active?.tracing.flush();
}
