// Files a session keeps in the worker's local run folder because a browser or a sandbox needs a real folder (the
// browser's downloads, the desktop sandbox's home directory), copied into a shared run store (S3) so another worker,
// on another machine, finds them. Here the downloads, one object each (the home goes as archives of the steps that
// changed it: environments/desktop-home.ts). With the folder store the local run folder is the store: nothing copied.
import fs from 'node:fs/promises';
import path from 'node:path';
import { LocalRunStore } from '../src/trajectory/store';
import type { RunFiles } from './support';

const DOWNLOADS_DIR = 'downloads';

/** Whether the run store is somewhere else than this worker's local run folders (then local files are copied). */
export function storeIsRemote(files: RunFiles): boolean {
  return !(files.store instanceof LocalRunStore && files.store.rootDir === path.resolve(files.runsDir));
}

/** Copies the run's local downloads that the store does not have yet (each once: a download is never rewritten). */
export async function copyDownloads(files: RunFiles, taskId: string): Promise<string[]> {
  if (!storeIsRemote(files)) return [];
  const dir = path.join(files.dir(taskId), DOWNLOADS_DIR);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const copied: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fs.lstat(file).catch(() => null);
    if (!stat?.isFile()) continue; // partial downloads are removed when cancelled; nothing else lives here
    if (await files.store.createExclusive(`${taskId}/${DOWNLOADS_DIR}/${name}`, await fs.readFile(file))) {
      copied.push(name);
    }
  }
  return copied;
}
