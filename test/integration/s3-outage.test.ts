// The shared run store going away mid-task: `rclone serve s3` (a real S3-compatible server) is stopped in step 3's
// act, after the click ran and before anything of it is recorded, and started again on the same port over the same
// folder some 30 s later. The act waits (its status says the store is unreachable, from the act's heartbeat details),
// then records its step, and the task completes; listing the bucket finds every event once and nothing else: no
// duplicate, no missing object, no stray lock or screenshot. Real dev server, real Chromium, the scripted model.
// The desktop's home archive and an evaluation's verdict, written through the same waiting store, wait it out too.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeArchiveFile, restoreHome, saveHome } from '../../activities/environments/desktop-home';
import { RunFiles } from '../../activities/support';
import { storeWaitLine, viewTask } from '../../client/tasks';
import { startS3Server } from '../../src/infra/rclone';
import type { S3Server } from '../../src/infra/rclone';
import { openRunStore } from '../../src/trajectory/open-store';
import { loadVerification, readRunFromStore } from '../../src/trajectory/reader';
import { S3RunStore } from '../../src/trajectory/s3-store';
import { StoreFaultPolicy } from '../../src/trajectory/store-faults';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import type { StoreWait } from '../../src/trajectory/store-wait';
import type { TaskResult } from '../../src/contract/task';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';

const PREFIX = 'cua/runs';
const OUTAGE_MS = 30_000;

let s3: S3Server;
let h: Harness;
let tmp: string;
let bucket: string;
const logs: string[] = [];
/** When the store went down (in step 3's act), and how many times that act reached its checkpoint. */
let downAt = 0;
let actsAtStep3 = 0;

beforeAll(async () => {
  s3 = await startS3Server();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-s3-outage-'));
  bucket = await s3.createBucket('runs');
  const env = { CUA_IT_S3_KEY: s3.accessKeyId, CUA_IT_S3_SECRET: s3.secretAccessKey };
  Object.assign(process.env, env); // the worker in this process reads the keys from its environment
  const configFile = path.join(tmp, 'cua.config.json');
  const store = {
    kind: 's3',
    endpoint: s3.endpoint,
    bucket,
    prefix: PREFIX,
    accessKeyIdEnv: 'CUA_IT_S3_KEY',
    secretAccessKeyEnv: 'CUA_IT_S3_SECRET',
  };
  fs.writeFileSync(configFile, JSON.stringify({ store }));
  h = await startHarness({
    env: { CUA_CONFIG: configFile },
    log: (line) => logs.push(line),
    checkpoint: async (point, req) => {
      if (point !== 'act' || req.step !== 3) return;
      actsAtStep3++;
      await s3.kill();
      downAt = Date.now();
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await s3?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Every key under `prefix` in the bucket, through the S3 API. */
async function listBucket(client: S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }),
    );
    keys.push(...(page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

describe('an S3 run store that goes away for 30 s mid-task', () => {
  it('is waited out: the task completes, and the bucket holds every event once and nothing else', async () => {
    expect(h.config.store.kind).toBe('s3');
    const handle = await h.start({ script: 'book-lisbon' });
    const taskId = handle.workflowId;

    const wait: StoreWait = await eventually(
      async () => (await viewTask(h.client, taskId)).waitingForStore ?? undefined,
      90_000,
      'a store wait',
    );
    expect(wait.kind).toBe('unreachable');
    expect(wait.lastError).toMatch(/^S3 run store http:\/\/127\.0\.0\.1:\d+: cannot reach it \(ECONNREFUSED\)$/);
    expect(storeWaitLine(wait)).toMatch(/^waiting for the run store: the run store is unreachable: S3 run store /);
    expect(((await handle.describe()).raw.pendingActivities ?? []).map((a) => a.activityType?.name)).toEqual(['act']);
    // Down for the outage's length, the task still running and still waiting all along.
    await eventually(
      async () => {
        const view = await viewTask(h.client, taskId);
        expect(view.workflowStatus).toBe('RUNNING');
        expect(view.waitingForStore?.kind).toBe('unreachable');
        return Date.now() - downAt >= OUTAGE_MS || undefined;
      },
      OUTAGE_MS + 15_000,
      'the outage to last',
    );
    await s3.restart();

    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 5, answer: 'Harbor View Lisbon costs €120 per night.' });
    expect(actsAtStep3).toBe(1); // the click ran once; only its records were written again

    const run = await readRunFromStore(openRunStore(h.config), taskId);
    const ids = run.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(run.events.filter((e) => e.type === 'action')).toHaveLength(5);
    expect(ids.filter((id) => id.startsWith('step-0003-tool'))).toHaveLength(1);

    const client = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    try {
      const root = `${PREFIX}/${taskId}/`;
      const keys = (await listBucket(client, root)).map((k) => k.slice(root.length));
      // One object per event, named by its sequence and id: none twice, none missing, none that is no event.
      const lines = keys.flatMap((k) => {
        const m = /^solver_log\/events\/(\d{9})-(.+)\.json$/.exec(k);
        return m ? [{ seq: m[1] ?? '', id: m[2] ?? '' }] : [];
      });
      expect(lines.map((l) => l.id)).toEqual(ids);
      // Each one's number claimed for it (a claim without its event would be a harmless gap; there is none here).
      const claims = keys.filter((k) => k.startsWith('solver_log/events.seq/'));
      expect(claims.map((k) => k.slice(-9))).toEqual(lines.map((l) => l.seq));
      for (const line of lines.filter((_, i) => i % 7 === 0)) {
        const claim = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: `${root}solver_log/events.seq/${line.seq}` }),
        );
        expect(await claim.Body?.transformToString()).toBe(line.id);
      }
      // Every screenshot an event names is there, and every one there is named by an event (or is the start page's
      // post copy, which the original format pairs with its pre file).
      const shots = new Set(
        run.events.flatMap((e) =>
          e.type === 'observation' && e.observation_type === 'environment' && e.screenshot_path
            ? [e.screenshot_path]
            : [],
        ),
      );
      expect(keys.filter((k) => k.endsWith('.png')).sort()).toEqual([...shots, 'screenshot_0_post.png'].sort());
      expect(keys.filter((k) => k.endsWith('.lock'))).toEqual([]);
      const dataPoint = JSON.parse(
        (await (
          await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${root}data_point.json` }))
        ).Body?.transformToString()) ?? '',
      ) as { solver_log: { events: { id: string }[] } };
      expect(dataPoint.solver_log.events.map((e) => e.id)).toEqual(ids);
    } finally {
      client.destroy();
    }
    // The worker said so once when the store went away and once when it was back.
    expect(logs.filter((l) => /^the run store is unreachable: .*ECONNREFUSED.*tasks wait for it/.test(l))).toHaveLength(
      1,
    );
    expect(
      logs.filter((l) => /^the run store is back \(S3 http:\/\/127\.0\.0\.1:\d+ bucket runs\) after/.test(l)),
    ).toHaveLength(1);
  }, 240_000);
});

describe("the desktop's home archive and an evaluation's verdict, with the S3 store down", () => {
  it('wait for the store and are written once, whole, when it is back', async () => {
    const waits: unknown[] = [];
    const store = (waiting: boolean) =>
      new S3RunStore({
        bucket,
        prefix: 'outage-files',
        endpoint: s3.endpoint,
        credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
        ...(waiting
          ? {
              faults: new StoreFaultPolicy({
                where: 's3',
                limitMs: 60_000,
                initialDelayMs: 100,
                maxDelayMs: 500,
                hooks: { onWait: (w) => waits.push(w) },
              }),
            }
          : {}),
      });
    const machineA = new RunFiles(path.join(tmp, 'home-a'), store(true));
    const writer = await TrajectoryWriter.create(machineA.store, 'run-h', { task_id: 'run-h', instruction: 'note it' });
    const home = path.join(machineA.dir('run-h'), 'home');
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, 'todo.txt'), 'buy milk\n');

    await s3.kill();
    const saved = saveHome(machineA, 'run-h', home, 1);
    const judged = writer.appendVerification({ verifier_name: 'eval_rules', score: 1, reasoning: 'all checks pass' });
    await eventually(async () => waits.filter((w) => w !== null).length >= 4, 20_000, 'both writes waiting');
    await s3.restart();
    expect(await saved).toBe(true);
    expect(await judged).toBe('eval_rules');
    expect(waits.at(-1)).toBeNull();

    // Another machine finds the home and the one verdict.
    const machineB = new RunFiles(path.join(tmp, 'home-b'), store(false));
    const homeB = path.join(machineB.dir('run-h'), 'home');
    expect(await restoreHome(machineB, 'run-h', homeB)).toBe(true);
    expect(fs.readFileSync(path.join(homeB, 'todo.txt'), 'utf8')).toBe('buy milk\n');
    expect(await machineB.store.exists(`run-h/${homeArchiveFile(1)}`)).toBe(true);
    const verdicts = await loadVerification(machineB.store, 'run-h');
    expect(Object.keys(verdicts)).toEqual(['eval_rules']);
    expect(verdicts.eval_rules).toMatchObject({ score: 1, reasoning: 'all checks pass' });
  }, 60_000);
});
