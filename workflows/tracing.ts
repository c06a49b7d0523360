// The workflow's spans when tracing is on (bundled only then: worker/tracing.ts): RunWorkflow for each run, a
// StartActivity / StartChildWorkflow / ContinueAsNew / SignalWorkflow span around each command, whose context goes in
// the command's headers (the activity's RunActivity span and the next run's RunWorkflow span continue it), and
// HandleSignal / HandleUpdate for messages, in the context their sender put in the headers. Span names and headers
// are those of @temporalio/interceptors-opentelemetry, whose sandbox pieces (context manager, sink exporter) this uses.
//
// Why not its own workflow interceptors: they hand back a promise of their own around each command, which settles a
// few microtasks after the command's, so a workflow's promise chains settle in another order with tracing than
// without, and a history recorded one way fails to replay the other (seen: a recorded update completion). Here every
// interceptor hands back the very promise `next` gave, and ends its span on a side chain: the workflow's own chains
// keep their order, so histories replay alike with tracing on or off, and a fleet may mix the two.
import '@temporalio/interceptors-opentelemetry/lib/workflow/runtime';
import * as otel from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ContextManager } from '@temporalio/interceptors-opentelemetry/lib/workflow/context-manager';
import { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter';
import {
  extractContextFromHeaders,
  headersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { ContinueAsNew, workflowInfo } from '@temporalio/workflow';
import type { WorkflowInterceptors } from '@temporalio/workflow';

let tracer: otel.Tracer | undefined;
let contextManager: ContextManager | undefined;

/** The sandbox's tracer: spans end into the sink exporter (the worker's `exporter` sink; not called in replay). */
function sandboxTracer(): otel.Tracer {
  contextManager ??= new ContextManager();
  if (!tracer) {
    const provider = new BasicTracerProvider();
    provider.addSpanProcessor(new SimpleSpanProcessor(new SpanExporter()));
    provider.register({ contextManager });
    tracer = provider.getTracer('durable-cua/workflow');
  }
  return tracer;
}

function fail(span: otel.Span, err: unknown): void {
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  if (err instanceof Error) span.recordException(err);
}

/**
 * Runs `fn` in a new span (child of `parent`, else of the active context) and returns fn's own promise; the span ends
 * when it settles, on a side chain. A rejection `expected` accepts (a continue-as-new) ends it OK.
 */
function traced<T>(
  name: string,
  fn: () => Promise<T>,
  opts: { parent?: otel.Context | undefined; attributes?: otel.Attributes; expected?: (err: unknown) => boolean } = {},
): Promise<T> {
  const t = sandboxTracer();
  const parent = opts.parent ?? otel.context.active();
  const span = t.startSpan(name, { attributes: opts.attributes ?? {} }, parent);
  let result: Promise<T>;
  try {
    result = otel.context.with(otel.trace.setSpan(parent, span), fn);
  } catch (err) {
    fail(span, err);
    span.end();
    throw err;
  }
  result.then(
    () => span.end(),
    (err: unknown) => {
      if (!opts.expected?.(err)) fail(span, err);
      span.end();
    },
  );
  return result;
}

const isContinueAsNew = (err: unknown) => err instanceof ContinueAsNew;

export const interceptors = (): WorkflowInterceptors => {
  sandboxTracer(); // before reading headers: it registers the W3C propagator in the sandbox
  return {
    inbound: [
      {
        execute: (input, next) =>
          traced(`RunWorkflow:${workflowInfo().workflowType}`, () => next(input), {
            parent: extractContextFromHeaders(input.headers),
            expected: isContinueAsNew,
          }),
        handleSignal: (input, next) =>
          traced(`HandleSignal:${input.signalName}`, () => next(input), {
            parent: extractContextFromHeaders(input.headers),
          }),
        handleUpdate: (input, next) =>
          traced(`HandleUpdate:${input.name}`, () => next(input), {
            parent: extractContextFromHeaders(input.headers),
            attributes: { [UPDATE_ID_ATTR_KEY]: input.updateId },
          }),
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) =>
          traced(`StartActivity:${input.activityType}`, () =>
            next({ ...input, headers: headersWithContext(input.headers) }),
          ),
        scheduleLocalActivity: (input, next) =>
          traced(`StartActivity:${input.activityType}`, () =>
            next({ ...input, headers: headersWithContext(input.headers) }),
          ),
        startChildWorkflowExecution: (input, next) =>
          traced(`StartChildWorkflow:${input.workflowType}`, () =>
            next({ ...input, headers: headersWithContext(input.headers) }),
          ),
        continueAsNew: (input, next) =>
          traced(
            `ContinueAsNew:${input.options.workflowType ?? workflowInfo().workflowType}`,
            () => next({ ...input, headers: headersWithContext(input.headers) }),
            { expected: isContinueAsNew },
          ),
        signalWorkflow: (input, next) =>
          traced(`SignalWorkflow:${input.signalName}`, () =>
            next({ ...input, headers: headersWithContext(input.headers) }),
          ),
      },
    ],
    internals: [
      {
        dispose: (input, next) => {
          contextManager?.disable();
          next(input);
        },
      },
    ],
  };
};
