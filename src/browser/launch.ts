// Starting Chromium: Debian's binary launched locally, or a remote browser reached over CDP.
import { chromium } from 'playwright';
import type { Browser } from 'playwright';
import { CHROMIUM_ARGS, withDisabledFeatures } from '../infra/chromium';
import { chromiumPath as findChromium } from '../infra/paths';

export { CHROMIUM_ARGS };

export type LaunchOptions = {
  /** Connect to this remote browser (ws:// or http:// CDP endpoint) instead of launching one. */
  cdpUrl?: string;
  /** Chromium binary; defaults to env CUA_CHROMIUM, then `chromium` on PATH. */
  executablePath?: string;
  headless?: boolean;
  extraArgs?: readonly string[];
};

/** The explicit binary, else CUA_CHROMIUM, else Debian's chromium on PATH. */
export function chromiumPath(explicit?: string): string {
  return explicit ?? findChromium();
}

export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  if (options.cdpUrl !== undefined) return chromium.connectOverCDP(options.cdpUrl);
  return chromium.launch({
    executablePath: chromiumPath(options.executablePath),
    headless: options.headless ?? true,
    args: withDisabledFeatures([...CHROMIUM_ARGS, ...(options.extraArgs ?? [])]),
  });
}
