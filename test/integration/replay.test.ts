// Determinism guard: recorded workflow histories (test/histories/, made by scripts/record-histories.ts) must
// replay against the current workflow code. A change that breaks replay needs patched() or a new workflow type.
// Five were recorded from the code before the loop became a class (issue 24), to hold the reshape to the old
// commands: cancelled-while-asking, ask-timeout, failed-model-endpoint, and two evaluations (one with 17 child
// tasks and retries, one run of a chain that continued as new five times). Two come from a worker with a webhook
// (issue 26): a task that starts notification children (patch notify-webhook), and a notification retried after a 500.
// fork-branches.json is best of N's parent (issue 27), a workflow type of its own.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { workflowBundle } from './harness';

const DIR = path.resolve(__dirname, '../histories');
const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));

describe('replay of recorded histories', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  it.each(files)(
    '%s replays without nondeterminism',
    async (file) => {
      const history = temporal.api.history.v1.History.fromObject(
        JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')),
      );
      const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
        { workflowId: file, history },
      ]);
      for await (const result of results) {
        expect(result.error, String(result.error)).toBeUndefined();
      }
    },
    120_000,
  );
});
