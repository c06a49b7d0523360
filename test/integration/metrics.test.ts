// Metrics in a real Prometheus (issue 30): a worker process serves the Temporal SDK's metrics and ours on its
// Prometheus endpoint (telemetry.metrics.prometheus); Debian's Prometheus scrapes it every second; the test reads the
// figures back through Prometheus's query API while a task takes an invalid output, asks, has a reply refused and ends.
// And an embedded worker whose process had its Temporal runtime already says the endpoint is not served.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentWorker } from '../../worker/embed';
import { freePort } from '../../src/infra/devserver';
import { replyUpdate } from '../../workflows/messages';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';
import { startPrometheus } from './prometheus';
import type { Prometheus } from './prometheus';
import { WorkerProcesses } from './worker-processes';
import { READY_LINE } from './worker-process';

let h: Harness;
let prometheus: Prometheus;
let endpoint: string;
let workerLog: string;
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  endpoint = `127.0.0.1:${await freePort()}`;
  const config = path.join(h.dir, 'metrics.config.json');
  fs.writeFileSync(
    config,
    JSON.stringify({ telemetry: { metrics: { prometheus: endpoint, waitingCountSeconds: 1 } } }),
  );
  // A question holds the browser, so the session stays in use while the task waits.
  const worker = workers.spawn({ CUA_CONFIG: config, CUA_HOLD_WHILE_WAITING_SECONDS: '120' });
  workerLog = workers.logFile(worker);
  await eventually(
    async () => fs.existsSync(workerLog) && fs.readFileSync(workerLog, 'utf8').includes(READY_LINE),
    60_000,
    'the worker process to poll',
  );
  prometheus = await startPrometheus(path.join(h.dir, 'prometheus'), [endpoint]);
}, 180_000);

afterAll(async () => {
  workers.killAll();
  await prometheus?.stop();
  await h?.close();
});

/** The value of a query with exactly one sample, once Prometheus has scraped it (and it equals `want`, if given). */
function valueOf(expr: string, want?: (v: number) => boolean): Promise<number> {
  return eventually(
    async () => {
      const samples = await prometheus.query(expr);
      const value = samples.length === 1 ? samples[0]?.value : undefined;
      if (value === undefined) return undefined;
      return want === undefined || want(value) ? value : undefined;
    },
    30_000,
    `${expr} in Prometheus`,
  );
}

describe('metrics scraped by Prometheus', () => {
  it("serves the SDK's metrics and ours: steps, model calls and tokens, sessions, waiting tasks, invalid outputs", async () => {
    expect(fs.readFileSync(workerLog, 'utf8')).toContain(`metrics: Prometheus endpoint http://${endpoint}/metrics`);
    const started = Date.now();
    const handle = await h.start({ script: 'metrics-ask', instruction: 'Search the city the user names.' });
    await untilWaiting(handle);
    const queue = h.config.taskQueue;
    // A visibility count, by each worker: this one reports its queue's waiting task, and the held browser.
    expect(await valueOf(`cua_tasks_waiting_for_user{task_queue="${queue}"}`, (v) => v === 1)).toBe(1);
    expect(await valueOf('cua_sessions_in_use{environment="browser"}', (v) => v === 1)).toBe(1);

    const waitFrom = Date.now();
    const refused = await handle.executeUpdate(replyUpdate, { args: [{ text: 'Lisbon', questionId: 'q9' }] }).then(
      () => 'accepted',
      (err: unknown) => String((err as { cause?: { type?: string } }).cause?.type),
    );
    expect(refused).toBe('StaleQuestion');
    await new Promise((r) => setTimeout(r, 1500)); // a wait for a person the step's latency must leave out
    const waitedMs = Date.now() - waitFrom;
    await handle.executeUpdate(replyUpdate, { args: [{ text: 'Lisbon' }] });
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'Lisbon it is.' });
    const elapsedMs = Date.now() - started;

    // Steps: the invalid output's, the question's, the end's; their latency leaves the wait for the reply out.
    expect(await valueOf('sum(cua_steps_total{outcome="ok",environment="browser"})', (v) => v === 3)).toBe(3);
    expect(await valueOf('sum(cua_step_duration_ms_count)', (v) => v === 3)).toBe(3);
    const stepMs = await valueOf('sum(cua_step_duration_ms_sum)');
    expect(stepMs).toBeGreaterThan(0);
    expect(stepMs).toBeLessThan(elapsedMs - waitedMs);
    expect(await valueOf('sum(cua_model_invalid_replies_total)', (v) => v === 1)).toBe(1);
    expect(await valueOf('sum(cua_reply_refusals_total{type="StaleQuestion"})', (v) => v === 1)).toBe(1);

    // Model calls by model: three calls of 1,000 prompt (400 cached) and 50 completion tokens each.
    const model = 'model="metrics-ask"';
    expect(await valueOf(`cua_model_calls_total{${model},outcome="ok"}`, (v) => v === 3)).toBe(3);
    expect(await valueOf(`cua_model_call_duration_ms_count{${model}}`, (v) => v === 3)).toBe(3);
    expect(await valueOf(`cua_model_tokens_total{${model},kind="prompt"}`, (v) => v === 3000)).toBe(3000);
    expect(await valueOf(`cua_model_tokens_total{${model},kind="completion"}`, (v) => v === 150)).toBe(150);
    expect(await valueOf(`cua_model_tokens_total{${model},kind="cached"}`, (v) => v === 1200)).toBe(1200);

    // The session: opened once (its wait for a slot recorded), released at the end; no task waits any more.
    expect(await valueOf('cua_session_queue_wait_ms_count{environment="browser"}', (v) => v >= 1)).toBeGreaterThan(0);
    expect(await valueOf('cua_sessions_in_use{environment="browser"}', (v) => v === 0)).toBe(0);
    expect(await valueOf(`cua_tasks_waiting_for_user{task_queue="${queue}"}`, (v) => v === 0)).toBe(0);

    // The SDK's own: the workflow completed, counted by its worker.
    expect(
      await valueOf(`sum(temporal_workflow_completed{task_queue="${queue}"})`, (v) => v >= 1),
    ).toBeGreaterThanOrEqual(1);
  }, 180_000);

  it('an embedded worker in a process whose Temporal runtime is installed already says the endpoint is not served', async () => {
    // This test process installed its runtime (the harness, without metrics) before the worker was created.
    const address = `127.0.0.1:${await freePort()}`;
    const lines: string[] = [];
    const worker = await createAgentWorker({
      config: {
        temporal: { address: h.server.address },
        taskQueue: `${h.config.taskQueue}-embedded`,
        runsDir: path.join(h.dir, 'embedded-runs'),
        telemetry: { metrics: { prometheus: address } },
      },
      log: (line) => lines.push(line),
    });
    try {
      expect(lines).toContain(
        `warning: telemetry.metrics.prometheus (${address}) is not served: this process's Temporal runtime was ` +
          'installed before the worker, without it; metrics go where that runtime sends them',
      );
      expect(
        await fetch(`http://${address}/metrics`).then(
          () => 'served',
          () => 'refused',
        ),
      ).toBe('refused');
    } finally {
      await worker.shutdown();
    }
  }, 120_000);
});
