// The run store a configuration names (config `store`): the folder under `runsDir` by default, or an S3 bucket.
import path from 'node:path';

import type { StoreConfig } from './store-config';
import { RunStoreUnavailableError } from './errors';
import {
  DATA_POINT_FILE,
  EVENTS_FILE,
  METADATA_FILE,
  RUN_STATE_FILE,
  STATUS_FILE,
  TASK_FILE,
  VERIFICATION_FILE,
} from './layout';
import { loadEvents } from './reader';
import { S3RunStore } from './s3-store';
import type { RunStore } from './store';
import { LocalRunStore } from './store';
import { StoreFaultPolicy } from './store-faults';
import type { StoreWaitHooks } from './store-faults';

/** How a worker's store waits out faults: its log, and the hooks of the activity a call runs in. */
export interface StoreWaiting {
  log?: (line: string) => void;
  hooks?: StoreWaitHooks;
}

/** The store in log lines: its folder, or its endpoint and bucket. */
export function storeWhere(config: { store: StoreConfig; runsDir: string }): string {
  const { store } = config;
  return store.kind === 'folder' ? config.runsDir : `S3 ${store.endpoint ?? 'AWS'} bucket ${store.bucket}`;
}

/**
 * The configured store. With `waiting` (a worker's activities), a full, read-only or unreachable store is waited out
 * for store.faultWaitMinutes (src/trajectory/store-faults.ts); without it (the CLI's readers) it fails at once.
 */
export function openRunStore(
  config: { store: StoreConfig; runsDir: string },
  env: NodeJS.ProcessEnv = process.env,
  waiting?: StoreWaiting,
): RunStore {
  const { store } = config;
  const faults = waiting
    ? new StoreFaultPolicy({ where: storeWhere(config), limitMs: store.faultWaitMinutes * 60_000, ...waiting })
    : undefined;
  if (store.kind === 'folder') return new LocalRunStore(config.runsDir, faults ? { faults } : {});
  const accessKeyId = env[store.accessKeyIdEnv];
  const secretAccessKey = env[store.secretAccessKeyEnv];
  if (!accessKeyId || !secretAccessKey) {
    throw new RunStoreUnavailableError(
      `S3 run store: set ${store.accessKeyIdEnv} and ${store.secretAccessKeyEnv} (the keys of bucket "${store.bucket}")`,
      { kind: 'refused' },
    );
  }
  return new S3RunStore({
    bucket: store.bucket,
    prefix: store.prefix,
    region: store.region,
    forcePathStyle: store.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    ...(store.endpoint ? { endpoint: store.endpoint } : {}),
    ...(faults ? { faults } : {}),
  });
}

/**
 * Copy run `taskId` from one store into another (e.g. from S3 into a local folder for the HTML report), as run `toId`
 * there (default: the same id): its files, `events.jsonl` rebuilt in stream order, and every screenshot its events
 * name. Returns the copied files' names.
 */
export async function copyRun(from: RunStore, taskId: string, to: RunStore, toId = taskId): Promise<string[]> {
  const events = await loadEvents(from, taskId);
  const shots = events.flatMap((e) =>
    e.type === 'observation' && e.observation_type === 'environment' && e.screenshot_path ? [e.screenshot_path] : [],
  );
  const files = [
    TASK_FILE,
    METADATA_FILE,
    STATUS_FILE,
    RUN_STATE_FILE,
    DATA_POINT_FILE,
    VERIFICATION_FILE,
    EVENTS_FILE,
  ];
  const copied: string[] = [];
  for (const file of [...files, ...new Set(shots)]) {
    // A screenshot path that climbs out of the run is not followed (the folder store refuses it, and so do we).
    if (path.posix.normalize(file).startsWith('..') || path.posix.isAbsolute(file)) continue;
    const bytes = await from.readBytes(`${taskId}/${file}`);
    if (bytes === undefined) continue;
    await to.writeAtomic(`${toId}/${file}`, bytes);
    copied.push(file);
  }
  return copied;
}
