// The browser pool's options, a session's open options, how an opener waits for a slot, and the session it gets.
import type { Browser } from 'playwright';
import type { BrowserEnvironment, EnvironmentOptions, StorageState } from './environment';
import type { LaunchOptions } from './launch';
import type { RequestJournal } from './request-journal';
import type { UrlPolicy } from '../contract/url-policy';
import type { Lookup } from '../policy/resolve';
import type { BrowserProvider } from './provider';
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
  slots?: number;
  /**
   * How many openers may wait for a slot at once when the pool is full (default: slots); more are refused at
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
   * Who the session is for (a task id). A task holds one session at a time, so opening one for an owner first closes
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
 * Waiting for a slot in a full pool: up to `timeoutMs` (0 or absent: do not wait), abandoned on `signal`; `onQueued`
 * hears when the opener joins the line (with the line's length).
 */
export type PoolWait = { timeoutMs?: number; signal?: AbortSignal; onQueued?: (waiting: number) => void };

export type Session = { sessionId: string; env: BrowserEnvironment };
