// Section 7, scale-out: worker processes on a self-hosted Temporal cluster (the Temporal server v1.29.1 on PostgreSQL,
// src/infra/cluster.ts) with the shared run store on S3 (`rclone serve s3`). Each worker has its own browser pool of N
// sessions and its own local folder, as on its own machine. 2N tasks whose model time dominates (1 s per call) run
// on one worker, then on two: throughput should grow ≥ 1.7×. Also: how the tasks spread over the two workers, that no
// event is duplicated, and what a decide step's history read costs from the bucket compared with a local folder.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureTemporalServer, startCluster } from '../../src/infra/cluster';
import type { TemporalCluster } from '../../src/infra/cluster';
import { startS3Server } from '../../src/infra/rclone';
import type { S3Server } from '../../src/infra/rclone';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { openRunStore } from '../../src/trajectory/open-store';
import { readRunFromStore } from '../../src/trajectory/reader';
import { S3RunStore } from '../../src/trajectory/s3-store';
import { LocalRunStore } from '../../src/trajectory/store';
import { quietBundler, WORKFLOWS_PATH } from '../../worker/main';
import { startTask } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { staticEntries, writeScript } from '../scripts';
import { round, table } from '../stats';
import { measureStoreRead, p50 } from '../store-read';
import { exited, spawnWorker } from './resume';

/** Sessions per worker (N); 2N tasks per run. */
const SESSIONS = 2;
/**
 * Steps per task: 12, so each task's fixed costs (start, first open and screenshot, finalize) do not hide the
 * steps; with 6 steps the same machine measured ×1.57 (the two runs share 2 cores and one cluster), with 12 ×1.78.
 */
const STEPS = 12;
const MODEL_DELAY_MS = 1_000;
const THROUGHPUT_TARGET = 1.7;
const STORE_READ_TARGET_MS = 30;
const KEYS = { CUA_BENCH_S3_KEY: '', CUA_BENCH_S3_SECRET: '' };

interface PhaseResult {
  workers: number;
  tasks: number;
  seconds: number;
  tasksPerMinute: number;
  /** Tasks whose sessions ran on each worker (by its session queue). */
  perWorker: number[];
  duplicateEvents: number;
  failed: number;
}

/** The session queues a task's act activities ran on. */
async function actQueues(handle: WorkflowHandle): Promise<Set<string>> {
  const queues = new Set<string>();
  for (const e of (await handle.fetchHistory()).events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name === 'act') queues.add(a.taskQueue?.name ?? '');
  }
  return queues;
}

/** What both phases share: the cluster, the bucket, the workers' config and workflow bundle, the client, the script. */
interface ScaleOutSetup {
  address: string;
  s3: S3Server;
  bucket: string;
  configFile: string;
  /** The config as the workers read it (to read the runs back from the bucket). */
  readConfig: Config;
  bundlePath: string;
  client: Client;
  script: string;
}

/** The cluster and the S3 server, each stopped at the bench's cleanup. */
async function startServices(b: Bench): Promise<{ cluster: TemporalCluster; s3: S3Server }> {
  ensureTemporalServer((l) => b.log(`[bench] ${l}`));
  const cluster = await startCluster({ log: (l) => b.log(`[bench] cluster: ${l}`) });
  onCleanup('cluster', () => cluster.stop());
  const s3 = await startS3Server();
  onCleanup('S3 server', () => s3.stop());
  KEYS.CUA_BENCH_S3_KEY = s3.accessKeyId;
  KEYS.CUA_BENCH_S3_SECRET = s3.secretAccessKey;
  Object.assign(process.env, KEYS);
  return { cluster, s3 };
}

/** Starts the services and writes what the workers read: their config (the store in the bucket) and the bundle. */
async function setUp(b: Bench): Promise<ScaleOutSetup> {
  const { cluster, s3 } = await startServices(b);
  const store = {
    kind: 's3',
    endpoint: s3.endpoint,
    bucket: await s3.createBucket('runs'),
    prefix: 'bench',
    accessKeyIdEnv: 'CUA_BENCH_S3_KEY',
    secretAccessKeyEnv: 'CUA_BENCH_S3_SECRET',
  };
  const configFile = path.join(b.dir, 'scale-out.config.json');
  fs.writeFileSync(configFile, JSON.stringify({ store, browser: { slots: SESSIONS } }));
  const readConfig = loadConfig({ file: configFile, env: { ...KEYS, CUA_RUNS_DIR: b.runsDir } });
  const bundlePath = path.join(b.dir, 'scale-out-bundle.js');
  fs.writeFileSync(
    bundlePath,
    (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundler })).code,
  );
  const connection = await Connection.connect({ address: cluster.address });
  onCleanup('cluster client', () => connection.close());
  const client = new Client({ connection });
  const entries = staticEntries(STEPS).map((e) => ({ ...e, delay_ms: MODEL_DELAY_MS }));
  const script = writeScript(b.scriptsDir, `slow-${STEPS}`, entries);
  b.log(
    `[bench] ${2 * SESSIONS} tasks of ${STEPS} steps, model ${MODEL_DELAY_MS} ms per call, ${SESSIONS} sessions per ` +
      `worker; cluster at ${cluster.address}, runs in an S3 bucket (rclone serve s3 at ${s3.endpoint})`,
  );
  const { address } = cluster;
  return { address, s3, bucket: store.bucket, configFile, readConfig, bundlePath, client, script };
}

/** `workers` worker processes on `queue`, each with its own runs folder (its own machine, as far as it can tell). */
function spawnWorkers(
  b: Bench,
  setup: ScaleOutSetup,
  workers: number,
  queue: string,
): ReturnType<typeof spawnWorker>[] {
  return Array.from({ length: workers }, (_, i) =>
    spawnWorker(
      b,
      {
        TEMPORAL_ADDRESS: setup.address,
        CUA_TASK_QUEUE: queue,
        CUA_CONFIG: setup.configFile,
        CUA_RUNS_DIR: path.join(b.dir, `machine-${workers}-${i}`),
        CUA_TEST_BUNDLE: setup.bundlePath,
        ...KEYS,
        ...(process.env.CUA_CHROMIUM ? { CUA_CHROMIUM: process.env.CUA_CHROMIUM } : {}),
      },
      `scale-${workers}-${i}`,
    ),
  );
}

/** Events that appear more than once in the tasks' runs, read back from the bucket. */
async function countDuplicateEvents(setup: ScaleOutSetup, handles: WorkflowHandle[]): Promise<number> {
  let duplicateEvents = 0;
  const runs = openRunStore(setup.readConfig);
  for (const h of handles) {
    const ids = (await readRunFromStore(runs, h.workflowId)).events.map((e) => e.id);
    duplicateEvents += ids.length - new Set(ids).size;
  }
  return duplicateEvents;
}

/** One phase: `workers` worker processes run the 2N tasks; then they are stopped. */
async function phase(b: Bench, setup: ScaleOutSetup, workers: number): Promise<PhaseResult> {
  const queue = `bench-scale-${workers}-${Date.now().toString(36)}`;
  const procs = spawnWorkers(b, setup, workers, queue);
  await Promise.all(procs.map((p) => p.ready));
  const t0 = Date.now();
  const handles = await Promise.all(
    Array.from({ length: 2 * SESSIONS }, async (_, i) => {
      const taskId = `scale-${workers}w-${i}-${Date.now().toString(36)}`;
      return startTask(setup.client, queue, await b.taskInput({ taskId, script: setup.script }));
    }),
  );
  const results = (await Promise.all(handles.map((h) => h.result()))) as TaskResult[];
  const seconds = (Date.now() - t0) / 1000;
  const queues = await Promise.all(handles.map(actQueues));
  const perWorker = procs.map((p) => queues.filter((q) => q.has(p.queue())).length);
  const duplicateEvents = await countDuplicateEvents(setup, handles);
  for (const p of procs) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => exited(p.child)));
  const result: PhaseResult = {
    workers,
    tasks: handles.length,
    seconds: round(seconds, 2),
    tasksPerMinute: round((handles.length / seconds) * 60, 2),
    perWorker,
    duplicateEvents,
    failed: results.filter((r) => r.status !== 'complete').length,
  };
  b.log(
    `[bench] ${workers} worker(s): ${result.tasks} tasks in ${result.seconds} s (${result.tasksPerMinute} tasks/min), ` +
      `per worker ${perWorker.join(' / ')}, ${duplicateEvents} duplicate events, ${result.failed} not complete`,
  );
  return result;
}

/** The decide step's history read, timed on a folder store and on the bucket. */
async function storeReads(b: Bench, setup: ScaleOutSetup): Promise<{ folder: number[]; bucket: number[] }> {
  const { s3 } = setup;
  b.log('[bench] decide step history read: folder store vs the S3 bucket (40 steps after 5 warm-up)');
  const folderDir = path.join(b.dir, 'store-read-folder');
  const folder = await measureStoreRead('folder', new LocalRunStore(folderDir), new LocalRunStore(folderDir));
  const s3Store = () =>
    new S3RunStore({
      bucket: setup.bucket,
      prefix: 'store-read',
      endpoint: s3.endpoint,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  const bucket = await measureStoreRead('s3', s3Store(), s3Store());
  return { folder, bucket };
}

/** A line per phase: its time, throughput, spread over the workers, duplicates and failures. */
function logPhases(b: Bench, phases: PhaseResult[]): void {
  b.log(
    table([
      ['workers', 'tasks', 'seconds', 'tasks/min', 'tasks per worker', 'duplicate events', 'not complete'],
      ...phases.map((p) => [
        String(p.workers),
        String(p.tasks),
        String(p.seconds),
        String(p.tasksPerMinute),
        p.perWorker.join(' / '),
        String(p.duplicateEvents),
        String(p.failed),
      ]),
    ]),
  );
}

const throughputRatio = (one: PhaseResult, two: PhaseResult) => two.tasksPerMinute / one.tasksPerMinute;

/** The section's rows: both phases' throughput and their ratio, the spread, integrity, the bucket's read cost. */
function scaleOutRows(one: PhaseResult, two: PhaseResult, reads: { folder: number[]; bucket: number[] }): Row[] {
  const ratio = throughputRatio(one, two);
  const { folder, bucket } = reads;
  const extra = p50(bucket) - p50(folder);
  return [
    row(
      'scale-out',
      `1 worker × ${SESSIONS} sessions, ${one.tasks} tasks (model 1 s/call)`,
      `${one.tasksPerMinute} tasks/min`,
    ),
    row('scale-out', `2 workers × ${SESSIONS} sessions, same tasks`, `${two.tasksPerMinute} tasks/min`),
    row(
      'scale-out',
      'throughput, 2 workers ÷ 1',
      `×${round(ratio, 2)}`,
      `≥ ×${THROUGHPUT_TARGET}`,
      ratio >= THROUGHPUT_TARGET,
    ),
    row('scale-out', 'tasks per worker (2 workers)', two.perWorker.join(' / ')),
    row(
      'scale-out',
      'duplicate events / tasks not complete',
      `${one.duplicateEvents + two.duplicateEvents} / ${one.failed + two.failed}`,
      '0 / 0',
      one.duplicateEvents + two.duplicateEvents + one.failed + two.failed === 0,
    ),
    row(
      'scale-out',
      'decide history read p50: S3 − folder',
      `+${round(extra, 1)} ms (${round(p50(folder), 1)} → ${round(p50(bucket), 1)} ms)`,
      `≤ ${STORE_READ_TARGET_MS} ms`,
      extra <= STORE_READ_TARGET_MS,
    ),
  ];
}

export async function benchScaleOut(b: Bench): Promise<SectionOutput> {
  const setup = await setUp(b);
  const one = await phase(b, setup, 1);
  const two = await phase(b, setup, 2);
  const reads = await storeReads(b, setup);
  logPhases(b, [one, two]);
  return {
    name: 'scale-out',
    rows: scaleOutRows(one, two, reads),
    data: {
      sessionsPerWorker: SESSIONS,
      steps: STEPS,
      modelDelayMs: MODEL_DELAY_MS,
      phases: [one, two],
      ratio: throughputRatio(one, two),
      storeRead: { folder: reads.folder, s3: reads.bucket },
    },
  };
}
