// A model endpoint that takes the request and sends nothing (an overloaded or hung GPU server): each call gives up at
// its own limit (models.<name>.timeoutSeconds), the status says the task waits for the model (the try, how long,
// the last error), and after the tries the task ends `model_endpoint` in one line; an endpoint that comes back before
// then lets the task complete. Real dev server, real Chromium, the scripted model's `hang` fault.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { failedResult, modelWaitLine, viewTask } from '../../client/tasks';
import type { ModelWait } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { eventually, failureOf } from './harness';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

const CALL_LIMIT_SECONDS = 2;
const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-model-wait-'));
const configFile = path.join(configDir, 'cua.config.json');
// The task overrides the base URL (the scripted model); the configured endpoint's call limit still applies.
fs.writeFileSync(
  configFile,
  JSON.stringify({
    models: { default: { baseUrl: 'http://127.0.0.1:9/v1', model: 'unused', timeoutSeconds: CALL_LIMIT_SECONDS } },
  }),
);

let h: Harness;
useHarness((x) => (h = x), { env: { CUA_CONFIG: configFile } });

const requestsAt = (script: string, index: number) =>
  h.model.requests.filter((r) => r.script === script && r.index === index && !r.subcall);

/** Polls the task's status until it reports a model wait at this try (or later). */
const untilModelWait = (id: string, attempt: number) =>
  eventually(
    async () => {
      const wait = (await viewTask(h.client, id)).waitingForModel;
      return wait && wait.attempt >= attempt ? wait : undefined;
    },
    30_000,
    `a model wait at try ${attempt}`,
  );

describe('a model endpoint that sends nothing', () => {
  it('each try ends at the call limit, the status says so, and the task completes when the endpoint answers', async () => {
    const handle = await h.start({ script: 'hang-then-answer' });
    const metadata = await eventually(async () => {
      const m = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      return m.currentDetails?.includes('waiting for the model') ? m : undefined;
    }, 20_000);
    expect(metadata.currentDetails).toMatch(/^\*\*Step 1: waiting for the model\*\* since \d\d:\d\d:\d\d UTC/);

    const wait: ModelWait = await untilModelWait(handle.workflowId, 2);
    expect(wait).toMatchObject({ maxAttempts: 5 });
    expect(wait.lastError).toMatch(new RegExp(`sent no answer within ${CALL_LIMIT_SECONDS} s`));
    expect(wait.waitedSeconds).toBeGreaterThanOrEqual(CALL_LIMIT_SECONDS);
    expect(modelWaitLine(wait)).toMatch(
      /^waiting for the model: try [23] of 5, \d+ s so far; the last try: model endpoint/,
    );

    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'The model answered at last.', steps: 2 });
    expect(requestsAt('hang-then-answer', 0)).toHaveLength(3);
    // Once the model answered, no wait is reported.
    expect((await viewTask(h.client, handle.workflowId)).waitingForModel).toBeNull();
  }, 90_000);

  it('after the tries the task ends model_endpoint with a one-line reason', async () => {
    const started = Date.now();
    const handle = await h.start({ script: 'hang-forever' });
    await untilModelWait(handle.workflowId, 3);
    const err = await failureOf(handle.result());
    const elapsed = (Date.now() - started) / 1000;
    const result = failedResult(err);
    expect(result).toMatchObject({ status: 'failed', endReason: 'model_endpoint', steps: 1 });
    expect(result?.error).toMatch(new RegExp(`sent no answer within ${CALL_LIMIT_SECONDS} s`));
    expect(result?.error).not.toContain('\n');
    expect(requestsAt('hang-forever', 0)).toHaveLength(5);
    // Five tries of 2 s with 1-2 s between them: well under a minute, not five default limits.
    expect(elapsed).toBeLessThan(60);
    const status = JSON.parse(
      fs.readFileSync(path.join(h.runDir(handle.workflowId), 'solver_log/status.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(status).toMatchObject({ status: 'aborted', end_reason: 'model_endpoint' });
  }, 120_000);
});
