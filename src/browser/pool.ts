// The worker's browser pool: one Chromium per process, one isolated context per session (with its URL policy), a
// session limit with a first-come queue for a freed place, idle sessions closed after a timeout, and a clean shutdown.
// With a browser provider (Browserbase) each session has a browser of its own instead, tried again from scratch when
// it fails to open, and ended with the session. A session held while its task waits for a reply (`hold`) counts as a
// free place: an open that needs it saves and closes the one held longest.
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext } from 'playwright';
import { BrowserEnvironment } from './environment';
import type { EnvironmentOptions, StorageState } from './environment';
import {
  BrowserClosedError,
  BrowserError,
  BrowserProviderError,
  CaptchaTimeoutError,
  PolicyBlockedError,
  PoolFullError,
  UnknownSessionError,
} from './errors';
import { launchBrowser } from './launch';
import type { LaunchOptions } from './launch';
import { DEFAULT_DOWNLOAD_LIMITS } from './downloads';
import { PolicyGuard } from './policy-guard';
import type { RequestJournal } from './request-journal';
import { seedSessionStorageOnLoad } from './page-state';
import { DEFAULT_URL_POLICY } from '../contract/url-policy';
import type { UrlPolicy } from '../contract/url-policy';
import type { Lookup } from '../policy/resolve';
import type { BrowserProvider, ProvidedBrowser } from './provider';
import { sleep } from '../common/sleep';
import { SessionLifetimes } from '../runtime/session-lifetimes';
import { SessionHolds } from '../runtime/session-holds';
import type { HoldEnd } from '../runtime/session-holds';
import { DEVTOOLS_PORT_ARG, devToolsEndpoint } from './takeover/devtools';
import type { DevToolsEndpoint } from './takeover/devtools';
import { TakeoverServer } from './takeover/server';
import type { TakeoverOptions } from './takeover/server';

export type PoolOptions = {
  launch?: LaunchOptions;
  /** Use this already-running browser instead of launching one; the pool then never closes it. */
  browser?: Browser;
  /**
   * A browser of the provider's for each session (instead of `launch`/`browser`), worked in its default context and
   * ended with the session; a session that fails to open is tried again from scratch, as the provider says.
   */
  provider?: BrowserProvider;
  /** Where a provider's failed attempts are told (the worker's log). */
  log?: (line: string) => void;
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
   * connects to. Default: on for a browser launched here, off for a remote one (`launch.cdpUrl`, a provider's),
   * which cannot reach this machine's 127.0.0.1.
   */
  egressProxy?: boolean;
  /** Host name lookup for the URL policy (tests inject one). */
  lookup?: Lookup;
  /**
   * The takeover endpoint (takeover/server.ts): where it listens, and whether leases offer raw CDP (`cdp`; a browser
   * launched here then also listens for DevTools on a loopback port).
   */
  takeover?: Pick<TakeoverOptions, 'host' | 'port' | 'publicUrl' | 'cdp'>;
};

export type OpenSessionOptions = {
  viewport: { width: number; height: number };
  downloadsDir: string;
  /** Restores cookies, localStorage (and IndexedDB) saved with `saveStorageState` or page-state.ts. */
  storageState?: StorageState | string;
  /** sessionStorage (origin → key → value) put back as the first page's documents load (page-state.ts). */
  sessionStorage?: Record<string, Record<string, string>>;
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
  /**
   * With a provider: after the first page, wait this long for the captcha gate (a solve the provider started there);
   * a gate still closed then fails the attempt. 0 or absent: no wait.
   */
  captchaWaitMs?: number;
  /**
   * The run's journal of requests that change something (request-journal.ts): attached before the first page loads,
   * so a resend of a request in doubt is held back from the start; kept as the environment's `journal`.
   */
  journal?: RequestJournal;
};

/**
 * Waiting for a place in a full pool: up to `timeoutMs` (0 or absent: do not wait), abandoned on `signal`; `onQueued`
 * hears when the opener joins the line (with the line's length).
 */
export type PoolWait = { timeoutMs?: number; signal?: AbortSignal; onQueued?: (waiting: number) => void };

export type Session = { sessionId: string; env: BrowserEnvironment };

/** What Playwright's `serviceWorkers: 'block'` does, for a context it was not created with (a provider's default one). */
const BLOCK_SERVICE_WORKERS =
  'if (self.ServiceWorkerContainer) ServiceWorkerContainer.prototype.register = async () => undefined;';

const firstLine = (err: unknown): string =>
  ((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').trim();

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
  /** Sessions kept alive while their tasks wait for a reply: saved and closed when the hold ends or the place is needed. */
  private readonly holds: SessionHolds;
  /** The provider's browser of each session opened through one, ended with it. */
  private readonly provided = new Map<string, ProvidedBrowser>();
  /** Openers waiting for a place, first come first served: a freed place is handed to the first, never raced for. */
  private readonly waiters: Array<() => void> = [];
  private opening = 0;
  /** Called whenever a place may have come free (a session closed, an open ended): see onFreeSlot. */
  private readonly freeSlotListeners = new Set<() => void>();
  private shutDown = false;
  /** Sessions lent to a person (a takeover): never closed as idle; their idle clock starts again at the hand-back. */
  readonly takeovers: TakeoverServer;

  constructor(private readonly options: PoolOptions = {}) {
    this.holds = new SessionHolds((id) => this.close(id), options.log);
    this.lifetimes = new SessionLifetimes(
      options,
      (id) => this.close(id),
      (id) => this.holds.keeps(id) || this.takeovers.isLeased(id),
    );
    this.takeovers = new TakeoverServer({
      ...options.takeover,
      devTools: () => this.devTools(),
      onEnd: (id) => this.lifetimes.touch(id),
      ...(options.log ? { log: options.log } : {}),
    });
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

  /** Places taken: open sessions (but held ones: an open may have their place), and sessions being opened or closed. */
  get busy(): number {
    return this.sessions.size + this.opening - this.holds.count;
  }

  /** Sessions held while their tasks wait for a reply. */
  get held(): number {
    return this.holds.count;
  }

  /**
   * Keeps a session alive while its task waits for a reply, for up to `ms`; its place counts as free meanwhile. When
   * the hold ends unclaimed (its time is up, an open needs the place, the pool shuts down) `save` runs and the session
   * is closed. False (nothing held) when the session is not open or openers are waiting for a place right now.
   */
  hold(sessionId: string, ms: number, save: (why: HoldEnd) => Promise<void>): boolean {
    if (!this.sessions.has(sessionId) || this.waiters.length > 0 || this.shutDown) return false;
    this.holds.hold(sessionId, ms, save);
    for (const listener of this.freeSlotListeners) listener();
    return true;
  }

  /** A reply came: true if the session was still held (it is its task's again, as it was), false if it is gone. */
  reclaim(sessionId: string): boolean {
    if (!this.holds.take(sessionId)) return false;
    this.lifetimes.touch(sessionId);
    return this.sessions.has(sessionId);
  }

  /** Whether the session is held right now. */
  isHeld(sessionId: string): boolean {
    return this.holds.has(sessionId);
  }

  /** Calls `listener` whenever a place may have come free; returns a function that stops it. */
  onFreeSlot(listener: () => void): () => void {
    this.freeSlotListeners.add(listener);
    return () => this.freeSlotListeners.delete(listener);
  }

  /** Openers waiting for a place right now. */
  get waiting(): number {
    return this.waiters.length;
  }

  private get maxWaiters(): number {
    return this.options.maxWaiters ?? this.maxSessions;
  }

  private hasFreeSlot(): boolean {
    return this.sessions.size + this.opening < this.maxSessions;
  }

  /** Takes a place (counted in `opening`), waiting in line for one when asked to; PoolFullError when none comes. */
  private async takePlace(wait: PoolWait): Promise<void> {
    if (this.waiters.length === 0 && this.hasFreeSlot()) {
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
    while (this.waiters.length > 0 && this.hasFreeSlot()) this.waiters.shift()?.();
    for (const listener of this.freeSlotListeners) listener();
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
    const launch = this.options.launch ?? {};
    const devToolsPort = this.launchesHere && this.options.takeover?.cdp ? [DEVTOOLS_PORT_ARG] : [];
    this.browser = launchBrowser({ ...launch, extraArgs: [...(launch.extraArgs ?? []), ...devToolsPort] });
    return this.browser;
  }

  /** Whether the pool launches its browser on this machine (not given one, not remote, not a provider's). */
  private get launchesHere(): boolean {
    return !this.options.browser && !this.options.provider && this.options.launch?.cdpUrl === undefined;
  }

  /** Where the browser launched here listens for raw DevTools connections (with takeover.cdp); else undefined. */
  private async devTools(): Promise<DevToolsEndpoint | undefined> {
    if (!this.launchesHere || !this.options.takeover?.cdp) return undefined;
    return devToolsEndpoint(await this.getBrowser());
  }

  /**
   * Opens a session. A full pool refuses at once with PoolFullError, or with `wait.timeoutMs` lets the caller wait in
   * line for a place (as long as fewer than `maxWaiters` already wait).
   */
  async openSession(options: OpenSessionOptions, wait: PoolWait = {}): Promise<Session> {
    await this.lifetimes.closeOwnedBy(options.owner);
    // A pool full of held sessions: the one held longest is saved and closed for this open.
    await this.holds.makeRoom(() => !this.hasFreeSlot());
    await this.takePlace(wait);
    try {
      const provider = this.options.provider;
      const { env, provided } = provider
        ? await this.openProvided(provider, options, wait.signal)
        : { env: await this.openIn(await this.getBrowser(), options, false), provided: undefined };
      if (this.shutDown) {
        await env.close();
        await provided?.release();
        throw new BrowserClosedError('The browser pool has been shut down.');
      }
      const sessionId = randomUUID();
      this.sessions.set(sessionId, env);
      if (provided) this.provided.set(sessionId, provided);
      this.lifetimes.add(sessionId, () => env.idleFor(), options.owner);
      return { sessionId, env };
    } finally {
      this.opening -= 1;
      this.handOver();
    }
  }

  /**
   * A session in a browser of the provider's, tried up to its attempts, each from scratch: a new browser, set up, the
   * first page, the captcha gate. A failed attempt's browser is released before the next one is asked for.
   */
  private async openProvided(
    provider: BrowserProvider,
    options: OpenSessionOptions,
    signal?: AbortSignal,
  ): Promise<{ env: BrowserEnvironment; provided: ProvidedBrowser }> {
    let failure: unknown;
    for (let attempt = 1; attempt <= provider.attempts; attempt++) {
      if (this.shutDown) throw new BrowserClosedError('The browser pool has been shut down.');
      let provided: ProvidedBrowser | undefined;
      try {
        // Not abortable: a create cut off in flight could leave a session nobody knows the id of, to release.
        provided = await provider.acquire();
        if (signal?.aborted) throw new BrowserClosedError('the open was cancelled or ran out of time');
        const env = await this.openIn(provided.browser, options, true);
        try {
          await this.passCaptchaGate(env, options.captchaWaitMs, signal);
          // Too late: whoever asked (an activity past its time) has gone; the session would be nobody's.
          if (signal?.aborted) throw new BrowserClosedError('the open was cancelled or ran out of time');
        } catch (error) {
          await env.close();
          throw error;
        }
        return { env, provided };
      } catch (error) {
        failure = error;
        await provided?.release();
        // A start page the policy refuses is refused in any browser.
        if (error instanceof PolicyBlockedError) throw error;
      }
      // What is told (log, failure) is the error's first line without credentials; its cause is kept out of it, as a
      // connection's call log may quote the connect URL.
      const why = provider.hide(firstLine(failure));
      if (signal?.aborted) {
        throw new BrowserProviderError(
          `${provider.name}: stopped opening a session after ${attempt} of ${provider.attempts} attempts ` +
            `(cancelled or out of time); the last failed: ${why}`,
        );
      }
      if (attempt < provider.attempts) {
        const waitMs = provider.retryDelayMs(attempt, failure);
        this.options.log?.(
          `${provider.name}: attempt ${attempt} of ${provider.attempts} to open a session failed (${why}); ` +
            `trying again in ${waitMs / 1000} s`,
        );
        await sleep(waitMs, signal);
      }
    }
    throw new BrowserProviderError(
      `${provider.name}: no browser session after ${provider.attempts} attempts; the last failed: ` +
        provider.hide(firstLine(failure)),
    );
  }

  /**
   * Waits for a captcha solve the first page started; a gate still closed after `waitMs` fails the attempt, and so
   * does `signal` aborting meanwhile.
   */
  private async passCaptchaGate(env: BrowserEnvironment, waitMs = 0, signal?: AbortSignal): Promise<void> {
    if (waitMs <= 0 || env.captcha.isOpen || signal?.aborted) return;
    const aborted = new Promise<false>((resolve) =>
      signal?.addEventListener('abort', () => resolve(false), { once: true }),
    );
    if (await Promise.race([env.waitForCaptcha(waitMs), aborted])) return;
    throw new CaptchaTimeoutError(`the captcha on ${env.url()} was not solved within ${Math.round(waitMs / 1000)}s`);
  }

  /**
   * Sets up a session in `browser`: its URL policy, a context (a new one, or with `adoptDefault` the browser's
   * default one, as a provider's browser is meant to be used), the environment and the first page. On failure closes
   * what it opened.
   */
  private async openIn(
    browser: Browser,
    options: OpenSessionOptions,
    adoptDefault: boolean,
  ): Promise<BrowserEnvironment> {
    let context: BrowserContext | undefined;
    let guard: PolicyGuard | undefined;
    try {
      guard = await PolicyGuard.open(options.urlPolicy ?? this.options.urlPolicy ?? DEFAULT_URL_POLICY, {
        egressProxy: this.options.egressProxy ?? (this.options.launch?.cdpUrl === undefined && !this.options.provider),
        ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
        // A document fetched under interception is held to the session's download cap.
        maxDocumentBytes:
          options.environment?.maxDownloadBytes ??
          this.options.defaults?.maxDownloadBytes ??
          DEFAULT_DOWNLOAD_LIMITS.maxBytes,
      });
      const existing = adoptDefault ? browser.contexts()[0] : undefined;
      context = existing ? await adoptContext(existing, options, guard) : await newContext(browser, options, guard);
      await guard.attach(context);
      await options.journal?.attach(context, guard.intercepts);
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
      if (options.journal) env.journal = options.journal;
      const seeded = options.sessionStorage
        ? await seedSessionStorageOnLoad(context, { sessionStorage: options.sessionStorage })
        : undefined;
      if (options.url !== undefined) await env.visitUrl(options.url);
      await seeded?.dispose(); // the first page has it; later loads keep what the page made of it
      return env;
    } catch (error) {
      await context?.close().catch(() => undefined);
      await guard?.close().catch(() => undefined);
      throw error;
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
    const provided = this.provided.get(sessionId);
    this.sessions.delete(sessionId);
    this.lifetimes.delete(sessionId);
    this.holds.forget(sessionId);
    this.provided.delete(sessionId);
    this.opening += 1; // the place stays taken while the context closes (closing costs the CPU a new one needs)
    try {
      await this.takeovers.endSession(sessionId); // a lease on it ends (its summary kept for the hand-back)
      await env.close();
      await provided?.release();
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
    await this.holds.endAll('shutdown'); // saved while the browser is still there
    await this.takeovers.close();
    this.shutDown = true;
    for (const grant of this.waiters.splice(0)) grant(); // each then fails at getBrowser: the pool is shut down
    this.lifetimes.stop();
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
    const browser = this.browser ? await this.browser.catch(() => undefined) : undefined;
    this.browser = undefined;
    await browser?.close().catch(() => undefined);
  }
}

/** A new context for a session in the shared browser, with its viewport, saved state and URL policy options. */
function newContext(browser: Browser, options: OpenSessionOptions, guard: PolicyGuard): Promise<BrowserContext> {
  return browser.newContext({
    viewport: options.viewport,
    acceptDownloads: true,
    ...(options.storageState === undefined ? {} : { storageState: options.storageState }),
    ...guard.contextOptions(),
  });
}

/**
 * A provider's default context made the session's: what newContext would have been given, applied afterwards (the
 * viewport is set on each page by the controller).
 */
async function adoptContext(
  context: BrowserContext,
  options: OpenSessionOptions,
  guard: PolicyGuard,
): Promise<BrowserContext> {
  const { proxy, permissions, serviceWorkers } = guard.contextOptions();
  if (proxy) throw new BrowserError("A provider's browser cannot be sent through this worker's egress proxy.");
  if (serviceWorkers === 'block') await context.addInitScript({ content: BLOCK_SERVICE_WORKERS });
  if (permissions) await context.grantPermissions(permissions);
  if (options.storageState !== undefined) await context.setStorageState(options.storageState);
  return context;
}
