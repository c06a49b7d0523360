// Browserbase as a browser provider: each pool session is a Browserbase session, created through the sessions API,
// reached over CDP (the connect a browser at cdpUrl gets) and released when the pool closes the session or it failed
// to open. The pool's retries follow the original: 5 attempts; after a rate limit 10 s, after other errors 1, 2, 4, 8 s.
import type { Browser } from 'playwright';
import { BrowserbaseClient, BrowserbaseError, BrowserbaseRateLimitError } from './browserbase-api';
import type { BrowserbaseAccount } from './browserbase-api';
import { launchBrowser } from './launch';
import type { BrowserProvider, ProvidedBrowser } from './provider';

export type BrowserbaseTiming = {
  /** Tries per session, each from scratch. */
  attempts: number;
  /** The wait after the API answered 429. */
  rateLimitWaitMs: number;
  /** The wait after any other failure of attempt n is backoffMs · 2^(n−1). */
  backoffMs: number;
};

export const DEFAULT_BROWSERBASE_TIMING: BrowserbaseTiming = { attempts: 5, rateLimitWaitMs: 10_000, backoffMs: 1_000 };

/** The wait before the next attempt: fixed after a rate limit (backing off would grow too slowly), else doubling. */
export function browserbaseRetryDelayMs(
  attempt: number,
  error: unknown,
  timing: BrowserbaseTiming = DEFAULT_BROWSERBASE_TIMING,
): number {
  if (error instanceof BrowserbaseRateLimitError) return timing.rateLimitWaitMs;
  return timing.backoffMs * 2 ** (attempt - 1);
}

export type BrowserbaseOptions = BrowserbaseAccount & {
  /** Tests shorten the waits. */
  timing?: Partial<BrowserbaseTiming>;
  /** Where a release that failed is told (the worker's log). */
  log?: (line: string) => void;
};

const firstLine = (err: unknown): string =>
  ((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').trim();

export class BrowserbaseProvider implements BrowserProvider {
  readonly name = 'Browserbase';
  private readonly client: BrowserbaseClient;
  private readonly timing: BrowserbaseTiming;

  constructor(private readonly options: BrowserbaseOptions) {
    this.client = new BrowserbaseClient(options);
    this.timing = { ...DEFAULT_BROWSERBASE_TIMING, ...options.timing };
  }

  get attempts(): number {
    return this.timing.attempts;
  }

  retryDelayMs(attempt: number, error: unknown): number {
    return browserbaseRetryDelayMs(attempt, error, this.timing);
  }

  hide(text: string): string {
    return this.client.hide(text);
  }

  /** A new Browserbase session, connected; a session that cannot be connected to is released at once. */
  async acquire(): Promise<ProvidedBrowser> {
    const session = await this.client.createSession();
    let browser: Browser;
    try {
      browser = await launchBrowser({ cdpUrl: session.connectUrl });
    } catch (err) {
      await this.release(session.id);
      throw new BrowserbaseError(
        `Browserbase: connecting to session ${session.id} failed: ${this.client.hide(firstLine(err))}`,
      );
    }
    let released: Promise<void> | undefined;
    const release = () =>
      (released ??= (async () => {
        await browser.close().catch(() => undefined);
        await this.release(session.id);
      })());
    return { id: session.id, browser, release };
  }

  private async release(id: string): Promise<void> {
    try {
      await this.client.releaseSession(id);
    } catch (err) {
      // Browserbase ends an unreleased session at its own timeout; the worker can only say so.
      this.options.log?.(`${firstLine(err)} (Browserbase ends it at the session timeout)`);
    }
  }
}
