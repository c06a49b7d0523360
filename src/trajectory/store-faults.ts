// Store faults, classified in one place, and the patient way through them. A run store fails for two kinds of
// reasons: the environment (a disk that filled up, a quota, a file system remounted read-only, an S3 endpoint that
// refuses connections, times out or answers 5xx), which an operator can fix while the task waits, and everything
// else (a missing run, access denied, a bug), which no amount of waiting fixes. `classifyStoreFault` tells them
// apart; `StoreFaultPolicy` retries an operation through a fault with backoff (1 s doubling to 30 s) until the
// worker's limit (config store.faultWaitMinutes), logging one line when the store becomes unusable, one a minute
// while it stays so (per store, not per retry or per waiting task) and one when it is back, and telling its hooks
// (the activities: heartbeat details, cancellation, the time their activity has left) what it waits for.
import { sleep } from '../common/sleep';
import { RunStoreUnavailableError } from './errors';
import { storeFaultLine } from './store-wait';
import type { StoreFaultKind, StoreWait } from './store-wait';

export interface StoreFault {
  kind: StoreFaultKind;
  /** One line: what failed, as the file system or the endpoint said it. */
  reason: string;
  /** The errno-style code it was known by (ENOSPC, ECONNREFUSED …), when it had one. */
  code?: string;
}

/** Errno codes of a store's environment: a full disk or quota, a read-only file system, a network in trouble. */
const ERRNO_FAULTS: Readonly<Record<string, StoreFaultKind>> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EROFS: 'read_only',
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'unreachable',
  ECONNABORTED: 'unreachable',
  ETIMEDOUT: 'unreachable',
  EPIPE: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENETDOWN: 'unreachable',
  EAI_AGAIN: 'unreachable',
  // DNS has no answer for the endpoint's host: a resolver outage mid-task (a misspelt host fails the same way; after
  // the wait the task ends with this line, which names it).
  ENOTFOUND: 'unreachable',
};

/** S3 error names that are the store's capacity or its availability (the SDK's own timeouts included). */
const NAMED_FAULTS: Readonly<Record<string, StoreFaultKind>> = {
  XMinioStorageFull: 'full',
  TimeoutError: 'unreachable',
  RequestTimeout: 'unreachable',
  SlowDown: 'unreachable',
  ServiceUnavailable: 'unreachable',
  InternalError: 'unreachable',
};

interface ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

const shapeOf = (error: unknown): ErrorShape => (typeof error === 'object' && error !== null ? error : {});
const firstLine = (text: string) => text.split('\n')[0]?.trim() ?? '';
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The errno-style codes of an error, its cause and (a connection tried on several addresses) its AggregateError's. */
function codesOf(error: unknown): string[] {
  const e = shapeOf(error);
  const inner = [e.cause, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])];
  return [str(e.code), ...inner.map((x) => str(shapeOf(x).code))].filter((c): c is string => c !== undefined);
}

/**
 * Whether a store operation's failure is the environment's, to be waited out, and which: null for everything else.
 * Not faults, on purpose: ENOENT (a run that is not there stays not there), EACCES/EPERM and an S3 403 (permissions
 * and credentials are the configuration's: the worker reads its keys once, so only a restart with the right ones
 * helps), a 404 NoSuchBucket (a deleted bucket does not come back by itself), other 4xx (a request we got wrong),
 * EIO (a failing disk), and a RunStoreUnavailableError that already waited and gave up.
 */
export function classifyStoreFault(error: unknown): StoreFault | null {
  if (error instanceof RunStoreUnavailableError) {
    if (error.waitedMs !== undefined || error.kind === 'refused') return null;
    return { kind: error.kind, reason: firstLine(error.message) };
  }
  const e = shapeOf(error);
  const message = firstLine(str(e.message) ?? String(error));
  for (const code of codesOf(error)) {
    const kind = ERRNO_FAULTS[code];
    if (kind) return { kind, code, reason: message.includes(code) ? message : `${message} (${code})` };
  }
  const name = str(e.name) ?? '';
  const status = e.$metadata?.httpStatusCode;
  const http = typeof status === 'number' ? `HTTP ${status}${name && name !== 'Unknown' ? ` ${name}` : ''}` : name;
  const named = NAMED_FAULTS[name];
  if (named) return { kind: named, reason: message && message !== name ? `${http}: ${message}` : http };
  if (typeof status !== 'number') return null;
  if (status === 507) return { kind: 'full', reason: `${http}: ${message}` };
  if (status >= 500 || status === 429) return { kind: 'unreachable', reason: `${http}: ${message}` };
  return null;
}

/** The pause before retry `n` (0 first): 1 s doubling to 30 s, by default. */
export function storeBackoffMs(n: number, initialMs = 1000, maxMs = 30_000): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(n, 30));
}

/** A duration for people: "45 s", "12 min", "1 h 30 min". */
export function humanDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ''}`;
}

/** What the activities tell the policy about the call under way (all optional: a plain process has none). */
export interface StoreWaitHooks {
  /** The most this call may wait (ms), given the configured limit: an activity clamps it to the time it has left. */
  limitMs?(configuredMs: number): number;
  /** Stops the wait (its activity was cancelled); the call then fails with the signal's reason. */
  signal?(): AbortSignal | undefined;
  /** Called at each retry while the call waits, and with null once it went through or gave up. */
  onWait?(wait: StoreWait | null): void;
}

export interface StoreFaultPolicyOptions {
  /** The store, in log lines: "/srv/cua/runs", "S3 http://minio:9000 bucket cua-runs". */
  where: string;
  /** How long a call waits for the store to come back (config store.faultWaitMinutes); 0: not at all. */
  limitMs: number;
  log?: (line: string) => void;
  hooks?: StoreWaitHooks;
  /** Backoff between retries (default 1 s doubling to 30 s); tests shorten it. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** A clock and a pause (tests pass fakes). */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Whether an operation writes (a full or read-only store is back only when a write goes through). */
export type StoreOpMode = 'read' | 'write';

/** One stretch of time in which the store kept failing. */
interface Outage {
  kind: StoreFaultKind;
  reason: string;
  since: number;
  lastFailureAt: number;
  loggedAt: number;
}

const LOG_EVERY_MS = 60_000;

/**
 * Runs store operations through faults. One per store instance (a worker has one): its outage is shared by every
 * call, so the log says once a minute that the store is still full, however many tasks wait on it, and a call that
 * starts while the store has been down for longer than the limit gives up at once (a task that already waited out
 * the limit does not wait again to record its end). An outage no call has met for a minute is over; the next fault
 * starts a new one.
 */
export class StoreFaultPolicy {
  readonly where: string;
  readonly limitMs: number;
  private outage: Outage | undefined;
  private readonly now: () => number;
  private readonly pause: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: StoreFaultPolicyOptions) {
    this.where = options.where;
    this.limitMs = Math.max(0, options.limitMs);
    this.now = options.now ?? Date.now;
    this.pause = options.sleep ?? sleep;
  }

  /** `op` until it succeeds, fails with something that is no store fault, or the store stayed unusable too long. */
  async run<T>(op: () => Promise<T>, mode: StoreOpMode = 'write'): Promise<T> {
    const hooks = this.options.hooks;
    let waiting = false;
    for (let retry = 0; ; retry++) {
      let fault: StoreFault | null;
      try {
        const result = await op();
        if (waiting) hooks?.onWait?.(null);
        this.succeeded(mode);
        return result;
      } catch (error) {
        fault = classifyStoreFault(error);
        if (!fault) {
          if (waiting) hooks?.onWait?.(null);
          throw error;
        }
        const outage = this.failed(fault);
        const limit = Math.min(this.limitMs, hooks?.limitMs?.(this.limitMs) ?? this.limitMs);
        const waited = this.now() - outage.since;
        if (waited >= limit) {
          if (waiting) hooks?.onWait?.(null);
          throw this.gaveUp(fault, waited, limit, error);
        }
        hooks?.onWait?.({
          kind: fault.kind,
          since: new Date(outage.since).toISOString(),
          until: new Date(outage.since + limit).toISOString(),
          lastError: fault.reason,
        });
        waiting = true;
        const signal = hooks?.signal?.();
        await this.pause(Math.min(this.delay(retry), limit - waited), signal);
        if (signal?.aborted) {
          hooks?.onWait?.(null);
          this.options.log?.(
            `stopped waiting for the run store (${this.where}): its activity was cancelled; nothing more is written`,
          );
          throw signal.reason instanceof Error ? signal.reason : new Error('cancelled while waiting for the run store');
        }
      }
    }
  }

  private delay(retry: number): number {
    return storeBackoffMs(retry, this.options.initialDelayMs, this.options.maxDelayMs);
  }

  /** Notes a fault in the current outage (or starts one), logging at its start and once a minute after. */
  private failed(fault: StoreFault): Outage {
    const now = this.now();
    const stale = this.outage && now - this.outage.lastFailureAt > LOG_EVERY_MS;
    if (!this.outage || stale) {
      this.outage = { ...fault, since: now, lastFailureAt: now, loggedAt: now };
      this.options.log?.(
        `${storeFaultLine(fault.kind, fault.reason)} (${this.where}); tasks wait for it, retrying with backoff, ` +
          `for up to ${humanDuration(this.limitMs)} (store.faultWaitMinutes)`,
      );
      return this.outage;
    }
    const outage = this.outage;
    const changed = outage.kind !== fault.kind;
    Object.assign(outage, fault, { lastFailureAt: now });
    if (changed || now - outage.loggedAt >= LOG_EVERY_MS) {
      outage.loggedAt = now;
      this.options.log?.(
        `${storeFaultLine(fault.kind, fault.reason)} (${this.where}); still waiting, ` +
          `${humanDuration(now - outage.since)} so far`,
      );
    }
    return outage;
  }

  /** A call went through: the outage is over if it was one this call could tell (a write tells them all). */
  private succeeded(mode: StoreOpMode): void {
    const outage = this.outage;
    if (!outage || (mode === 'read' && outage.kind !== 'unreachable')) return;
    this.outage = undefined;
    this.options.log?.(
      `the run store is back (${this.where}) after ${humanDuration(this.now() - outage.since)}; ` +
        `it was ${storeFaultLine(outage.kind, outage.reason).replace(/^the run store is /, '')}`,
    );
  }

  private gaveUp(fault: StoreFault, waitedMs: number, limitMs: number, cause: unknown): RunStoreUnavailableError {
    const line = storeFaultLine(fault.kind, fault.reason);
    const why =
      limitMs >= this.limitMs
        ? `store.faultWaitMinutes: ${humanDuration(this.limitMs)}`
        : limitMs > 0
          ? `all the ${humanDuration(limitMs)} its activity had left`
          : 'not waited for here';
    const message =
      this.limitMs === 0
        ? `${line} (store.faultWaitMinutes is 0)`
        : `${line}; gave up after ${humanDuration(waitedMs)} (${why})`;
    this.options.log?.(`gave up waiting for the run store (${this.where}): ${message}`);
    return new RunStoreUnavailableError(message, { kind: fault.kind, waitedMs, cause });
  }
}
