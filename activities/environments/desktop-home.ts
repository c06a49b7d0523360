// The desktop's home directory in the run store. The sandbox's home is the run's local `home/` folder; each step that
// changed it leaves an archive of it for that step, `checkpoints/home-step-<NNNN>.tar.gz` (a gzip'ed tar of its
// contents), and `checkpoints/home-latest.json` names the newest and lists every step that has one. Written with
// either store: a run forked from step N unpacks the archive of the largest step ≤ N (homeArchiveAt). With a shared
// store (S3) a desktop opening for the run first unpacks the newest, whichever worker wrote it. A run saved before
// per-step archives has one `home.tar.gz` (rewritten every step), which is still restored.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RunStore } from '../../src/trajectory/store';
import { storeIsRemote } from '../local-files';
import type { RunFiles } from '../support';

/** A run's one home archive from before per-step archives; restored when the run has no record of archives. */
export const LEGACY_HOME_ARCHIVE = 'home.tar.gz';
/** The record of the run's home archives (run-relative; the folder of the browser's page checkpoints too). */
export const HOME_ARCHIVES_RECORD = 'checkpoints/home-latest.json';

/** The archive of the home as a step left it (run-relative key). */
export const homeArchiveFile = (step: number): string =>
  `checkpoints/home-step-${String(step).padStart(4, '0')}.tar.gz`;

/** One step's home archive. */
export type HomeArchive = { step: number; file: string };

/** `checkpoints/home-latest.json`: the newest archive, and every step that has one (ascending). */
export type HomeArchives = HomeArchive & { steps: number[] };

/** The run folder's subfolder that is the sandbox's home directory. */
const HOME_DIR = 'home';

/** The run's local home folder: the sandbox's home directory. */
export function homeOf(files: RunFiles, taskId: string): string {
  return path.join(files.dir(taskId), HOME_DIR);
}

/** The home's fingerprint at its last save or restore, per run: an unchanged home is not archived again. */
const savedHomes = new Map<string, string>();

function remember(taskId: string, print: string): void {
  savedHomes.set(taskId, print);
  if (savedHomes.size > 256) savedHomes.delete(savedHomes.keys().next().value as string);
}

/**
 * Archives the home as step `step` left it, when it changed since the last save, and names it the newest. `step`
 * absent (a save whose step this worker does not know): the newest archive's step. Returns whether it wrote one.
 */
export async function saveHome(files: RunFiles, taskId: string, homeDir: string, step?: number): Promise<boolean> {
  const print = await fingerprint(homeDir);
  if (savedHomes.get(taskId) === print) return false;
  const record = await readArchives(files.store, taskId);
  const at = step ?? record?.step ?? 0;
  const file = homeArchiveFile(at);
  // Symbolic links are archived as links (never followed), so nothing outside the home is read.
  const archive = await tar(['-czf', '-', '-C', homeDir, '.']);
  // The archive before the record, so the record never names one that is not there.
  await files.store.writeAtomic(`${taskId}/${file}`, archive);
  const steps = [...new Set([...(record?.steps ?? []), at])].sort((a, b) => a - b);
  const next: HomeArchives = { step: at, file, steps };
  await files.store.writeAtomic(`${taskId}/${HOME_ARCHIVES_RECORD}`, JSON.stringify(next));
  remember(taskId, print);
  return true;
}

/**
 * Replaces the local home with the store's newest archive (or the run's old `home.tar.gz`), the truth for a run
 * whose steps may have run on other workers (a shared store only; no archive yet: the local home stays as it is).
 * Returns whether it unpacked one.
 */
export async function restoreHome(files: RunFiles, taskId: string, homeDir: string): Promise<boolean> {
  if (!storeIsRemote(files)) return false;
  const record = await readArchives(files.store, taskId);
  if (!(await unpackHome(files.store, `${taskId}/${record?.file ?? LEGACY_HOME_ARCHIVE}`, homeDir))) return false;
  remember(taskId, await fingerprint(homeDir));
  return true;
}

/** The archive of the home as step `step` left it: the one of the largest archived step ≤ `step` (none: undefined). */
export async function homeArchiveAt(store: RunStore, taskId: string, step: number): Promise<HomeArchive | undefined> {
  const record = await readArchives(store, taskId);
  const at = record?.steps.filter((s) => s <= step).at(-1);
  return at === undefined ? undefined : { step: at, file: homeArchiveFile(at) };
}

/** Replaces `homeDir` with the contents of the archive at `key` (a store key); false when there is none. */
export async function unpackHome(store: RunStore, key: string, homeDir: string): Promise<boolean> {
  const archive = await store.readBytes(key);
  if (!archive) return false;
  await fs.rm(homeDir, { recursive: true, force: true });
  await fs.mkdir(homeDir, { recursive: true, mode: 0o700 });
  // GNU tar refuses members with `..` and strips leading `/`; owners are not restored (the sandbox chowns the home).
  await tar(['-xzf', '-', '-C', homeDir, '--no-same-owner'], archive);
  return true;
}

async function readArchives(store: RunStore, taskId: string): Promise<HomeArchives | undefined> {
  const text = await store.readText(`${taskId}/${HOME_ARCHIVES_RECORD}`);
  return text === undefined ? undefined : (JSON.parse(text) as HomeArchives);
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
