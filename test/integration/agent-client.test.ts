// The public client (client/client.ts) against a real dev server and worker: every typed error where a caller meets it,
// watch() as a stream of steps and status changes ending with the result, list, status, cancel and result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgentClient,
  InvalidTaskInputError,
  StaleQuestionError,
  TaskAlreadyExistsError,
  TaskClosedError,
  TaskError,
  TaskNotFoundError,
  TaskNotWaitingError,
  TemporalUnreachableError,
} from '../../client/client';
import type { AgentClient, NewTask, WatchEvent } from '../../client/client';
import { freePort } from '../../src/infra/devserver';
import { eventually, FAST_TIMING } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

let h: Harness;
let agent: AgentClient;
useHarness((harness) => (h = harness));
beforeAll(async () => {
  agent = await createAgentClient({ temporal: { address: h.server.address }, taskQueue: h.config.taskQueue });
});
afterAll(async () => {
  await agent?.close();
});

const stamp = Date.now().toString(36);
const task = (script: string, id: string, extra: Partial<NewTask> = {}): NewTask => ({
  id: `api-${id}-${stamp}`,
  instruction: 'Search hotels in the city I want.',
  startUrl: `${h.site.url}/`,
  timing: FAST_TIMING,
  model: { endpoint: 'default', baseUrl: h.model.url, model: script },
  ...extra,
});

/** The error a promise rejects with (fails the test when it resolves). */
async function refusal(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => err as Error,
  );
}

describe('createAgentClient', () => {
  it('refuses bad settings and an unreachable server in one line', async () => {
    const badKey = await refusal(createAgentClient({ codec: { keys: [{ id: 'k', key: 'short' }] } }));
    expect(badKey).toBeInstanceOf(ConfigError);
    expect(badKey.message).toMatch(
      /^invalid configuration: encryption\.keys\.0\.key: is not base64|must be the base64/,
    );
    const nobody = await refusal(createAgentClient({ temporal: { address: `127.0.0.1:${await freePort()}` } }));
    expect(nobody).toBeInstanceOf(TemporalUnreachableError);
    expect(nobody.message).not.toContain('\n');
  }, 30_000);
});

describe('the agent client', () => {
  it('watches a task that asks: steps, the question, the reply taken, the end with its result', async () => {
    const { id, input } = await agent.start(task('ask-city', 'watch'));
    expect(input).toMatchObject({ runId: id, maxSteps: 30, environment: 'browser' });
    const events: WatchEvent[] = [];
    for await (const event of agent.watch(id, { pollMs: 100 })) {
      events.push(event);
      if (event.type === 'status' && event.status.status === 'waiting_for_user' && event.status.question) {
        const waiting = await agent.status(id);
        expect(waiting).toMatchObject({ status: 'waiting_for_user', closed: false, question: event.status.question });
        expect((await agent.list({ status: 'waiting_for_user' })).map((t) => t.id)).toContain(id);

        const stale = await refusal(agent.reply(id, 'Lisbon', { questionId: 'q9' }));
        expect(stale).toBeInstanceOf(StaleQuestionError);
        expect(stale).toMatchObject({ questionId: 'q9', pendingQuestionId: event.status.question.id });
        const empty = await refusal(agent.reply(id, '  '));
        expect(empty).toBeInstanceOf(InvalidTaskInputError);
        expect(empty.message).toBe('reply text must not be empty');

        expect(await agent.reply(id, 'Lisbon', { questionId: event.status.question.id })).toEqual({ step: 1 });
      }
    }
    const kinds = events.map((e) =>
      e.type === 'step' ? `step ${e.step.step}` : e.type === 'status' ? e.status.status : e.type,
    );
    expect(kinds.filter((k) => k.startsWith('step'))).toEqual(['step 1', 'step 2', 'step 3', 'step 4']);
    expect(kinds.indexOf('waiting_for_user')).toBeLessThan(kinds.lastIndexOf('running'));
    expect(kinds.at(-1)).toBe('end');
    const end = events.at(-1);
    expect(end?.type === 'end' && end.result).toMatchObject({
      status: 'complete',
      answer: 'Searched Lisbon as you asked.',
    });

    expect(await agent.result(id)).toMatchObject({ status: 'complete', steps: 4 });
    expect(await agent.status(id)).toMatchObject({ status: 'complete', closed: true, step: 4, question: null });
    expect((await agent.steps(id)).map((s) => s.step)).toEqual([1, 2, 3, 4]);

    const late = await refusal(agent.reply(id, 'again'));
    expect(late).toBeInstanceOf(TaskNotWaitingError);
    expect(late.message).toBe(`task ${id} is not waiting for a reply (it is completed)`);
    const again = await refusal(agent.start(task('ask-city', 'watch')));
    expect(again).toBeInstanceOf(TaskAlreadyExistsError);
  }, 120_000);

  it('refuses a reply to a running task, cancels it, and reports the cancellation as its result', async () => {
    const { id } = await agent.start(task('never-ends', 'cancel', { instruction: 'Click around.' }));
    await eventually(async () => (await agent.steps(id)).length > 0, 60_000, 'a first step');
    const running = await refusal(agent.reply(id, 'Lisbon'));
    expect(running).toBeInstanceOf(TaskNotWaitingError);
    expect(running.message).toBe(`task ${id} is not waiting for a reply (it is running)`);

    expect(await agent.cancel(id)).toMatchObject({ id });
    const result = await agent.result(id);
    expect(result).toMatchObject({ status: 'cancelled', endReason: 'cancelled', answer: null });
    expect(result.steps).toBeGreaterThan(0);
    expect(await agent.status(id)).toMatchObject({ status: 'cancelled', closed: true, workflowStatus: 'CANCELLED' });
    const twice = await refusal(agent.cancel(id));
    expect(twice).toBeInstanceOf(TaskClosedError);
    expect(twice.message).toBe(`task ${id} has already ended (cancelled)`);
  }, 120_000);

  it('names the task that does not exist, and the field that is wrong, one line each', async () => {
    const attempts: (() => Promise<unknown>)[] = [
      () => agent.status('api-nobody'),
      () => agent.reply('api-nobody', 'Lisbon'),
      () => agent.steps('api-nobody'),
      () => agent.cancel('api-nobody'),
      () => agent.result('api-nobody'),
      () => agent.watch('api-nobody').next(),
    ];
    for (const attempt of attempts) {
      const err = await refusal(attempt());
      expect(err).toBeInstanceOf(TaskNotFoundError);
      expect(err.message).toBe('no task with id api-nobody');
    }
    const cases: [NewTask, RegExp][] = [
      [{ instruction: '' }, /^invalid task: instruction: instruction must not be empty$/],
      [{ instruction: 'x', maxSteps: 0 }, /^invalid task: maxSteps: /],
      [{ instruction: 'x', startUrl: 'javascript:alert(1)' }, /^invalid task: startUrl: /],
      [{ instruction: 'x', id: 'has spaces' }, /^invalid task: runId: task id: letters, digits/],
    ];
    for (const [input, pattern] of cases) {
      const err = await refusal(agent.start(input));
      expect(err).toBeInstanceOf(InvalidTaskInputError);
      expect(err).toBeInstanceOf(TaskError);
      expect(err.message).toMatch(pattern);
      expect(err.message).not.toContain('\n');
    }
  });
});
