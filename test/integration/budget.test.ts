// Budgets that ask and loop detection (issue 30), on the dev server with Chromium and worker processes killed with
// SIGKILL: a task on a priced endpoint ($0.25 a step) reaches its $0.50 budget and asks; a bad reply is refused in
// one line, an amount above the worker's cap too; `$0.5` raises it; the worker is killed while the task waits and a
// new one takes over; the second reach (at $1.00 of $1.00) plus `stop` ends the task with end reason `budget`. A
// task that clicks the same empty spot is told it repeats itself, then asked; `continue` lets it finish.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { readRun } from '../../src/trajectory/reader';
import { usageTotals } from '../../src/trajectory/usage';
import { failedResult, listTasks, replyToTask, startTask, validateTaskInput } from '../../client/tasks';
import type { TaskInputArgs } from '../../src/contract/task';
import { statusQuery } from '../../workflows/messages';
import { FAST_TIMING, eventually, failureOf, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

const SCRIPTS = path.resolve(__dirname, '../fixtures/scripts');
let h: Harness;
let model: ScriptedModelServer;
let configFile: string;
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  model = await startScriptedModelServer({ scriptsDir: SCRIPTS });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-budget-'));
  configFile = path.join(dir, 'cua.config.json');
  const price = { input: 2, output: 8 };
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      models: { default: { baseUrl: model.url, model: 'budget-scrolls', price } },
      budget: { costCap: 2 },
    }),
  );
  h = await startHarness({ worker: false, env: { CUA_CONFIG: configFile } });
  await workers.prepare();
}, 120_000);
afterAll(async () => {
  workers.killAll();
  await h?.close();
  await model?.close();
});

const spawnWorker = () => workers.spawn({ CUA_CONFIG: configFile, CUA_HOLD_WHILE_WAITING_SECONDS: '0' });

let n = 0;
function start(args: Partial<TaskInputArgs>) {
  const input = validateTaskInput({
    runId: `budget-${Date.now().toString(36)}-${++n}`,
    instruction: 'Look through the page.',
    startUrl: `${h.site.url}/`,
    timing: FAST_TIMING,
    ...args,
  });
  return startTask(h.client, h.config.taskQueue, input);
}

async function refusal(id: string, text: string): Promise<string> {
  const err = await replyToTask(h.client, id, text).then(
    () => new Error('the reply was accepted'),
    (e: unknown) => e as Error,
  );
  return err.message;
}

describe('a budget that asks', () => {
  it('asks at $0.50, is raised by a reply, holds across a worker kill, and ends as budget on stop', async () => {
    const first = spawnWorker();
    const handle = await start({ budget: { maxCost: 0.5 } });
    const asked = await untilWaiting(handle, 60_000);
    expect(asked.question?.text).toBe(
      'I have spent $0.50 of $0.50; 2 steps so far; continue with another $0.50? ' +
        'Reply `continue`, an amount (e.g. `$1`), or `stop`.',
    );
    expect(asked.spent).toMatchObject({ costUsd: 0.5, tokens: 250_000, limits: { cost: 0.5 } });
    expect(await refusal(handle.workflowId, 'sure, go on')).toMatch(
      /reply `continue`, an amount of cost \(e\.g\. `\$1`\), or `stop` \(got "sure, go on"\)/,
    );
    expect(await refusal(handle.workflowId, '$5')).toMatch(/above this worker's cap of \$2\.00 \(budget\.costCap\)/);

    // The worker dies while the task waits; another takes over from the history alone.
    await workers.kill(first);
    const second = spawnWorker();
    await replyToTask(h.client, handle.workflowId, '$0.5');
    const again = await eventually(
      async () => {
        const s = await handle.query(statusQuery);
        return s.status === 'waiting_for_user' && s.question?.id === 'q2' ? s : undefined;
      },
      60_000,
      'the second budget question',
    );
    expect(again.question?.text).toMatch(
      /^I have spent \$1\.00 of \$1\.00; 4 steps so far; continue with another \$0\.50\?/,
    );
    await replyToTask(h.client, handle.workflowId, 'stop');
    expect(await handle.result()).toMatchObject({ status: 'failed', endReason: 'budget', steps: 4 });

    const runDir = h.runDir(handle.workflowId);
    const status = JSON.parse(fs.readFileSync(path.join(runDir, 'solver_log/status.json'), 'utf8'));
    expect(status).toMatchObject({ status: 'aborted', end_reason: 'budget' });
    const dataPoint = JSON.parse(fs.readFileSync(path.join(runDir, 'data_point.json'), 'utf8'));
    expect(dataPoint.metadata.stats.end_reason).toBe('budget');
    // Both questions are in the run folder as the runtime's, each followed by its reply.
    const { events } = await readRun(h.runDir(handle.workflowId));
    const meta = (e: (typeof events)[number]) => (e.metadata ?? {}) as Record<string, unknown>;
    const asks = events.filter((e) => e.type === 'action' && meta(e).asked_by === 'runtime');
    expect(asks.map((e) => meta(e).asked_for)).toEqual(['budget:cost', 'budget:cost']);
    const replies = events.filter((e) => e.type === 'observation' && e.observation_type === 'user_message');
    expect(replies.map((e) => (e.type === 'observation' && 'content' in e ? e.content : ''))).toEqual([
      'Look through the page.',
      '$0.5',
      'stop',
    ]);
    // CuaCost: what it spent, and `cua list --sort cost` puts it first.
    const desc = await handle.describe();
    expect(desc.searchAttributes.CuaCost).toEqual([1]);
    const refused = await start({ budget: { maxCost: 5 } });
    expect(failedResult(await failureOf(refused.result()))).toMatchObject({
      endReason: 'input',
      error: "the task's cost limit would be $5.00, above this worker's cap of $2.00 (budget.costCap)",
    });
    const listed = await eventually(async () => {
      const rows = await listTasks(h.client, { sort: 'cost', limit: 10 });
      return rows.some((r) => r.id === refused.workflowId) && rows[0]?.cost === 1 ? rows : undefined;
    });
    expect(listed[0]?.id).toBe(handle.workflowId);
    second.kill('SIGTERM');
  }, 180_000);
});

describe('loop detection', () => {
  it('tells the model about a repeated action on an unchanged page, then asks', async () => {
    const worker = spawnWorker();
    const handle = await start({ model: { endpoint: 'default', model: 'loop-click' } });
    const asked = await untilWaiting(handle, 60_000);
    expect(asked.step).toBe(4);
    expect(asked.question?.text).toMatch(/^I have done the same thing \(left_click .*\) 4 times in a row/);
    // The model read the note with step 4's observation (the third repeat was at step 3), not before.
    const requests = model.requests.filter((r) => r.script === 'loop-click');
    const told = requests.map((r) => r.allText.includes('times in a row and the page did not change'));
    expect(told).toEqual([false, false, false, true]);
    expect(await refusal(handle.workflowId, '$1')).toMatch(/reply `continue` or `stop` \(got "\$1"\)/);
    await replyToTask(h.client, handle.workflowId, 'continue');
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'stopped clicking', steps: 6 });
    worker.kill('SIGTERM');
  }, 120_000);
});

describe('a budget of working minutes', () => {
  it('counts working time only: a reply that waited seconds raises it for more steps, not for the wait', async () => {
    const worker = spawnWorker();
    const handle = await start({ budget: { maxMinutes: 0.02 } }); // 1.2 s of work
    const asked = await untilWaiting(handle, 60_000);
    expect(asked.question?.text).toMatch(/^I have spent [\d.]+ minutes of 0\.02 minutes; \d+ steps? so far;/);
    await new Promise((r) => setTimeout(r, 8000)); // a person thinking: no working time
    await replyToTask(h.client, handle.workflowId, '0.02 min'); // another 1.2 s from what it spent
    const again = await eventually(
      async () => {
        const s = await handle.query(statusQuery);
        return s.question?.id === 'q2' ? s : undefined;
      },
      60_000,
      'the second minutes question',
    );
    // Had the wait counted, the raised budget would be used up at once, at the same step.
    expect(again.step).toBeGreaterThan(asked.step);
    // The step after the reply worked seconds; the 8 s wait (0.13 minutes) is not in it.
    expect((again.spent?.minutes ?? 1) - (asked.spent?.minutes ?? 0)).toBeLessThan(0.12);
    await replyToTask(h.client, handle.workflowId, 'stop');
    expect(await handle.result()).toMatchObject({ endReason: 'budget' });
    worker.kill('SIGTERM');
  }, 120_000);
});

describe("the workflow's count", () => {
  it("is the run folder's total: decide's calls and read_page's sub-call", async () => {
    const worker = spawnWorker();
    const handle = await start({ model: { endpoint: 'default', model: 'read-page' } });
    expect(await handle.result()).toMatchObject({ status: 'complete' });
    const totals = usageTotals((await readRun(h.runDir(handle.workflowId))).events);
    expect(totals).toMatchObject({ calls: 3, unpricedCalls: 0 });
    const { spent } = await handle.query(statusQuery);
    expect(spent?.tokens).toBe(totals.promptTokens + totals.completionTokens);
    expect(spent?.costUsd).toBeCloseTo(totals.costUsd, 12);
    expect((await handle.describe()).searchAttributes.CuaCost?.[0]).toBeCloseTo(totals.costUsd, 12);
    worker.kill('SIGTERM');
  }, 120_000);
});
