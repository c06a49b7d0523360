// The takeover endpoint (issue 26), driven as the run console and an operator would: the viewer page behind its
// token, the screencast and input socket (a frame, a click, typed text, Enter, navigations under the URL policy), a
// reconnect, the hand-back's summary, a 410 after it, raw CDP that `chromium.connectOverCDP` accepts (only with the
// token, only with browser.takeoverCdp), and a leased session kept past the idle limit.
import { chromium } from 'playwright';
import type { Browser as PlaywrightBrowser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../src/browser';
import type { Session } from '../../src/browser';
import { TakeoverServer } from '../../src/browser/takeover/server';
import type { LeaseGrant } from '../../src/browser/takeover/server';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { createActivities } from '../../activities/catalog';
import { handbackNote } from '../../src/agent/handback';
import { loadConfig } from '../../src/runtime/config';
import { startFixtureServer } from '../fixtures/browser/server';
import { Viewer, isFrame } from './takeover-viewer';
import type { ServerMessage } from '../../src/browser/takeover/protocol';
import type { FixtureServer } from '../fixtures/browser/server';

const SESSION = { viewport: { width: 800, height: 600 }, downloadsDir: '/tmp/cua-test-downloads' };
/** Sessions idle this long are closed: a leased one must not be. */
const IDLE_MS = 1_500;

const wsUrl = (grant: LeaseGrant, token = grant.token) =>
  `${grant.url.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(token)}`;

let fixtures: FixtureServer;
let pool: BrowserPool;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  fixtures.route('/takeover-form', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<title>Search form</title><form action="/takeover-result">' +
        '<input id="q" name="q" style="position:absolute;left:40px;top:40px;width:300px;height:40px"></form>',
    );
  });
  fixtures.route('/takeover-result', (_req, res, url) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<title>Results for ${url.searchParams.get('q') ?? ''}</title><p>results`);
  });
  fixtures.route('/takeover-other', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<title>Other page</title><p>other');
  });
  pool = new BrowserPool({ takeover: { cdp: true }, idleTimeoutMs: IDLE_MS, sweepIntervalMs: 100 });
});

afterAll(async () => {
  await pool?.shutdown();
  await fixtures?.close();
});

describe('takeover endpoint', () => {
  let session: Session;
  let grant: LeaseGrant;

  it('grants a lease with a token; the viewer page needs it (401 without, one line)', async () => {
    session = await pool.openSession({ ...SESSION, url: fixtures.url('/takeover-form') });
    grant = await pool.takeovers.lease(session.env, 'lease-1', { sessionId: session.sessionId });
    expect(grant.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/takeover\/lease-1$/);
    expect(grant.token.length).toBeGreaterThanOrEqual(40);
    expect(grant.page).toEqual({ url: fixtures.url('/takeover-form'), title: 'Search form' });

    const missing = await fetch(grant.url);
    expect(missing.status).toBe(401);
    expect((await missing.text()).trim().split('\n')).toHaveLength(1);
    expect((await fetch(`${grant.url}?token=wrong`)).status).toBe(401);
    const page = await fetch(`${grant.url}?token=${grant.token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'nonce-");
    expect(await page.text()).toContain('<canvas');
    const bearer = await fetch(grant.url, { headers: { authorization: `Bearer ${grant.token}` } });
    expect(bearer.status).toBe(200);
    await expect(Viewer.open(wsUrl(grant, 'wrong'))).rejects.toThrow('HTTP 401');
  });

  it('streams frames and carries out a click, typed text, Enter and navigations under the URL policy', async () => {
    const viewer = await Viewer.open(wsUrl(grant));
    const frame = await viewer.next(isFrame);
    expect(frame).toMatchObject({ width: 800, height: 600, url: fixtures.url('/takeover-form') });
    expect(Buffer.from(frame.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8])); // a JPEG

    expect(await viewer.send({ type: 'mouse', action: 'down', x: 100, y: 60 })).toMatchObject({ type: 'done' });
    expect(await viewer.send({ type: 'mouse', action: 'up', x: 100, y: 60 })).toMatchObject({ type: 'done' });
    expect(await viewer.send({ type: 'text', text: 'kittens' })).toMatchObject({ type: 'done' });
    expect(await session.env.page.inputValue('#q')).toBe('kittens');
    await viewer.send({ type: 'key', action: 'press', key: 'Enter' });
    await session.env.page.waitForURL(/takeover-result\?q=kittens/);
    await viewer.next((m): m is ServerMessage => isFrame(m) && m.url.includes('takeover-result'));

    const other = await viewer.send({ type: 'navigate', url: fixtures.url('/takeover-other') });
    expect(other).toEqual(expect.objectContaining({ type: 'done', url: fixtures.url('/takeover-other') }));
    const refused = await viewer.send({ type: 'navigate', url: 'file:///etc/passwd' });
    expect(refused).toMatchObject({ type: 'error', message: expect.stringMatching(/^blocked by policy: file:/) });
    expect(session.env.url()).toBe(fixtures.url('/takeover-other'));
    expect(await viewer.send({ type: 'key', action: 'press', key: 'NoSuchKey' })).toMatchObject({ type: 'error' });
    viewer.ws.send('{"type":"mouse","action":"jump"}');
    await viewer.next((m): m is ServerMessage => m.type === 'error' && m.message.startsWith('not an input event'));
    await viewer.close();
  });

  it('keeps the lease through a disconnect: the same token connects again and sees the page', async () => {
    const again = await Viewer.open(wsUrl(grant));
    expect((await again.next(isFrame)).url).toBe(fixtures.url('/takeover-other'));
    const second = await Viewer.open(wsUrl(grant));
    await second.next(isFrame);
    await second.close();
    await again.close();
  });

  it('keeps a leased session past the idle limit', async () => {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS + 500)); // no operation for longer than the limit
    expect(pool.has(session.sessionId)).toBe(true);
  });

  it('offers raw CDP with the token that connectOverCDP accepts, and refuses it without', async () => {
    expect(grant.cdpUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/takeover\/lease-1\/cdp\?token=/);
    const cdpUrl = grant.cdpUrl ?? '';
    await expect(chromium.connectOverCDP(cdpUrl.replace(/\?.*$/, ''), { timeout: 5_000 })).rejects.toThrow(/401/);
    const version = await fetch(`${cdpUrl.replace(/^ws/, 'http').replace('/cdp?', '/cdp/json/version?')}`);
    expect(((await version.json()) as { webSocketDebuggerUrl: string }).webSocketDebuggerUrl).toBe(cdpUrl);

    const operator: PlaywrightBrowser = await chromium.connectOverCDP(cdpUrl);
    try {
      const urls = operator.contexts().flatMap((c) => c.pages().map((p) => p.url()));
      expect(urls).toContain(fixtures.url('/takeover-other'));
    } finally {
      await operator.close();
    }
  });

  it('hands back: what the person did, viewers told, the endpoint then says 410, the session idles again', async () => {
    const viewer = await Viewer.open(wsUrl(grant));
    const operator = await chromium.connectOverCDP(grant.cdpUrl ?? '');
    const cut = new Promise<void>((resolve) => operator.once('disconnected', () => resolve()));
    const summary = await pool.takeovers.end('lease-1');
    expect(summary).toMatchObject({
      inputs: 4, // a click, a text, Enter, a navigation (the refused one and the unknown key are not counted)
      urlBefore: fixtures.url('/takeover-form'),
      titleBefore: 'Search form',
      urlAfter: fixtures.url('/takeover-other'),
      titleAfter: 'Other page',
    });
    expect(Date.parse(summary?.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(summary?.startedAt ?? ''));
    expect(await viewer.next((m): m is ServerMessage => m.type === 'ended')).toMatchObject({ reason: 'handed back' });
    await cut; // the operator's raw CDP connection dies with the lease
    expect(await pool.takeovers.end('lease-1')).toEqual(summary); // a repeated end answers the same
    expect((await fetch(`${grant.url}?token=${grant.token}`)).status).toBe(410);
    expect((await fetch(`${grant.url}?token=wrong`)).status).toBe(401);
    await expect(Viewer.open(wsUrl(grant))).rejects.toThrow('HTTP 410');
    expect((await fetch(grant.url.replace('lease-1', 'no-such-lease'))).status).toBe(404);
    await expect.poll(() => pool.has(session.sessionId), { timeout: IDLE_MS * 4 }).toBe(false);
  });

  it('the viewer page, in a browser, draws the screencast and forwards a click and keys', async () => {
    const taken = await pool.openSession({ ...SESSION, url: fixtures.url('/takeover-form') });
    const lease = await pool.takeovers.lease(taken.env, 'lease-page', { sessionId: taken.sessionId });
    const person = await pool.openSession({
      viewport: { width: 1000, height: 800 },
      downloadsDir: SESSION.downloadsDir,
      url: `${lease.url}?token=${lease.token}`,
    });
    // The person's own tab is leased too, only so that this file's short idle limit does not close it.
    await pool.takeovers.lease(person.env, 'person-tab', { sessionId: person.sessionId });
    try {
      const page = person.env.page;
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'connected');
      await page.waitForFunction(() => (document.getElementById('screen') as HTMLCanvasElement).width === 800);
      await expect.poll(() => page.inputValue('#url')).toBe(fixtures.url('/takeover-form'));
      const box = await page.locator('#screen').boundingBox();
      await page.mouse.click((box?.x ?? 0) + 100, (box?.y ?? 0) + 60);
      await page.keyboard.type('abc');
      await page.keyboard.press('Enter');
      await taken.env.page.waitForURL(/takeover-result\?q=abc/);
      await expect.poll(() => page.title()).toBe('Results for abc (taken over)');
      expect(await pool.takeovers.end('lease-page')).toMatchObject({ inputs: 5, titleAfter: 'Results for abc' });
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('handed back'));
    } finally {
      await pool.close(person.sessionId);
      await pool.close(taken.sessionId);
    }
  });

  it('offers no raw CDP without browser.takeoverCdp, and ends a lease when its session closes', async () => {
    const plain = new TakeoverServer();
    const other = await pool.openSession({ ...SESSION, url: fixtures.url('/takeover-other') });
    try {
      const lease = await plain.lease(other.env, 'lease-2', { sessionId: other.sessionId });
      expect(lease.cdpUrl).toBeUndefined();
      await expect(
        chromium.connectOverCDP(`${lease.url.replace(/^http/, 'ws')}/cdp?token=${lease.token}`, {
          timeout: 5_000,
        }),
      ).rejects.toThrow(/404/);
      await plain.endSession(other.sessionId);
      expect(plain.isLeased(other.sessionId)).toBe(false);
      expect(await plain.end('lease-2')).toMatchObject({ inputs: 0, urlAfter: fixtures.url('/takeover-other') });
    } finally {
      await plain.close();
      await pool.close(other.sessionId);
    }
  });
});

describe('takeover activities', () => {
  it('startTakeover and endTakeover lend the session and tell what the person did, for the hand-back note', async () => {
    const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-takeover-'));
    const acts = createActivities({ config: loadConfig({ env: { CUA_RUNS_DIR: runsDir } }), pool, sessionQueue: 'q' });
    const { sessionId } = await pool.openSession({ ...SESSION, url: fixtures.url('/takeover-form') });
    const ref = { runId: 'run-1', sessionId, leaseId: 'run-1-takeover-1' };
    try {
      const grant = await acts.startTakeover(ref);
      expect(await acts.startTakeover(ref)).toEqual(grant); // a retry: the same lease
      const viewer = await Viewer.open(wsUrl(grant));
      await viewer.send({ type: 'mouse', action: 'down', x: 100, y: 60 });
      await viewer.send({ type: 'mouse', action: 'up', x: 100, y: 60 });
      await viewer.send({ type: 'text', text: 'lamps' });
      await viewer.send({ type: 'key', action: 'press', key: 'Enter' });
      await pool.get(sessionId).page.waitForURL(/q=lamps/);

      const summary = await acts.endTakeover(ref);
      expect(await acts.endTakeover(ref)).toEqual(summary);
      const durationMs = Date.parse(summary.endedAt) - Date.parse(summary.startedAt);
      expect(handbackNote({ ...summary, durationMs, note: 'I searched for lamps.' })).toMatch(
        new RegExp(
          `^A person took over the browser for .+ and handed it back\\. The page was ` +
            `${fixtures.url('/takeover-form').replace(/[.?]/g, '\\$&')} \\("Search form"\\) and is now ` +
            `.*/takeover-result\\?q=lamps \\("Results for lamps"\\)\\. Their note: I searched for lamps\\.`,
        ),
      );

      const lost = await acts.endTakeover({ ...ref, leaseId: 'granted-by-a-lost-worker' });
      expect(lost).toMatchObject({ leaseLost: true, inputs: 0, titleAfter: 'Results for lamps' });
      // An application's environment's session (activities/environments/custom.ts): its driver offers no takeover.
      const custom = acts.startTakeover({ ...ref, sessionId: 'env-1' });
      await expect(custom).rejects.toBeInstanceOf(ApplicationFailure);
      await expect(custom).rejects.toMatchObject({ type: 'TakeoverError', nonRetryable: true });
    } finally {
      await pool.close(sessionId);
    }
  });
});
