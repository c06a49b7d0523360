// The browser pool and the desktop pool a worker process opens its sessions in, built from its config (the browser the
// application gives, a Browserbase provider, or our own Chromium; desktops when this machine has the programs).
import type { Browser } from 'playwright';
import type { Config } from '../src/runtime/config';
import { captchaSignalsOn } from '../src/runtime/config';
import { ConfigError } from '../src/common/config-error';
import { BrowserbaseProvider } from '../src/browser/browserbase';
import { BrowserPool } from '../src/browser/pool';
import type { BrowserProvider } from '../src/browser/provider';
import { DesktopPool, desktopSupport } from '../src/desktop';

/** The browser provider the config names (Browserbase), or undefined for the worker's own Chromium. */
function browserProviderFor(config: Config, log: (line: string) => void): BrowserProvider | undefined {
  if (config.browser.provider !== 'browserbase') return undefined;
  const { apiKey, projectId, baseUrl } = config.browser.browserbase ?? {};
  // The config schema requires both; a Config built by hand may lack them.
  if (!apiKey || !projectId)
    throw new ConfigError("browser.provider 'browserbase' needs browserbase.apiKey and projectId");
  return new BrowserbaseProvider({ apiKey, projectId, ...(baseUrl ? { baseUrl } : {}), log });
}

/** The browser pool: sessions in the application's `browser` when given, the configured provider's, or our Chromium. */
export function browserPoolFor(config: Config, browser: Browser | undefined, log: (line: string) => void): BrowserPool {
  const provider = browserProviderFor(config, log);
  if (provider && browser) {
    throw new ConfigError("a worker given a browser of its own cannot also use browser.provider 'browserbase'");
  }
  return new BrowserPool({
    ...(browser ? { browser } : {}),
    ...(provider ? { provider, log } : {}),
    launch: {
      ...(config.browser.executablePath ? { executablePath: config.browser.executablePath } : {}),
      ...(config.browser.cdpUrl ? { cdpUrl: config.browser.cdpUrl } : {}),
      headless: config.browser.headless,
    },
    slots: config.browser.slots,
    idleTimeoutMs: config.browser.idleTimeoutSeconds * 1000,
    takeover: { ...config.takeover, cdp: config.browser.takeoverCdp },
    defaults: {
      maxDownloadBytes: config.browser.maxDownloadMiB * 1024 * 1024,
      readyCapMs: config.browser.pageReadyTimeoutSeconds * 1000,
      captchaSignals: captchaSignalsOn(config.browser),
      ...(config.browser.typingDelayMs !== undefined ? { typingDelayMs: config.browser.typingDelayMs } : {}),
      ...(config.browser.fastTyping !== undefined ? { fastTyping: config.browser.fastTyping } : {}),
      ...(config.browser.keyTypingHosts ? { keyTypingHosts: config.browser.keyTypingHosts } : {}),
    },
  });
}

/** A desktop pool when the config allows desktops and this machine has the programs; otherwise says why, once. */
export function desktopPoolFor(config: Config, log: (line: string) => void): DesktopPool | undefined {
  if (config.desktop.slots === 0) return undefined;
  const support = desktopSupport();
  if (!support.ok) {
    log(`desktop tasks: off on this worker (missing ${support.missing.join(', ')}; install: ${support.aptLine})`);
    return undefined;
  }
  return new DesktopPool({
    slots: config.desktop.slots,
    idleTimeoutMs: config.desktop.idleTimeoutSeconds * 1000,
    ...(config.desktop.sandboxUid !== undefined ? { sandboxUid: config.desktop.sandboxUid } : {}),
    takeover: { host: config.takeover.host },
    log,
  });
}
