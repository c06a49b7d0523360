// A RunStore in an S3-compatible bucket (AWS S3, MinIO, `rclone serve s3`), so workers on several machines share
// run folders. Every run file is an object under `<prefix>/<taskId>/…`, with one exception: an append-only `.jsonl`
// file (events, verification results) is a folder of objects, one per line, which S3 can do without read-modify-write:
//
//   <prefix>/<taskId>/solver_log/events/000000007-step-0003-post-g0.json   one event (the line, no '\n')
//   <prefix>/<taskId>/solver_log/events.seq/000000007                      the claim on sequence 7 (body: the id)
//
// Order: event ids do not sort in stream order (within a step action < post < pre; `user-…` after every `step-…`),
// so each line carries a per-log sequence in its key, zero-padded so a listing returns the stream in order; readers
// rebuild `events.jsonl` by listing and concatenating. Idempotence: every put is conditional (`If-None-Match: *`), so
// the SDK's own retry of a put whose answer was lost is a 412, read as "already written". Sequence: an appender
// lists what is there, takes the next number and claims it with a conditional put on its claim key; a 412 means
// another writer holds that number (unless the claim carries our own id: an earlier attempt of ours that died before
// writing the line), so it tries the next. Two attempts of one activity racing therefore never share a number, and
// an id already listed is not written again. The writer appends under `withLock` (a conditional-put lock object), so
// numbers are used in order; the claims keep that true even when a stale lock was broken.
//
// The local cache: a line object never changes once written, so a store instance keeps each log's listing position
// and lines in memory; a read lists only what came after its last look (one request) and fetches only new lines.
import { createHash, randomBytes } from 'node:crypto';

import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';

import { LockTimeoutError, RunStoreUnavailableError } from './errors';
import type { RunStore } from './store';
import { classifyStoreFault } from './store-faults';
import type { StoreFaultPolicy, StoreOpMode } from './store-faults';

export interface S3RunStoreOptions {
  bucket: string;
  /** Keys start with `<prefix>/`; '' for the bucket's root. */
  prefix?: string;
  /** Absent: AWS S3. */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** `endpoint/bucket/key` URLs (MinIO, rclone); default true. */
  forcePathStyle?: boolean;
  /** Give up waiting for a lock after this long (default 10 s). */
  lockTimeoutMs?: number;
  /** A lock object older than this is from a dead process and is broken (default 30 s). */
  staleLockMs?: number;
  /** Logs (runs' `.jsonl` files) whose lines stay cached in memory (default 64; least recently used go first). */
  cachedLogs?: number;
  /**
   * Waits out an endpoint that refuses connections, times out or answers 5xx (each request on its own, so a put that
   * failed is put again, never the operation around it); absent: such a failure is thrown at once.
   */
  faults?: StoreFaultPolicy;
}

/** One cached log: its lines in stream order and where the listing stopped. */
interface LogCache {
  lines: { seq: number; name: string; body: Buffer }[];
  names: Set<string>;
  lastKey: string | undefined;
  maxSeq: number;
}

const SEQ_DIGITS = 9;
const SAFE_NAME = /^[A-Za-z0-9._-]{1,96}$/;
const LINE_KEY = /^(\d{9})-(.+)\.json$/;
const isLog = (key: string) => key.endsWith('.jsonl');
const pad = (seq: number) => String(seq).padStart(SEQ_DIGITS, '0');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A line's name in its key: its event id when it has a key-safe one, else a hash of the line (same line, same key). */
function lineName(line: string): string {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value === 'object' && value !== null && 'id' in value) {
      const id = value.id;
      if (typeof id === 'string' && SAFE_NAME.test(id)) return id;
    }
  } catch {
    // not JSON: named by its hash like any line without a usable id
  }
  return `h${createHash('sha256').update(line).digest('hex').slice(0, 24)}`;
}

interface S3ErrorShape {
  name?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

function errorShape(error: unknown): S3ErrorShape {
  return typeof error === 'object' && error !== null ? (error as S3ErrorShape) : {};
}

const statusOf = (error: unknown) => errorShape(error).$metadata?.httpStatusCode;
const isMissing = (error: unknown) =>
  statusOf(error) === 404 || ['NoSuchKey', 'NotFound'].includes(errorShape(error).name ?? '');
const isPreconditionFailed = (error: unknown) =>
  statusOf(error) === 412 || errorShape(error).name === 'PreconditionFailed';
/** A conditional write that met another one in flight on the same key (S3 answers 409): try again. */
const isConflict = (error: unknown) => statusOf(error) === 409;

export class S3RunStore implements RunStore {
  readonly bucket: string;
  readonly prefix: string;
  private readonly client: S3Client;
  private readonly where: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly cachedLogs: number;
  private readonly logs = new Map<string, LogCache>();
  private readonly faults: StoreFaultPolicy | undefined;

  constructor(options: S3RunStoreOptions) {
    // The pinned SDK supports the Node 20 this project still runs on; its notice about later SDK releases would
    // otherwise land in every CLI command's output. An explicit setting wins.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.bucket = options.bucket;
    this.prefix = options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
    this.where = options.endpoint ?? `AWS S3 (${options.region ?? 'us-east-1'})`;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
    this.cachedLogs = options.cachedLogs ?? 64;
    this.faults = options.faults;
    this.client = new S3Client({
      region: options.region ?? 'us-east-1',
      forcePathStyle: options.forcePathStyle ?? true,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Checksums only where S3 requires them: S3-compatible servers differ in the newer checksum headers they accept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
    });
  }

  /** Fail early, with a one-line reason, when the bucket cannot be used (unreachable, missing, credentials refused). */
  async check(): Promise<void> {
    try {
      await this.send((c) => c.send(new HeadBucketCommand({ Bucket: this.bucket })));
    } catch (error) {
      throw isMissing(error) ? this.noBucket(error) : error; // HEAD answers a bare 404, without NoSuchBucket
    }
  }

  /** Close the client's connections (a CLI command that is done with the store). */
  close(): void {
    this.client.destroy();
  }

  describe(key: string): string {
    return `s3://${this.bucket}/${this.prefix}${key}`;
  }

  async exists(key: string): Promise<boolean> {
    // A `.jsonl` with no line objects may still be a whole object put there by hand (e.g. an evaluation's task set).
    if (isLog(key) && (await this.refreshLog(key)).lines.length > 0) return true;
    try {
      await this.send((c) => c.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.full(key) })));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async readText(key: string): Promise<string | undefined> {
    return (await this.readBytes(key))?.toString('utf8');
  }

  async readBytes(key: string): Promise<Buffer | undefined> {
    if (!isLog(key)) return this.getObject(this.full(key));
    const log = await this.refreshLog(key);
    if (log.lines.length === 0) return this.getObject(this.full(key)); // a whole `.jsonl` object, put there by hand
    return Buffer.concat(log.lines.flatMap((line) => [line.body, Buffer.from('\n')]));
  }

  async readFrom(key: string, offset: number): Promise<Buffer | undefined> {
    const bytes = await this.readBytes(key);
    return bytes?.subarray(Math.min(offset, bytes.length));
  }

  async writeAtomic(key: string, data: string | Uint8Array): Promise<void> {
    await this.send(
      (c) => c.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.full(key), Body: data })),
      'write',
    );
  }

  createExclusive(key: string, data: string | Uint8Array): Promise<boolean> {
    return this.putIfAbsent(this.full(key), data);
  }

  async appendLine(key: string, line: string): Promise<void> {
    if (!isLog(key)) {
      // Not a log (e.g. a `.torn` note): a plain object, read and rewritten.
      const before = (await this.readBytes(key)) ?? Buffer.alloc(0);
      await this.writeAtomic(key, Buffer.concat([before, Buffer.from(`${line}\n`)]));
      return;
    }
    // Each line is a whole object: there is never a torn tail whose newline needs completing.
    if (line === '') return;
    const name = lineName(line);
    const log = await this.refreshLog(key);
    if (log.names.has(name)) return; // written before (a retry): nothing to do
    const seq = await this.claimSequence(key, log.maxSeq + 1, name);
    const lineKey = `${this.logPrefix(key)}${pad(seq)}-${name}.json`;
    await this.putIfAbsent(lineKey, line); // false: this very line, written by an earlier attempt
    // Not added to the cache here: the next listing picks it up in its place, after any lines numbered before it.
  }

  async truncate(key: string, size: number): Promise<void> {
    if (isLog(key)) throw new RangeError(`${this.describe(key)} is kept one object per line: it has no torn tail`);
    const bytes = (await this.readBytes(key)) ?? Buffer.alloc(0);
    await this.writeAtomic(key, bytes.subarray(0, size));
  }

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const lockKey = this.full(`${key}.lock`);
    await this.acquire(lockKey);
    try {
      return await fn();
    } finally {
      await this.send((c) => c.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: lockKey })), 'write');
    }
  }

  private full(key: string): string {
    if (key.split('/').some((part) => part === '' || part === '.' || part === '..')) {
      throw new RangeError(`key ${JSON.stringify(key)} leaves the store root`);
    }
    return `${this.prefix}${key}`;
  }

  /** `run/solver_log/events.jsonl` → `<prefix>run/solver_log/events/` (its lines) and `…/events.seq/` (claims). */
  private logPrefix(key: string): string {
    return `${this.full(key).slice(0, -'.jsonl'.length)}/`;
  }

  private claimKey(key: string, seq: number): string {
    return `${this.full(key).slice(0, -'.jsonl'.length)}.seq/${pad(seq)}`;
  }

  /** The first free sequence number from `from` on, claimed for `name` (or already claimed by it). */
  private async claimSequence(key: string, from: number, name: string): Promise<number> {
    for (let seq = from; ; seq++) {
      const claim = this.claimKey(key, seq);
      if (await this.putIfAbsent(claim, name)) return seq;
      if ((await this.getObject(claim))?.toString('utf8') === name) return seq;
    }
  }

  /** The log's cache brought up to date with one listing of what came after its last look. */
  private async refreshLog(key: string): Promise<LogCache> {
    const cacheKey = this.full(key);
    const log = this.logs.get(cacheKey) ?? { lines: [], names: new Set<string>(), lastKey: undefined, maxSeq: 0 };
    this.logs.delete(cacheKey); // most recently used goes last
    this.logs.set(cacheKey, log);
    if (this.logs.size > this.cachedLogs) this.logs.delete(this.logs.keys().next().value as string);
    const prefix = this.logPrefix(key);
    const fresh: { key: string; seq: number; name: string }[] = [];
    let token: string | undefined;
    do {
      const after = token ? { ContinuationToken: token } : log.lastKey ? { StartAfter: log.lastKey } : {};
      const page = await this.send((c) =>
        c.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...after })),
      );
      for (const { Key } of page.Contents ?? []) {
        const match = Key ? LINE_KEY.exec(Key.slice(prefix.length)) : null;
        if (Key && match?.[1] && match[2]) fresh.push({ key: Key, seq: Number(match[1]), name: match[2] });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const bodies = await Promise.all(fresh.map((item) => this.getObject(item.key)));
    fresh.forEach((item, i) => {
      const body = bodies[i];
      if (body === undefined || log.names.has(item.name)) return; // a duplicate id keeps its first place
      log.lines.push({ seq: item.seq, name: item.name, body });
      log.names.add(item.name);
      log.maxSeq = Math.max(log.maxSeq, item.seq);
    });
    const last = fresh.at(-1);
    if (last) log.lastKey = last.key;
    return log;
  }

  private async getObject(fullKey: string): Promise<Buffer | undefined> {
    try {
      const result = await this.send((c) => c.send(new GetObjectCommand({ Bucket: this.bucket, Key: fullKey })));
      return result.Body ? Buffer.from(await result.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** A conditional put (`If-None-Match: *`): false when the key already existed. */
  private async putIfAbsent(fullKey: string, data: string | Uint8Array): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.send(
          (c) => c.send(new PutObjectCommand({ Bucket: this.bucket, Key: fullKey, Body: data, IfNoneMatch: '*' })),
          'write',
        );
        return true;
      } catch (error) {
        if (isPreconditionFailed(error)) return false;
        if (!isConflict(error) || attempt >= 5) throw error;
        await sleep(10 * 2 ** attempt);
      }
    }
  }

  /**
   * Takes the lock object. Its body is ours alone (pid and a random token), and a single put's ETag is its body's
   * MD5 (AWS without KMS, MinIO, rclone), so a put of ours whose answer was lost (the endpoint went down mid-request,
   * and the retry met a 412) is known as our own lock rather than waited on as another's until it goes stale.
   */
  private async acquire(lockKey: string): Promise<void> {
    const ours = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
    const ourTag = createHash('md5').update(ours).digest('hex');
    const deadline = Date.now() + this.lockTimeoutMs;
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (await this.putIfAbsent(lockKey, ours)) return;
      const held = await this.send((c) => c.send(new HeadObjectCommand({ Bucket: this.bucket, Key: lockKey }))).catch(
        (error) => {
          if (isMissing(error)) return undefined; // released meanwhile: try again at once
          throw error;
        },
      );
      if (!held) continue;
      if (held.ETag?.replace(/"/g, '') === ourTag) return;
      const age = Date.now() - (held.LastModified?.getTime() ?? Date.now());
      if (age > this.staleLockMs) {
        await this.send((c) => c.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: lockKey })), 'write');
        continue;
      }
      if (Date.now() > deadline) throw new LockTimeoutError(`s3://${this.bucket}/${lockKey}`);
      await sleep(wait);
    }
  }

  /**
   * One request, with the store-level failures (unreachable, no bucket, credentials) as one-line errors; through the
   * fault policy when there is one, so an endpoint that is down or overloaded is waited out request by request.
   */
  private send<T>(request: (client: S3Client) => Promise<T>, mode: StoreOpMode = 'read'): Promise<T> {
    const once = async () => {
      try {
        return await request(this.client);
      } catch (error) {
        throw this.explain(error);
      }
    };
    return this.faults ? this.faults.run(once, mode) : once();
  }

  private noBucket(error: unknown): RunStoreUnavailableError {
    return new RunStoreUnavailableError(`S3 run store ${this.where}: bucket "${this.bucket}" does not exist`, {
      kind: 'refused',
      cause: error,
    });
  }

  private explain(error: unknown): unknown {
    const { name } = errorShape(error);
    const status = statusOf(error);
    const here = `S3 run store ${this.where}`;
    if (name === 'NoSuchBucket') return this.noBucket(error);
    if (
      status === 403 ||
      ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'CredentialsProviderError'].includes(name ?? '')
    ) {
      const why = name && name !== 'Unknown' ? name : `HTTP ${status}`; // a HEAD's refusal has no body to name it
      return new RunStoreUnavailableError(`${here}: credentials refused for bucket "${this.bucket}" (${why})`, {
        kind: 'refused',
        cause: error,
      });
    }
    // The environment's faults (src/trajectory/store-faults.ts): the network, timeouts, 5xx, a full server.
    const fault = classifyStoreFault(error);
    if (!fault) return error;
    const network = fault.code ?? (name === 'TimeoutError' ? name : undefined);
    const what = network ? `cannot reach it (${network})` : fault.reason;
    return new RunStoreUnavailableError(`${here}: ${what}`, { kind: fault.kind, cause: error });
  }
}
