// Asking the user: the browser is released while the task waits; a reply (now, or hours later on the
// time-skipping server) resumes it in a restored session; bad replies are rejected and harm nothing.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import { temporalCliPath, testServerPath } from '../../src/infra/paths';
import { startScriptedModelServer } from '../../src/scripted/server';
import { readRun } from '../../src/trajectory/reader';
import { loadConfig } from '../../src/runtime/config';
import { createWorkerRuntime } from '../../worker/main';
import { replyToTask, startTask, validateTaskInput, TaskError } from '../../client/tasks';
import { REPLY_REFUSALS } from '../../src/contract/task';
import { replySignal, replyUpdate, statusQuery } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureSite } from '../fixtures/site/server';
import { FAST_TIMING, SCRIPTS_DIR, eventually, untilWaiting, workflowBundle } from './harness';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

describe('ask the user (dev server, real wait)', () => {
  let h: Harness;
  useHarness((x) => (h = x));

  it('releases the browser while waiting, rejects bad replies, and resumes on a good one', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    const waiting = await untilWaiting(handle);
    expect(waiting.question?.text).toBe('Which city should I search in?');
    // The browser session was released: no context idles while the task waits.
    await eventually(async () => h.worker?.pool.size === 0, 10_000, 'the session to be released');
    const dir = h.runDir(handle.workflowId);
    expect(fs.existsSync(path.join(dir, 'browser_state.json'))).toBe(true);
    const statusFile = path.join(dir, 'solver_log/status.json');
    await eventually(
      async () => JSON.parse(fs.readFileSync(statusFile, 'utf8')).status === 'waiting_for_user',
      10_000,
      'status.json to say waiting_for_user',
    );
    // The task shows up in a visibility query on the status search attribute.
    await eventually(
      async () => {
        for await (const wf of h.client.workflow.list({ query: `CuaStatus = 'waiting_for_user'` })) {
          if (wf.workflowId === handle.workflowId) return true;
        }
        return false;
      },
      20_000,
      'the visibility query to list the waiting task',
    );

    // …and the `temporal` CLI finds it with the same query.
    const listed = execFileSync(
      temporalCliPath(),
      ['workflow', 'list', '--address', h.server.address, '--query', "CuaStatus='waiting_for_user'", '-o', 'json'],
      { encoding: 'utf8' },
    );
    expect(listed).toContain(handle.workflowId);

    // What the Temporal UI shows: the instruction as static summary, the question as current details,
    // and activity summaries naming step and action.
    const described = await handle.describe();
    expect(await described.staticSummary()).toBe('Search hotels in the city I want.');
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toContain('Which city should I search in?');
    const summaries = ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
      const data = e.userMetadata?.summary?.data;
      return data ? [JSON.parse(Buffer.from(data).toString('utf8')) as string] : [];
    });
    expect(summaries).toEqual(
      expect.arrayContaining(['step 1 · observe', 'step 1 · decide', 'step 1 · release browser']),
    );

    // Bad replies are rejected with clear errors and change nothing.
    await expect(replyToTask(h.client, handle.workflowId, '   ')).rejects.toThrow(/must not be empty/);
    await expect(replyToTask(h.client, handle.workflowId, 'Lisbon', 'q7')).rejects.toThrow(/stale reply.*q7.*q1/);
    await expect(replyToTask(h.client, 'no-such-task', 'Lisbon')).rejects.toThrow(TaskError);
    expect((await handle.query(statusQuery)).status).toBe('waiting_for_user');
    // On the wire (what any SDK's client sees), a refusal is a typed application failure with its details.
    const raw = await handle.executeUpdate(replyUpdate, { args: [{ text: 'Lisbon', questionId: 'q7' }] }).then(
      () => null,
      (err: unknown) => (err as { cause?: unknown }).cause,
    );
    expect(raw).toBeInstanceOf(ApplicationFailure);
    expect(raw).toMatchObject({ type: REPLY_REFUSALS.stale, details: [{ pendingQuestionId: 'q1' }] });

    await replyToTask(h.client, handle.workflowId, 'Lisbon, please', 'q1');
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'Searched Lisbon as you asked.', steps: 4 });
    // A reply to a finished task is refused.
    await expect(replyToTask(h.client, handle.workflowId, 'again')).rejects.toThrow(/not waiting/);

    const run = await readRun(dir);
    const replies = run.events.filter(
      (e) =>
        e.type === 'observation' &&
        e.observation_type === 'user_message' &&
        e.message_type === 'critical_point_response',
    );
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ content: 'Lisbon, please' });
    const after = h.model.requests.find((r) => r.script === 'ask-city' && r.index === 1 && !r.subcall);
    expect(after?.lastUserText).toContain('Lisbon, please');
    // The resumed session restored the page the task had reached, and the search then ran in it.
    expect(
      run.events.some(
        (e) => e.type === 'observation' && e.observation_type === 'environment' && /search\?q=Lisbon/.test(e.url),
      ),
    ).toBe(true);
  });

  it('also takes the reply as a Signal; an invalid signal is ignored and the task keeps waiting', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await untilWaiting(handle);
    await handle.signal(replySignal, { text: 'Porto', questionId: 'q9' }); // stale: ignored
    await handle.signal(replySignal, { text: '  ' }); // empty: ignored
    // The query is answered after both signals were handled: still waiting.
    expect((await handle.query(statusQuery)).status).toBe('waiting_for_user');
    await handle.signal(replySignal, { text: 'Lisbon', questionId: 'q1' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 4 });
    const run = await readRun(h.runDir(handle.workflowId));
    const replies = run.events.flatMap((e) =>
      e.type === 'observation' && e.observation_type === 'user_message' && e.message_type === 'critical_point_response'
        ? [e.content]
        : [],
    );
    expect(replies).toEqual(['Lisbon']);
  });
});

describe('ask the user (time-skipping server)', () => {
  let env: TestWorkflowEnvironment;
  let cleanup: () => Promise<void>;
  let start: (args: { askTimeoutSeconds?: number }) => ReturnType<typeof startTask>;

  beforeAll(async () => {
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: testServerPath() } },
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-ts-'));
    const model = await startScriptedModelServer({ scriptsDir: SCRIPTS_DIR });
    const site = await startFixtureSite();
    const config = loadConfig({ env: { CUA_RUNS_DIR: path.join(dir, 'runs'), CUA_TASK_QUEUE: 'ts-queue' } });
    const connection: NativeConnection = env.nativeConnection;
    const runtime = await createWorkerRuntime(config, { workflowBundle: await workflowBundle(), connection });
    const running = runtime.run();
    let n = 0;
    start = ({ askTimeoutSeconds }) =>
      startTask(
        env.client,
        config.taskQueue,
        validateTaskInput({
          runId: `ts-${++n}`,
          instruction: 'Search hotels in the city I want.',
          startUrl: `${site.url}/`,
          searchAttributes: false,
          timing: FAST_TIMING,
          ...(askTimeoutSeconds ? { askTimeoutSeconds } : {}),
          model: { endpoint: 'default', baseUrl: model.url, model: 'ask-city' },
        }),
      );
    cleanup = async () => {
      await runtime.shutdown();
      await running;
      await model.close();
      await site.close();
      await env.teardown();
    };
  }, 120_000);
  afterAll(async () => {
    await cleanup?.();
  });

  it('takes a reply six hours later and completes', async () => {
    const handle = await start({ askTimeoutSeconds: 12 * 3600 });
    await untilWaiting(handle);
    await env.sleep('6 hours');
    expect((await handle.query(statusQuery)).status).toBe('waiting_for_user');
    await replyToTask(env.client, handle.workflowId, 'Lisbon');
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 4 });
  });

  it('ends with a clear status when nobody answers before the ask timeout', async () => {
    const handle = await start({ askTimeoutSeconds: 12 * 3600 });
    await untilWaiting(handle);
    await env.sleep('13 hours');
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'failed', error: 'no reply within 43200s' });
  });
});
