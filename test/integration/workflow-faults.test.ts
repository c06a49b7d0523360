// Model faults, budgets, cancellation and bad input, end to end: real dev server, real Chromium, scripted model.
// Each test uses its own script, because the scripted model counts fault requests per script and entry index.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import { failedResult } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { AGENT_WORKFLOW } from '../../src/contract/task';
import { statusQuery, stepsQuery } from '../../workflows/messages';
import { eventually, failureOf } from './harness';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

let h: Harness;
useHarness((x) => (h = x));

/** Main-call requests the scripted model saw for `script` at entry `index`. */
const requestsAt = (script: string, index: number) =>
  h.model.requests.filter((r) => r.script === script && r.index === index && !r.subcall);

const statusFile = (taskId: string) =>
  JSON.parse(fs.readFileSync(path.join(h.runDir(taskId), 'solver_log/status.json'), 'utf8')) as Record<string, unknown>;

interface FailureLink {
  name: string;
  type: string | undefined;
  message: string;
}

/** A failure and all its causes, outermost first. */
function failureChain(err: unknown): FailureLink[] {
  const chain: FailureLink[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    chain.push({
      name: e.name,
      type: e instanceof ApplicationFailure ? (e.type ?? undefined) : undefined,
      message: e.message,
    });
  }
  return chain;
}

describe('model faults', () => {
  it('retries 500s and completes; the model saw three requests for that step', async () => {
    const handle = await h.start({ script: 'faults-500' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'Recovered from 500s.' });
    expect(requestsAt('faults-500', 0)).toHaveLength(3);
    expect(requestsAt('faults-500', 1)).toHaveLength(1);
  }, 90_000);

  it('retries a response with no choices and completes', async () => {
    const handle = await h.start({ script: 'faults-empty' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'Recovered from an empty reply.' });
    expect(requestsAt('faults-empty', 0)).toHaveLength(2);
  }, 90_000);

  it('fails fast on a 400 with a clear error, without retrying', async () => {
    const handle = await h.start({ script: 'faults-400' });
    const err = await failureOf(handle.result());
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const chain = failureChain(err);
    const text = chain.map((c) => c.message).join(' | ');
    expect(text).toMatch(/rejected the request \(400\)/);
    expect(text).toContain('scripted bad request: prompt too long');
    expect(chain.some((c) => c.type === 'TaskFailed')).toBe(true);
    expect(requestsAt('faults-400', 0)).toHaveLength(1);

    const status = statusFile(handle.workflowId);
    expect(status).toMatchObject({ status: 'aborted', run_status: 'failed', end_reason: 'model_endpoint' });
    expect(String(status.end_detail)).toMatch(/400/);
    // The failure carries the result with its machine-readable end reason.
    expect(failedResult(err)).toMatchObject({ status: 'failed', endReason: 'model_endpoint', steps: 1 });
  }, 90_000);
});

describe('model output', () => {
  it('parses a single-quoted Python-literal tool call and goes on', async () => {
    const handle = await h.start({ script: 'python-literal' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'Parsed the Python literal.' });
    const run = await readRun(h.runDir(handle.workflowId));
    const steps = stepSummaries(run.events);
    expect(steps.map((s) => s.action_name)).toEqual(['left_click', 'terminate']);
    const action = run.events.find((e) => e.type === 'action');
    expect(JSON.stringify(action?.llm_conversation)).toContain("'action': 'left_click'");
  }, 90_000);

  it('records in the action event that the tool call was recovered from a Python literal', async () => {
    const handle = await h.start({ script: 'python-literal' });
    await handle.result();
    const run = await readRun(h.runDir(handle.workflowId));
    const action = run.events.find((e) => e.type === 'action');
    expect(action?.metadata).toMatchObject({ recovered_by: 'python-literal' });
  }, 90_000);

  it('turns garbage into a complete answer with terminateOnParseError', async () => {
    const handle = await h.start({ script: 'garbage', terminateOnParseError: true });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({
      status: 'complete',
      steps: 1,
      answer: 'I am not sure what to do here, the page looks odd.',
    });
    expect(statusFile(handle.workflowId)).toMatchObject({ status: 'complete' });
  }, 90_000);

  it('feeds invalid outputs back and fails only after three in a row, with end reason invalid_replies', async () => {
    const before = requestsAt('garbage', 0).length;
    const handle = await h.start({ script: 'garbage' });
    // The agent failed, not the infrastructure: the workflow completes with a failed result and its reason.
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'failed', endReason: 'invalid_replies', steps: 3, answer: null });
    expect(result.error).toMatch(/^3 model outputs in a row were no valid action; the last: "fly" is not/);
    // An invalid output is not retried: one request per step, and each later step saw the error of the one before.
    expect(requestsAt('garbage', 0).length - before).toBe(1);
    const second = requestsAt('garbage', 1).at(-1);
    expect(second?.lastUserText).toMatch(/Your output had no tool call\. No action was taken\./);
    expect(second?.allText).toContain('I am not sure what to do here');
    expect(requestsAt('garbage', 2).at(-1)?.lastUserText).toMatch(/no tool call/);
    const status = statusFile(handle.workflowId);
    expect(status).toMatchObject({ status: 'aborted', run_status: 'failed', end_reason: 'invalid_replies' });
    const stats = JSON.parse(fs.readFileSync(path.join(h.runDir(handle.workflowId), 'metadata.json'), 'utf8'));
    expect(stats.stats).toMatchObject({ run_status: 'failed', end_reason: 'invalid_replies' });
    // Every invalid output is in the run folder: its words, the error, and the step's screenshots.
    const run = await readRun(h.runDir(handle.workflowId));
    const rows = stepSummaries(run.events);
    expect(rows.map((r) => [r.step, r.action_name, !!r.invalid])).toEqual([
      [1, 'invalid_reply', true],
      [2, 'invalid_reply', true],
      [3, 'fly', true],
    ]);
    expect(rows[2]?.invalid).toMatch(/"fly" is not an available action/);
    expect(rows.every((r) => r.screenshot.endsWith('_post.png'))).toBe(true);
  }, 90_000);

  it('with --max-invalid-replies 1, fails at the first invalid output', async () => {
    const handle = await h.start({ script: 'garbage', maxInvalidReplies: 1 });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'failed', endReason: 'invalid_replies', steps: 1 });
    expect((await handle.query(statusQuery)).endReason).toBe('invalid_replies');
  }, 90_000);

  it('an unknown action name is an error the model corrects: the task completes', async () => {
    const handle = await h.start({ script: 'unknown-then-valid' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', endReason: 'complete', steps: 3 });
    expect(requestsAt('unknown-then-valid', 1).at(-1)?.lastUserText).toMatch(
      /"scroll_down" is not an available action\. No action was taken\. Use one of: key, type, .*scroll/,
    );
    const steps = await handle.query(stepsQuery);
    expect(steps.map((s) => [s.step, s.action, s.invalid !== undefined])).toEqual([
      [1, 'scroll_down', true],
      [2, 'scroll', false],
      [3, 'terminate', false],
    ]);
  }, 90_000);

  it('a sloppy but meaningful model books the hotel: hallucinated action, type at a coordinate, native tool_calls', async () => {
    const handle = await h.start({ script: 'sloppy-booking', maxSteps: 10 });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', endReason: 'complete', steps: 6 });
    const run = await readRun(h.runDir(handle.workflowId));
    const rows = stepSummaries(run.events);
    expect(rows.map((r) => r.action_name)).toEqual(['click', 'type', 'left_click', 'left_click', 'type', 'terminate']);
    expect(rows[0]?.invalid).toMatch(/"click" is not an available action/);
    // The order was placed: the page after step 5 is the confirmation for the typed name.
    const confirm = run.events.find((e) => e.id === 'step-0005-post-g0');
    expect(confirm?.type === 'observation' && confirm.observation_type === 'environment' && confirm.url).toMatch(
      /\/confirm\?hotel=1&name=Ada\+Lovelace/,
    );
    // The stray argument was kept in the record and named in the metadata; the coercions too.
    const typed = run.events.find((e) => e.id === 'step-0002-action-g0');
    expect(typed?.type === 'action' && typed.metadata).toMatchObject({
      ignored_arguments: ['element'],
      coerced: ['press_enter: "true" → true'],
    });
    const native = run.events.find((e) => e.id === 'step-0003-action-g0');
    expect(native?.type === 'action' && native.metadata).toMatchObject({ read_from: 'native_tool_call' });
    expect(JSON.stringify(native?.type === 'action' && native.llm_conversation)).toContain('tool_calls');
    // Step 2's tool output says where it clicked before typing, in viewport pixels.
    expect(rows[1]?.text_observation).toMatch(/I clicked at coordinates \(720\.0, 180\.0\).*typed 'Lisbon'/);
  }, 120_000);

  it('Fara-7B type with a coordinate clicks the field first, then types and searches', async () => {
    const handle = await h.start({ script: 'type-at-coordinate-7b', profile: 'fara-7b' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'Task ended: success' });
    const run = await readRun(h.runDir(handle.workflowId));
    const post = run.events.find((e) => e.id === 'step-0001-post-g0');
    expect(post?.type === 'observation' && post.observation_type === 'environment' && post.url).toMatch(
      /\/search\?q=Porto$/,
    );
  }, 90_000);

  it('keeps a slow model call alive with heartbeats: one request, no retry', async () => {
    const handle = await h.start({ script: 'slow-model' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'Slow but alive.' });
    expect(requestsAt('slow-model', 0)).toHaveLength(1);
  }, 90_000);
});

describe('stops', () => {
  it('ends with max_rounds when the step budget is used up, answered with the last observation', async () => {
    const handle = await h.start({ script: 'never-ends', maxSteps: 2 });
    const result = (await handle.result()) as TaskResult;
    // Step 2 scrolled down: its observation text is the answer (the original's), the status stays max_rounds.
    expect(result).toMatchObject({
      status: 'max_rounds',
      endReason: 'max_rounds',
      steps: 2,
      answer: 'I scrolled down',
    });
    expect(statusFile(handle.workflowId)).toMatchObject({
      status: 'max_rounds',
      outcome: { answer: 'I scrolled down' },
    });
    expect((await handle.query(statusQuery)).answer).toBe('I scrolled down');
    expect(requestsAt('never-ends', 2)).toHaveLength(0);
  }, 90_000);

  it('cancels a task mid-step: the browser is closed, the run folder says cancelled', async () => {
    const handle = await h.start({ script: 'slow-cancel' });
    await eventually(async () => requestsAt('slow-cancel', 1).length > 0, 60_000, 'the slow model call of step 2');
    expect(h.worker?.pool.size).toBe(1);
    await handle.cancel();
    const err = await failureOf(handle.result());
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    await eventually(async () => h.worker?.pool.size === 0, 15_000, 'the browser session to be closed');

    const status = await eventually(
      async () => {
        const s = statusFile(handle.workflowId);
        return s.run_status === 'cancelled' ? s : undefined;
      },
      15_000,
      'status.json to say cancelled',
    );
    expect(status).toMatchObject({ status: 'aborted', run_status: 'cancelled', end_reason: 'cancelled' });
    const events = fs.readFileSync(path.join(h.runDir(handle.workflowId), 'solver_log/events.jsonl'), 'utf8');
    expect(events.trim().split('\n').length).toBeGreaterThan(1);
    // The cancelled model call was not retried.
    expect(requestsAt('slow-cancel', 1)).toHaveLength(1);
  }, 90_000);
});

describe('input validation', () => {
  it.each([
    { what: 'an empty instruction', args: { runId: 'bad-input-1', instruction: '   ' }, field: /instruction/ },
    { what: 'maxSteps 0', args: { runId: 'bad-input-2', instruction: 'Do it.', maxSteps: 0 }, field: /maxSteps/ },
  ])(
    'refuses $what given straight to the workflow',
    async ({ args, field }) => {
      const handle = await h.client.workflow.start(AGENT_WORKFLOW, {
        taskQueue: h.config.taskQueue,
        workflowId: `${args.runId}-${Date.now().toString(36)}`,
        args: [{ ...args, searchAttributes: false }],
      });
      const err = await failureOf(handle.result());
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('InvalidTaskInput');
      expect(cause?.message).toMatch(/invalid task input/);
      expect(cause?.message).toMatch(field);
    },
    60_000,
  );
});
