// A browser provider: a service that starts a browser of its own for each session (Browserbase), where the pool
// otherwise opens every session in one shared browser. The pool asks it for a browser per session, ends it with the
// session, and tries a session that failed to open again from scratch, as often and as late as the provider says.
import type { Browser } from 'playwright';

/** One session's browser from a provider. */
export type ProvidedBrowser = {
  /** The provider's id for the session (for logs). */
  id: string;
  /** Connected over CDP; the session works in its default context. */
  browser: Browser;
  /** Disconnects and ends the provider's session; never throws, and a second call does nothing. */
  release(): Promise<void>;
};

export interface BrowserProvider {
  /** For messages: "Browserbase". */
  readonly name: string;
  /** How many times a session is tried, each from scratch (a new browser, set up, first page, captcha gate). */
  readonly attempts: number;
  /** Starts a browser for one session (bounded in time by the provider); errors name no credential. */
  acquire(): Promise<ProvidedBrowser>;
  /** How long to wait before attempt `attempt + 1` after attempt `attempt` failed with `error`. */
  retryDelayMs(attempt: number, error: unknown): number;
  /** `text` (an error's, for a log line or a failure) without the provider's credentials. */
  hide(text: string): string;
}
