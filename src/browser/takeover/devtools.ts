// Where a locally launched Chromium listens for raw DevTools connections. Playwright drives it over a pipe; launched
// with `--remote-debugging-port=0` it also listens on a free 127.0.0.1 port, which it writes to DevToolsActivePort in
// its profile folder (with the browser target's path). The profile folder is Playwright's temporary one, found on the
// browser process's command line (its pid from CDP SystemInfo). Linux only (/proc); elsewhere: none.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright';

/** The flag that makes Chromium listen for DevTools on a free loopback port. */
export const DEVTOOLS_PORT_ARG = '--remote-debugging-port=0';

export type DevToolsEndpoint = {
  /** On 127.0.0.1. */
  port: number;
  /** The browser target's WebSocket path: /devtools/browser/<id>. */
  browserPath: string;
};

type ProcessInfo = { processInfo: Array<{ type: string; id: number }> };

/** The DevTools endpoint of a Chromium launched on this machine with DEVTOOLS_PORT_ARG; undefined when it has none. */
export async function devToolsEndpoint(browser: Browser): Promise<DevToolsEndpoint | undefined> {
  try {
    const session = await browser.newBrowserCDPSession();
    const info = (await session.send('SystemInfo.getProcessInfo')) as ProcessInfo;
    await session.detach().catch(() => undefined);
    const pid = info.processInfo.find((p) => p.type === 'browser')?.id;
    if (pid === undefined) return undefined;
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    const dir = args.find((a) => a.startsWith('--user-data-dir='))?.slice('--user-data-dir='.length);
    if (!dir) return undefined;
    const [port, browserPath] = (await readFile(path.join(dir, 'DevToolsActivePort'), 'utf8')).split('\n');
    const portNumber = Number(port);
    if (!Number.isInteger(portNumber) || portNumber <= 0 || !browserPath?.startsWith('/devtools/browser/')) {
      return undefined;
    }
    return { port: portNumber, browserPath: browserPath.trim() };
  } catch {
    return undefined;
  }
}
