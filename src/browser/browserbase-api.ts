// Browserbase's sessions API, the two calls we make: create a session (POST /v1/sessions) and ask for its release
// (POST /v1/sessions/{id}, status REQUEST_RELEASE). Our own small client over fetch; the API key goes only in the
// X-BB-API-Key header to the configured base URL, and no error text carries it or a session's connect URL.
import { z } from 'zod';
import { BrowserError } from './errors';

export const BROWSERBASE_API_URL = 'https://api.browserbase.com';

/** Where and as whom: the worker's `browser.browserbase` configuration. */
export type BrowserbaseAccount = { apiKey: string; projectId: string; baseUrl?: string };

export type BrowserbaseSession = { id: string; connectUrl: string };

/** A sessions API call failed; `status` is the HTTP status when there was an answer. */
export class BrowserbaseError extends BrowserError {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The API answered 429: too many sessions or requests for the account right now. */
export class BrowserbaseRateLimitError extends BrowserbaseError {}

/** The fields of a created session we use (the API sends more). */
const CreatedSessionSchema = z.object({
  id: z.string().min(1),
  connectUrl: z.string().refine((u) => /^wss?:\/\//i.test(u), 'a ws:// or wss:// URL'),
});

/**
 * `text` without the credentials it might quote: the API key, and the query of any WebSocket URL (a connect URL
 * carries a signing key there).
 */
export function hideCredentials(text: string, apiKey: string): string {
  const withoutKey = apiKey ? text.split(apiKey).join('[redacted]') : text;
  return withoutKey.replace(/(wss?:\/\/[^\s?"'`]*)\?[^\s"'`]*/gi, '$1?[redacted]');
}

const firstLine = (text: string): string => (text.split('\n')[0] ?? '').trim().slice(0, 200);

export class BrowserbaseClient {
  private readonly baseUrl: string;

  constructor(
    private readonly account: BrowserbaseAccount,
    private readonly timeoutMs = 30_000,
  ) {
    this.baseUrl = (account.baseUrl ?? BROWSERBASE_API_URL).replace(/\/+$/, '');
  }

  /** Errors as text fit for logs and history. */
  hide(text: string): string {
    return hideCredentials(text, this.account.apiKey);
  }

  /** A new session in the account's project: its id and the CDP URL to connect to. */
  async createSession(): Promise<BrowserbaseSession> {
    const body = await this.post('/v1/sessions', { projectId: this.account.projectId }, 'creating a session');
    const parsed = CreatedSessionSchema.safeParse(body);
    if (!parsed.success) {
      const what = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
      throw new BrowserbaseError(`Browserbase: creating a session answered an unexpected body (${this.hide(what)})`);
    }
    return parsed.data;
  }

  /** Asks Browserbase to end the session (its browser goes away). */
  async releaseSession(id: string): Promise<void> {
    await this.post(
      `/v1/sessions/${encodeURIComponent(id)}`,
      { status: 'REQUEST_RELEASE', projectId: this.account.projectId },
      `releasing session ${id}`,
    );
  }

  private async post(pathname: string, payload: unknown, what: string): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-bb-api-key': this.account.apiKey },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new BrowserbaseError(`Browserbase: ${what} failed: ${this.hide(why)}`);
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) {
      const detail = firstLine(text);
      const message = `Browserbase: ${what} answered HTTP ${response.status}${detail ? `: ${this.hide(detail)}` : ''}`;
      const Failure = response.status === 429 ? BrowserbaseRateLimitError : BrowserbaseError;
      throw new Failure(message, response.status);
    }
    try {
      return text ? (JSON.parse(text) as unknown) : {};
    } catch {
      throw new BrowserbaseError(`Browserbase: ${what} answered HTTP ${response.status} with a body that is not JSON`);
    }
  }
}
