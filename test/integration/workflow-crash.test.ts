// Durability: a worker killed with SIGKILL during observe, decide or act is replaced by a new worker process
// and the task completes; the interrupted step is re-observed and re-decided in a restored session, never
// blindly re-acted; events.jsonl has no duplicate and no missing step.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventId } from '../../src/trajectory/ids';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import type { TaskResult } from '../../src/contract/task';
import { stepsQuery } from '../../workflows/messages';
import { eventually, startHarness } from './harness';
import { WorkerProcesses } from './worker-processes';
import type { Harness } from './harness';

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

describe.each(['observe', 'decide', 'act'] as const)('kill -9 of the worker during %s', (point) => {
  it('a new worker process finishes the task; the step is re-observed, nothing is duplicated or lost', async () => {
    // [step, superseded] per decision. Killed during decide, the retried decide on the new worker decides in
    // generation 0; its act, queued for the dead worker, never starts, so that decision is superseded too.
    const expectedRows =
      point === 'observe'
        ? [1, 2, 3, 4, 5].map((step) => [step, false])
        : [
            [1, false],
            [2, false],
            [3, true],
            [3, false],
            [4, false],
            [5, false],
          ];
    const marker = path.join(h.dir, `marker-${point}`);
    const first = workers.spawn({ CUA_TEST_HOLD: `${point}:3`, CUA_TEST_MARKER: marker });
    const handle = await h.start({ script: 'book-lisbon' });
    await eventually(async () => fs.existsSync(marker), 60_000, `the worker to reach ${point} of step 3`);
    await workers.kill(first);
    const second = workers.spawn();
    try {
      const result = (await handle.result()) as TaskResult;
      expect(result).toMatchObject({
        status: 'complete',
        steps: 5,
        answer: 'Harbor View Lisbon costs €120 per night.',
      });
      // The steps query shows a decision whose act was cut off as superseded, under its own step number.
      const rows = await handle.query(stepsQuery);
      expect(rows.map((r) => [r.step, r.superseded === true])).toEqual(expectedRows);
    } finally {
      // A worker stops cleanly on SIGTERM: drains, closes its browsers, exits 0.
      const stopped = new Promise<number | null>((r) => second.once('exit', (code) => r(code)));
      second.kill('SIGTERM');
      expect(await stopped).toBe(0);
    }

    const run = await readRun(h.runDir(handle.workflowId));
    const ids = run.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length); // no duplicates
    // Every step 1..5 ends with exactly one completed action (one with a post observation).
    const posts = ids.map(parseEventId).filter((p) => p?.kind === 'post');
    expect(posts.map((p) => p?.step).sort()).toEqual([1, 2, 3, 4, 5]);
    // Step 3 was observed again in a restored session (generation 1) and decided again there.
    expect(ids).toContain('step-0003-restored-g1');
    expect(ids).toContain('step-0003-pre-g1');
    expect(ids).toContain('step-0003-action-g1');
    expect(ids).toContain('step-0003-post-g1');
    // The interrupted attempt never got recorded as done: no tool output or post for generation 0.
    expect(ids).not.toContain('step-0003-tool-g0');
    expect(ids).not.toContain('step-0003-post-g0');
    // The run folder's step table agrees: step numbers match the event ids; a cut-off act is superseded.
    const table = stepSummaries(run.events);
    expect(table.map((r) => [r.step, r.superseded])).toEqual(expectedRows);
    // The re-decided step saw the page the restored session showed, and the task still reached the hotel.
    const pre = run.events.find((e) => parseEventId(e.id)?.step === 4 && parseEventId(e.id)?.kind === 'pre');
    expect(pre?.type === 'observation' && pre.observation_type === 'environment' ? pre.url : '').toMatch(/\/hotel\/1$/);
  }, 240_000);
});
