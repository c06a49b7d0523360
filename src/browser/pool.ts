// The worker's browser pool: one Chromium per process, one isolated context per session (with its URL policy), a
// session limit, idle sessions closed after a timeout, and a clean shutdown.
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext } from 'playwright';
import { BrowserEnvironment } from './environment';
import type { EnvironmentOptions, StorageState } from './environment';
import { BrowserClosedError, PoolFullError, UnknownSessionError } from './errors';
import { launchBrowser } from './launch';
import type { LaunchOptions } from './launch';
import { PolicyGuard } from './policy-guard';
import { DEFAULT_URL_POLICY } from '../policy/url-policy';
import type { UrlPolicy } from '../policy/url-policy';
import type { Lookup } from '../policy/resolve';

export type PoolOptions = {
  launch?: LaunchOptions;
  /** Use this already-running browser instead of launching one; the pool then never closes it. */
  browser?: Browser;
  maxSessions?: number;
  /** Sessions with no operation for this long are closed. */
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
};

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
  private opening = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private shutDown = false;

  constructor(private readonly options: PoolOptions = {}) {}

  get size(): number {
    return this.sessions.size;
  }

  get maxSessions(): number {
    return this.options.maxSessions ?? 4;
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
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

  async openSession(options: OpenSessionOptions): Promise<Session> {
    if (this.sessions.size + this.opening >= this.maxSessions) {
      throw new PoolFullError(`The browser pool is full (${this.maxSessions} sessions open).`);
    }
    this.opening += 1;
    let context: BrowserContext | undefined;
    let guard: PolicyGuard | undefined;
    try {
      const browser = await this.getBrowser();
      guard = await PolicyGuard.open(options.urlPolicy ?? this.options.urlPolicy ?? DEFAULT_URL_POLICY, {
        egressProxy: this.options.egressProxy ?? this.options.launch?.cdpUrl === undefined,
        ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
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
      this.startSweeper();
      return { sessionId, env };
    } catch (error) {
      await context?.close().catch(() => undefined);
      await guard?.close().catch(() => undefined);
      throw error;
    } finally {
      this.opening -= 1;
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

  async close(sessionId: string): Promise<void> {
    const env = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    await env?.close();
  }

  /** Closes sessions idle for longer than the timeout; returns their ids. */
  async closeIdle(): Promise<string[]> {
    const limit = this.options.idleTimeoutMs;
    if (limit === undefined) return [];
    const idle = [...this.sessions].filter(([, env]) => env.idleFor() >= limit).map(([id]) => id);
    await Promise.all(idle.map((id) => this.close(id)));
    return idle;
  }

  private startSweeper(): void {
    const limit = this.options.idleTimeoutMs;
    if (limit === undefined || this.sweeper) return;
    const every = this.options.sweepIntervalMs ?? Math.min(30_000, Math.max(50, Math.floor(limit / 4)));
    this.sweeper = setInterval(() => void this.closeIdle(), every);
    this.sweeper.unref();
  }

  /** Closes every session and the browser; the pool cannot be used afterwards. */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
    const browser = this.browser ? await this.browser.catch(() => undefined) : undefined;
    this.browser = undefined;
    await browser?.close().catch(() => undefined);
  }
}
