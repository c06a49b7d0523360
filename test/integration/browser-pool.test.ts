// The worker's pool: isolated sessions on one browser, a session limit, idle sessions closed, clean shutdown,
// a remote browser reached over CDP, and sessions held while their tasks wait for a reply (issue 25).
import net from 'node:net';
import type { Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserClosedError, BrowserPool, PoolFullError, UnknownSessionError, launchBrowser } from '../../src/browser';
import { freeSlotSupplier } from '../../worker/open-slots';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

const SESSION = { viewport: { width: 640, height: 480 }, downloadsDir: '/tmp/cua-test-downloads' };
let server: FixtureServer;
let browser: Browser;
let cdpPort: number;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  server = await startFixtureServer();
  cdpPort = await freePort();
  // One browser for the whole file; it also listens for CDP so a pool can reach it as a remote browser.
  browser = await launchBrowser({ extraArgs: [`--remote-debugging-port=${cdpPort}`] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('BrowserPool', () => {
  it('gives each session its own context and refuses sessions beyond the limit', async () => {
    const pool = new BrowserPool({ browser, slots: 2 });
    try {
      const a = await pool.openSession({ ...SESSION, url: server.url('/login?user=ann') });
      const b = await pool.openSession({ ...SESSION, url: server.url('/account') });
      expect(await b.env.page.textContent('#who')).toBe('Not logged in');
      await expect(pool.openSession(SESSION)).rejects.toBeInstanceOf(PoolFullError);
      expect(pool.get(a.sessionId)).toBe(a.env);

      await pool.close(a.sessionId);
      expect(() => pool.get(a.sessionId)).toThrow(UnknownSessionError);
      await expect(a.env.leftClick(1, 1)).rejects.toBeInstanceOf(BrowserClosedError);
      const c = await pool.openSession(SESSION);
      expect(pool.sessionIds().sort()).toEqual([b.sessionId, c.sessionId].sort());
    } finally {
      await pool.shutdown();
    }
    expect(browser.isConnected()).toBe(true);
  });

  it('a full pool lets openers wait in line: a freed slot goes to the first, in order; the line is bounded', async () => {
    const pool = new BrowserPool({ browser, slots: 1, maxWaiters: 2 });
    try {
      const a = await pool.openSession(SESSION);
      const order: string[] = [];
      const first = pool.openSession(SESSION, { timeoutMs: 20_000 }).then((s) => (order.push('first'), s));
      const second = pool.openSession(SESSION, { timeoutMs: 20_000 }).then((s) => (order.push('second'), s));
      await expect.poll(() => pool.waiting).toBe(2);
      // The line is full: a third is refused at once, saying why.
      await expect(pool.openSession(SESSION, { timeoutMs: 20_000 })).rejects.toThrow(/2 tasks wait for a slot/);
      await pool.close(a.sessionId);
      const one = await first;
      expect(order).toEqual(['first']);
      expect(pool.waiting).toBe(1);
      await pool.close(one.sessionId);
      await second;
      expect(order).toEqual(['first', 'second']);
      // Waiting is bounded in time and can be abandoned.
      await expect(pool.openSession(SESSION, { timeoutMs: 200 })).rejects.toThrow(/no slot came free within/);
      const gaveUp = new AbortController();
      const waiting = pool.openSession(SESSION, { timeoutMs: 20_000, signal: gaveUp.signal });
      gaveUp.abort();
      await expect(waiting).rejects.toBeInstanceOf(PoolFullError);
      expect(pool.waiting).toBe(0);
    } finally {
      await pool.shutdown();
    }
  });

  it("opening a session for an owner first closes the one it still holds (a lost activity's)", async () => {
    const pool = new BrowserPool({ browser, slots: 1 });
    try {
      const lost = await pool.openSession({ ...SESSION, owner: 'run-a' });
      // The pool is full, but the slot held for run-a is run-a's own stale session: it is closed, not waited for.
      const again = await pool.openSession({ ...SESSION, owner: 'run-a' });
      expect(pool.has(lost.sessionId)).toBe(false);
      expect(pool.sessionIds()).toEqual([again.sessionId]);
      await expect(pool.openSession({ ...SESSION, owner: 'run-b' })).rejects.toBeInstanceOf(PoolFullError);
    } finally {
      await pool.shutdown();
    }
  });

  it('closes sessions left idle past the timeout, but not busy ones', async () => {
    const pool = new BrowserPool({ browser, idleTimeoutMs: 600, sweepIntervalMs: 50 });
    try {
      const idle = await pool.openSession(SESSION);
      const busy = await pool.openSession(SESSION);
      const waiting = busy.env.wait(2);
      await expect.poll(() => pool.has(idle.sessionId), { timeout: 5_000 }).toBe(false);
      expect(pool.has(busy.sessionId)).toBe(true);
      await waiting;
    } finally {
      await pool.shutdown();
    }
  });

  it('shuts down cleanly: sessions closed, no new ones', async () => {
    const pool = new BrowserPool({ browser });
    const { env } = await pool.openSession(SESSION);
    await pool.shutdown();
    expect(pool.size).toBe(0);
    await expect(env.screenshot()).rejects.toBeInstanceOf(BrowserClosedError);
    await expect(pool.openSession(SESSION)).rejects.toBeInstanceOf(BrowserClosedError);
  });

  it('drives a remote browser over CDP', async () => {
    const pool = new BrowserPool({ launch: { cdpUrl: `http://127.0.0.1:${cdpPort}` } });
    try {
      const { env } = await pool.openSession({ ...SESSION, url: server.url('/pages/target.html?from=cdp') });
      expect(await env.page.textContent('#from')).toBe('from cdp');
      expect((await env.screenshot()).subarray(1, 4).toString()).toBe('PNG');
    } finally {
      await pool.shutdown();
    }
    expect(browser.isConnected()).toBe(true);
  });
});

describe('BrowserPool: sessions held while their tasks wait for a reply', () => {
  const ctx = {} as never;

  it('a held session counts as a free slot for the open-slot supplier, and a reclaim takes it back as it was', async () => {
    const pool = new BrowserPool({ browser, slots: 1 });
    const slots = freeSlotSupplier(pool);
    try {
      const a = await pool.openSession({ ...SESSION, url: server.url('/account') });
      expect(slots.tryReserveSlot(ctx)).toBeNull();
      expect(pool.hold(a.sessionId, 60_000, async () => undefined)).toBe(true);
      expect(pool.held).toBe(1);
      const permit = slots.tryReserveSlot(ctx);
      expect(permit).not.toBeNull();
      slots.releaseSlot(ctx);
      expect(pool.reclaim(a.sessionId)).toBe(true);
      expect(pool.get(a.sessionId)).toBe(a.env);
      expect(slots.tryReserveSlot(ctx)).toBeNull();
      expect(pool.reclaim(a.sessionId)).toBe(false); // taken back already: no longer held
    } finally {
      slots.dispose();
      await pool.shutdown();
    }
  });

  it('an open in a pool full of held sessions saves and closes the one held longest', async () => {
    const pool = new BrowserPool({ browser, slots: 2 });
    const saved: string[] = [];
    try {
      const first = await pool.openSession(SESSION);
      const second = await pool.openSession(SESSION);
      pool.hold(first.sessionId, 60_000, async (why) => void saved.push(`first ${why}`));
      await new Promise((r) => setTimeout(r, 5)); // held later
      pool.hold(second.sessionId, 60_000, async (why) => void saved.push(`second ${why}`));
      const third = await pool.openSession(SESSION);
      expect(saved).toEqual(['first pool_needed']);
      expect(pool.has(first.sessionId)).toBe(false);
      expect(pool.reclaim(first.sessionId)).toBe(false);
      expect(pool.reclaim(second.sessionId)).toBe(true);
      expect(pool.sessionIds().sort()).toEqual([second.sessionId, third.sessionId].sort());
    } finally {
      await pool.shutdown();
    }
  });

  it('a hold that ends saves and closes the session; the idle sweep never closes a held one; shutdown saves', async () => {
    const pool = new BrowserPool({ browser, idleTimeoutMs: 300, sweepIntervalMs: 50 });
    const saved: string[] = [];
    try {
      // Each held as it opens (an open may take longer than the idle limit on a busy machine).
      const held = await pool.openSession(SESSION);
      pool.hold(held.sessionId, 60_000, async (why) => void saved.push(`held ${why}`));
      const expiring = await pool.openSession(SESSION);
      pool.hold(expiring.sessionId, 60_000, async (why) => void saved.push(`expiring ${why}`));
      const idle = await pool.openSession(SESSION);
      await expect.poll(() => pool.has(idle.sessionId), { timeout: 5_000 }).toBe(false);
      expect(pool.has(expiring.sessionId)).toBe(true); // idle past the limit, but held
      // Held again, shortly this time (a hold replaces the one before): it ends unclaimed.
      pool.hold(expiring.sessionId, 300, async (why) => void saved.push(`expiring ${why}`));
      await expect.poll(() => pool.has(expiring.sessionId), { timeout: 5_000 }).toBe(false);
      expect(saved).toEqual(['expiring expired']);
      expect(pool.has(held.sessionId)).toBe(true);
      await pool.shutdown();
      expect(saved).toEqual(['expiring expired', 'held shutdown']);
      expect(pool.size).toBe(0);
    } finally {
      await pool.shutdown();
    }
  });

  it('a session is not held while openers wait in line for a slot (they get it)', async () => {
    const pool = new BrowserPool({ browser, slots: 1 });
    try {
      const a = await pool.openSession(SESSION);
      const waiter = pool.openSession(SESSION, { timeoutMs: 10_000 });
      await expect.poll(() => pool.waiting).toBe(1);
      expect(pool.hold(a.sessionId, 60_000, async () => undefined)).toBe(false);
      await pool.close(a.sessionId);
      await waiter;
    } finally {
      await pool.shutdown();
    }
  });
});
