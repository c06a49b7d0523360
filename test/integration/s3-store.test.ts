// The shared run store: the same contract as the folder store, met by an S3 bucket served by a real
// `rclone serve s3` (started here, on a free port, over a temp folder), plus what only S3 needs showing: an event is
// one object written by a conditional put (a retried write is a no-op), events come back in stream order although
// their ids do not sort that way, clear one-line errors for a store that cannot be used, and one task end to end
// with the S3 store whose run read back through `cua show` matches.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { copyDownloads, storeIsRemote } from '../../activities/local-files';
import { homeArchiveFile, restoreHome, saveHome } from '../../activities/environments/desktop-home';
import { RunFiles } from '../../activities/support';
import { startS3Server } from '../../src/infra/rclone';
import type { S3Server } from '../../src/infra/rclone';
import { ConsecutiveActionsError, RunFolderNotFoundError, RunStoreUnavailableError } from '../../src/trajectory/errors';
import {
  actionEvent,
  postObservation,
  preObservation,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import { openRunStore } from '../../src/trajectory/open-store';
import { readRunFromStore } from '../../src/trajectory/reader';
import { S3RunStore } from '../../src/trajectory/s3-store';
import { stepSummaries } from '../../src/trajectory/steps';
import { LocalRunStore } from '../../src/trajectory/store';
import type { RunStore } from '../../src/trajectory/store';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import type { TaskResult } from '../../src/contract/task';
import { startHarness } from './harness';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const task = { task_id: 'task-1', instruction: 'Find the opening hours' };
const EVENTS = 'solver_log/events.jsonl';

let s3: S3Server;
let tmp: string;
let bucketCount = 0;
beforeAll(async () => {
  s3 = await startS3Server();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-store-'));
}, 60_000);
afterAll(async () => {
  await s3?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A store on a fresh bucket of the rclone server. */
async function freshS3Store(): Promise<S3RunStore> {
  return s3Store(await s3.createBucket(`bucket-${++bucketCount}`));
}

/** A store on a bucket of the rclone server (another instance on the same bucket: another machine). */
function s3Store(bucket: string): S3RunStore {
  return new S3RunStore({
    bucket,
    prefix: 'runs',
    endpoint: s3.endpoint,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
}

/** One step: pre, action, tool output, post (as the folder store's writer tests write it). */
async function writeStep(writer: TrajectoryWriter, step: number): Promise<void> {
  await writer.appendEvent(preObservation(step, { screenshot_path: writer.screenshotPath(step, 'pre') }));
  const action = actionEvent(step, { action_name: 'left_click', content: { action: 'left_click' } });
  await writer.appendEvent(action);
  await writer.appendEvent(toolOutput(step, action.id, { output: 'clicked' }));
  await writer.appendEvent(postObservation(step, action.id, { screenshot_path: writer.screenshotPath(step, 'post') }));
}

const wait = (step: number) => actionEvent(step, { action_name: 'wait', content: { action: 'wait' } });

const stores: [string, () => Promise<{ store: RunStore; twin: () => RunStore }>][] = [
  [
    'folder',
    async () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'folder-'));
      return { store: new LocalRunStore(dir), twin: () => new LocalRunStore(dir) };
    },
  ],
  [
    's3',
    async () => {
      const store = await freshS3Store();
      return { store, twin: () => s3Store(store.bucket) };
    },
  ],
];

describe.each(stores)('the run store contract: %s', (_kind, make) => {
  it('reads back what was written; absent keys read as undefined', async () => {
    const { store } = await make();
    expect(await store.exists('r/task.json')).toBe(false);
    expect(await store.readText('r/task.json')).toBeUndefined();
    expect(await store.createExclusive('r/task.json', '{"a":1}')).toBe(true);
    expect(await store.createExclusive('r/task.json', '{"a":2}')).toBe(false);
    expect(await store.readText('r/task.json')).toBe('{"a":1}');
    await store.writeAtomic('r/task.json', '{"a":3}');
    expect(await store.readText('r/task.json')).toBe('{"a":3}');
    expect((await store.readFrom('r/task.json', 5))?.toString()).toBe('3}');
    await store.writeAtomic('r/shot.png', Buffer.from([0, 1, 2, 255]));
    expect([...((await store.readBytes('r/shot.png')) ?? [])]).toEqual([0, 1, 2, 255]);
    await expect((async () => store.readText('../escape'))()).rejects.toThrow(RangeError);
  });

  it('appends lines in order and reads them from an offset', async () => {
    const { store } = await make();
    await store.appendLine(`r/${EVENTS}`, '{"id":"a"}');
    await store.appendLine(`r/${EVENTS}`, '{"id":"b"}');
    expect(await store.readText(`r/${EVENTS}`)).toBe('{"id":"a"}\n{"id":"b"}\n');
    expect((await store.readFrom(`r/${EVENTS}`, 11))?.toString()).toBe('{"id":"b"}\n');
    expect(await store.exists(`r/${EVENTS}`)).toBe(true);
  });

  it('withLock lets one holder in at a time, across store instances', async () => {
    const { store, twin } = await make();
    const other = twin();
    let inside = 0;
    let most = 0;
    const hold = (s: RunStore) =>
      s.withLock('r/x', async () => {
        most = Math.max(most, ++inside);
        await new Promise((resolve) => setTimeout(resolve, 30));
        inside--;
      });
    await Promise.all([hold(store), hold(other), hold(store), hold(other)]);
    expect(most).toBe(1);
  });

  it('a writer: create, steps, idempotent appends across two instances, order rules, status, data point', async () => {
    const { store, twin } = await make();
    const writer = await TrajectoryWriter.create(store, 'run-1', task);
    await writer.appendEvent(taskMessage(task.instruction));
    await writer.saveScreenshot(1, 'pre', Buffer.from('png-1'));
    await writeStep(writer, 1);
    // A second writer (a retried activity in another process) repeats step 1 and goes on: nothing is written twice.
    const again = await TrajectoryWriter.open(twin(), 'run-1');
    await Promise.all([writeStep(again, 1), writeStep(writer, 1)]);
    await writeStep(again, 2);
    expect(await writer.hasEvent('step-0002-post-g0')).toBe(true);
    await expect(writer.appendEvent(wait(3))).resolves.toBe(true);
    await expect(writer.appendEvent(wait(4))).rejects.toThrow(ConsecutiveActionsError);
    expect(await writer.appendVerification({ verifier_name: 'judge', score: 1 })).toBe('judge');
    expect(await again.appendVerification({ verifier_name: 'judge', score: 0 })).toBe('judge_1');
    await writer.writeStatus('complete', 'open 9-5');
    const dataPoint = await writer.writeDataPoint();

    const run = await readRunFromStore(twin(), 'run-1');
    expect(run.events.map((e) => e.id)).toEqual([
      'user-0000-task-g0',
      ...['pre', 'action', 'tool', 'post'].flatMap((k) => `step-0001-${k}-g0`),
      ...['pre', 'action', 'tool', 'post'].flatMap((k) => `step-0002-${k}-g0`),
      'step-0003-action-g0',
    ]);
    expect(run.warnings).toEqual([]);
    expect(run).toMatchObject({ status: 'complete', outcome: { answer: 'open 9-5' } });
    expect(Object.keys(run.verification)).toEqual(['judge', 'judge_1']);
    expect(dataPoint.solver_log?.events).toHaveLength(10);
    expect((await twin().readBytes('run-1/screenshot_1_pre.png'))?.toString()).toBe('png-1');
    await expect(TrajectoryWriter.open(store, 'no-such-run')).rejects.toThrow(RunFolderNotFoundError);
  });
});

describe('the S3 store', () => {
  it('keeps each event as its own object, under a per-run sequence; a retried write is a no-op', async () => {
    const store = await freshS3Store();
    const line = JSON.stringify(taskMessage('hello'));
    await store.appendLine(`r/${EVENTS}`, line);
    // The same event again, from this instance and from a fresh one that knows nothing of the first write.
    await store.appendLine(`r/${EVENTS}`, line);
    await s3Store(store.bucket).appendLine(`r/${EVENTS}`, line);
    const folder = path.join(s3.dir, store.bucket, 'runs/r/solver_log/events');
    expect(fs.readdirSync(folder)).toEqual(['000000001-user-0000-task-g0.json']);
    expect(fs.readFileSync(path.join(folder, '000000001-user-0000-task-g0.json'), 'utf8')).toBe(line);
    // The put itself is conditional: the same key put again (an SDK retry whose answer was lost) is refused.
    expect(await store.createExclusive('r/solver_log/events/000000001-user-0000-task-g0.json', 'other')).toBe(false);
    expect(await store.readText(`r/${EVENTS}`)).toBe(`${line}\n`);
  });

  it('returns events in stream order although their ids do not sort that way', async () => {
    const store = await freshS3Store();
    const writer = await TrajectoryWriter.create(store, 'run-1', task);
    await writer.appendEvent(taskMessage(task.instruction)); // user-0000-… sorts after every step-…
    await writeStep(writer, 1); // pre, action, tool, post: action < post < pre < tool by id
    await writer.appendEvent(userReply(1, 'Ada'));
    await writeStep(writer, 2);
    const expected = [
      'user-0000-task-g0',
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-tool-g0',
      'step-0001-post-g0',
      'user-0001-reply-g0',
      'step-0002-pre-g0',
      'step-0002-action-g0',
      'step-0002-tool-g0',
      'step-0002-post-g0',
    ];
    expect([...expected].sort()).not.toEqual(expected);
    // A fresh store instance (another machine: nothing cached) rebuilds events.jsonl in that order.
    const run = await readRunFromStore(s3Store(store.bucket), 'run-1');
    expect(run.events.map((e) => e.id)).toEqual(expected);
  });

  it('two appenders racing without the lock get distinct sequence numbers', async () => {
    const store = await freshS3Store();
    const other = s3Store(store.bucket);
    const lines = (who: string) => Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: `${who}-${i}` }));
    await Promise.all([
      (async () => {
        for (const l of lines('a')) await store.appendLine(`r/${EVENTS}`, l);
      })(),
      (async () => {
        for (const l of lines('b')) await other.appendLine(`r/${EVENTS}`, l);
      })(),
    ]);
    const names = fs.readdirSync(path.join(s3.dir, store.bucket, 'runs/r/solver_log/events'));
    const seqs = names.map((n) => n.slice(0, 9));
    expect(names).toHaveLength(10);
    expect(new Set(seqs).size).toBe(10);
    const text = (await s3Store(store.bucket).readText(`r/${EVENTS}`)) ?? '';
    expect(text.trim().split('\n').sort()).toEqual([...lines('a'), ...lines('b')].sort());
  });

  it('names an unusable store in one line: no bucket, credentials refused, unreachable, keys unset', async () => {
    const keys = { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey };
    const missing = new S3RunStore({ bucket: 'no-such-bucket', endpoint: s3.endpoint, credentials: keys });
    await expect(missing.check()).rejects.toThrow(
      /^S3 run store http:\/\/127\.0\.0\.1:\d+: bucket "no-such-bucket" does not exist$/,
    );
    await expect(missing.readText('r/task.json')).rejects.toThrow(RunStoreUnavailableError);
    const refused = new S3RunStore({
      bucket: await s3.createBucket('creds'),
      endpoint: s3.endpoint,
      credentials: { accessKeyId: 'wrong', secretAccessKey: 'wrong' },
    });
    await expect(refused.check()).rejects.toThrow(/: credentials refused for bucket "creds" \(HTTP 403\)$/);
    await expect(refused.readText('r/task.json')).rejects.toThrow(/credentials refused .*\(InvalidAccessKeyId\)$/);
    const down = new S3RunStore({ bucket: 'x', endpoint: 'http://127.0.0.1:9', credentials: keys });
    await expect(down.check()).rejects.toThrow(
      /^S3 run store http:\/\/127\.0\.0\.1:9: cannot reach it \(ECONNREFUSED\)$/,
    );
    const config = {
      runsDir: tmp,
      store: { kind: 's3', bucket: 'b', prefix: '', region: 'us-east-1', faultWaitMinutes: 30 } as const,
    };
    expect(() =>
      openRunStore(
        {
          ...config,
          store: { ...config.store, forcePathStyle: true, accessKeyIdEnv: 'K_ID', secretAccessKeyEnv: 'K_SECRET' },
        },
        {},
      ),
    ).toThrow('S3 run store: set K_ID and K_SECRET (the keys of bucket "b")');
  });
});

describe('local session files with the S3 store (two machines: two local folders, one bucket)', () => {
  it('carries the desktop home across workers as the archive of its step, written only when it changed', async () => {
    const bucket = (await freshS3Store()).bucket;
    const machineA = new RunFiles(path.join(tmp, 'home-a'), s3Store(bucket));
    const machineB = new RunFiles(path.join(tmp, 'home-b'), s3Store(bucket));
    const homeA = path.join(machineA.dir('run-h'), 'home');
    fs.mkdirSync(path.join(homeA, 'notes'), { recursive: true });
    fs.writeFileSync(path.join(homeA, 'notes', 'todo.txt'), 'buy milk\n');
    fs.symlinkSync('/etc/passwd', path.join(homeA, 'link')); // archived as a link, never followed
    expect(await saveHome(machineA, 'run-h', homeA, 1)).toBe(true);
    expect(await saveHome(machineA, 'run-h', homeA, 2)).toBe(false); // unchanged: not written again
    expect(fs.existsSync(path.join(s3.dir, bucket, 'runs/run-h', homeArchiveFile(1)))).toBe(true);
    expect(fs.existsSync(path.join(s3.dir, bucket, 'runs/run-h', homeArchiveFile(2)))).toBe(false);

    // Machine B had an older home for the run: the bucket's archive replaces it.
    const homeB = path.join(machineB.dir('run-h'), 'home');
    fs.mkdirSync(homeB, { recursive: true });
    fs.writeFileSync(path.join(homeB, 'stale.txt'), 'old');
    expect(await restoreHome(machineB, 'run-h', homeB)).toBe(true);
    expect(fs.readFileSync(path.join(homeB, 'notes', 'todo.txt'), 'utf8')).toBe('buy milk\n');
    expect(fs.readlinkSync(path.join(homeB, 'link'))).toBe('/etc/passwd');
    expect(fs.existsSync(path.join(homeB, 'stale.txt'))).toBe(false);
    // No archive for a run yet: the local home is left alone.
    expect(await restoreHome(machineB, 'run-none', homeB)).toBe(false);
    expect(fs.existsSync(path.join(homeB, 'notes', 'todo.txt'))).toBe(true);
  });

  it('copies each download into the bucket once; the folder store copies nothing', async () => {
    const bucket = (await freshS3Store()).bucket;
    const files = new RunFiles(path.join(tmp, 'dl'), s3Store(bucket));
    const downloads = path.join(files.dir('run-d'), 'downloads');
    fs.mkdirSync(downloads, { recursive: true });
    fs.writeFileSync(path.join(downloads, 'report.pdf'), 'pdf bytes');
    expect(await copyDownloads(files, 'run-d')).toEqual(['report.pdf']);
    fs.writeFileSync(path.join(downloads, 'report (1).pdf'), 'second');
    expect(await copyDownloads(files, 'run-d')).toEqual(['report (1).pdf']);
    expect(fs.readFileSync(path.join(s3.dir, bucket, 'runs/run-d/downloads/report.pdf'), 'utf8')).toBe('pdf bytes');
    const local = new RunFiles(path.join(tmp, 'dl-local'));
    fs.mkdirSync(path.join(local.dir('run-d'), 'downloads'), { recursive: true });
    fs.writeFileSync(path.join(local.dir('run-d'), 'downloads', 'x.txt'), 'x');
    expect(storeIsRemote(local)).toBe(false);
    expect(await copyDownloads(local, 'run-d')).toEqual([]);
  });

  it('reads a .jsonl put there whole (a task set), as well as a log kept one object per line', async () => {
    const store = await freshS3Store();
    await store.writeAtomic('evalsets/web.jsonl', '{"id":"a"}\n');
    expect(await store.exists('evalsets/web.jsonl')).toBe(true);
    expect(await store.readText('evalsets/web.jsonl')).toBe('{"id":"a"}\n');
    expect(await store.exists('evalsets/none.jsonl')).toBe(false);
  });
});

describe('a task end to end with the S3 store', () => {
  let h: Harness;
  let configFile: string;
  const env = { CUA_IT_S3_KEY: '', CUA_IT_S3_SECRET: '' };
  beforeAll(async () => {
    env.CUA_IT_S3_KEY = s3.accessKeyId;
    env.CUA_IT_S3_SECRET = s3.secretAccessKey;
    Object.assign(process.env, env); // the worker in this process reads the keys from its environment
    const store = {
      kind: 's3',
      endpoint: s3.endpoint,
      bucket: await s3.createBucket('runs'),
      prefix: 'cua/runs',
      accessKeyIdEnv: 'CUA_IT_S3_KEY',
      secretAccessKeyEnv: 'CUA_IT_S3_SECRET',
    };
    configFile = path.join(tmp, 'cua.config.json');
    fs.writeFileSync(configFile, JSON.stringify({ store }));
    h = await startHarness({ env: { CUA_CONFIG: configFile } });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('writes the run into the bucket, and `cua show` reads it back from there', async () => {
    expect(h.config.store.kind).toBe('s3');
    const handle = await h.start({ script: 'book-lisbon' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 5 });
    const taskId = handle.workflowId;

    // Nothing of the run's record went to the local folder: the events are objects in the bucket.
    expect(fs.existsSync(path.join(h.runDir(taskId), 'solver_log'))).toBe(false);
    const objects = path.join(s3.dir, 'runs', 'cua/runs', taskId);
    expect(fs.readdirSync(path.join(objects, 'solver_log/events')).length).toBeGreaterThan(20);
    expect(fs.existsSync(path.join(objects, 'screenshot_5_post.png'))).toBe(true);
    expect(fs.existsSync(path.join(objects, 'data_point.json'))).toBe(true);

    const run = await readRunFromStore(openRunStore(h.config), taskId);
    expect(run.status).toBe('complete');
    expect(run.outcome?.answer).toBe(result.answer);
    const ids = run.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);

    const shown = await cuaShow([taskId, '--json', '--config', configFile]);
    expect(shown.code, shown.stderr).toBe(0);
    const json = JSON.parse(shown.stdout) as { dir: string; status: string; steps: unknown[] };
    expect(json.dir).toBe(`s3://runs/cua/runs/${taskId}`);
    expect(json.status).toBe('complete');
    expect(json.steps).toEqual(JSON.parse(JSON.stringify(stepSummaries(run.events))));
    expect(json.steps.map((s) => (s as { action_name: string }).action_name)).toEqual([
      'left_click',
      'type',
      'left_click',
      'read_page_answer_question',
      'terminate',
    ]);

    const viewed = await cuaShow(['view', taskId, '--config', configFile].slice(1), 'view');
    expect(viewed.code, viewed.stderr).toBe(0);
    const report = viewed.stdout.trim();
    expect(report).toBe(path.join(h.config.runsDir, taskId, 'report.html'));
    expect(fs.readFileSync(report, 'utf8')).toContain('data:image/webp;base64,');
  });

  /** `cua show|view …` as a child process (the real CLI), with the store's keys in its environment. */
  function cuaShow(args: string[], command = 'show'): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, CUA_RUNS_DIR: h.config.runsDir };
      delete childEnv.CUA_CONFIG;
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/cua.js'), command, ...args], {
        cwd: ROOT,
        env: childEnv,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }
});
