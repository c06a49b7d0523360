// Best of N (issue 27) on the real dev server and Chromium: a source task types 3 into the order page's field and
// stops; best of 3 forks it at step 2 with three scripts (one gives up, one places the order, one clicks the field
// and claims it placed the order), scores each with task-set checks (the final URL, and a page_js check run on the
// final page), and picks the one that placed it. The branches are children of the parent workflow; `cua show` and
// `cua view` compare them. With cancelRest, the first branch to pass cancels a slow one. Bad input is refused before
// anything starts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { forkBranchesOf } from '../../client/fork';
import { InvalidTaskInputError } from '../../client/errors';
import { AgentClient } from '../../client/client';
import { main } from '../../cli/cli';
import type { BranchesRecord } from '../../src/eval/branches';
import { readRun } from '../../src/trajectory/reader';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { routeOrderPages } from '../fixtures/browser/order-pages';
import { startHarness } from './harness';
import type { Harness } from './harness';

let h: Harness;
let pages: FixtureServer;
const orders: string[] = [];

beforeAll(async () => {
  h = await startHarness({ env: { CUA_PAGE_PROBES: '1' } });
  pages = await startFixtureServer();
  routeOrderPages(pages, { placed: (qty, cookie) => orders.push(`${qty} ${cookie}`) });
}, 120_000);

afterAll(async () => {
  await pages?.close();
  await h?.close();
});

const CHECKS = [
  { type: 'url_matches', pattern: '/placed\\?qty=3$' },
  { type: 'page_js', script: 'document.title', equals: 'Placed' },
];

async function finishedSource(): Promise<string> {
  const handle = await h.start({ script: 'fork-source', instruction: 'Order 3.', startUrl: pages.url('/order') });
  await handle.result();
  return handle.workflowId;
}

/** Runs a CLI command with the harness's config; returns its exit code and what it printed (and its errors). */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const lines: string[] = [];
  const errors: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errors.push(a.join(' ')));
  const env = {
    TEMPORAL_ADDRESS: h.server.address,
    CUA_RUNS_DIR: h.config.runsDir,
    CUA_TASK_QUEUE: h.config.taskQueue,
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return { code: await main(argv), out: lines.join('\n'), err: errors.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('best of N', () => {
  it('best of 3 picks the branch that passes its check', async () => {
    const source = await finishedSource();
    const placed = orders.length;
    const started = await forkBranchesOf(h.client, source, {
      step: 2,
      branches: 3,
      models: ['fork-branch-gives-up', 'fork-branch', 'fork-branch-claims'],
      hints: ['Try the big button.'],
      checks: CHECKS,
    });
    expect(started.branches).toEqual([1, 2, 3].map((i) => `${started.id}-b${i}`));
    const record = (await h.client.workflow.getHandle(started.id).result()) as BranchesRecord;
    const [giveUp, winner, claims] = started.branches;
    expect(record.winner).toBe(winner);
    expect(record.state).toBe('done');
    expect(record.branches.map((b) => [b.state, b.endReason, b.score, b.scoredBy])).toEqual([
      ['done', 'complete', 0, 'rules'],
      ['done', 'complete', 1, 'rules'],
      ['done', 'complete', 0, 'rules'],
    ]);
    expect(record.branches[2]?.answer).toBe('placed by the fork');
    expect(record.verdict).toContain(`branch 2 (${winner}) passes its checks in 4 steps`);
    // Only the winner placed an order, from step 2's page (the typed 3 and the cookie its script set).
    expect(orders.slice(placed)).toEqual(['3 typed=yes']);

    // Each branch is a child of the parent, a fork of the source at step 2 whose task.json names its branch.
    for (const [i, id] of started.branches.entries()) {
      const desc = await h.client.workflow.getHandle(id).describe();
      expect(desc.parentExecution?.workflowId).toBe(started.id);
      expect(desc.memo).toMatchObject({ forkOf: { runId: source, step: 2 }, branchOf: { parent: started.id } });
      const run = await readRun(h.runDir(id));
      expect(run.task.metadata).toMatchObject({
        fork_of: { run_id: source, step: 2, branch: { parent: started.id, index: i + 1, of: 3 } },
      });
    }
    // The hint went to every branch (one hint for three), recorded as step 3's retry feedback.
    const feedback = (await readRun(h.runDir(giveUp!))).events.find((e) => e.id === 'step-0003-feedback-g0');
    expect(feedback).toMatchObject({ content: 'Try the big button.' });
    // The losers' run folders record why they failed: the rules' verdict per check.
    const verification = fs.readFileSync(path.join(h.runDir(claims!), 'verification.jsonl'), 'utf8');
    expect(verification).toContain('final URL matches');

    // `cua show <parent>` compares the branches (the winner starred); `cua view` writes the comparison page.
    const shown = await cli(['show', started.id]);
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(new RegExp(`^\\*  2  ${winner}\\s+done\\s+complete\\s+4\\s+2\\s+1`, 'm'));
    expect(shown.out).toContain(`winner: branch 2 (${winner})`);
    const viewed = await cli(['view', started.id]);
    const html = fs.readFileSync(viewed.out.trim(), 'utf8');
    expect(html).toContain('class="winner"');
    expect(html.match(/<img /g)).toHaveLength(3);
    expect(fs.existsSync(path.join(h.runDir(winner!), 'report.html'))).toBe(true);

    // The typed client reads the same record.
    const agent = new AgentClient(h.client, h.config.taskQueue);
    expect((await agent.branches(started.id)).winner).toBe(winner);
  }, 300_000);

  it('with cancelRest the first branch that passes cancels the rest; the CLI prints the winner', async () => {
    const source = await finishedSource();
    const checks = path.join(h.dir, 'checks.jsonl');
    fs.writeFileSync(
      checks,
      `${JSON.stringify({ id: 'order', instruction: 'Order 3.', checks: CHECKS.slice(0, 1) })}\n`,
    );
    const run = await cli([
      'fork',
      source,
      '--step',
      '2',
      '--branches',
      '2',
      '--model',
      'fork-branch-slow',
      '--model',
      'fork-branch',
      '--checks',
      checks,
      '--cancel-rest',
      '--id',
      `${source}-best`,
    ]);
    expect(run.code).toBe(0);
    expect(run.out).toContain(`winner: branch 2 (${source}-best-b2)`);
    const record = (await h.client.workflow.getHandle(`${source}-best`).result()) as BranchesRecord;
    expect(record.branches[0]).toMatchObject({ state: 'cancelled', score: null });
    expect(record.branches[0]?.reasoning).toBe('cancelled: branch 2 passed first');
    const slow = await h.client.workflow.getHandle(`${source}-best-b1`).describe();
    expect(slow.status.name).toBe('CANCELLED');
  }, 300_000);

  it('without checks the judge scores each branch; of two that pass, the one with fewer steps wins', async () => {
    const source = await finishedSource();
    const started = await forkBranchesOf(h.client, source, {
      step: 2,
      branches: 2,
      models: ['fork-branch-claims', 'fork-branch-gives-up'],
      judge: { kind: 'webjudge', baseUrl: h.model.url, model: 'judge-order-pass' },
    });
    const record = (await h.client.workflow.getHandle(started.id).result()) as BranchesRecord;
    expect(record.branches.map((b) => [b.steps, b.score, b.scoredBy])).toEqual([
      [4, 1, 'judge'],
      [3, 1, 'judge'],
    ]);
    expect(record.winner).toBe(started.branches[1]);
    expect(record.verdict).toContain('passes the judge in 3 steps (2 of 2 passed; the fewest steps wins a tie)');
    const judged = h.model.requests.filter((r) => r.script === 'judge-order-pass');
    expect(new Set(judged.map((r) => r.call))).toEqual(new Set(['key_points', 'relevance', 'verdict']));
  }, 300_000);

  it('refuses bad input in one line before anything starts', async () => {
    const source = await finishedSource();
    const refused = (opts: Partial<Parameters<typeof forkBranchesOf>[2]>) =>
      forkBranchesOf(h.client, source, { step: 2, branches: 2, checks: CHECKS, ...opts });
    await expect(refused({ checks: [] })).rejects.toThrow(/best of N needs checks .* or a judge/);
    await expect(refused({ branches: 11 })).rejects.toBeInstanceOf(InvalidTaskInputError);
    await expect(refused({ checks: [{ type: 'url_matches' }] })).rejects.toThrow(/invalid task: checks\.0/);
    const notBestOf = await cli(['fork', source, '--step', '2', '--checks', 'x.jsonl']);
    expect(notBestOf).toMatchObject({ code: 2, err: 'cua: --checks is for best of N: give --branches K too' });
    const checks = path.join(h.dir, 'two-tasks.jsonl');
    const line = (id: string) => JSON.stringify({ id, instruction: 'Order 3.', checks: CHECKS.slice(0, 1) });
    fs.writeFileSync(checks, `${line('a')}\n${line('b')}\n`);
    const best = (...more: string[]) =>
      cli(['fork', source, '--step', '2', '--branches', '2', '--checks', checks, ...more]);
    expect((await best()).err).toBe(`cua: --checks: ${checks} has 2 tasks: name one with --task ID (a, b)`);
    expect((await best('--task', 'c')).err).toBe(`cua: --checks: ${checks} has no task 'c'`);
    expect((await best('--task', 'a', '--step', '9')).err).toBe(
      `cua: cannot fork ${source} at step 9: run ${source} has no step 9 (its last step is 3)`,
    );
    // Nothing was started.
    const started: string[] = [];
    for await (const wf of h.client.workflow.list({ query: `WorkflowId STARTS_WITH "${source}-best"` })) {
      started.push(wf.workflowId);
    }
    expect(started).toEqual([]);
  }, 120_000);
});
