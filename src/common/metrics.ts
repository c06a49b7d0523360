// The agent's own metrics (docs/observability.md "Metrics"): their names, and the instruments the worker's code
// records on. They go to the Temporal runtime's metric meter, so they leave on the same exporter as the SDK's own
// (`telemetry.metrics.prometheus`). The runtime is one per process, so these are too: until the worker installs a
// meter (installMetrics) every record is a no-op, which keeps src/ code and its unit tests free of Temporal.
// Workflow code records its metrics (steps, invalid model outputs) through @temporalio/workflow's own meter, which skips
// replays, with the names below.
import type { MetricCounter, MetricGauge, MetricHistogram, MetricMeter, MetricTags } from '@temporalio/common';

/** Metric names, one place: workflows, activities, the worker and the docs use these. */
export const METRICS = {
  steps: 'cua_steps_total',
  stepDuration: 'cua_step_duration_ms',
  modelCalls: 'cua_model_calls_total',
  modelCallDuration: 'cua_model_call_duration_ms',
  modelTokens: 'cua_model_tokens_total',
  modelCost: 'cua_model_cost_microdollars_total',
  modelInvalidOutputs: 'cua_model_invalid_replies_total', // the exported name is a wire name: kept
  replyRefusals: 'cua_reply_refusals_total',
  sessionsInUse: 'cua_sessions_in_use',
  sessionsWaiting: 'cua_sessions_waiting',
  sessionQueueWait: 'cua_session_queue_wait_ms',
  tasksWaitingForUser: 'cua_tasks_waiting_for_user',
} as const;

/** Histogram buckets (milliseconds) for our histograms; the SDK's default ones stop at 10 s. */
export const HISTOGRAM_BUCKETS: Record<string, number[]> = {
  [METRICS.stepDuration]: [250, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000],
  [METRICS.modelCallDuration]: [100, 250, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000],
  [METRICS.sessionQueueWait]: [10, 100, 1000, 5000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000],
};

/** One model call, as the client saw it. */
export interface ModelCallMetric {
  model: string;
  ms: number;
  ok: boolean;
  usage?: { prompt_tokens: number; completion_tokens: number; reasoning_tokens: number; cached_tokens?: number };
  costUsd?: number;
}

class Instruments {
  readonly modelCalls: MetricCounter;
  readonly modelCallDuration: MetricHistogram;
  readonly modelTokens: MetricCounter;
  readonly modelCost: MetricCounter;
  readonly sessionsInUse: MetricGauge;
  readonly sessionsWaiting: MetricGauge;
  readonly sessionQueueWait: MetricHistogram;
  readonly tasksWaitingForUser: MetricGauge;

  constructor(meter: MetricMeter) {
    const ms = (name: string, help: string) => meter.createHistogram(name, 'int', 'ms', help);
    const gauge = (name: string, unit: string, help: string) => meter.createGauge(name, 'int', unit, help);
    this.modelCalls = meter.createCounter(METRICS.modelCalls, 'calls', 'Model calls by model and outcome (ok, error)');
    this.modelCallDuration = ms(
      METRICS.modelCallDuration,
      'Model call latency, request to the last byte of the answer',
    );
    this.modelTokens = meter.createCounter(
      METRICS.modelTokens,
      'tokens',
      'Model tokens by model and kind (prompt, completion, cached, reasoning); estimated ones included',
    );
    this.modelCost = meter.createCounter(METRICS.modelCost, 'µUSD', 'Model cost in millionths of a US dollar');
    this.sessionsInUse = gauge(METRICS.sessionsInUse, 'sessions', 'Open sessions of this worker (held ones included)');
    this.sessionsWaiting = gauge(METRICS.sessionsWaiting, 'openers', 'Session opens waiting in line in this worker');
    this.sessionQueueWait = ms(METRICS.sessionQueueWait, 'How long a session open waited to start (queue, retries)');
    this.tasksWaitingForUser = gauge(
      METRICS.tasksWaitingForUser,
      'tasks',
      'Running tasks waiting for a person (a visibility count: every worker reports the same figure)',
    );
  }
}

let instruments: Instruments | undefined;

/** Records on `meter` from now on (the worker calls it with its runtime's meter); again: no change. */
export function installMetrics(meter: MetricMeter): void {
  instruments ??= new Instruments(meter);
}

/** A model call's latency, tokens and cost, labelled by model. */
export function recordModelCall(call: ModelCallMetric): void {
  if (!instruments) return;
  const model = { model: call.model };
  instruments.modelCalls.add(1, { ...model, outcome: call.ok ? 'ok' : 'error' });
  instruments.modelCallDuration.record(Math.max(0, Math.round(call.ms)), model);
  const u = call.usage;
  if (u) {
    const add = (kind: string, n: number | undefined) => {
      if (n) instruments?.modelTokens.add(n, { ...model, kind });
    };
    add('prompt', u.prompt_tokens);
    add('completion', u.completion_tokens);
    add('cached', u.cached_tokens);
    add('reasoning', u.reasoning_tokens);
  }
  if (call.costUsd) instruments.modelCost.add(Math.round(call.costUsd * 1e6), model);
}

/** How long a session open waited for a slot (0 when there was one). */
export function recordSessionQueueWait(environment: string, ms: number): void {
  instruments?.sessionQueueWait.record(Math.max(0, Math.round(ms)), { environment });
}

/** The worker's sessions right now (in use, and opens waiting in line). */
export function setSessionGauges(environment: string, inUse: number, waiting: number): void {
  instruments?.sessionsInUse.set(inUse, { environment });
  instruments?.sessionsWaiting.set(waiting, { environment });
}

/** Tasks of `tags` (their task queue) waiting for a person, as visibility counts them. */
export function setTasksWaitingForUser(count: number, tags: MetricTags): void {
  instruments?.tasksWaitingForUser.set(count, tags);
}
