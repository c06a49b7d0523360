// Browserbase as the pool's browser provider, against a local stand-in of its sessions API that hands out local
// Chromiums over CDP: sessions opened, driven in their default context and released (at close, on failure, between
// attempts), the retry waits (429: fixed; others: doubling), the captcha gate at open, and no credential in errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserbaseProvider } from '../../src/browser/browserbase';
import type { BrowserbaseTiming } from '../../src/browser/browserbase';
import { BrowserPool, CAPTCHA_SOLVING_FINISHED, CAPTCHA_SOLVING_STARTED } from '../../src/browser';
import type { OpenSessionOptions } from '../../src/browser';
import { BrowserProviderError, PolicyBlockedError } from '../../src/browser/errors';
import { UrlPolicySchema } from '../../src/contract/url-policy';
import { startBrowserbaseStandIn } from '../fixtures/browserbase/server';
import type { BrowserbaseStandIn } from '../fixtures/browserbase/server';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

const SESSION: OpenSessionOptions = { viewport: { width: 800, height: 600 }, downloadsDir: '/tmp/cua-test-downloads' };
let bb: BrowserbaseStandIn;
let site: FixtureServer;

beforeAll(async () => {
  [bb, site] = await Promise.all([startBrowserbaseStandIn(), startFixtureServer()]);
  const page = (body: string) =>
    `<!doctype html><title>Captcha</title><p id="state">checking</p><script>${body}</script>`;
  // Pages announcing a solve on the console, as Browserbase's solver does: one that ends after 300 ms, one that never does.
  site.route('/captcha/solved', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      page(
        `console.log('${CAPTCHA_SOLVING_STARTED}');` +
          `setTimeout(() => { document.getElementById('state').textContent = 'solved'; ` +
          `console.log('${CAPTCHA_SOLVING_FINISHED}'); }, 300);`,
      ),
    );
  });
  site.route('/captcha/stuck', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page(`console.log('${CAPTCHA_SOLVING_STARTED}');`));
  });
}, 60_000);

afterAll(async () => {
  await bb?.close();
  await site?.close();
});

/** A pool on the stand-in with short retry waits; `log` collects its lines. */
function poolOn(timing: Partial<BrowserbaseTiming> = {}, apiKey = bb.apiKey) {
  const log: string[] = [];
  const provider = new BrowserbaseProvider({
    apiKey,
    projectId: bb.projectId,
    baseUrl: bb.url,
    timing: { rateLimitWaitMs: 1_000, backoffMs: 100, ...timing },
    log: (line) => log.push(line),
  });
  const pool = new BrowserPool({
    provider,
    log: (line) => log.push(line),
    slots: 2,
    defaults: { captchaSignals: true, captchaResumeMs: 200 },
  });
  return { pool, log };
}

const releases = () => bb.requests.filter((r) => r.path.startsWith('/v1/sessions/'));
/** The stand-in's requests from index `from` on, as "create" or "release <n>" (n: the session's creation order). */
const timeline = (from: number) =>
  bb.requests.slice(from).map((r) => {
    if (r.path === '/v1/sessions') return 'create';
    return `release ${bb.sessions.findIndex((s) => r.path.endsWith(s.id))}`;
  });

describe('Browserbase sessions', () => {
  it('opens a session through the API, drives its default context, and releases it when the session closes', async () => {
    const { pool } = poolOn();
    const before = bb.requests.length;
    try {
      const { sessionId, env } = await pool.openSession({ ...SESSION, url: site.url('/pages/target.html?from=bb') });
      expect(await env.page.textContent('#from')).toBe('from bb');
      expect((await env.screenshot()).subarray(1, 4).toString('latin1')).toBe('PNG');
      const browser = env.page.context().browser();
      expect(browser?.contexts()).toEqual([env.page.context()]); // the session's default context, no other
      expect(env.page.context().pages()).toEqual([env.page]);
      expect(env.page.viewportSize()).toEqual(SESSION.viewport);

      const [create] = bb.requests.slice(before);
      expect(create).toEqual({
        method: 'POST',
        path: '/v1/sessions',
        apiKey: bb.apiKey,
        body: { projectId: bb.projectId },
      });
      const session = bb.sessions.at(-1);
      expect(bb.running()).toEqual([session]);

      await pool.close(sessionId);
      expect(bb.running()).toEqual([]);
      expect(releases().at(-1)).toEqual({
        method: 'POST',
        path: `/v1/sessions/${session?.id}`,
        apiKey: bb.apiKey,
        body: { status: 'REQUEST_RELEASE', projectId: bb.projectId },
      });
      expect(browser?.isConnected()).toBe(false);
    } finally {
      await pool.shutdown();
    }
  });

  it('after a rate limit (429) waits the fixed wait, then the next attempt opens', async () => {
    const { pool, log } = poolOn({ rateLimitWaitMs: 1_500 });
    bb.failCreates(429);
    const before = bb.requests.length;
    try {
      const started = Date.now();
      const { env } = await pool.openSession({ ...SESSION, url: site.url('/pages/target.html?from=retry') });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
      expect(await env.page.textContent('#from')).toBe('from retry');
      expect(timeline(before)).toEqual(['create', 'create']);
      expect(log).toEqual([
        'Browserbase: attempt 1 of 5 to open a session failed (Browserbase: creating a session answered HTTP 429: ' +
          '{"error":"stand-in failure 429","statusCode":429}); trying again in 1.5 s',
      ]);
    } finally {
      await pool.shutdown();
    }
    expect(bb.running()).toEqual([]);
  });

  it('after other errors waits 1, 2, … backoffs; a session that failed to connect is released before the next', async () => {
    const { pool, log } = poolOn({ backoffMs: 300 });
    bb.failCreates(500);
    bb.breakConnects(1);
    const before = bb.requests.length;
    const first = bb.sessions.length;
    try {
      const started = Date.now();
      await pool.openSession(SESSION);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300 + 600);
      expect(log.map((l) => l.replace(/\(.*\)/, '(…)'))).toEqual([
        'Browserbase: attempt 1 of 5 to open a session failed (…); trying again in 0.3 s',
        'Browserbase: attempt 2 of 5 to open a session failed (…); trying again in 0.6 s',
      ]);
      expect(log[1]).toMatch(/\(Browserbase: connecting to session \S+ failed: .*ECONNREFUSED/);
      expect(log.join('\n')).not.toContain('signingKey');
      // The 500, then the session nothing listens for (released), then the one that opened.
      expect(timeline(before)).toEqual(['create', 'create', `release ${first}`, 'create']);
    } finally {
      await pool.shutdown();
    }
    expect(bb.running()).toEqual([]);
  });

  it('a session whose setup fails is released before each next attempt; after the last, one error says why', async () => {
    const { pool } = poolOn({ attempts: 3, backoffMs: 50 });
    const dead = await startFixtureServer();
    await dead.close(); // its port refuses connections now
    const before = bb.requests.length;
    const first = bb.sessions.length;
    try {
      const opening = pool.openSession({ ...SESSION, url: dead.url('/pages/target.html') });
      await expect(opening).rejects.toBeInstanceOf(BrowserProviderError);
      await expect(opening).rejects.toThrow(
        /^Browserbase: no browser session after 3 attempts; the last failed: Could not open http:\/\/127\.0\.0\.1:\d+\/pages\/target\.html: .*ERR_CONNECTION_REFUSED/,
      );
      expect(timeline(before)).toEqual([
        'create',
        `release ${first}`,
        'create',
        `release ${first + 1}`,
        'create',
        `release ${first + 2}`,
      ]);
      expect(bb.running()).toEqual([]);
      expect(pool.busy).toBe(0);
    } finally {
      await pool.shutdown();
    }
  });

  it('a wrong API key fails with the HTTP status and without the key', async () => {
    const wrongKey = 'bb_live_wrong_key_0123456789';
    const { pool } = poolOn({ attempts: 2, backoffMs: 50 }, wrongKey);
    try {
      const error = (await pool.openSession(SESSION).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(BrowserProviderError);
      expect(error.message).toBe(
        'Browserbase: no browser session after 2 attempts; the last failed: ' +
          'Browserbase: creating a session answered HTTP 401: {"error":"Unauthorized"}',
      );
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(wrongKey);
    } finally {
      await pool.shutdown();
    }
  });

  it("holds the session's default context to the URL policy, service workers blocked", async () => {
    const { pool } = poolOn();
    const denied = await startFixtureServer();
    try {
      const urlPolicy = UrlPolicySchema.parse({ denyHosts: [`127.0.0.1:${denied.port}`] });
      const { env } = await pool.openSession({ ...SESSION, urlPolicy, url: site.url('/pages/target.html') });
      const visit = env.visitUrl(denied.url('/pages/target.html'));
      await expect(visit).rejects.toBeInstanceOf(PolicyBlockedError);
      // A navigation the page starts by itself is refused too, in the browser (the worker fetches documents).
      env.guard.takeBlocks();
      await env.page.evaluate((to) => void (location.href = to), denied.url('/pages/article.html'));
      await expect.poll(() => env.guard.pageBlocked).toBe(true);
      expect(env.url()).toBe(site.url('/pages/target.html'));
      expect(denied.requests).toEqual([]);
      const registered = await env.page.evaluate(async () => String(await navigator.serviceWorker.register('/sw.js')));
      expect(registered).toBe('undefined');
    } finally {
      await pool.shutdown();
      await denied.close();
    }
  });

  it('restores saved cookies and localStorage in a new session', async () => {
    const { pool } = poolOn();
    try {
      const first = await pool.openSession({ ...SESSION, url: site.url('/login?user=ann') });
      const state = await first.env.saveStorageState();
      await pool.close(first.sessionId);
      const second = await pool.openSession({ ...SESSION, storageState: state, url: site.url('/account') });
      expect(await second.env.page.textContent('#who')).toBe('Logged in as ann');
      expect(await second.env.page.textContent('#token')).toBe('tok-ann');
    } finally {
      await pool.shutdown();
    }
    expect(bb.running()).toEqual([]);
  });
});

describe('the captcha gate through Browserbase', () => {
  it('an open waits for a solve its first page started; the gate then stays open', async () => {
    const { pool } = poolOn();
    try {
      const started = Date.now();
      const { env } = await pool.openSession({ ...SESSION, url: site.url('/captcha/solved'), captchaWaitMs: 10_000 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300 + 200);
      expect(env.captcha.isOpen).toBe(true);
      expect(await env.page.textContent('#state')).toBe('solved');
      // Later solves close it again and open it after the resume delay and the page's DOMContentLoaded.
      await env.page.evaluate((m) => console.log(m), CAPTCHA_SOLVING_STARTED);
      await expect.poll(() => env.captcha.isOpen).toBe(false);
      await env.page.evaluate((m) => console.log(m), CAPTCHA_SOLVING_FINISHED);
      expect(await env.waitForCaptcha(5_000)).toBe(true);
    } finally {
      await pool.shutdown();
    }
  });

  it('a solve that does not end within the wait fails the attempt; each session is released', async () => {
    const { pool } = poolOn({ attempts: 2, backoffMs: 50 });
    const before = bb.requests.length;
    const first = bb.sessions.length;
    try {
      const opening = pool.openSession({ ...SESSION, url: site.url('/captcha/stuck'), captchaWaitMs: 500 });
      await expect(opening).rejects.toThrow(
        `Browserbase: no browser session after 2 attempts; the last failed: the captcha on ${site.url('/captcha/stuck')} was not solved within 1s`,
      );
      expect(timeline(before)).toEqual(['create', `release ${first}`, 'create', `release ${first + 1}`]);
    } finally {
      await pool.shutdown();
    }
  });

  it('an open cancelled (or out of time) while it waits for a solve stops at once and releases its session', async () => {
    const { pool } = poolOn();
    const before = bb.requests.length;
    const first = bb.sessions.length;
    const stop = new AbortController();
    try {
      const opening = pool.openSession(
        { ...SESSION, url: site.url('/captcha/stuck'), captchaWaitMs: 60_000 },
        { signal: stop.signal },
      );
      // At the gate: its first page (which announces a solve that never ends) has been asked for.
      const asked = site.requests.length;
      await expect
        .poll(() => site.requests.slice(asked).includes('GET /captcha/stuck'), { timeout: 20_000 })
        .toBe(true);
      const started = Date.now();
      stop.abort();
      await expect(opening).rejects.toThrow(
        /^Browserbase: stopped opening a session after 1 of 5 attempts \(cancelled or out of time\)/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(timeline(before)).toEqual(['create', `release ${first}`]);
      expect(pool.busy).toBe(0);
    } finally {
      await pool.shutdown();
    }
  });
});
