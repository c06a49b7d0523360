// A fork's start (`cua fork <id> --step N`, issue 27), on the shared queue: a new task's run folder made of steps
// 1…N of another run — their events marked `metadata.inherited_from`, their screenshots, and the page as step N left
// it (its checkpoint as the fork's newest, so the fork's first open restores it; a desktop's home archive as of N,
// unpacked into the fork's home) — and the hint as step N+1's retry feedback. The source run is only read.
import path from 'node:path';
import { retryFeedback, taskMessage } from '../src/trajectory/events';
import { parseEventId } from '../src/trajectory/ids';
import type { Event } from '../src/trajectory/schema';
import type { RunStore } from '../src/trajectory/store';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import type { TaskInput } from '../src/contract/task';
import type { StartForkResult } from '../src/contract/activities';
import { LATEST_CHECKPOINT_FILE } from './environments/browser-state';
import type { LatestCheckpoint, StepCheckpoint } from './environments/browser-state';
import { HOME_ARCHIVES_RECORD, homeOf, unpackHome } from './environments/desktop-home';
import type { HomeArchives } from './environments/desktop-home';
import { readForkSource } from './fork-source';
import type { ForkSource } from './fork-source';
import { checkEndpointFits, startFactsOf, openRunFolder } from './run';
import { nonRetryable } from './support';
import type { ActivityDeps, RunFiles } from './support';

export function createForkActivity(deps: ActivityDeps, files: RunFiles) {
  return {
    /**
     * Creates the fork's run folder (first, so a refused fork still has one that says why) and copies into it what
     * it keeps of its source; refuses (InvalidTaskInput, one line) a step the source did not finish or saved no page
     * for. Idempotent: a retry writes the same files and skips the events already there.
     */
    async startFork(input: TaskInput): Promise<StartForkResult> {
      const fork = input.forkOf;
      if (!fork) nonRetryable(new Error(`task ${input.runId} is no fork (input.forkOf)`), 'InvalidTaskInput');
      const branch = fork.branch ? { branch: fork.branch } : {};
      const w = await openRunFolder(files, input, { fork_of: { run_id: fork.runId, step: fork.step, ...branch } });
      const source = await readForkSource(files.store, fork.runId, fork.step);
      if ('refused' in source) nonRetryable(new Error(source.refused), 'InvalidTaskInput');
      await copyEvents(files.store, w, source, input.instruction);
      await copyPage(files, source, input.runId);
      if (fork.hint) await w.appendEvent(retryFeedback(fork.step + 1, fork.hint, { metadata: { kind: 'hint' } }));
      await checkEndpointFits(deps, input);
      return { steps: fork.step, ...startFactsOf(deps, input) };
    },
  };
}

/**
 * The source's events of steps 0…N, each marked `inherited_from: { run_id, step }`, with the screenshots they name.
 * The task message carries the fork's instruction (the source's, unless the fork gave another: then it is kept as
 * `source_instruction`).
 */
async function copyEvents(store: RunStore, w: TrajectoryWriter, source: ForkSource, instruction: string) {
  for (const e of source.events) {
    const step = parseEventId(e.id)?.step ?? 0;
    const metadata = { ...(e.metadata ?? {}), inherited_from: { run_id: source.taskId, step } };
    if (e.type === 'observation' && e.observation_type === 'user_message' && e.message_type === 'task') {
      const changed = e.content !== instruction ? { source_instruction: e.content } : {};
      await w.appendEvent(taskMessage(instruction, { timestamp: e.timestamp, metadata: { ...metadata, ...changed } }));
      continue;
    }
    if (e.type === 'observation' && e.observation_type === 'environment' && e.screenshot_path) {
      await copyFile(store, source.taskId, w.taskId, e.screenshot_path);
    }
    await w.appendEvent({ ...e, metadata } as Event);
  }
}

/** The page as step N left it: its checkpoint as the fork's newest (browser), or its home archive (desktop). */
async function copyPage(files: RunFiles, source: ForkSource, taskId: string): Promise<void> {
  const { store } = files;
  const { page } = source;
  if (page.environment === 'browser') {
    const text = await store.readText(`${source.taskId}/${page.checkpoint}`);
    const checkpoint = JSON.parse(text ?? '{}') as StepCheckpoint;
    await copyFile(store, source.taskId, taskId, checkpoint.storage_file);
    const latest: LatestCheckpoint = { ...checkpoint, file: page.checkpoint };
    await store.writeAtomic(`${taskId}/${page.checkpoint}`, JSON.stringify(checkpoint));
    await store.writeAtomic(`${taskId}/${LATEST_CHECKPOINT_FILE}`, JSON.stringify(latest));
    return;
  }
  const { home } = page;
  await copyFile(store, source.taskId, taskId, home.file);
  const record: HomeArchives = { ...home, steps: [home.step] };
  await store.writeAtomic(`${taskId}/${HOME_ARCHIVES_RECORD}`, JSON.stringify(record));
  // The folder store's home is the run's local `home/` (a shared store's open unpacks the newest archive itself).
  await unpackHome(store, `${taskId}/${home.file}`, homeOf(files, taskId));
}

/** One file of the source run into the fork, under the same run-relative name (none that climbs out of the run). */
async function copyFile(store: RunStore, from: string, to: string, file: string): Promise<void> {
  if (path.posix.normalize(file).startsWith('..') || path.posix.isAbsolute(file)) return;
  const bytes = await store.readBytes(`${from}/${file}`);
  if (bytes !== undefined) await store.writeAtomic(`${to}/${file}`, bytes);
}
