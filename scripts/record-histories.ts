// Records workflow histories for the replay test (test/integration/replay.test.ts): runs tasks on a real dev
// server and writes their histories to test/histories/. Re-record only on purpose (a deliberate, versioned change
// to the workflow): `npx tsx scripts/record-histories.ts`.
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { replyToTask } from '../client/tasks';
import { statusQuery } from '../workflows/contract';
import { eventually, startHarness } from '../test/integration/harness';

const OUT = path.resolve(__dirname, '..', 'test', 'histories');

async function main(): Promise<void> {
  const h = await startHarness();
  try {
    fs.mkdirSync(OUT, { recursive: true });
    const complete = await h.start({ script: 'book-lisbon' });
    await complete.result();
    const ask = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await eventually(async () => (await ask.query(statusQuery)).status === 'waiting_for_user', 60_000, 'the ask');
    await replyToTask(h.client, ask.workflowId, 'Lisbon');
    await ask.result();
    const capped = await h.start({ script: 'book-lisbon', maxSteps: 2, continueAsNewAfterSteps: 1 });
    await capped.result();
    for (const [name, handle] of [
      ['complete-book-lisbon', complete],
      ['ask-then-reply', ask],
      ['max-rounds-after-continue-as-new', capped],
    ] as const) {
      const history = await handle.fetchHistory();
      const json = temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.fromObject(history), {
        longs: String,
        enums: String,
        bytes: String,
      });
      fs.writeFileSync(path.join(OUT, `${name}.json`), `${JSON.stringify(json, null, 1)}\n`);
      console.log(`recorded ${name}: ${history.events?.length} events`);
    }
  } finally {
    await h.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
