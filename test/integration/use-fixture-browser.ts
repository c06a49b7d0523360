// The fixture site and a browser pool with one session open on it, as a suite fixture: started before the suite's
// tests, closed after them.
import { afterAll, beforeAll } from 'vitest';
import { BrowserPool } from '../../src/browser';
import type { BrowserEnvironment } from '../../src/browser';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

export interface FixtureBrowser {
  server: FixtureServer;
  pool: BrowserPool;
  /** The session opened for the suite (1024×768). */
  env: BrowserEnvironment;
}

/** Starts the fixture site (with `route`'s extra pages) and a pool of `slots` with one session open, for the suite. */
export function useFixtureBrowser(
  set: (b: FixtureBrowser) => void,
  opts: { slots?: number; route?: (server: FixtureServer) => void } = {},
): void {
  let server: FixtureServer | undefined;
  let pool: BrowserPool | undefined;
  beforeAll(async () => {
    server = await startFixtureServer();
    opts.route?.(server);
    pool = new BrowserPool({ slots: opts.slots ?? 1 });
    const { env } = await pool.openSession({
      viewport: { width: 1024, height: 768 },
      downloadsDir: '/tmp/cua-test-downloads',
    });
    set({ server, pool, env });
  });
  afterAll(async () => {
    await pool?.shutdown();
    await server?.close();
  });
}
