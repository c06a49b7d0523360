// Durability: the Temporal dev server is stopped and started again (same SQLite file) in the middle of a task;
// the worker reconnects and the task completes.
import { describe, expect, it } from 'vitest';
import { readRun } from '../../src/trajectory/reader';
import { statusQuery } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import { eventually } from './harness';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

let h: Harness;
useHarness((x) => (h = x));

describe('a Temporal server restart mid-task', () => {
  it('does not lose the task', async () => {
    const handle = await h.start({ script: 'book-lisbon-slow' });
    // Step 3's model call is slow (6 s): restart the server while it runs.
    await eventually(async () => (await handle.query(statusQuery)).step >= 3, 90_000, 'step 3');
    await h.restartServer();
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 5, answer: 'Harbor View Lisbon costs €120 per night.' });
    const run = await readRun(h.runDir(handle.workflowId));
    const ids = run.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => /-post-/.test(id))).toHaveLength(5);
  }, 240_000);
});
