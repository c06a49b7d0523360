// Where run folders live. `RunStore` is the small surface the writer and reader need; `LocalRunStore` keeps runs in
// a local directory (the default). A shared store (S3-compatible, or a shared file system) implements the same
// interface when workers run on several machines.
//
// Keys are '/'-separated paths relative to the store root, e.g. `run-1/solver_log/events.jsonl`.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

import { LockTimeoutError } from './errors';
import type { StoreFaultPolicy, StoreOpMode } from './store-faults';

export interface RunStore {
  /** Where a key lives, for messages (a file path, a URL). */
  describe(key: string): string;
  exists(key: string): Promise<boolean>;
  /** The whole object as text, or undefined when absent. */
  readText(key: string): Promise<string | undefined>;
  readBytes(key: string): Promise<Buffer | undefined>;
  /** The bytes from `offset` to the end (empty when offset ≥ size), or undefined when absent. */
  readFrom(key: string, offset: number): Promise<Buffer | undefined>;
  /** Replace the object in one step: a reader sees the old or the new content, never a mix. */
  writeAtomic(key: string, data: string | Uint8Array): Promise<void>;
  /** Write only if absent, atomically; false when the key already existed. */
  createExclusive(key: string, data: string | Uint8Array): Promise<boolean>;
  /**
   * Append `line` plus '\n' and make it durable (flushed to disk) before resolving. Whole or not at all: a failed
   * append leaves the object as it was (no part of the line behind).
   */
  appendLine(key: string, line: string): Promise<void>;
  /** Cut the object to `size` bytes (used to drop a torn last line left by a crash). */
  truncate(key: string, size: number): Promise<void>;
  /** Run `fn` while holding an exclusive lock named after `key` (across processes sharing the store). */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

export interface LocalRunStoreOptions {
  /** Give up waiting for a lock after this long (default 10 s). */
  lockTimeoutMs?: number;
  /** A lock file older than this is from a dead process and is broken (default 30 s). */
  staleLockMs?: number;
  /** Waits out a full or read-only disk (ENOSPC, EDQUOT, EROFS); absent: such a failure is thrown at once. */
  faults?: StoreFaultPolicy;
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

async function orUndefined<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * The lock file, holding our pid. Created exclusively; if the pid cannot be written (a full disk), the empty file we
 * created is removed before the error is thrown, so a failed attempt never leaves a lock that blocks every writer.
 */
async function createLockFile(lockPath: string): Promise<void> {
  const handle = await fs.open(lockPath, 'wx', FILE_MODE);
  try {
    await handle.writeFile(`${process.pid}\n`);
  } catch (error) {
    await handle.close();
    await fs.rm(lockPath, { force: true });
    throw error;
  }
  await handle.close();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Run folders hold what the model saw and the user said (screenshots, replies, page text): owner-only, whatever
 * the process umask. New directories are 0700, new files 0600.
 */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export class LocalRunStore implements RunStore {
  readonly rootDir: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly faults: StoreFaultPolicy | undefined;

  constructor(rootDir: string, options: LocalRunStoreOptions = {}) {
    this.rootDir = path.resolve(rootDir);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
    this.faults = options.faults;
  }

  describe(key: string): string {
    return this.resolve(key);
  }

  exists(key: string): Promise<boolean> {
    return this.patiently('read', async () => (await orUndefined(fs.stat(this.resolve(key)))) !== undefined);
  }

  readText(key: string): Promise<string | undefined> {
    return this.patiently('read', () => orUndefined(fs.readFile(this.resolve(key), 'utf8')));
  }

  readBytes(key: string): Promise<Buffer | undefined> {
    return this.patiently('read', () => orUndefined(fs.readFile(this.resolve(key))));
  }

  readFrom(key: string, offset: number): Promise<Buffer | undefined> {
    return this.patiently('read', () => this.readFromOnce(key, offset));
  }

  writeAtomic(key: string, data: string | Uint8Array): Promise<void> {
    return this.patiently('write', () => this.writeAtomicOnce(key, data));
  }

  createExclusive(key: string, data: string | Uint8Array): Promise<boolean> {
    return this.patiently('write', () => this.createExclusiveOnce(key, data));
  }

  appendLine(key: string, line: string): Promise<void> {
    return this.patiently('write', () => this.appendLineOnce(key, line));
  }

  truncate(key: string, size: number): Promise<void> {
    return this.patiently('write', () => this.truncateOnce(key, size));
  }

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const lockPath = `${this.resolve(key)}.lock`;
    await this.patiently('write', () => this.acquire(lockPath));
    try {
      return await fn();
    } finally {
      await fs.rm(lockPath, { force: true });
    }
  }

  /** One operation, through the fault policy when there is one (a full disk is waited out, not thrown). */
  private patiently<T>(mode: StoreOpMode, op: () => Promise<T>): Promise<T> {
    return this.faults ? this.faults.run(op, mode) : op();
  }

  private async readFromOnce(key: string, offset: number): Promise<Buffer | undefined> {
    const handle = await orUndefined(fs.open(this.resolve(key), 'r'));
    if (!handle) return undefined;
    try {
      const { size } = await handle.stat();
      const length = Math.max(0, size - offset);
      const buffer = Buffer.alloc(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(buffer, read, length - read, offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return buffer.subarray(0, read);
    } finally {
      await handle.close();
    }
  }

  private async writeAtomicOnce(key: string, data: string | Uint8Array): Promise<void> {
    const target = this.resolve(key);
    const temp = await this.writeTemp(target, data);
    try {
      await fs.rename(temp, target);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }

  private async createExclusiveOnce(key: string, data: string | Uint8Array): Promise<boolean> {
    const target = this.resolve(key);
    const temp = await this.writeTemp(target, data);
    try {
      await fs.link(temp, target); // fails with EEXIST, and never exposes a half-written file
      return true;
    } catch (error) {
      if (isCode(error, 'EEXIST')) return false;
      throw error;
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  /**
   * The line and its newline, whole or not at all. A write to a file system that fills up may take part of the line
   * and report no error (a short write: tmpfs takes what fits in the file's last page), so the bytes are written
   * until all are in, and on any failure the file is cut back to its size before, so no torn line is left behind.
   */
  private async appendLineOnce(key: string, line: string): Promise<void> {
    const target = this.resolve(key);
    await fs.mkdir(path.dirname(target), { recursive: true, mode: DIR_MODE });
    const handle = await fs.open(target, 'a', FILE_MODE);
    try {
      const { size } = await handle.stat();
      const bytes = Buffer.from(`${line}\n`);
      try {
        for (let done = 0; done < bytes.length;) {
          const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
          if (bytesWritten === 0) throw Object.assign(new Error(`no progress appending to ${target}`), { code: 'EIO' });
          done += bytesWritten;
        }
        await handle.sync();
      } catch (error) {
        await handle.truncate(size).catch(() => undefined); // shrinking needs no space; a reader repairs it if not
        throw error;
      }
    } finally {
      await handle.close();
    }
  }

  private async truncateOnce(key: string, size: number): Promise<void> {
    const handle = await fs.open(this.resolve(key), 'r+');
    try {
      await handle.truncate(size);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  private resolve(key: string): string {
    const full = path.resolve(this.rootDir, ...key.split('/'));
    if (full !== this.rootDir && !full.startsWith(this.rootDir + path.sep)) {
      throw new RangeError(`key ${JSON.stringify(key)} leaves the store root`);
    }
    return full;
  }

  /** Write a complete, flushed temp file beside `target` and return its path. */
  private async writeTemp(target: string, data: string | Uint8Array): Promise<string> {
    await fs.mkdir(path.dirname(target), { recursive: true, mode: DIR_MODE });
    const temp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      const handle = await fs.open(temp, 'wx', FILE_MODE);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
    return temp;
  }

  private async acquire(lockPath: string): Promise<void> {
    await fs.mkdir(path.dirname(lockPath), { recursive: true, mode: DIR_MODE });
    const deadline = Date.now() + this.lockTimeoutMs;
    for (let wait = 2; ; wait = Math.min(wait * 2, 20)) {
      try {
        await createLockFile(lockPath);
        return;
      } catch (error) {
        if (!isCode(error, 'EEXIST')) throw error;
      }
      const stat = await orUndefined(fs.stat(lockPath));
      if (stat && Date.now() - stat.mtimeMs > this.staleLockMs) {
        await fs.rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new LockTimeoutError(lockPath);
      await sleep(wait);
    }
  }
}
