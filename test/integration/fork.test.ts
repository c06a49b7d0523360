// A fork (issue 27) on the real dev server and Chromium: a source task clicks a quantity field and types 3 (the
// page's script sets a cookie); a fork at step 2 opens step 2's page (URL, cookie, the typed value), reads its hint,
// and completes with another script, which places the order the fixture server records. Forks of a finished, a failed
// and a running source each work, and the source's run folder is unchanged; a step that does not exist and one without
// a page checkpoint (the last, terminate, step has none) are refused in one line, by the CLI (through the store) and by the
// fork's workflow.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { forkTask } from '../../client/fork';
import { InvalidTaskInputError } from '../../client/errors';
import { main } from '../../cli/cli';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { statusQuery } from '../../workflows/messages';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { routeOrderPages } from '../fixtures/browser/order-pages';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';

let h: Harness;
let pages: FixtureServer;
/** Orders placed: the quantity and the cookie they came with. */
const orders: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  pages = await startFixtureServer();
  routeOrderPages(pages, { placed: (qty, cookie) => orders.push(`${qty} ${cookie}`) });
}, 120_000);

afterAll(async () => {
  await pages?.close();
  await h?.close();
});

const source = (script: string) => h.start({ script, instruction: 'Order 3.', startUrl: pages.url('/order') });
const eventsHash = (id: string) =>
  createHash('sha256')
    .update(fs.readFileSync(path.join(h.runDir(id), 'solver_log/events.jsonl')))
    .digest('hex');

/** Forks `id` at step 2 with the fork's script; checks its page, its inherited steps and its result. */
async function forkAndCheck(id: string, hint?: string): Promise<string> {
  const placed = orders.length;
  const fork = await forkTask(h.client, id, { step: 2, model: 'fork-branch', ...(hint ? { hint } : {}) });
  expect(fork.id).toMatch(new RegExp(`^${id}-fork-2-[0-9a-f]{6}$`));
  const result = (await h.client.workflow.getHandle(fork.id).result()) as TaskResult;
  expect(result).toMatchObject({ status: 'complete', answer: 'placed by the fork', steps: 4 });
  // Step 2's page: the typed value and the cookie the page's script set, sent with the order the fork placed.
  expect(orders.slice(placed)).toEqual(['3 typed=yes']);
  const run = await readRun(h.runDir(fork.id));
  expect(run.task.metadata).toMatchObject({ fork_of: { run_id: id, step: 2 } });
  const inherited = run.events.filter((e) => (e.metadata as Record<string, unknown>)['inherited_from']);
  expect(inherited.map((e) => e.id)).toContain('step-0002-post-g0');
  expect(inherited.every((e) => !/^(step|user)-0003/.test(e.id))).toBe(true);
  for (const e of inherited) {
    if (e.type === 'observation' && e.observation_type === 'environment' && e.screenshot_path) {
      expect(fs.existsSync(path.join(h.runDir(fork.id), e.screenshot_path))).toBe(true);
    }
  }
  const first = run.events.find((e) => e.id === 'step-0003-pre-g0');
  expect(first).toMatchObject({ url: pages.url('/order') });
  const desc = await h.client.workflow.getHandle(fork.id).describe();
  expect(desc.memo).toMatchObject({ forkOf: { runId: id, step: 2 } });
  return fork.id;
}

describe('cua fork', () => {
  it('a fork of a finished task opens step 2 page, reads its hint and completes; the source is unchanged', async () => {
    const handle = await source('fork-source');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'not placed' });
    const before = eventsHash(handle.workflowId);
    const forkId = await forkAndCheck(handle.workflowId, 'The order button is below the field.');
    expect(eventsHash(handle.workflowId)).toBe(before);
    const decided = h.model.requests.filter((r) => r.script === 'fork-branch' && !r.subcall);
    expect(decided[0]?.lastUserText).toContain('Hint from the user: The order button is below the field.');
    const hint = (await readRun(h.runDir(forkId))).events.find((e) => e.id === 'step-0003-feedback-g0');
    expect(hint).toMatchObject({ message_type: 'retry_feedback' });

    // Refusals by the fork's workflow: it fails with end reason `input` and one line.
    for (const [step, reason] of [
      [9, `run ${handle.workflowId} has no step 9 (its last step is 3)`],
      [
        3,
        `step 3 of run ${handle.workflowId} ended the task (terminate); no page was saved after it: fork at step 2 to decide it again`,
      ],
    ] as const) {
      const refused = await forkTask(h.client, handle.workflowId, { step });
      const failed = await h.client.workflow
        .getHandle(refused.id)
        .result()
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(failed).toBeDefined();
      const status = JSON.parse(fs.readFileSync(path.join(h.runDir(refused.id), 'solver_log/status.json'), 'utf8'));
      expect(status).toMatchObject({ end_reason: 'input', end_detail: reason });
    }
    await expect(forkTask(h.client, handle.workflowId, { step: 0 })).rejects.toBeInstanceOf(InvalidTaskInputError);
    expect(eventsHash(handle.workflowId)).toBe(before);
  }, 240_000);

  it('forks of a failed and of a running task each work', async () => {
    const failed = await source('fork-source-fails');
    await expect(failed.result()).rejects.toThrow();
    const before = eventsHash(failed.workflowId);
    await forkAndCheck(failed.workflowId);
    expect(eventsHash(failed.workflowId)).toBe(before);

    const running = await source('fork-source-slow');
    await eventually(async () => (await running.query(statusQuery)).step === 3, 60_000, 'the source at step 3');
    await forkAndCheck(running.workflowId);
    expect((await running.describe()).status.name).toBe('RUNNING');
    await running.cancel();
  }, 240_000);

  it('the CLI refuses a missing step, one without a page checkpoint and a bad step in one line, before starting; --detach --json prints the id', async () => {
    const handle = await source('fork-source');
    await handle.result();
    const id = handle.workflowId;
    fs.rmSync(path.join(h.runDir(id), 'checkpoints/step-0001.json'));
    const env = {
      TEMPORAL_ADDRESS: h.server.address,
      CUA_RUNS_DIR: h.config.runsDir,
      CUA_TASK_QUEUE: h.config.taskQueue,
    };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    delete process.env.CUA_CONFIG;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const cases: Array<[string[], RegExp]> = [
        [
          ['--step', '7'],
          new RegExp(`^cua: cannot fork ${id} at step 7: run ${id} has no step 7 \\(its last step is 3\\)$`),
        ],
        [['--step', '1'], /no page checkpoint at step 1 \(checkpoints\/step-0001\.json\)/],
        [['--step', '0'], /--step must be a whole number ≥ 1, got '0'/],
        [['--step', '1.5'], /--step must be a whole number ≥ 1/],
      ];
      for (const [args, pattern] of cases) {
        errors.mockClear();
        expect(await main(['fork', id, ...args])).not.toBe(0);
        expect(errors.mock.calls).toHaveLength(1);
        const line = String(errors.mock.calls[0]?.[0]);
        expect(line.split('\n')).toHaveLength(1);
        expect(line).toMatch(pattern);
      }
      // Nothing was started.
      const forks: string[] = [];
      for await (const wf of h.client.workflow.list({ query: `WorkflowId STARTS_WITH "${id}-fork"` })) {
        forks.push(wf.workflowId);
      }
      expect(forks).toEqual([]);
      // --detach is accepted, as by every command that starts a task (a fork returns once started): --json prints the id.
      const logs = vi.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        expect(await main(['fork', id, '--step', '2', '--detach', '--json'])).toBe(0);
        const printed = JSON.parse(String(logs.mock.calls.at(-1)?.[0])) as { id: string; forkOf: unknown };
        expect(printed).toEqual({ id: expect.stringMatching(`^${id}-fork-2-`), forkOf: { runId: id, step: 2 } });
        await h.client.workflow.getHandle(printed.id).cancel();
      } finally {
        logs.mockRestore();
      }
    } finally {
      errors.mockRestore();
      process.env = saved;
    }
    // Through the API (no store check): the fork's workflow refuses it the same way.
    const refused = await forkTask(h.client, id, { step: 1 });
    await expect(h.client.workflow.getHandle(refused.id).result()).rejects.toThrow();
    const status = JSON.parse(fs.readFileSync(path.join(h.runDir(refused.id), 'solver_log/status.json'), 'utf8'));
    expect(status).toMatchObject({ end_reason: 'input' });
    expect(status.end_detail).toBe(
      `run ${id} has no page checkpoint at step 1 (checkpoints/step-0001.json): its page cannot be restored`,
    );
  }, 120_000);
});
