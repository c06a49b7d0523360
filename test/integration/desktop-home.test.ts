// The desktop's home archives (activities/environments/desktop-home.ts), with real tar on real folders: each save
// that finds the home changed keeps an archive for its step, in the folder store too; the record names the newest;
// the archive for step N is the one of the largest archived step ≤ N and unpacks to that step's files. A shared
// store (here a folder that is not the worker's runs folder) is unpacked on open, newest first; a run saved before
// per-step archives restores its one home.tar.gz.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HOME_ARCHIVES_RECORD,
  LEGACY_HOME_ARCHIVE,
  homeArchiveAt,
  homeArchiveFile,
  restoreHome,
  saveHome,
  unpackHome,
} from '../../activities/environments/desktop-home';
import { RunFiles } from '../../activities/support';
import { LocalRunStore } from '../../src/trajectory/store';

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-home-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The files below a folder, relative, sorted, with their text. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, rel);
    if (fs.lstatSync(file).isFile()) out[rel] = fs.readFileSync(file, 'utf8');
  }
  return out;
}

/** Writes files into the home; `null` removes one. */
function change(home: string, files: Record<string, string | null>): void {
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(home, name);
    if (text === null) fs.rmSync(file);
    else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    }
  }
}

describe('home archives per step, in the folder store', () => {
  const taskId = 'run-steps';
  let files: RunFiles;
  let home: string;

  beforeAll(async () => {
    files = new RunFiles(path.join(tmp, 'runs'));
    home = path.join(files.dir(taskId), 'home');
    fs.mkdirSync(home, { recursive: true });
    // Steps 1, 3 and 4 change the home; step 2 does not (no archive for it).
    change(home, { 'a.txt': 'one' });
    expect(await saveHome(files, taskId, home, 1)).toBe(true);
    expect(await saveHome(files, taskId, home, 2)).toBe(false);
    change(home, { 'b/c.txt': 'three', 'a.txt': null });
    expect(await saveHome(files, taskId, home, 3)).toBe(true);
    change(home, { 'a.txt': 'four' });
    expect(await saveHome(files, taskId, home, 4)).toBe(true);
  });

  it('keeps an archive for each step that changed the home, and a record naming the newest', () => {
    const checkpoints = fs.readdirSync(path.join(files.dir(taskId), 'checkpoints')).sort();
    expect(checkpoints).toEqual([
      'home-latest.json',
      'home-step-0001.tar.gz',
      'home-step-0003.tar.gz',
      'home-step-0004.tar.gz',
    ]);
    const record: unknown = JSON.parse(fs.readFileSync(path.join(files.dir(taskId), HOME_ARCHIVES_RECORD), 'utf8'));
    expect(record).toEqual({ step: 4, file: 'checkpoints/home-step-0004.tar.gz', steps: [1, 3, 4] });
  });

  it.each([
    [0, undefined, undefined],
    [1, 1, { 'a.txt': 'one' }],
    [2, 1, { 'a.txt': 'one' }],
    [3, 3, { 'b/c.txt': 'three' }],
    [4, 4, { 'a.txt': 'four', 'b/c.txt': 'three' }],
    [9, 4, { 'a.txt': 'four', 'b/c.txt': 'three' }],
  ])('step %i: the archive of step %s, with that step’s files', async (step, archived, expected) => {
    const found = await homeArchiveAt(files.store, taskId, step);
    expect(found?.step).toBe(archived);
    if (!found) return;
    expect(found.file).toBe(homeArchiveFile(found.step));
    const into = path.join(tmp, `fork-${step}`);
    expect(await unpackHome(files.store, `${taskId}/${found.file}`, into)).toBe(true);
    expect(contents(into)).toEqual(expected);
  });

  it('a run without archives has none for any step; the folder store is never unpacked on open', async () => {
    expect(await homeArchiveAt(files.store, 'run-none', 5)).toBeUndefined();
    expect(await restoreHome(files, taskId, home)).toBe(false);
  });
});

describe('home archives with a shared store', () => {
  it('a desktop opening on another machine unpacks the newest archive over its stale home', async () => {
    const shared = new LocalRunStore(path.join(tmp, 'shared'));
    const machineA = new RunFiles(path.join(tmp, 'machine-a'), shared);
    const machineB = new RunFiles(path.join(tmp, 'machine-b'), shared);
    const homeA = path.join(machineA.dir('run-s'), 'home');
    change(homeA, { 'notes.txt': 'first' });
    expect(await saveHome(machineA, 'run-s', homeA, 1)).toBe(true);
    change(homeA, { 'notes.txt': 'second' });
    expect(await saveHome(machineA, 'run-s', homeA, 2)).toBe(true);

    const homeB = path.join(machineB.dir('run-s'), 'home');
    change(homeB, { 'stale.txt': 'old' });
    expect(await restoreHome(machineB, 'run-s', homeB)).toBe(true);
    expect(contents(homeB)).toEqual({ 'notes.txt': 'second' });
    // Unchanged since the restore: not archived again.
    expect(await saveHome(machineB, 'run-s', homeB, 3)).toBe(false);
  });

  it('a run saved before per-step archives restores its one home.tar.gz', async () => {
    const shared = new LocalRunStore(path.join(tmp, 'shared-old'));
    const writer = new RunFiles(path.join(tmp, 'old-writer'), shared);
    const home = path.join(writer.dir('run-old'), 'home');
    change(home, { 'kept.txt': 'from before' });
    // What an older worker wrote: the same archive under the run's one old name, and no record.
    expect(await saveHome(writer, 'run-old', home, 1)).toBe(true);
    fs.renameSync(
      path.join(tmp, 'shared-old', 'run-old', homeArchiveFile(1)),
      path.join(tmp, 'shared-old', 'run-old', LEGACY_HOME_ARCHIVE),
    );
    fs.rmSync(path.join(tmp, 'shared-old', 'run-old', HOME_ARCHIVES_RECORD));

    const reader = new RunFiles(path.join(tmp, 'old-reader'), shared);
    const homeB = path.join(reader.dir('run-old'), 'home');
    expect(await restoreHome(reader, 'run-old', homeB)).toBe(true);
    expect(contents(homeB)).toEqual({ 'kept.txt': 'from before' });
    expect(await homeArchiveAt(shared, 'run-old', 1)).toBeUndefined(); // no step is known of it
    expect(await restoreHome(reader, 'run-none', homeB)).toBe(false);
  });
});
