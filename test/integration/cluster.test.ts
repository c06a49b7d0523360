// Several workers, one real cluster: the Temporal server v1.29.1 on PostgreSQL (src/infra/cluster.ts), the shared run
// store on S3 (`rclone serve s3`), and two worker processes with their own browser pools and their own local folders
// (two machines, as far as the agent can tell). Tasks spread over both; `kill -9` of one in the middle of a step moves
// its tasks to the other; the Temporal server process is killed and started again mid-run; every task completes, with
// no duplicate and no missing event, read back from the bucket. A task that asked the user keeps its browser state in
// the bucket, not on the machine that released it.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTask, validateTaskInput } from '../../client/tasks';
import { startCluster } from '../../src/infra/cluster';
import type { TemporalCluster } from '../../src/infra/cluster';
import { startS3Server } from '../../src/infra/rclone';
import type { S3Server } from '../../src/infra/rclone';
import { loadConfig } from '../../src/runtime/config';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { parseEventId } from '../../src/trajectory/ids';
import { openRunStore } from '../../src/trajectory/open-store';
import { readRunFromStore } from '../../src/trajectory/reader';
import { statusQuery, replyUpdate } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureSite } from '../fixtures/site/server';
import type { FixtureSite } from '../fixtures/site/server';
import { eventually, FAST_TIMING, SCRIPTS_DIR, untilWaiting } from './harness';
import { READY_LINE } from './worker-process';
import { WorkerProcesses } from './worker-processes';
import type { WorkerHost } from './worker-processes';

const SESSIONS_PER_WORKER = 2;
const KEYS = { CUA_IT_S3_KEY: '', CUA_IT_S3_SECRET: '' };

let cluster: TemporalCluster;
let s3: S3Server;
let model: ScriptedModelServer;
let site: FixtureSite;
let client: Client;
let host: WorkerHost;
let configFile: string;
const workers = new WorkerProcesses(() => host);

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-cluster-it-'));
  cluster = await startCluster();
  s3 = await startS3Server();
  KEYS.CUA_IT_S3_KEY = s3.accessKeyId;
  KEYS.CUA_IT_S3_SECRET = s3.secretAccessKey;
  Object.assign(process.env, KEYS); // this process reads the bucket too
  const store = {
    kind: 's3',
    endpoint: s3.endpoint,
    bucket: await s3.createBucket('runs'),
    prefix: 'cluster',
    accessKeyIdEnv: 'CUA_IT_S3_KEY',
    secretAccessKeyEnv: 'CUA_IT_S3_SECRET',
  };
  configFile = path.join(dir, 'cua.config.json');
  fs.writeFileSync(configFile, JSON.stringify({ store, browser: { maxSessions: SESSIONS_PER_WORKER } }));
  model = await startScriptedModelServer({ scriptsDir: SCRIPTS_DIR });
  site = await startFixtureSite();
  host = {
    dir,
    server: { address: cluster.address },
    config: { runsDir: path.join(dir, 'runs'), taskQueue: 'it-cluster' },
  };
  client = new Client({ connection: await Connection.connect({ address: cluster.address }) });
  await workers.prepare();
}, 180_000); // PostgreSQL, schemas and the server start here; test/global-setup.ts builds the server before any test

afterAll(async () => {
  workers.killAll();
  await client?.connection.close().catch(() => undefined);
  await site?.close();
  await model?.close();
  await s3?.stop();
  await cluster?.stop();
});

/** A worker process on "its own machine": its own local folder; the runs go to the bucket. */
async function startWorker(
  name: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; queue: string }> {
  const child = workers.spawn({
    ...KEYS,
    CUA_CONFIG: configFile,
    CUA_RUNS_DIR: path.join(host.dir, `machine-${name}`),
    ...env,
  });
  const line = await eventually(
    async () =>
      fs
        .readFileSync(workers.logFile(child), 'utf8')
        .split('\n')
        .find((l) => l.startsWith(READY_LINE)),
    90_000,
    `worker ${name} to start`,
  );
  return { child, queue: line.slice(READY_LINE.length).trim() };
}

let counter = 0;
function start(script: string, instruction = 'Find the nightly price of the first hotel in Lisbon.') {
  return startTask(
    client,
    host.config.taskQueue,
    validateTaskInput({
      runId: `cl-${Date.now().toString(36)}-${++counter}`,
      instruction,
      startUrl: `${site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default', baseUrl: model.url, model: script },
    }),
  );
}

/** The session queues a task's observe/act/release activities were scheduled on: the workers it ran on. */
async function sessionQueuesOf(handle: WorkflowHandle): Promise<Set<string>> {
  const queues = new Set<string>();
  for (const e of (await handle.fetchHistory()).events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a && ['act', 'observe', 'releaseSession'].includes(a.activityType?.name ?? '')) {
      queues.add(a.taskQueue?.name ?? '');
    }
  }
  return queues;
}

describe('two workers on a Temporal cluster (PostgreSQL) with the S3 run store', () => {
  it('spread the tasks; a killed worker hands its tasks to the other; a server restart loses nothing', async () => {
    const marker = path.join(host.dir, 'marker-a');
    // Worker A holds in the act of step 3 (generation 0) of every task it runs, until it is killed.
    const a = await startWorker('a', { CUA_TEST_HOLD: 'act:3', CUA_TEST_MARKER: marker });
    const b = await startWorker('b');

    // One more task than the two pools have slots, plus one that asks the user.
    const booking = await Promise.all(Array.from({ length: 2 * SESSIONS_PER_WORKER + 1 }, () => start('book-lisbon')));
    const asking = await start('ask-city', 'Search hotels in the city I want.');
    const all = [...booking, asking];

    await eventually(async () => fs.existsSync(marker), 90_000, 'worker A to reach the act of step 3');
    await workers.kill(a.child);
    // The server process goes too (SIGKILL), while A's tasks wait to be moved and B's are mid-run.
    await cluster.restartServer();

    // The asking task waits for its reply with its browser released: its storage state is in the bucket.
    const waiting = await untilWaiting(asking, 120_000);
    expect(waiting.question?.text).toBe('Which city should I search in?');
    const objects = path.join(s3.dir, 'runs', 'cluster', asking.workflowId);
    await eventually(async () => fs.existsSync(path.join(objects, 'browser_state.json')), 30_000, 'browser_state.json');
    expect(fs.existsSync(path.join(host.dir, 'machine-a', asking.workflowId, 'browser_state.json'))).toBe(false);
    expect(fs.existsSync(path.join(host.dir, 'machine-b', asking.workflowId, 'browser_state.json'))).toBe(false);
    await asking.executeUpdate(replyUpdate, { args: [{ text: 'Lisbon', questionId: waiting.question?.id }] });

    const results = (await Promise.all(all.map((h) => h.result()))) as TaskResult[];
    expect(results.map((r) => r.status)).toEqual(all.map(() => 'complete'));

    // Spread: both workers ran sessions; every task A held was finished by B.
    const queues = await Promise.all(all.map(sessionQueuesOf));
    const ranOn = (q: string) => queues.filter((s) => s.has(q)).length;
    expect(ranOn(a.queue)).toBeGreaterThanOrEqual(1);
    expect(ranOn(b.queue)).toBeGreaterThanOrEqual(1);
    for (const s of queues.filter((s) => s.has(a.queue))) expect(s.has(b.queue)).toBe(true);

    // Nothing duplicated or lost, read back from the bucket by a reader on no worker's machine.
    const store = openRunStore(loadConfig({ file: configFile, env: { ...KEYS, CUA_RUNS_DIR: host.config.runsDir } }));
    for (const [i, handle] of all.entries()) {
      const run = await readRunFromStore(store, handle.workflowId);
      expect(run.status).toBe('complete');
      const ids = run.events.map((e) => e.id);
      expect(new Set(ids).size, `duplicate events in ${handle.workflowId}`).toBe(ids.length);
      const posts = ids.map(parseEventId).filter((p) => p?.kind === 'post');
      const steps = results[i]?.steps ?? 0;
      expect(posts.map((p) => p?.step).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(
        Array.from({ length: steps }, (_, k) => k + 1),
      );
    }
    // The machines' local folders hold no run records: everything went to the bucket.
    for (const m of ['machine-a', 'machine-b']) {
      const local = path.join(host.dir, m);
      const found = fs.existsSync(local) ? fs.readdirSync(local, { recursive: true }).map(String) : [];
      expect(found.filter((f) => f.endsWith('events.jsonl') || f.endsWith('.png'))).toEqual([]);
    }
    // A finished task's status still answers (its history, kept in PostgreSQL across the restart, replays on B).
    expect((await booking[0]!.query(statusQuery)).status).toBe('complete');
    const stopped = new Promise<number | null>((r) => b.child.once('exit', (code) => r(code)));
    b.child.kill('SIGTERM');
    expect(await stopped).toBe(0);
  }, 600_000);
});
