// Records workflow histories for the replay test (test/integration/replay.test.ts): runs tasks on a real dev
// server and writes their histories to test/histories/. A history already recorded is kept (it guards the workflow
// code that made it); only missing ones are recorded. Re-record an existing one only on purpose (a deliberate,
// versioned change to the workflow): `npx tsx scripts/record-histories.ts [--force]`.
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { continueTask, handBackTask, pauseTask, resumeTask, sayToTask, takeOverTask } from '../client/control';
import { forkBranchesOf, forkTask } from '../client/fork';
import { adoptFolder } from '../client/adopt';
import { openRunStore } from '../src/trajectory/open-store';
import { replyToTask } from '../client/tasks';
import { replayTask } from '../client/replay';
import { statusQuery } from '../workflows/messages';
import { eventually, startHarness, untilWaiting } from '../test/integration/harness';
import { copyFaraFolder } from '../test/integration/fara-folder';
import type { Harness } from '../test/integration/harness';
import { WebhookReceiver } from '../test/fixtures/webhook/server';

const OUT = path.resolve(__dirname, '..', 'test', 'histories');

type Recordings = Record<string, (h: Harness, receiver: WebhookReceiver) => Promise<WorkflowHandle>>;

/** Each recorded history: its file name and how to run the task that makes it (to its end). */
const RECORDINGS: Recordings = {
  'complete-book-lisbon': async (h) => h.start({ script: 'book-lisbon' }),
  'ask-then-reply': async (h) => {
    const ask = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await untilWaiting(ask, 60_000);
    await replyToTask(h.client, ask.workflowId, 'Lisbon');
    return ask;
  },
  'max-rounds-after-continue-as-new': async (h) =>
    h.start({ script: 'book-lisbon', maxSteps: 2, continueAsNewAfterSteps: 1 }),
  // An invalid output fed back as an error observation, then a valid one (issue 10).
  'invalid-reply-then-valid': async (h) => h.start({ script: 'unknown-then-valid' }),
  // Three invalid outputs in a row end the task with end reason invalid_replies.
  'invalid-replies-end': async (h) => h.start({ script: 'garbage' }),
  // Issue 13: a browser step's last act observes for the next step (patch fold-observe-into-act); with an ask, whose
  // reply re-opens the session and observes afresh, and a continue-as-new, whose next run takes the recorded pre.
  'folded-observe-ask-continue': async (h) => {
    const ask = await h.start({
      script: 'ask-city',
      instruction: 'Search hotels in the city I want.',
      continueAsNewAfterSteps: 2,
    });
    await untilWaiting(ask, 60_000);
    await replyToTask(h.client, ask.workflowId, 'Lisbon');
    await ask.result();
    return h.client.workflow.getHandle(ask.workflowId, ask.firstExecutionRunId); // the first run, not the last
  },
  // ... and the run it continued as: it starts with the observation the last act of the run before took.
  'folded-observe-after-continue': async (h) =>
    h.start({
      script: 'ask-city',
      instruction: 'Search hotels in the city I want.',
      continueAsNewAfterSteps: 2,
      autoReply: 'Lisbon',
    }),
  // Issue 25: a question holds the live browser (patch hold-session-while-waiting; holdSession), and a reply within
  // the hold takes it back (reclaimSession) and goes on on the same page.
  'ask-then-reply-held': async (h) => {
    const ask = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await untilWaiting(ask, 60_000);
    await replyToTask(h.client, ask.workflowId, 'Lisbon');
    return ask;
  },
  // Issue 26: a pause during a slow decision (the step finishes, the page is held), a message said while paused, a
  // resume (patch person-controls; recordControl), then the task's end.
  'pause-say-resume': async (h) => {
    const task = await h.start({ script: 'pause-order', instruction: 'Order 3.' });
    await eventually(async () => (await task.query(statusQuery)).step === 2, 60_000, 'step 2');
    await pauseTask(h.client, task.workflowId);
    await sayToTask(h.client, task.workflowId, 'The quantity is right; go ahead.');
    await resumeTask(h.client, task.workflowId);
    return task;
  },
  // ... and a follow-up in its run (startFollowUp, the page restored at the follow-up's first step).
  'follow-up': async (h) => {
    const task = await h.start({ script: 'pause-order', instruction: 'Order 3.' });
    await task.result();
    await continueTask(h.client, task.workflowId, 'Is the order page still open?');
    return h.client.workflow.getHandle(task.workflowId);
  },
  // A fork at step 2 of a finished task (issue 27: startFork, the page restored at the fork's first step, the hint).
  fork: async (h) => {
    const task = await h.start({ script: 'fork-source', instruction: 'Order 3.' });
    await task.result();
    const fork = await forkTask(h.client, task.workflowId, { step: 2, model: 'fork-branch', hint: 'Place it.' });
    return h.client.workflow.getHandle(fork.id);
  },
  // Best of 2 at step 2 (issue 27: the forkBranches parent, its two child forks, their scoring and its record).
  'fork-branches': async (h) => {
    const task = await h.start({ script: 'fork-source', instruction: 'Order 3.' });
    await task.result();
    const best = await forkBranchesOf(h.client, task.workflowId, {
      step: 2,
      branches: 2,
      models: ['fork-branch-gives-up', 'fork-branch'],
      checks: [{ type: 'answer_contains', value: 'placed' }],
    });
    return h.client.workflow.getHandle(best.id);
  },
  // An adoption of a Fara folder waiting for a reply (issue 28: startAdopt, the question asked again, the reply
  // opening the session at the folder's last URL).
  adopt: async (h) => {
    const folder = copyFaraFolder(path.join(h.dir, 'fara-waiting'), h.site.url);
    const opts = { model: 'adopt-fara', modelBaseUrl: h.model.url };
    const adopted = await adoptFolder(h.client, h.config.taskQueue, openRunStore(h.config), folder, opts);
    const handle = h.client.workflow.getHandle(adopted.id);
    await untilWaiting(handle, 60_000);
    await replyToTask(h.client, adopted.id, 'Lisbon');
    return handle;
  },
  // A replay of a finished run (issue 28: replayStep checks and records each recorded action; no model call).
  replay: async (h) => {
    const task = await h.start({ script: 'fork-source', instruction: 'Order 3.' });
    await task.result();
    const replay = await replayTask(h.client, h.config.taskQueue, task.workflowId);
    return h.client.workflow.getHandle(replay.id);
  },
  // A task with an action cache, run twice: the second takes its steps from the cache (cacheStep, cacheRemember).
  'cached-run': async (h) => {
    const first = await h.start({ script: 'fork-source', instruction: 'Order 3.', cache: { name: 'history' } });
    await first.result();
    return h.start({ script: 'fork-source', instruction: 'Order 3.', cache: { name: 'history' } });
  },
  // ... and a takeover: the lease granted after the step under way (startTakeover), the handback (endTakeover, the
  // note recorded for the next step).
  'takeover-handback': async (h) => {
    const task = await h.start({ script: 'takeover-search', instruction: 'Search for kettles.' });
    await eventually(async () => (await task.query(statusQuery)).step === 1, 60_000, 'step 1');
    await takeOverTask(h.client, task.workflowId);
    await handBackTask(h.client, task.workflowId, { note: 'I looked around.' });
    return task;
  },
  // The desktop agent (issue 12): a step of two tool calls, a question and its reply, a step ending with stop.
  'desktop-steps-ask': async (h) => {
    const task = await h.start({ script: 'desktop-steps', environment: 'desktop', startUrl: undefined });
    await untilWaiting(task, 60_000);
    await replyToTask(h.client, task.workflowId, 'world');
    return task;
  },
  // Issue 30 (patch budgets-loops-cost): a token budget reached asks; `continue` raises it; the second reach, `stop`.
  'budget-continue-then-stop': async (h) => {
    const task = await h.start({ script: 'budget-scrolls', budget: { maxTokens: 250_000 } });
    await untilWaiting(task, 60_000);
    await replyToTask(h.client, task.workflowId, 'continue');
    await eventually(async () => (await task.query(statusQuery)).question?.id === 'q2', 60_000, 'the second ask');
    await replyToTask(h.client, task.workflowId, 'stop');
    return task;
  },
  // ... and a loop: the same click on an unchanged page (a screen distance per repeat), told, then asked; `continue`.
  'loop-told-then-asked': async (h) => {
    const task = await h.start({ script: 'loop-click' });
    await untilWaiting(task, 60_000);
    await replyToTask(h.client, task.workflowId, 'continue');
    return task;
  },
  // Structured output (patch structured-output): the extraction activity at the end, its first reply invalid.
  'structured-output-retry': async (h) =>
    h.start({
      script: 'output-retry',
      startUrl: `${h.site.url}/hotel/1`,
      outputSchema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] },
    }),
};

/** Recorded with a worker that has a webhook (a local receiver): the task starts notification children (issue 26). */
const WEBHOOK_RECORDINGS: Recordings = {
  // A question (waiting) and the end (completed), each a notification child started behind the patch notify-webhook.
  'notify-ask-then-reply': async (h) => {
    const ask = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await untilWaiting(ask, 60_000);
    await replyToTask(h.client, ask.workflowId, 'Lisbon');
    return ask;
  },
  // A notification child's own history: the receiver answers 500 first, the activity's retry delivers it.
  'notification-retried': async (h, receiver) => {
    receiver.respond = (_body, attempt) => (attempt === 1 ? 500 : 200);
    const task = await h.start({ script: 'click-then-finish' });
    await task.result();
    return h.client.workflow.getHandle(`${task.workflowId}-notify-completed-1`);
  },
};

function missing(recordings: Recordings, force: boolean): [string, Recordings[string]][] {
  return Object.entries(recordings).filter(([name]) => force || !fs.existsSync(path.join(OUT, `${name}.json`)));
}

async function main(): Promise<void> {
  const force = process.argv.includes('--force');
  const todo = missing(RECORDINGS, force);
  const withWebhook = missing(WEBHOOK_RECORDINGS, force);
  if (todo.length === 0 && withWebhook.length === 0) {
    return console.log('all histories are recorded (use --force to re-record them)');
  }
  fs.mkdirSync(OUT, { recursive: true });
  if (todo.length > 0) await record(todo, false);
  if (withWebhook.length > 0) await record(withWebhook, true);
}

/** Runs the recordings on a harness of their own (its worker with a webhook, or without) and writes their histories. */
async function record(todo: [string, Recordings[string]][], webhook: boolean): Promise<void> {
  const receiver = await WebhookReceiver.start();
  // The worker holds a questioning task's browser (the harness's default is 0, releasing it as before the hold).
  const env: Record<string, string> = { CUA_HOLD_WHILE_WAITING_SECONDS: '600' };
  if (webhook) Object.assign(env, { CUA_WEBHOOK_URL: receiver.url, CUA_WEBHOOK_SECRET: receiver.secret });
  const h = await startHarness({ env });
  try {
    for (const [name, run] of todo) {
      const handle = await run(h, receiver);
      await handle.result().catch(() => undefined);
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
    await receiver.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
