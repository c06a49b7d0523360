// A session in a browser of a provider's (Browserbase): each attempt from scratch (a new browser, set up, the first
// page, the captcha gate), a failed attempt's browser released before the next is asked for, and what is told of a
// failure kept free of credentials.
import type { BrowserEnvironment } from './environment';
import { BrowserClosedError, BrowserProviderError, CaptchaTimeoutError, PolicyBlockedError } from './errors';
import type { BrowserProvider, ProvidedBrowser } from './provider';
import { openSessionIn } from './session-setup';
import type { OpenSessionOptions, PoolOptions } from './pool-options';
import { sleep } from '../common/sleep';

const firstLine = (err: unknown): string =>
  ((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').trim();

/**
 * A session in a browser of the provider's, tried up to its attempts, each from scratch: a new browser, set up, the
 * first page, the captcha gate. A failed attempt's browser is released before the next one is asked for.
 */
export async function openProvided(
  provider: BrowserProvider,
  options: OpenSessionOptions,
  pool: PoolOptions,
  isShutDown: () => boolean,
  signal?: AbortSignal,
): Promise<{ env: BrowserEnvironment; provided: ProvidedBrowser }> {
  let failure: unknown;
  for (let attempt = 1; attempt <= provider.attempts; attempt++) {
    if (isShutDown()) throw new BrowserClosedError('The browser pool has been shut down.');
    let provided: ProvidedBrowser | undefined;
    try {
      // Not abortable: a create cut off in flight could leave a session nobody knows the id of, to release.
      provided = await provider.acquire();
      if (signal?.aborted) throw new BrowserClosedError('the open was cancelled or ran out of time');
      const env = await openSessionIn(provided.browser, options, true, pool);
      try {
        await passCaptchaGate(env, options.captchaWaitMs, signal);
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
      pool.log?.(
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
async function passCaptchaGate(env: BrowserEnvironment, waitMs = 0, signal?: AbortSignal): Promise<void> {
  if (waitMs <= 0 || env.captcha.isOpen || signal?.aborted) return;
  const aborted = new Promise<false>((resolve) =>
    signal?.addEventListener('abort', () => resolve(false), { once: true }),
  );
  if (await Promise.race([env.waitForCaptcha(waitMs), aborted])) return;
  throw new CaptchaTimeoutError(`the captcha on ${env.url()} was not solved within ${Math.round(waitMs / 1000)}s`);
}
