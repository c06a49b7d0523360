// Where a task set is read from: a file this process can read, or an object in the run store named `store:KEY`
// (e.g. `store:evalsets/web.jsonl`: under `runsDir` with the folder store, under the bucket's prefix with S3), so
// workers on several machines read the same set. The same form names WebVoyager's answers file. Used by the eval
// command (client side, to check the set before it starts) and the eval activities (worker side, to read it).
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../infra/paths';
import type { RunStore } from '../trajectory/store';
import { parseTaskSet, TaskSetError } from './task-set';
import type { EvalTask, SourceText, TaskSetFormat } from './task-set';

export const STORE_SOURCE_PREFIX = 'store:';

/** The run-store key of a `store:KEY` source, or null for a file path; a key that leaves the store is refused. */
export function storeKeyOf(source: string): string | null {
  if (!source.startsWith(STORE_SOURCE_PREFIX)) return null;
  const key = source.slice(STORE_SOURCE_PREFIX.length);
  if (!key || key.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new TaskSetError(`${source}: a store key is a relative path like store:evalsets/web.jsonl`);
  }
  return key;
}

/** The store is opened only when a source names it (a file-only command needs no store keys). */
export type StoreOpener = () => RunStore;

/**
 * The folders a worker reads local task sets from (`within`), or null where any readable file may be named (the eval
 * command reading its user's own file). A worker is told paths by whoever starts an evaluation, so outside these it
 * reads nothing: not the file, not even whether it exists; a symbolic link out of them is refused too.
 */
export type LocalFolders = readonly string[] | null;

/** The folders a worker reads local task sets from: the project's own eval/tasks, and those its config adds. */
export function workerTaskSetFolders(extra: readonly string[]): string[] {
  return [path.join(PROJECT_ROOT, 'eval', 'tasks'), ...extra.map((d) => path.resolve(d))];
}

/** Whether the (absolute, resolved) path `file` is one of `dirs` or inside one of them. */
export function isInside(file: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`));
}

async function assertWithin(source: string, within: readonly string[], what: string): Promise<void> {
  const refuse = () =>
    new TaskSetError(
      `the ${what} ${source} is not in a folder this worker reads task sets from (${within.join(', ') || 'none'}): ` +
        "give it as store:KEY, or add its folder to the worker's evaluation.taskSetDirs",
    );
  const dirs = within.map((d) => path.resolve(d));
  if (!path.isAbsolute(source) || !isInside(path.resolve(source), dirs)) throw refuse();
  let real: string;
  try {
    real = await fs.promises.realpath(source);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new TaskSetError(`cannot read the ${what} ${source}: ${code}`);
  }
  const realDirs = await Promise.all(dirs.map((d) => fs.promises.realpath(d).catch(() => d)));
  if (!isInside(real, realDirs)) throw refuse();
}

/** A source's text: a file read from disk, or an object read from the run store; absent is a one-line TaskSetError. */
export async function readSource(
  source: string,
  openStore: StoreOpener,
  what: 'task set' | 'reference answers',
  within: LocalFolders = null,
): Promise<SourceText> {
  const key = storeKeyOf(source);
  if (key === null) {
    if (within !== null) await assertWithin(source, within, what);
    try {
      return { name: path.basename(source), where: source, text: await fs.promises.readFile(source, 'utf8') };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new TaskSetError(`cannot read the ${what} ${source}: ${code}`);
    }
  }
  const store = openStore();
  const text = await store.readText(key);
  if (text === undefined) {
    throw new TaskSetError(`${what} ${source}: no such object in the run store (${store.describe(key)})`);
  }
  return { name: path.posix.basename(key), where: source, text };
}

/** What names a task set: its source, format, and WebVoyager's answers (a file path or `store:KEY` each). */
export interface TaskSetSource {
  path: string;
  format?: TaskSetFormat;
  answers?: string;
}

/** The texts of a task set and its answers (read, not parsed: a caller may tell by them whether it changed). */
export async function readTaskSetSources(
  ref: TaskSetSource,
  openStore: StoreOpener,
  within: LocalFolders = null,
): Promise<{ set: SourceText; answers?: SourceText }> {
  const set = await readSource(ref.path, openStore, 'task set', within);
  if (!ref.answers) return { set };
  return { set, answers: await readSource(ref.answers, openStore, 'reference answers', within) };
}

/** Reads and parses a task set from a file or the run store (unfiltered). */
export async function loadTaskSetFrom(ref: TaskSetSource, openStore: StoreOpener): Promise<EvalTask[]> {
  const { set, answers } = await readTaskSetSources(ref, openStore);
  return parseTaskSet(set, { format: ref.format, ...(answers ? { answers } : {}) });
}
