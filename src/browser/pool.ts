// The worker's browser pool: one Chromium per process, one isolated context per session (with its URL policy), a
// number of slots with a first-come queue for a freed slot, idle sessions closed after a timeout, and a clean shutdown.
// With a browser provider (Browserbase) each session has a browser of its own instead, tried again from scratch when
// it fails to open, and ended with the session. A session held while its task waits for a reply (`hold`) counts as a
// free slot: an open that needs it saves and closes the one held longest. A session is set up in session-setup.ts,
// in a provider's browser by provided-session.ts; the options are in pool-options.ts.
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright';
import type { BrowserEnvironment } from './environment';
import { BrowserClosedError, PoolFullError, UnknownSessionError } from './errors';
import { launchBrowser } from './launch';
import type { ProvidedBrowser } from './provider';
import type { OpenSessionOptions, PoolOptions, PoolWait, Session } from './pool-options';
import { openProvided } from './provided-session';
import { openSessionIn } from './session-setup';
import { SessionLifetimes } from '../runtime/session-lifetimes';
import { SessionHolds } from '../runtime/session-holds';
import type { HoldEnd } from '../runtime/session-holds';
import { DEVTOOLS_PORT_ARG, devToolsEndpoint } from './takeover/devtools';
import type { DevToolsEndpoint } from './takeover/devtools';
import { TakeoverServer } from './takeover/server';

export class BrowserPool {
  private browser: Promise<Browser> | undefined;
  private readonly sessions = new Map<string, BrowserEnvironment>();
  /** Owners and idle clocks of the open sessions; closes the idle ones. */
  private readonly lifetimes: SessionLifetimes;
  /** Sessions kept alive while their tasks wait for a reply: saved and closed when the hold ends or the slot is needed. */
  private readonly holds: SessionHolds;
  /** The provider's browser of each session opened through one, ended with it. */
  private readonly provided = new Map<string, ProvidedBrowser>();
  /** Openers waiting for a slot, first come first served: a freed slot is handed to the first, never raced for. */
  private readonly waiters: Array<() => void> = [];
  private opening = 0;
  /** Called whenever a slot may have come free (a session closed, an open ended): see onFreeSlot. */
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

  get slots(): number {
    return this.options.slots ?? 4;
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Slots taken: open sessions (but held ones: an open may have their slot), and sessions being opened or closed. */
  get busy(): number {
    return this.sessions.size + this.opening - this.holds.count;
  }

  /** Sessions held while their tasks wait for a reply. */
  get held(): number {
    return this.holds.count;
  }

  /**
   * Keeps a session alive while its task waits for a reply, for up to `ms`; its slot counts as free meanwhile. When
   * the hold ends unclaimed (its time is up, an open needs the slot, the pool shuts down) `save` runs and the session
   * is closed. False (nothing held) when the session is not open or openers are waiting for a slot right now.
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

  /** Calls `listener` whenever a slot may have come free; returns a function that stops it. */
  onFreeSlot(listener: () => void): () => void {
    this.freeSlotListeners.add(listener);
    return () => this.freeSlotListeners.delete(listener);
  }

  /** Openers waiting for a slot right now. */
  get waiting(): number {
    return this.waiters.length;
  }

  private get maxWaiters(): number {
    return this.options.maxWaiters ?? this.slots;
  }

  private hasFreeSlot(): boolean {
    return this.sessions.size + this.opening < this.slots;
  }

  /** Takes a slot (counted in `opening`), waiting in line for one when asked to; PoolFullError when none comes. */
  private async takeSlot(wait: PoolWait): Promise<void> {
    if (this.waiters.length === 0 && this.hasFreeSlot()) {
      this.opening += 1;
      return;
    }
    const full = `The browser pool is full (${this.slots} sessions open)`;
    if (!wait.timeoutMs || this.waiters.length >= this.maxWaiters) {
      throw new PoolFullError(
        `${full}${this.waiters.length > 0 ? ` and ${this.waiters.length} tasks wait for a slot` : ''}.`,
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
      const onAbort = () => leave(new PoolFullError(`${full}; stopped waiting for a slot (cancelled).`));
      const timer = setTimeout(
        () => leave(new PoolFullError(`${full}; no slot came free within ${Math.round(timeoutMs / 1000)}s.`)),
        timeoutMs,
      );
      if (wait.signal?.aborted) return onAbort();
      wait.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(granted);
      wait.onQueued?.(this.waiters.length);
    });
  }

  /** Hands freed slots to the openers waiting in line. */
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

  /**
   * Launches this machine's browser now rather than at the first open, so a worker standing by takes over a lost
   * worker's session without a browser start in the way. A failure is only reported: the first open tries again.
   */
  warmUp(onError: (err: unknown) => void): void {
    if (!this.launchesHere || this.shutDown) return;
    this.getBrowser().catch(onError);
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
   * line for a slot (as long as fewer than `maxWaiters` already wait).
   */
  async openSession(options: OpenSessionOptions, wait: PoolWait = {}): Promise<Session> {
    await this.lifetimes.closeOwnedBy(options.owner);
    // A pool full of held sessions: the one held longest is saved and closed for this open.
    await this.holds.freeSlot(() => !this.hasFreeSlot());
    await this.takeSlot(wait);
    try {
      const provider = this.options.provider;
      const { env, provided } = provider
        ? await openProvided(provider, options, this.options, () => this.shutDown, wait.signal)
        : { env: await openSessionIn(await this.getBrowser(), options, false, this.options), provided: undefined };
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

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  get(sessionId: string): BrowserEnvironment {
    const env = this.sessions.get(sessionId);
    if (!env)
      throw new UnknownSessionError(`No open browser session ${sessionId} (closed, idle-closed or never opened).`);
    return env;
  }

  /** Closes a session; its slot goes to the first opener waiting, once the browser context is gone. */
  async close(sessionId: string): Promise<void> {
    const env = this.sessions.get(sessionId);
    if (!env) return;
    const provided = this.provided.get(sessionId);
    this.sessions.delete(sessionId);
    this.lifetimes.delete(sessionId);
    this.holds.forget(sessionId);
    this.provided.delete(sessionId);
    this.opening += 1; // the slot stays taken while the context closes (closing costs the CPU a new one needs)
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
