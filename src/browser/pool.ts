// The worker's browser pool: one Chromium per process, one isolated context per session (with its URL policy), a
// session limit with a first-come queue for a freed place, idle sessions closed after a timeout, and a clean shutdown.
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext } from 'playwright';
import { BrowserEnvironment } from './environment';
import type { EnvironmentOptions, StorageState } from './environment';
import { BrowserClosedError, PoolFullError, UnknownSessionError } from './errors';
import { launchBrowser } from './launch';
import type { LaunchOptions } from './launch';
import { DEFAULT_DOWNLOAD_LIMITS } from './downloads';
import { PolicyGuard } from './policy-guard';
import { DEFAULT_URL_POLICY } from '../policy/url-policy';
import type { UrlPolicy } from '../policy/url-policy';
import type { Lookup } from '../policy/resolve';
import { SessionLifetimes } from '../runtime/session-lifetimes';

export type PoolOptions = {
  launch?: LaunchOptions;
  /** Use this already-running browser instead of launching one; the pool then never closes it. */
  browser?: Browser;
  maxSessions?: number;
  /**
   * How many openers may wait for a place at once when the pool is full (default: maxSessions); more are refused at
   * once with PoolFullError. Each waiter holds an activity slot, so this stays well under the worker's slots.
   */
  maxWaiters?: number;
  /** Sessions with no operation for this long are closed (src/runtime/session-lifetimes.ts). */
  idleTimeoutMs?: number;
  /** How often idle sessions are looked for; defaults to a quarter of the idle timeout (at most 30 s). */
  sweepIntervalMs?: number;
  /** Options every session's environment starts from. */
  defaults?: Partial<Omit<EnvironmentOptions, 'viewport' | 'downloadsDir'>>;
  /** The URL policy of sessions opened without one (default: DEFAULT_URL_POLICY). */
  urlPolicy?: UrlPolicy;
  /**
   * Send the traffic of sessions whose policy has deny rules through a local egress proxy that checks the address it
   * connects to. Default: on for a browser launched here, off for a remote one (`launch.cdpUrl`), which cannot
   * reach this machine's 127.0.0.1.
   */
  egressProxy?: boolean;
  /** Host name lookup for the URL policy (tests inject one). */
  lookup?: Lookup;
};

export type OpenSessionOptions = {
  viewport: { width: number; height: number };
  downloadsDir: string;
  /** Restores cookies and localStorage saved with `saveStorageState`. */
  storageState?: StorageState | string;
  /** First page to open. */
  url?: string;
  /** Overrides of the pool's environment defaults for this session. */
  environment?: Partial<Omit<EnvironmentOptions, 'viewport' | 'downloadsDir'>>;
  /** This session's URL policy (already narrowed for its task); default: the pool's. */
  urlPolicy?: UrlPolicy;
  /**
   * Who the session is for (a run id). A task holds one session at a time, so opening one for an owner first closes
   * any this pool still holds for it: one a lost activity left behind (a missed heartbeat, a retried open).
   */
  owner?: string;
};

/**
 * Waiting for a place in a full pool: up to `timeoutMs` (0 or absent: do not wait), abandoned on `signal`; `onQueued`
 * hears when the opener joins the line (with the line's length).
 */
export type PoolWait = { timeoutMs?: number; signal?: AbortSignal; onQueued?: (waiting: number) => void };

export type Session = { sessionId: string; env: BrowserEnvironment };

/** Keeps Bing's result links in the same tab (fewer popups for the single-tab agent). */
export const SAME_TAB_SEARCH_COOKIE = {
  name: 'SRCHHPGUSR',
  value: 'EXLKNT=0',
  domain: '.bing.com',
  path: '/',
} as const;

export class BrowserPool {
  private browser: Promise<Browser> | undefined;
  private readonly sessions = new Map<string, BrowserEnvironment>();
  /** Owners and idle clocks of the open sessions; closes the idle ones. */
  private readonly lifetimes: SessionLifetimes;
  /** Openers waiting for a place, first come first served: a freed place is handed to the first, never raced for. */
  private readonly waiters: Array<() => void> = [];
  private opening = 0;
  /** Called whenever a place may have come free (a session closed, an open ended): see onRoom. */
  private readonly roomListeners = new Set<() => void>();
  private shutDown = false;

  constructor(private readonly options: PoolOptions = {}) {
    this.lifetimes = new SessionLifetimes(options, (id) => this.close(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  get maxSessions(): number {
    return this.options.maxSessions ?? 4;
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Places taken: open sessions, and sessions being opened or closed. */
  get busy(): number {
    return this.sessions.size + this.opening;
  }

  /** Calls `listener` whenever a place may have come free; returns a function that stops it. */
  onRoom(listener: () => void): () => void {
    this.roomListeners.add(listener);
    return () => this.roomListeners.delete(listener);
  }

  /** Openers waiting for a place right now. */
  get waiting(): number {
    return this.waiters.length;
  }

  private get maxWaiters(): number {
    return this.options.maxWaiters ?? this.maxSessions;
  }

  private hasRoom(): boolean {
    return this.sessions.size + this.opening < this.maxSessions;
  }

  /** Takes a place (counted in `opening`), waiting in line for one when asked to; PoolFullError when none comes. */
  private async takePlace(wait: PoolWait): Promise<void> {
    if (this.waiters.length === 0 && this.hasRoom()) {
      this.opening += 1;
      return;
    }
    const full = `The browser pool is full (${this.maxSessions} sessions open)`;
    if (!wait.timeoutMs || this.waiters.length >= this.maxWaiters) {
      throw new PoolFullError(
        `${full}${this.waiters.length > 0 ? ` and ${this.waiters.length} tasks wait for a place` : ''}.`,
      );
    }
    const timeoutMs = wait.timeoutMs;
    await new Promise<void>((resolve, reject) => {
      const leave = (err: Error) => {
        const at = this.waiters.indexOf(granted);
        if (at >= 0) this.waiters.splice(at, 1);
        clearTimeout(timer);
        wait.signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const granted = () => {
        clearTimeout(timer);
        wait.signal?.removeEventListener('abort', onAbort);
        this.opening += 1;
        resolve();
      };
      const onAbort = () => leave(new PoolFullError(`${full}; stopped waiting for a place (cancelled).`));
      const timer = setTimeout(
        () => leave(new PoolFullError(`${full}; no place came free within ${Math.round(timeoutMs / 1000)}s.`)),
        timeoutMs,
      );
      if (wait.signal?.aborted) return onAbort();
      wait.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(granted);
      wait.onQueued?.(this.waiters.length);
    });
  }

  /** Hands freed places to the openers waiting in line. */
  private handOver(): void {
    while (this.waiters.length > 0 && this.hasRoom()) this.waiters.shift()?.();
    for (const listener of this.roomListeners) listener();
  }

  /** The process's one browser, launched (or connected) on first use and relaunched if it went away. */
  private async getBrowser(): Promise<Browser> {
    if (this.shutDown) throw new BrowserClosedError('The browser pool has been shut down.');
    if (this.options.browser) {
      if (!this.options.browser.isConnected()) throw new BrowserClosedError('The shared browser is not connected.');
      return this.options.browser;
    }
    const current = this.browser ? await this.browser.catch(() => undefined) : undefined;
    if (current?.isConnected()) return current;
    this.browser = launchBrowser(this.options.launch);
    return this.browser;
  }

  /**
   * Opens a session. A full pool refuses at once with PoolFullError, or with `wait.timeoutMs` lets the caller wait in
   * line for a place (as long as fewer than `maxWaiters` already wait).
   */
  async openSession(options: OpenSessionOptions, wait: PoolWait = {}): Promise<Session> {
    await this.lifetimes.closeOwnedBy(options.owner);
    await this.takePlace(wait);
    let context: BrowserContext | undefined;
    let guard: PolicyGuard | undefined;
    try {
      const browser = await this.getBrowser();
      guard = await PolicyGuard.open(options.urlPolicy ?? this.options.urlPolicy ?? DEFAULT_URL_POLICY, {
        egressProxy: this.options.egressProxy ?? this.options.launch?.cdpUrl === undefined,
        ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
        // A document fetched under interception is held to the session's download cap.
        maxDocumentBytes:
          options.environment?.maxDownloadBytes ??
          this.options.defaults?.maxDownloadBytes ??
          DEFAULT_DOWNLOAD_LIMITS.maxBytes,
      });
      context = await browser.newContext({
        viewport: options.viewport,
        acceptDownloads: true,
        ...(options.storageState === undefined ? {} : { storageState: options.storageState }),
        ...guard.contextOptions(),
      });
      await guard.attach(context);
      await context.addCookies([{ ...SAME_TAB_SEARCH_COOKIE }]);
      const env = await BrowserEnvironment.create(
        context,
        {
          ...this.options.defaults,
          ...options.environment,
          viewport: options.viewport,
          downloadsDir: options.downloadsDir,
        },
        guard,
      );
      if (options.url !== undefined) await env.visitUrl(options.url);
      const sessionId = randomUUID();
      this.sessions.set(sessionId, env);
      this.lifetimes.add(sessionId, () => env.idleFor(), options.owner);
      return { sessionId, env };
    } catch (error) {
      await context?.close().catch(() => undefined);
      await guard?.close().catch(() => undefined);
      throw error;
    } finally {
      this.opening -= 1;
      this.handOver();
    }
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  get(sessionId: string): BrowserEnvironment {
    const env = this.sessions.get(sessionId);
    if (!env)
      throw new UnknownSessionError(`No open browser session ${sessionId} (closed, idle-closed or never opened).`);
    return env;
  }

  /** Closes a session; its place goes to the first opener waiting, once the browser context is gone. */
  async close(sessionId: string): Promise<void> {
    const env = this.sessions.get(sessionId);
    if (!env) return;
    this.sessions.delete(sessionId);
    this.lifetimes.delete(sessionId);
    this.opening += 1; // the place stays taken while the context closes (closing costs the CPU a new one needs)
    try {
      await env.close();
    } finally {
      this.opening -= 1;
      this.handOver();
    }
  }

  /** Closes sessions idle for longer than the timeout; returns their ids. */
  closeIdle(): Promise<string[]> {
    return this.lifetimes.closeIdle();
  }

  /** Closes every session and the browser; the pool cannot be used afterwards. */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    for (const grant of this.waiters.splice(0)) grant(); // each then fails at getBrowser: the pool is shut down
    this.lifetimes.stop();
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
    const browser = this.browser ? await this.browser.catch(() => undefined) : undefined;
    this.browser = undefined;
    await browser?.close().catch(() => undefined);
  }
}
