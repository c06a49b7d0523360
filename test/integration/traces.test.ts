// Traces in a real receiver: Jaeger v1.76.0 (built once into ~/.cache/durable-cua by scripts/jaeger.sh, set up here
// and by .ci/run only) with in-memory storage. A worker and a client with `telemetry.traces` (from the standard
// OTEL_* variables) run a task that asks, is picked up by a new worker while it waits, continues as new, and ends;
// the test reads the task's trace back from Jaeger's query API: one trace from the client's start to the last step,
// the workflow's runs, the activities with their step, each model call with the GenAI attributes and each action with
// its URL. The tracing workflow interceptors keep histories replayable both ways.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createAgentClient } from '../../client/client';
import type { AgentClient } from '../../client/client';
import { ensureTools } from '../../src/infra/tools';
import { startJaeger } from '../../src/infra/jaeger';
import type { Jaeger, JaegerSpan, JaegerTrace } from '../../src/infra/jaeger';
import { eventually, FAST_TIMING, startHarness, untilWaiting, workflowBundle } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

const SERVICE = `cua-traces-${process.pid}`;
let jaeger: Jaeger;
let h: Harness;
let agent: AgentClient;
let env: Record<string, string>;
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  // Jaeger is built on the first run (about 10 min on 2 cores), then found in the cache.
  ensureTools((line) => console.log(`[traces test] ${line}`), ['traces']);
  jaeger = await startJaeger();
  env = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: SERVICE };
  h = await startHarness({ env });
  agent = await createAgentClient({ temporal: { address: h.server.address }, taskQueue: h.config.taskQueue, env });
}, 20 * 60_000);

afterAll(async () => {
  workers.killAll();
  await agent?.close();
  await h?.close();
  await jaeger?.stop();
});

const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
const named = (trace: JaegerTrace, name: string) => trace.spans.filter((s) => s.operationName === name);
const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;

/** Every trace of the service that has a span of this task (by the interceptors' temporalWorkflowId or our cua.run_id). */
async function tracesOf(id: string): Promise<JaegerTrace[]> {
  const all = await jaeger.traces(SERVICE, { limit: 100 });
  return all.filter((t) => t.spans.some((s) => tag(s, 'temporalWorkflowId') === id || tag(s, 'cua.run_id') === id));
}

describe('traces', () => {
  let id: string;
  let trace: JaegerTrace;

  it('a task is one trace in Jaeger: client, workflow runs, activities, model calls and actions', async () => {
    const started = Date.now();
    ({ id } = await agent.start({
      id: `traced-${Date.now().toString(36)}`,
      instruction: 'Search hotels in the city I want.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      continueAsNewAfterSteps: 2,
      model: { endpoint: 'default', baseUrl: h.model.url, model: 'ask-city' },
    }));
    await untilWaiting(h.client.workflow.getHandle(id));
    // A new worker takes the waiting task over: it replays the workflow, making the same span ids.
    await h.stopWorker();
    await h.startWorker();
    await agent.reply(id, 'Lisbon');
    const result = await agent.result(id);
    expect(result).toMatchObject({ status: 'complete', answer: 'Searched Lisbon as you asked.' });

    // The run's last activity (finalize), exported by the worker's batch a second later, closes the picture.
    const traces = await eventually(
      async () => {
        const found = await tracesOf(id);
        const spans = found.flatMap((t) => t.spans);
        const done =
          spans.filter((s) => s.operationName === 'RunWorkflow:agentTask').length === 2 &&
          spans.some((s) => s.operationName === 'RunActivity:finalize');
        return done ? found : undefined;
      },
      30_000,
      "the task's spans in Jaeger",
    ).catch(async (err: unknown) => {
      // What Jaeger has, to see what is missing.
      for (const t of await jaeger.traces(SERVICE, { limit: 100 })) {
        console.log(t.traceID, t.spans.map((s) => `${s.operationName}#${String(tag(s, 'cua.step') ?? '')}`).join(', '));
      }
      throw err;
    });
    // The reply is a trace of its own (the client that sent it had no context of the task): everything else is one.
    const execution = traces.filter((t) => t.spans.some((s) => s.operationName === 'RunWorkflow:agentTask'));
    expect(execution).toHaveLength(1);
    trace = execution[0]!;
    const byId = new Map(trace.spans.map((s) => [s.spanID, s]));

    // The client's start is the root; the first run's RunWorkflow is its child, the second run's continues the first.
    const [start] = named(trace, 'StartWorkflow:agentTask');
    expect(start, 'the client span').toBeDefined();
    expect(parentOf(start!)).toBeUndefined();
    const runs = named(trace, 'RunWorkflow:agentTask').sort((a, b) => a.startTime - b.startTime);
    expect(parentOf(runs[0]!)).toBe(start!.spanID);
    const [continued] = named(trace, 'ContinueAsNew:agentTask');
    expect(continued, 'the continue-as-new span').toBeDefined();
    expect(parentOf(continued!)).toBe(runs[0]!.spanID);
    expect(parentOf(runs[1]!)).toBe(continued!.spanID);

    // Activities: each RunActivity is the child of its StartActivity in the workflow, and names the task and step;
    // those before the worker change and after it hang from the same workflow span.
    const acts = named(trace, 'RunActivity:act');
    // Step 1 asks and step 4 ends the task: neither acts in the browser.
    expect(acts.map((s) => tag(s, 'cua.step')).sort()).toEqual([2, 3]);
    for (const act of acts) {
      expect(tag(act, 'cua.run_id')).toBe(id);
      expect(byId.get(parentOf(act)!)?.operationName).toBe('StartActivity:act');
    }
    const decides = named(trace, 'StartActivity:decide');
    expect(decides.length).toBeGreaterThanOrEqual(4);
    const firstDecide = decides.find((s) => parentOf(s) === runs[0]!.spanID);
    expect(firstDecide, 'step 1 decided in the first run, before the worker change').toBeDefined();

    // Model calls: a CLIENT span `chat <model>` inside the decide activity, with the GenAI attributes.
    const calls = named(trace, 'chat ask-city');
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      expect(byId.get(parentOf(call)!)?.operationName).toBe('RunActivity:decide');
      expect(tag(call, 'span.kind')).toBe('client');
      expect(tag(call, 'gen_ai.operation.name')).toBe('chat');
      expect(tag(call, 'gen_ai.request.model')).toBe('ask-city');
      expect(tag(call, 'server.address')).toBe('127.0.0.1');
      expect(tag(call, 'server.port')).toBe(Number(new URL(h.model.url).port));
      expect(tag(call, 'gen_ai.usage.input_tokens')).toBeGreaterThan(100);
      expect(tag(call, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
      expect(call.duration).toBeGreaterThan(0);
    }

    // Actions: `browser <action>` inside the act activity, with the page's URL before and after.
    const [click] = named(trace, 'browser left_click');
    expect(byId.get(parentOf(click!)!)?.operationName).toBe('RunActivity:act');
    expect(tag(click!, 'cua.action')).toBe('left_click');
    expect(tag(click!, 'cua.step')).toBe(2);
    expect(tag(click!, 'url.full')).toBe(`${h.site.url}/`);
    const [typed] = named(trace, 'browser type');
    expect(tag(typed!, 'url.full')).toBe(`${h.site.url}/`);
    expect(String(tag(typed!, 'cua.url.after'))).toBe(`${h.site.url}/search?q=Lisbon`);

    // No read goes into a trace: the status polls of the client and the run's queries are dropped.
    const all = (await jaeger.traces(SERVICE, { limit: 200 })).flatMap((t) => t.spans.map((s) => s.operationName));
    expect(all.filter((n) => /^(QueryWorkflow|HandleQuery|DescribeWorkflow)/.test(n))).toEqual([]);
    // The process is named as configured.
    expect(trace.processes[start!.processID]?.serviceName).toBe(SERVICE);
    console.log(
      `[traces test] task ${id}: ${trace.spans.length} spans in trace ${trace.traceID} (${Date.now() - started} ms)`,
    );
  }, 120_000);

  it("the tracing interceptors keep histories replayable: the traced task's without them, the recorded ones with", async () => {
    expect(id, 'the first test ran').toBeDefined();
    const plain = await workflowBundle();
    const traced = await workflowBundle(h.config);
    const histories: { workflowId: string; history: temporal.api.history.v1.IHistory; bundle: typeof plain }[] = [];
    // Replay never exports, but the traced code names the worker's sink: a replayer with tracing registers one too.
    const sinks = { exporter: { export: { fn: () => undefined } } };
    for await (const run of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      const history = await h.client.workflow.getHandle(id, run.runId).fetchHistory();
      histories.push({ workflowId: `${id}/${run.runId}`, history, bundle: plain });
    }
    expect(histories).toHaveLength(2);
    const dir = path.resolve(__dirname, '../histories');
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as object;
      histories.push({ workflowId: file, history: temporal.api.history.v1.History.fromObject(json), bundle: traced });
    }
    for (const { workflowId, history, bundle } of histories) {
      const options = bundle === traced ? { workflowBundle: bundle, sinks } : { workflowBundle: bundle };
      const results = Worker.runReplayHistories(options, [{ workflowId, history }]);
      for await (const result of results)
        expect(result.error, `${workflowId}: ${String(result.error)}`).toBeUndefined();
    }
  }, 300_000);
  it("a decide retried on a new worker process after kill -9 stays in the task's trace", async () => {
    // Only worker processes poll now: the first holds in step 3's decide and is killed there.
    await h.stopWorker();
    await workers.prepare(h.config);
    const marker = path.join(h.dir, 'marker-traces');
    const first = workers.spawn({ ...env, CUA_TEST_HOLD: 'decide:3', CUA_TEST_MARKER: marker });
    const { id: killedId } = await agent.start({
      id: `traced-kill-${Date.now().toString(36)}`,
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default', baseUrl: h.model.url, model: 'book-lisbon' },
    });
    await eventually(async () => fs.existsSync(marker), 60_000, "the first worker to reach step 3's decide");
    await new Promise((r) => setTimeout(r, 1500)); // its batch of steps 1 and 2 goes out (a killed worker loses ~1 s)
    await workers.kill(first);
    const second = workers.spawn(env);
    expect(await agent.result(killedId)).toMatchObject({ status: 'complete', steps: 5 });
    const stopped = new Promise((r) => second.once('exit', r));
    second.kill('SIGTERM'); // a clean stop flushes its spans
    await stopped;

    const execution = await eventually(
      async () => {
        const found = (await tracesOf(killedId)).filter((t) =>
          t.spans.some((s) => s.operationName === 'RunWorkflow:agentTask'),
        );
        return found.length === 1 && found[0]!.spans.some((s) => s.operationName === 'RunActivity:finalize')
          ? found
          : undefined;
      },
      30_000,
      "the killed task's trace in Jaeger",
    );
    const killedTrace = execution[0]!;
    const byId = new Map(killedTrace.spans.map((s) => [s.spanID, s]));
    const instance = (s: JaegerSpan) =>
      killedTrace.processes[s.processID]?.tags.find((t) => t.key === 'service.instance.id')?.value;
    const [run] = named(killedTrace, 'RunWorkflow:agentTask');
    // Step 1 ran on the first process, step 3's decide again on the second: both under the one workflow span.
    const decided = named(killedTrace, 'RunActivity:decide');
    const step1 = decided.find((s) => tag(s, 'cua.step') === 1);
    const step3 = decided.find((s) => tag(s, 'cua.step') === 3);
    expect(step1, "step 1's decide, exported by the killed worker").toBeDefined();
    expect(step3, "step 3's retried decide").toBeDefined();
    expect(instance(step1!)).toContain(String(first.pid));
    expect(instance(step3!)).toContain(String(second.pid));
    for (const s of [step1!, step3!]) {
      const start = byId.get(parentOf(s)!);
      expect(start?.operationName).toBe('StartActivity:decide');
      expect(parentOf(start!)).toBe(run!.spanID);
    }
    // The retry is the second attempt of the same activity: its StartActivity span is the one step 3 scheduled.
    expect(named(killedTrace, 'chat book-lisbon').length).toBeGreaterThanOrEqual(5);
  }, 180_000);
});
