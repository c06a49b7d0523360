// Pages that load slowly, crash, close, download, are PDFs or need a restored login: the agent carries on.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BrowserPool,
  CAPTCHA_RESUME_DELAY_MS,
  CAPTCHA_SOLVING_FINISHED,
  CAPTCHA_SOLVING_STARTED,
  DEFAULT_CAPTCHA_POLICY,
  NavigationError,
  PageRecoveryError,
  decideCaptchaTimeout,
} from '../../src/browser';
import type { BrowserEnvironment } from '../../src/browser';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { capturePng } from '../../src/browser/capture';

const VIEWPORT = { width: 800, height: 600 };
let server: FixtureServer;
let pool: BrowserPool;
let env: BrowserEnvironment;
let downloadsDir: string;

beforeAll(async () => {
  server = await startFixtureServer();
  // A page whose DOMContentLoaded waits for a parser-blocking script the server holds for ?ms= milliseconds.
  server.route('/held', (_req, res, url) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Held</title><p id="before">before</p>' +
        `<script src="/held-script?ms=${Number(url.searchParams.get('ms'))}"></script><p id="after">after</p>`,
    );
  });
  server.route('/held-script', (_req, res, url) => {
    const timer = setTimeout(
      () => {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end("document.title = 'loaded';");
      },
      Number(url.searchParams.get('ms')),
    );
    res.on('close', () => clearTimeout(timer));
  });
  downloadsDir = await mkdtemp(path.join(os.tmpdir(), 'cua-downloads-'));
  pool = new BrowserPool({ slots: 3 });
  ({ env } = await pool.openSession({ viewport: VIEWPORT, downloadsDir }));
});

afterAll(async () => {
  await pool?.shutdown();
  await server?.close();
  if (downloadsDir) await rm(downloadsDir, { recursive: true, force: true });
});

const clicksOnPage = (): Promise<Array<{ type: string; x: number; y: number }>> =>
  env.page.evaluate(() =>
    (window as unknown as { __events: Array<{ type: string; x: number; y: number }> }).__events.filter(
      (e) => e.type === 'click',
    ),
  );

describe('screenshots', () => {
  it("are PNGs of the viewport's size, and a closed page still fails with Playwright's error", async () => {
    const { sessionId, env: other } = await pool.openSession({ viewport: { width: 640, height: 480 }, downloadsDir });
    await other.visitUrl(server.url('/pages/article.html'));
    const png = await capturePng(other.page);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(await sharp(png).metadata()).toMatchObject({ width: 640, height: 480 });
    const page = other.page;
    await page.close();
    await expect(capturePng(page)).rejects.toThrow(/closed/i);
    await pool.close(sessionId);
  });
});

describe('settling', () => {
  it('every document records its last DOM mutation, and a screenshot waits for a page that is still changing', async () => {
    await env.visitUrl(server.url('/pages/article.html'));
    const lastMutation = () =>
      env.page.evaluate(() => (window as unknown as { __cuaLastMutation?: number }).__cuaLastMutation);
    const before = await lastMutation();
    expect(before).toBeTypeOf('number');
    // A page changing now and for 400 ms more: a settle that counts from the last mutation waits it out.
    const started = Date.now();
    await env.page.evaluate(() => {
      let n = 0;
      document.body.setAttribute('data-tick', String(n));
      const timer = setInterval(() => {
        document.body.setAttribute('data-tick', String(++n));
        if (n === 8) clearInterval(timer);
      }, 50);
    });
    const report = await env.controller.settle({ domQuietMs: 100, networkQuietMs: 100, fromStart: false });
    expect(report.dom).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(await env.page.evaluate(() => document.body.getAttribute('data-tick'))).toBe('8');
    expect(await lastMutation()).toBeGreaterThan(before ?? 0);
  });

  it('a slow-loading page is screenshotted only after it settled', async () => {
    const outcome = await env.visitUrl(server.url('/pages/slow.html'));
    expect(outcome.settle.ms).toBeGreaterThanOrEqual(1_000);
    const png = await env.screenshot();
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect(info).toMatchObject({ width: VIEWPORT.width, height: VIEWPORT.height });
    const at = (x: number, y: number): number[] => [
      ...data.subarray((y * info.width + x) * info.channels).subarray(0, 3),
    ];
    expect(at(400, 500)).toEqual([255, 0, 0]);
  });

  it('a page that never goes quiet costs no more than the caps', async () => {
    const settle = { networkCapMs: 600, domCapMs: 600, loadCapMs: 2_000, maxMs: 3_000 };
    const busy = await pool.openSession({ viewport: VIEWPORT, downloadsDir, environment: { settle } });
    try {
      const outcome = await busy.env.visitUrl(server.url('/pages/busy.html'));
      expect(outcome.settle).toMatchObject({ load: true, dom: false });
      expect(outcome.settle.ms).toBeLessThan(settle.maxMs + 500);
      const click = await busy.env.leftClick(5, 5);
      expect(click.settle).toMatchObject({ network: false, dom: false });
      expect(click.settle.ms).toBeLessThan(1_500);
    } finally {
      await pool.close(busy.sessionId);
    }
  });
});

describe('page ready', () => {
  /** A session with the given page-ready cap whose visits settle quickly (the wait measured is the next operation's). */
  const withCap = (readyCapMs: number) =>
    pool.openSession({
      viewport: VIEWPORT,
      downloadsDir,
      environment: { readyCapMs, settle: { loadCapMs: 100, networkCapMs: 100, domCapMs: 100, maxMs: 300 } },
    });

  it('waits for DOMContentLoaded up to the cap, then stops the load and goes on', async () => {
    const { sessionId, env: held } = await withCap(800);
    try {
      await held.visitUrl(server.url('/held?ms=30000'));
      const started = Date.now();
      await held.controller.ensureReady();
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(700);
      expect(waited).toBeLessThan(5_000);
      // Stopped: the rest of the document was never parsed, and the page answers at once.
      expect(await held.page.locator('#after').count()).toBe(0);
      const again = Date.now();
      expect((await held.screenshot()).subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(Date.now() - again).toBeLessThan(3_000);
    } finally {
      await pool.close(sessionId);
    }
  });

  it('a page that reaches DOMContentLoaded within the cap is waited for, not stopped', async () => {
    const { sessionId, env: held } = await withCap(10_000);
    try {
      await held.visitUrl(server.url('/held?ms=1500'));
      const started = Date.now();
      await held.controller.ensureReady();
      expect(Date.now() - started).toBeGreaterThanOrEqual(800);
      expect(await held.page.textContent('#after')).toBe('after');
      expect(await held.page.title()).toBe('loaded');
    } finally {
      await pool.close(sessionId);
    }
  });

  it('the cap is 60 s unless given', async () => {
    const { sessionId, env: plain } = await pool.openSession({ viewport: VIEWPORT, downloadsDir });
    try {
      expect(plain.controller.readyCapMs).toBe(60_000);
    } finally {
      await pool.close(sessionId);
    }
  });
});

describe('recovery', () => {
  it('a crashed page is recovered and the action succeeds', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.page.goto('chrome://crash').catch(() => undefined);
    await env.leftClick(450, 150);
    expect(env.url()).toBe(server.url('/pages/events.html'));
    expect(await clicksOnPage()).toEqual([expect.objectContaining({ x: 450, y: 150 })]);
    expect(env.page.context().pages()).toHaveLength(1);
  });

  it('a closed page is recovered and the action succeeds', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.page.close();
    await env.leftClick(460, 160);
    expect(await clicksOnPage()).toEqual([expect.objectContaining({ x: 460, y: 160 })]);
  });

  it('when re-visiting fails too, one typed error names both failures', async () => {
    const gone = await startFixtureServer();
    const { sessionId, env: other } = await pool.openSession({ viewport: VIEWPORT, downloadsDir });
    try {
      await other.visitUrl(gone.url('/pages/target.html'));
      await gone.close();
      await other.page.close();
      const failure = other.leftClick(10, 10);
      await expect(failure).rejects.toBeInstanceOf(PageRecoveryError);
      await expect(failure).rejects.toThrow(/reload failed .*visiting the URL again failed/);
    } finally {
      await pool.close(sessionId);
    }
  });

  it('other failures are not retried but surface as typed errors', async () => {
    await expect(env.visitUrl('http://127.0.0.1:1/')).rejects.toBeInstanceOf(NavigationError);
  });
});

describe('page text', () => {
  it('an HTML page comes back as markdown', async () => {
    await env.visitUrl(server.url('/pages/article.html'));
    const markdown = await env.pageMarkdown();
    expect(markdown).toContain('# Durable agents');
    expect(markdown).toContain('A **durable** agent survives [crashes](/pages/target.html).');
    expect(markdown).toMatch(/-\s+first point/);
    expect(markdown).not.toMatch(/not in the markdown|color:red/);
  });

  it('a PDF comes back as its text', async () => {
    const maker = await env.page.context().newPage();
    await maker.setContent(
      '<h1>Quarterly PDF</h1><p>Revenue grew in every region, and the durable agent read it all.</p>',
    );
    const pdf = await maker.pdf();
    await maker.close();
    server.route('/files/quarterly.pdf', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(pdf);
    });
    await env.visitUrl(server.url('/files/quarterly.pdf'));
    const text = await env.pageMarkdown();
    expect(text).toContain('Quarterly PDF');
    expect(text).toContain('Revenue grew in every region');

    await env.visitUrl(server.url('/pages/embedded-pdf.html'));
    expect(await env.pageMarkdown()).toContain('Revenue grew in every region');
  });
});

describe('downloads', () => {
  it('a download link saves the file and shows a page saying where it went', async () => {
    await env.visitUrl(server.url('/pages/links.html'));
    const outcome = await env.leftClick(60, 155);
    expect(outcome.downloads).toHaveLength(1);
    const saved = outcome.downloads[0]!;
    expect(path.dirname(saved.path)).toBe(downloadsDir);
    expect(await readFile(saved.path, 'utf8')).toBe('quarterly report: all good\n');
    const shown = await env.page.textContent('body');
    expect(shown).toContain('Download complete');
    expect(shown).toContain(saved.path);
    expect(await env.pageContext()).toContain('Current URL: data:text/html;base64,…');
  });
});

describe('downloads by address', () => {
  it('visiting a URL that downloads saves it and announces it', async () => {
    const outcome = await env.visitUrl(server.url('/download/report.txt'));
    expect(outcome.downloads.map((d) => d.fileName)).toEqual([expect.stringMatching(/^report( \(\d+\))?\.txt$/)]);
    expect(await env.page.textContent('h1')).toBe('Download complete');
  });
});

describe('popups kept when not in single-tab mode', () => {
  it('the popup becomes active and the old page stays open', async () => {
    const { sessionId, env: multi } = await pool.openSession({
      viewport: VIEWPORT,
      downloadsDir,
      url: server.url('/pages/links.html'),
      environment: { singleTab: false },
    });
    try {
      await multi.leftClick(60, 95);
      expect(multi.url()).toBe(server.url('/pages/target.html?from=popup'));
      expect(multi.page.context().pages()).toHaveLength(2);
    } finally {
      await pool.close(sessionId);
    }
  });
});

describe('captcha gate', () => {
  it.each([
    [{ ...DEFAULT_CAPTCHA_POLICY, raiseOnTimeout: true }, 1, 'raise'],
    [{ ...DEFAULT_CAPTCHA_POLICY, raiseOnTimeout: false }, 1, 'continue'],
    [{ ...DEFAULT_CAPTCHA_POLICY, raiseOnTimeout: false }, 2, 'disable-gate'],
    [{ ...DEFAULT_CAPTCHA_POLICY, raiseOnTimeout: false, timeoutLimit: 3 }, 2, 'continue'],
  ] as const)('policy %o after %i timeouts: %s', (policy, timeouts, decision) => {
    expect(decideCaptchaTimeout(policy, timeouts)).toBe(decision);
  });

  /** A session whose gate listens to the solving messages (as for a remote browser), with a short resume delay. */
  const listening = (captchaResumeMs?: number) =>
    pool.openSession({
      viewport: VIEWPORT,
      downloadsDir,
      environment: { captchaSignals: true, ...(captchaResumeMs === undefined ? {} : { captchaResumeMs }) },
    });
  const say = (target: BrowserEnvironment, message: string) => target.page.evaluate((m) => console.log(m), message);

  it('a browser launched here ignores the solving messages: its gate stays open', async () => {
    expect(env.captcha.listens).toBe(false);
    await env.visitUrl(server.url('/pages/target.html'));
    const heard = env.page.waitForEvent('console', (m) => m.text() === CAPTCHA_SOLVING_STARTED);
    await say(env, CAPTCHA_SOLVING_STARTED);
    await heard;
    expect(env.captcha.isOpen).toBe(true);
    expect(await env.waitForCaptcha(0)).toBe(true);
  });

  it('a listening gate closes on solving-started and opens 3 s after solving-finished (the default)', async () => {
    const { sessionId, env: remote } = await listening();
    try {
      await remote.visitUrl(server.url('/pages/target.html'));
      expect(await remote.waitForCaptcha(10)).toBe(true);
      await say(remote, CAPTCHA_SOLVING_STARTED);
      await expect.poll(() => remote.captcha.isOpen).toBe(false);
      expect(await remote.waitForCaptcha(50)).toBe(false);
      const opened = remote.waitForCaptcha(10_000);
      const finishedAt = Date.now();
      await say(remote, CAPTCHA_SOLVING_FINISHED);
      expect(await opened).toBe(true);
      const waited = Date.now() - finishedAt;
      expect(waited).toBeGreaterThanOrEqual(CAPTCHA_RESUME_DELAY_MS - 50);
      expect(waited).toBeLessThan(CAPTCHA_RESUME_DELAY_MS + 2_000);
    } finally {
      await pool.close(sessionId);
    }
  });

  it('after the delay the gate waits for the DOMContentLoaded of the page the solve went to', async () => {
    const { sessionId, env: remote } = await listening(300);
    try {
      await remote.visitUrl(server.url('/pages/target.html'));
      await say(remote, CAPTCHA_SOLVING_STARTED);
      await expect.poll(() => remote.captcha.isOpen).toBe(false);
      const opened = remote.waitForCaptcha(20_000);
      const finishedAt = Date.now();
      // Solved: the page goes on to one whose DOMContentLoaded is held for 2 s.
      await remote.page.evaluate(
        ([m, to]) => {
          console.log(m);
          location.href = to;
        },
        [CAPTCHA_SOLVING_FINISHED, server.url('/held?ms=2000')] as const,
      );
      expect(await opened).toBe(true);
      expect(Date.now() - finishedAt).toBeGreaterThanOrEqual(1_900);
      expect(await remote.page.title()).toBe('loaded');
    } finally {
      await pool.close(sessionId);
    }
  });

  it('a solve that starts again during the delay keeps the gate closed', async () => {
    const { sessionId, env: remote } = await listening(300);
    try {
      await remote.visitUrl(server.url('/pages/target.html'));
      await say(remote, CAPTCHA_SOLVING_STARTED);
      await say(remote, CAPTCHA_SOLVING_FINISHED);
      await say(remote, CAPTCHA_SOLVING_STARTED);
      expect(await remote.waitForCaptcha(1_500)).toBe(false);
      await say(remote, CAPTCHA_SOLVING_FINISHED);
      expect(await remote.waitForCaptcha(5_000)).toBe(true);
    } finally {
      await pool.close(sessionId);
    }
  });
});

describe('storage state', () => {
  it('restores a logged-in session in a fresh context', async () => {
    const first = await pool.openSession({ viewport: VIEWPORT, downloadsDir, url: server.url('/login?user=alice') });
    const state = await first.env.saveStorageState();
    await pool.close(first.sessionId);

    const second = await pool.openSession({ viewport: VIEWPORT, downloadsDir, storageState: state });
    try {
      await second.env.visitUrl(server.url('/account'));
      expect(await second.env.page.textContent('#who')).toBe('Logged in as alice');
      expect(await second.env.page.textContent('#token')).toBe('tok-alice');
    } finally {
      await pool.close(second.sessionId);
    }
  });
});
