// The worker's side of tracing (config `telemetry.traces`, docs/observability.md): the Temporal OpenTelemetry
// interceptors on its activities (a RunActivity span per attempt, child of the workflow's StartActivity span through
// the activity's headers, with the task's id and step added), the workflow interceptors (workflows/tracing.ts)
// bundled into the workflow code, and the sink through which the workflow's spans, made in its sandbox, reach the exporter. Spans made while a
// workflow is replayed are not exported again, and replay makes the same span ids, so a task stays one trace across
// worker restarts. Off, none of it is started (no provider, no exporter, no workflow interceptors in the bundle).
import path from 'node:path';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import { trace } from '@opentelemetry/api';
import type * as Interceptors from '@temporalio/interceptors-opentelemetry';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import { startTracing } from '../src/telemetry/tracing';
import type { Config } from '../src/runtime/config';

/** What the worker adds to its Worker.create options, and gives back when it stops. */
export interface WorkerTracing {
  interceptors: WorkerInterceptors;
  /** For the worker that runs workflows. */
  sinks: InjectedSinks<OpenTelemetrySinks>;
  release(): Promise<void>;
}

/** The workflow's own interceptors (workflows/tracing.ts): the file the bundle takes, TypeScript or compiled. */
const WORKFLOW_TRACING = path.resolve(__dirname, '..', 'workflows', `tracing${path.extname(__filename)}`);

/** The workflow interceptor module the bundle must include for the workflow's spans (none when tracing is off). */
export function workflowInterceptorModules(config: Pick<Config, 'telemetry'>): string[] {
  return config.telemetry?.traces ? [WORKFLOW_TRACING] : [];
}

/** The task id and step an activity's request names (most take a StepRef or a task id), for its span. */
function stepAttributes(args: readonly unknown[]): Record<string, string | number> {
  const req = args[0];
  if (typeof req !== 'object' || req === null) return {};
  const { runId: taskId, step } = req as { /** wire name */ runId?: unknown; step?: unknown };
  return {
    ...(typeof taskId === 'string' ? { 'cua.run_id': taskId } : {}),
    ...(typeof step === 'number' ? { 'cua.step': step } : {}),
  };
}

/** The worker's tracing, or undefined when `telemetry.traces` is not configured (then nothing is started). */
export function workerTracing(config: Pick<Config, 'telemetry'>): WorkerTracing | undefined {
  const settings = config.telemetry?.traces;
  if (!settings) return undefined;
  const tracing = startTracing(settings);
  // Loaded only now, like the SDK (src/telemetry/tracing.ts): a worker with tracing off does not pay for it.
  const { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('@temporalio/interceptors-opentelemetry') as typeof Interceptors;
  const options = { tracer: tracing.tracer };
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, options),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
        // Inside the RunActivity span the interceptor above made: the task and step it worked on.
        () => ({
          inbound: {
            execute: (input, next) => {
              trace.getActiveSpan()?.setAttributes(stepAttributes(input.args));
              return next(input);
            },
          },
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) },
    release: () => tracing.release(),
  };
}
