// Files a session keeps in the worker's local run folder because a browser or a sandbox needs a real folder (the
// browser's downloads, the desktop sandbox's home directory), copied into a shared run store (S3) so another worker,
// on another machine, finds them: downloads as one object each, the home as one archive written at the end of every
// turn that changed it and unpacked when a desktop opens for the run. With the folder store the local run folder is
// the store, and nothing is copied.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { LocalRunStore } from '../src/trajectory/store';
import type { RunFiles } from './support';

/** The home archive's key in the run (a gzip'ed tar of the home's contents). */
export const HOME_ARCHIVE = 'home.tar.gz';
const DOWNLOADS_DIR = 'downloads';

/** Whether the run store is somewhere else than this worker's local run folders (then local files are copied). */
export function storeIsRemote(files: RunFiles): boolean {
  return !(files.store instanceof LocalRunStore && files.store.rootDir === path.resolve(files.runsDir));
}

/** Copies the run's local downloads that the store does not have yet (each once: a download is never rewritten). */
export async function copyDownloads(files: RunFiles, runId: string): Promise<string[]> {
  if (!storeIsRemote(files)) return [];
  const dir = path.join(files.dir(runId), DOWNLOADS_DIR);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const copied: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fs.lstat(file).catch(() => null);
    if (!stat?.isFile()) continue; // partial downloads are removed when cancelled; nothing else lives here
    if (await files.store.createExclusive(`${runId}/${DOWNLOADS_DIR}/${name}`, await fs.readFile(file))) {
      copied.push(name);
    }
  }
  return copied;
}

/** What a folder holds (names, sizes, times, modes): a change of any file changes it. */
async function fingerprint(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = path.join(rel, e.name);
      const s = await fs.lstat(path.join(dir, r)).catch(() => null);
      if (!s) continue;
      hash.update(`${r}\0${s.size}\0${s.mtimeMs}\0${s.mode}\n`);
      if (s.isDirectory()) await walk(r);
    }
  };
  await walk('.');
  return hash.digest('hex');
}

function tar(args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`tar ${args[0]} failed (${code}): ${err.trim()}`)),
    );
    child.stdin.end(input);
  });
}

/** The home's fingerprint at its last save, per run: an unchanged home is not archived again. */
const savedHomes = new Map<string, string>();

/** Archives the home into the store when it changed since the last save (a remote store only). */
export async function saveHome(files: RunFiles, runId: string, homeDir: string): Promise<boolean> {
  if (!storeIsRemote(files)) return false;
  const print = await fingerprint(homeDir);
  if (savedHomes.get(runId) === print) return false;
  // Symbolic links are archived as links (never followed), so nothing outside the home is read.
  const archive = await tar(['-czf', '-', '-C', homeDir, '.']);
  await files.store.writeAtomic(`${runId}/${HOME_ARCHIVE}`, archive);
  savedHomes.set(runId, print);
  if (savedHomes.size > 256) savedHomes.delete(savedHomes.keys().next().value as string);
  return true;
}

/**
 * Replaces the local home with the store's archive, the truth for a run whose turns may have run on other workers (a
 * remote store only; no archive yet: the local home stays as it is). Returns whether it unpacked one.
 */
export async function restoreHome(files: RunFiles, runId: string, homeDir: string): Promise<boolean> {
  if (!storeIsRemote(files)) return false;
  const archive = await files.store.readBytes(`${runId}/${HOME_ARCHIVE}`);
  if (!archive) return false;
  await fs.rm(homeDir, { recursive: true, force: true });
  await fs.mkdir(homeDir, { recursive: true, mode: 0o700 });
  // GNU tar refuses members with `..` and strips leading `/`; owners are not restored (the sandbox chowns the home).
  await tar(['-xzf', '-', '-C', homeDir, '--no-same-owner'], archive);
  savedHomes.set(runId, await fingerprint(homeDir));
  return true;
}
