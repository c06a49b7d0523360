// Bringing a dead page back: only for target-closed and proxy-tunnel failures; everything else surfaces unchanged.
import type { Browser, BrowserContext, Page } from 'playwright';
import { BrowserClosedError, PageRecoveryError } from './errors';

const RECOVERABLE_MESSAGES = [
  'Target page, context or browser has been closed',
  'Target closed',
  'Target crashed',
  'Page crashed',
  'net::ERR_TUNNEL_CONNECTION_FAILED',
];

/** True for the failures a reload or a fresh page can cure: a closed or crashed target, a broken proxy tunnel. */
export function isRecoverable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TargetClosedError') return true;
  return RECOVERABLE_MESSAGES.some((m) => error.message.includes(m));
}

export type RecoveryTarget = {
  page: Page;
  context: BrowserContext;
  browser: Browser | null;
  /** True when the page object itself is unusable (closed or its renderer crashed). */
  pageIsDead: boolean;
  /** The URL to go back to if reloading is not enough. */
  lastUrl: string;
};

function describe(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
}

async function probe(page: Page): Promise<boolean> {
  try {
    await Promise.race([
      page.evaluate('1'),
      new Promise((_, reject) => setTimeout(() => reject(new Error('probe timed out')), 2_000)),
    ]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Probe → browser connected? → reload → re-visit the URL (on a fresh page if this one is dead).
 * Resolves to the page to use from now on, which may be a new one.
 */
export async function recoverPage(target: RecoveryTarget, navTimeoutMs = 30_000): Promise<Page> {
  const { page, context, browser, lastUrl } = target;
  if (!target.pageIsDead && (await probe(page))) return page;
  if (browser !== null && !browser.isConnected()) {
    throw new BrowserClosedError('The browser is no longer connected; the page cannot be recovered.');
  }
  let reloadError: unknown = new Error('page is closed or crashed, nothing to reload');
  if (!target.pageIsDead) {
    try {
      await page.reload({ waitUntil: 'commit', timeout: navTimeoutMs });
      return page;
    } catch (error) {
      reloadError = error;
    }
  }
  let fresh: Page | undefined;
  try {
    fresh = target.pageIsDead ? await context.newPage() : page;
    await fresh.goto(lastUrl, { waitUntil: 'commit', timeout: navTimeoutMs });
    return fresh;
  } catch (gotoError) {
    if (fresh !== undefined && fresh !== page) await fresh.close().catch(() => undefined);
    throw new PageRecoveryError(
      `Could not recover the page at ${lastUrl}: reload failed (${describe(reloadError)}); ` +
        `visiting the URL again failed (${describe(gotoError)}).`,
      { cause: gotoError },
    );
  }
}
