// A browser session set up in a browser: its URL policy guard, its context (a new one, or a provider's default one
// adopted), the run's request journal, the environment and the first page. The pool (pool.ts) decides which browser.
import type { Browser, BrowserContext } from 'playwright';
import { BrowserEnvironment } from './environment';
import { BrowserError } from './errors';
import { DEFAULT_DOWNLOAD_LIMITS } from './downloads';
import { PolicyGuard } from './policy-guard';
import { seedSessionStorageOnLoad } from './page-state';
import { SAME_TAB_SEARCH_COOKIE } from '../contract/runtime-cookies';
import { DEFAULT_URL_POLICY } from '../contract/url-policy';
import type { OpenSessionOptions, PoolOptions } from './pool-options';

/** What Playwright's `serviceWorkers: 'block'` does, for a context it was not created with (a provider's default one). */
const BLOCK_SERVICE_WORKERS =
  'if (self.ServiceWorkerContainer) ServiceWorkerContainer.prototype.register = async () => undefined;';

/** Keeps Bing's result links in the same tab (the runtime's own cookie; a saved sign-in leaves it out). */
export { SAME_TAB_SEARCH_COOKIE };

/**
 * Sets up a session in `browser`: its URL policy, a context (a new one, or with `adoptDefault` the browser's
 * default one, as a provider's browser is meant to be used), the environment and the first page. On failure closes
 * what it opened.
 */
export async function openSessionIn(
  browser: Browser,
  options: OpenSessionOptions,
  adoptDefault: boolean,
  pool: PoolOptions,
): Promise<BrowserEnvironment> {
  let context: BrowserContext | undefined;
  let guard: PolicyGuard | undefined;
  try {
    guard = await PolicyGuard.open(options.urlPolicy ?? pool.urlPolicy ?? DEFAULT_URL_POLICY, {
      egressProxy: pool.egressProxy ?? (pool.launch?.cdpUrl === undefined && !pool.provider),
      ...(pool.lookup ? { lookup: pool.lookup } : {}),
      // A document fetched under interception is held to the session's download cap.
      maxDocumentBytes:
        options.environment?.maxDownloadBytes ?? pool.defaults?.maxDownloadBytes ?? DEFAULT_DOWNLOAD_LIMITS.maxBytes,
    });
    const existing = adoptDefault ? browser.contexts()[0] : undefined;
    context = existing ? await adoptContext(existing, options, guard) : await newContext(browser, options, guard);
    await guard.attach(context);
    await options.journal?.attach(context, guard.intercepts);
    await context.addCookies([{ ...SAME_TAB_SEARCH_COOKIE }]);
    const env = await BrowserEnvironment.create(
      context,
      {
        ...pool.defaults,
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
