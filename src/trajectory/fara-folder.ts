// A run folder the original (Fara) wrote, taken over by `cua adopt <folder>` (issue 28): read and checked where the
// task starter names it (a folder with task.json, events that keep the reader's rules, a status that can go on), then
// copied into the run store under a new id, its events given our ids (fara-events.ts). The source folder is only
// read; a worker never reads a path a task starter names, only the copy in the run store.
import { promises as fs } from 'node:fs';
import path from 'node:path';

import { FolderNotAdoptableError, RunFolderNotFoundError, TrajectoryError } from './errors';
import { pendingQuestion, streamProblem, stepsOf, withOurIds } from './fara-events';
import { EVENTS_FILE, METADATA_FILE, STATUS_FILE, TASK_FILE, VERIFICATION_FILE } from './layout';
import { readRun } from './reader';
import type { RunRecord } from './reader';
import type { Event, SolverStatus } from './schema';
import type { RunStore } from './store';

/** The statuses a folder can be adopted in: a question waits for its reply, or the run was cut off while running. */
export const ADOPTABLE_STATUSES: readonly SolverStatus[] = ['waiting_for_user', 'running'];

/** A folder checked for adoption: what it holds, its events with our ids, its steps and the question it waits on. */
export interface AdoptableFolder {
  /** The folder's absolute path (recorded with the adopted run; never read by a worker). */
  dir: string;
  run: RunRecord;
  events: Event[];
  steps: number;
  /** The question the folder waits on (status waiting_for_user, no reply after its last action), else null. */
  question: string | null;
  /** The last page the folder recorded (its newest environment observation's URL), where the adopted run reopens. */
  lastUrl: string | null;
  /**
   * The first page the folder recorded (its first environment observation that has a URL): its origin is the
   * recording's when task.json names no start URL, as Fara's writer leaves it (`environment_config: {}`, and a
   * start page observation with `url: ""`).
   */
  firstUrl: string | null;
}

const refuse = (dir: string, why: string): never => {
  throw new FolderNotAdoptableError(dir, why);
};

/** Reads and checks a folder for adoption; FolderNotAdoptableError (one line) says what is wrong with it. */
export async function readAdoptableFolder(folder: string): Promise<AdoptableFolder> {
  const dir = path.resolve(folder);
  const stat = await fs.stat(dir).catch(() => undefined);
  if (!stat) refuse(folder, 'no such folder');
  if (!stat?.isDirectory()) refuse(folder, 'not a folder');
  let run: RunRecord;
  try {
    run = await readRun(dir);
  } catch (err) {
    if (err instanceof RunFolderNotFoundError) refuse(folder, `no ${TASK_FILE}: not a run folder Fara wrote`);
    if (err instanceof TrajectoryError) refuse(folder, err.message);
    throw err;
  }
  if (run.events.length === 0) refuse(folder, `no events (${EVENTS_FILE} is missing or empty)`);
  if (!ADOPTABLE_STATUSES.includes(run.fileStatus)) {
    refuse(
      folder,
      `its run is ${run.fileStatus} (${STATUS_FILE}): only a run that is ${ADOPTABLE_STATUSES.join(' or ')} can be adopted`,
    );
  }
  const problem = streamProblem(run.events);
  if (problem) refuse(folder, `its events break the format's rules: ${problem}`);
  const events = withOurIds(run.events);
  return {
    dir,
    run,
    events,
    steps: stepsOf(events),
    question: pendingQuestion(events, run.fileStatus, run.outcome),
    lastUrl: lastUrlOf(events),
    firstUrl: firstUrlOf(events),
  };
}

const pageUrls = (events: readonly Event[]): string[] =>
  events.flatMap((e) => (e.type === 'observation' && e.observation_type === 'environment' && e.url ? [e.url] : []));

function lastUrlOf(events: readonly Event[]): string | null {
  return pageUrls(events).at(-1) ?? null;
}

function firstUrlOf(events: readonly Event[]): string | null {
  return pageUrls(events)[0] ?? null;
}

/**
 * The URL whose origin the folder's recorded URLs have: task.json's start URL, else its first page that has a URL.
 * Undefined when it has neither (or they are no http(s) URLs).
 */
export function recordedStartUrl(folder: Pick<AdoptableFolder, 'run' | 'firstUrl'>): string | undefined {
  const start = folder.run.task.environment_config['start_url'];
  if (typeof start === 'string' && /^https?:\/\//i.test(start)) return start;
  return folder.firstUrl !== null && /^https?:\/\//i.test(folder.firstUrl) ? folder.firstUrl : undefined;
}

const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** A screenshot's run-relative name that stays inside the run folder (the reader refuses others, and so do we). */
const inside = (file: string) =>
  file !== '' && !path.posix.isAbsolute(file) && !path.posix.normalize(file).startsWith('..');

/**
 * Copies the folder into `store` as run `taskId`: task.json (`metadata.adopted_from` added), metadata.json (its
 * `run_id` ours, the original's kept in `stats.adopted_from`), status.json, the events with our ids, the
 * verification results and every screenshot (those the events name and the folder's other `screenshot_*.png`, e.g.
 * the start page's copy). `key` names the record of where it came from (`imported_from` for a recording `cua replay`
 * imports). Not copied: data_point.json (its events carry the original's ids; the adopted run writes
 * its own at the first pause) and run_state.json (the adopted task's own). task.json goes last, so a copy cut off
 * half-way is no run folder. Returns the names of the files copied.
 */
export async function importAdoptedFolder(
  folder: AdoptableFolder,
  store: RunStore,
  taskId: string,
  key: 'adopted_from' | 'imported_from' = 'adopted_from',
): Promise<string[]> {
  const { run, dir } = folder;
  const adoptedFrom = { folder: dir, run_id: run.metadata.run_id, status: run.fileStatus, steps: folder.steps };
  const copied: string[] = [];
  const write = async (file: string, data: string | Uint8Array) => {
    await store.writeAtomic(`${taskId}/${file}`, data);
    copied.push(file);
  };
  const shots = new Set(
    folder.events.flatMap((e) =>
      e.type === 'observation' && e.observation_type === 'environment' && inside(e.screenshot_path)
        ? [e.screenshot_path]
        : [],
    ),
  );
  for (const name of await fs.readdir(dir)) if (/^screenshot_.*\.png$/.test(name)) shots.add(name);
  for (const shot of [...shots].sort()) {
    const bytes = await fs.readFile(path.join(dir, shot)).catch(() => undefined);
    if (bytes) await write(shot, bytes);
  }
  const verification = await fs.readFile(path.join(dir, VERIFICATION_FILE)).catch(() => undefined);
  if (verification) await write(VERIFICATION_FILE, verification);
  await write(EVENTS_FILE, folder.events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  await write(STATUS_FILE, pretty({ status: run.fileStatus, outcome: run.outcome }));
  const stats = { ...run.metadata.stats, [key]: adoptedFrom };
  await write(METADATA_FILE, pretty({ ...run.metadata, run_id: taskId, stats }));
  await write(TASK_FILE, pretty({ ...run.task, metadata: { ...run.task.metadata, [key]: adoptedFrom } }));
  return copied;
}

/**
 * A run folder of any status (ours or Fara's) read for `cua replay <folder>` to import as a recording: its events
 * with our ids. FolderNotAdoptableError (one line) for a folder that is no run folder or has no events.
 */
export async function readRecordedFolder(folder: string): Promise<AdoptableFolder> {
  const dir = path.resolve(folder);
  const stat = await fs.stat(dir).catch(() => undefined);
  if (!stat?.isDirectory()) refuse(folder, stat ? 'not a folder' : 'no such folder');
  let run: RunRecord;
  try {
    run = await readRun(dir);
  } catch (err) {
    if (err instanceof RunFolderNotFoundError) refuse(folder, `no ${TASK_FILE}: not a run folder`);
    if (err instanceof TrajectoryError) refuse(folder, err.message);
    throw err;
  }
  if (run.events.length === 0) refuse(folder, `no events (${EVENTS_FILE} is missing or empty)`);
  const events = withOurIds(run.events);
  return {
    dir,
    run,
    events,
    steps: stepsOf(events),
    question: null,
    lastUrl: lastUrlOf(events),
    firstUrl: firstUrlOf(events),
  };
}
