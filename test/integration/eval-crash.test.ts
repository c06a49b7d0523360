// Durability of an evaluation: the shipped task set runs in a worker process that is killed with SIGKILL mid-way,
// the Temporal server is restarted, and the evaluation continues-as-new every few task runs (its running children
// re-attached by id). Every task is scored exactly once (as its script is known to do, unless the kill cut its run
// off); no finished task runs again.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import type { EvalResultsFile } from '../../src/eval/results';
import { evalProgressQuery, evalRecordsQuery } from '../../workflows/eval-messages';
import type { EvalRecord } from '../../src/eval/records';
import { eventually, FAST_TIMING, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';
import { EXPECTED, verdicts } from './eval-expected';

const TASKS = path.resolve(__dirname, '../../eval/tasks/local.jsonl');
let h: Harness;
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
}, 120_000);

afterAll(async () => {
  workers.killAll();
  await h?.close();
});

describe('an evaluation through a killed worker and a restarted server', () => {
  it('scores every task exactly once and runs no finished task again', async () => {
    const out = path.join(h.dir, 'eval-out');
    const first = workers.spawn({ CUA_PAGE_PROBES: '1' });
    const lines: string[] = [];
    const command = evalCommand(
      [TASKS, '--concurrency', '4', '--out', out, '--id', 'eval-crash', '--max-retries', '2'],
      {
        config: h.config,
        client: h.client,
        print: (l) => lines.push(l),
        pollMs: 300,
        taskDefaults: { timing: FAST_TIMING },
        continueAsNewAfter: 3,
      },
    );
    const handle = h.client.workflow.getHandle('eval-crash');
    await eventually(async () => (await handle.query(evalProgressQuery)).done >= 4, 120_000, 'four settled tasks');
    const before: EvalRecord[] = await handle.query(evalRecordsQuery);
    await workers.kill(first);
    // Runs cut off by the kill: a scripted model replays blindly after a lost worker, so their outcome may differ.
    const interrupted = new Set<string>();
    const running = `CuaEvaluation = 'eval-crash' AND WorkflowType = 'agentTask' AND ExecutionStatus = 'Running'`;
    for await (const wf of h.client.workflow.list({ query: running })) interrupted.add(wf.workflowId);
    await h.restartServer();
    workers.spawn({ CUA_PAGE_PROBES: '1' });
    expect(await command).toBe(0);

    const results = JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    const records = results.tasks.flatMap((t) => t.trials);
    const got = verdicts(results);
    for (const r of records) {
      if (!r.attempts.some((id) => interrupted.has(id)))
        expect([r.taskId, got[r.taskId]]).toEqual([r.taskId, EXPECTED[r.taskId]]);
    }
    expect(records).toHaveLength(14);
    // Settled before the crash: the same run counts afterwards, with no new attempt.
    const after = new Map(records.map((r) => [r.taskId, r]));
    for (const r of before)
      expect(after.get(r.taskId)).toMatchObject({ runId: r.runId, attempts: r.attempts, score: r.score });
    // No task run was started beyond the attempts the records name.
    const started: string[] = [];
    for await (const wf of h.client.workflow.list({
      query: `CuaEvaluation = 'eval-crash' AND WorkflowType = 'agentTask'`,
    })) {
      started.push(wf.workflowId);
    }
    expect(new Set(started)).toEqual(new Set(records.flatMap((r) => r.attempts)));
    expect(started).toHaveLength(new Set(started).size);
    // Scored once: one rules verdict per scored run.
    for (const r of records.filter((x) => x.outcome === 'scored')) {
      const lines = fs
        .readFileSync(path.join(h.runDir(r.runId), 'verification.jsonl'), 'utf8')
        .trim()
        .split('\n');
      const entries = lines.map((l) => JSON.parse(l) as { verifier_name: string; score: number | null });
      expect(entries.map((e) => [e.verifier_name, e.score])).toEqual([['eval_rules', r.score]]);
    }
    // It continued as new along the way.
    const runs: string[] = [];
    for await (const wf of h.client.workflow.list({ query: `WorkflowId = 'eval-crash'` })) runs.push(wf.runId);
    expect(runs.length).toBeGreaterThan(1);
  }, 480_000);
});
