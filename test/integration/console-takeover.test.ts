// The console's live view and takeover (issue 29), driven in Chromium: a person takes a task over from its page, clicks
// in the live browser (the worker's screencast relayed by the console), the view comes back after a reload and after
// a restart of the console, and the hand-back from the page tells the agent what changed. The console's socket is
// guarded like its pages (session cookie, Origin, Host) and the lease's token never reaches the page.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, BrowserContext, Page } from 'playwright';
import { WebSocket } from 'ws';
import { AgentClient } from '../../client/client';
import { startConsole } from '../../console/server';
import type { ConsoleServer } from '../../console/server';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { chromiumPath } from '../../src/infra/paths';
import { openRunStore } from '../../src/trajectory/open-store';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { desktopSupport, vncSupport } from '../../src/desktop';
import { startDesktopTask } from './desktop-tasks';
import { eventually } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const TOKEN = 'console-takeover-token-0123456789';
/** Set to write the takeover guide's screenshot (docs/takeover.md) (docs/images/console-takeover.png). */
const README_IMAGE = process.env['CUA_README_IMAGES'] ? path.resolve(__dirname, '../../docs/images') : null;
let h: Harness;
let agent: AgentClient;
let server: ConsoleServer;
let pages: FixtureServer;
let browser: Browser;
let context: BrowserContext;

useHarness((harness) => (h = harness));

const startTheConsole = (port = 0) =>
  startConsole({ agent, store: () => openRunStore(h.config), token: TOKEN, port, pollMs: 300 });

const signIn = async () => {
  const page = await context.newPage();
  await page.goto(`${server.url}/?token=${TOKEN}`);
  expect(page.url()).toBe(`${server.url}/`);
  await page.close();
};

beforeAll(async () => {
  agent = new AgentClient(h.client, h.config.taskQueue, () => openRunStore(h.config));
  server = await startTheConsole();
  pages = await startFixtureServer();
  // A page a click, typing and a scroll change visibly: its title says what the person did.
  pages.route('/terms', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<title>Terms</title><body style="margin:0;font:20px sans-serif;min-height:3000px">' +
        '<h1 style="margin:40px">Terms of service</h1><p style="margin:40px">Read them, then accept and sign.</p>' +
        '<button id="accept" style="position:absolute;left:40px;top:200px;width:360px;height:120px;font-size:28px" ' +
        "onclick=\"document.title='Terms accepted';this.textContent='Accepted ✓'\">Accept the terms</button>" +
        '<input id="name" placeholder="Your name" style="position:absolute;left:40px;top:360px;width:360px;height:50px;font-size:24px" ' +
        'oninput="document.title=\'Terms accepted, signed by \'+this.value">' +
        "<script>addEventListener('scroll', () => document.title.endsWith(' (scrolled)') || " +
        "(document.title += ' (scrolled)'))</script>",
    );
  });
  browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await signIn();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await pages?.close();
});

const liveSocketUrl = (id: string) => `${server.url.replace(/^http/, 'ws')}/api/tasks/${id}/live`;

/** Opens the console's live socket as a non-browser client would: the HTTP status it got, 101 when it opened. */
const upgradeStatus = (id: string, headers: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(liveSocketUrl(id), { headers });
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('unexpected-response', (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
    ws.once('error', reject);
  });

const sessionCookie = async () => {
  const cookie = (await context.cookies(server.url)).find((c) => c.name === 'cua_console');
  expect(cookie).toBeDefined();
  return `cua_console=${cookie!.value}`;
};

/** The live view drew frames, and its caption names the page shown. */
const liveShows = async (page: Page, title: string) => {
  await page.locator('#live-caption', { hasText: title }).waitFor({ timeout: 15_000 });
  await page.waitForFunction(() => Number(document.querySelector('#live-canvas')?.getAttribute('data-frames')) > 0);
};

describe('the live socket', () => {
  it('refuses an upgrade without a session (401) or from another origin (403)', async () => {
    const id = 'no-such-task';
    expect(await upgradeStatus(id, {})).toBe(401);
    expect(await upgradeStatus(id, { origin: server.url })).toBe(401);
    expect(await upgradeStatus(id, { origin: server.url, cookie: 'cua_console=forged' })).toBe(401);
    const cookie = await sessionCookie();
    expect(await upgradeStatus(id, { cookie, origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(id, { cookie })).toBe(403);
    expect(await upgradeStatus(id, { authorization: 'Bearer wrong' })).toBe(401);
    // Signed in, from the console's own origin: past the guard, refused only for want of a task.
    expect(await upgradeStatus(id, { cookie, origin: server.url })).toBe(404);
  });
});

describe('take over from the console', () => {
  it('shows the live browser, sends the click, survives a reload and a console restart, and hands back', async () => {
    const handle = await h.start({
      script: 'console-takeover',
      instruction: 'Accept the terms.',
      startUrl: pages.url('/terms'),
    });
    const id = handle.workflowId;
    await eventually(async () => (await agent.status(id)).step === 1, 30_000, 'step 1');
    expect(await upgradeStatus(id, { cookie: await sessionCookie(), origin: server.url })).toBe(409); // not yet
    let page = await context.newPage();
    await page.goto(`${server.url}/tasks/${id}`);
    await page.click('#takeover');
    await page.locator('#status', { hasText: 'taken over' }).waitFor({ timeout: 30_000 });
    await liveShows(page, 'Terms');
    expect(await page.locator('#handback-form').isVisible()).toBe(true);
    expect(await page.locator('#takeover').isVisible()).toBe(false);

    // The lease's token stays on the server: not in what the page fetched, not in the page.
    const lease = (await agent.status(id)).progress?.takeover;
    const token = lease && 'token' in lease ? lease.token : '';
    expect(token.length).toBeGreaterThan(20);
    const json = await page.evaluate(async (url) => (await fetch(url)).text(), `/api/tasks/${id}`);
    expect(json).toContain('"leaseId":"lease-');
    expect(json).not.toContain(token);
    expect(await page.content()).not.toContain(token);

    // The person clicks the button in the live view, types their name in the field, and scrolls: each reaches the
    // page (its title says so) and the view shows it.
    const canvas = page.locator('#live-canvas');
    const box = (await canvas.boundingBox())!;
    const scale = box.width / Number(await canvas.getAttribute('width'));
    const at = (x: number, y: number) => [box.x + x * scale, box.y + y * scale] as const;
    await page.mouse.click(...at(220, 260));
    await liveShows(page, 'Terms accepted');
    await page.mouse.click(...at(220, 385));
    await page.keyboard.type('Ana');
    await liveShows(page, 'Terms accepted, signed by Ana');
    if (README_IMAGE) await page.screenshot({ path: path.join(README_IMAGE, 'console-takeover.png'), fullPage: true });
    await page.mouse.move(...at(600, 500));
    await page.mouse.wheel(0, 400);
    await liveShows(page, 'signed by Ana (scrolled)');

    // A reload of the page: the live view is back (the lease comes from the workflow's state).
    await page.reload();
    await page.locator('#live-screen').waitFor();
    await liveShows(page, 'Terms accepted');

    // A restart of the console: sessions are gone (sign in again); the takeover and its view are not.
    await page.close();
    const port = server.port;
    await server.close();
    server = await startTheConsole(port);
    page = await context.newPage();
    expect((await page.goto(`${server.url}/tasks/${id}`))?.status()).toBe(401);
    await signIn();
    await page.goto(`${server.url}/tasks/${id}`);
    await liveShows(page, 'Terms accepted');

    // Hand back with a note: the agent's next prompt says what changed.
    await page.fill('#handback-note', 'I accepted the terms.');
    await page.click('#handback-send');
    await page.locator('#status', { hasText: 'complete' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#live-screen').isVisible()).toBe(false);
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'accepted' });
    const prompt = h.model.requests.filter((r) => r.script === 'console-takeover' && !r.subcall).at(-1)?.lastUserText;
    expect(prompt).toMatch(/A person took over the browser for .* and handed it back\./);
    expect(prompt).toContain('("Terms")');
    expect(prompt).toContain('("Terms accepted, signed by Ana (scrolled)")');
    expect(prompt).toContain('Their note: I accepted the terms.');
    await page.locator('#steps', { hasText: 'I accepted the terms.' }).waitFor();
    await page.close();
    if (README_IMAGE) expect(fs.existsSync(path.join(README_IMAGE, 'console-takeover.png'))).toBe(true);
  }, 180_000);
});

const desktopParts = [...desktopSupport().missing, ...vncSupport().missing];
if (desktopParts.length) console.warn(`console desktop takeover skipped: missing ${desktopParts.join(', ')}`);

describe.skipIf(desktopParts.length > 0)('take a desktop over from the console', () => {
  it("links its noVNC view (which connects with the lease's password), and hands back", async () => {
    const to = { client: h.client, taskQueue: h.config.taskQueue, modelUrl: h.model.url, prefix: 'console-desk' };
    const handle = await startDesktopTask(to, 'console-desktop-takeover');
    const id = handle.workflowId;
    await eventually(async () => (await agent.status(id)).step >= 1, 60_000, 'step 1');
    const page = await context.newPage();
    await page.goto(`${server.url}/tasks/${id}`);
    await page.click('#takeover');
    await page.locator('#status', { hasText: 'taken over' }).waitFor({ timeout: 60_000 });
    const link = page.locator('#desktop-link');
    await link.waitFor();
    expect(await page.locator('#live-screen').isVisible()).toBe(false);
    const href = (await link.getAttribute('href'))!;
    expect(href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/vnc\.html\?autoconnect=true&resize=scale&password=.{8}$/);

    // The person opens it: noVNC connects to the desktop with the lease's password.
    const [vnc] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await vnc.waitForFunction(() => document.documentElement.classList.contains('noVNC_connected'), undefined, {
      timeout: 20_000,
    });
    await vnc.close();

    await page.fill('#handback-note', 'I looked at the desktop.');
    await page.click('#handback-send');
    await page.locator('#status', { hasText: 'complete' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#desktop-view').isVisible()).toBe(false);
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'desktop handed back' });
    // A desktop step's last user message is the screen's description: the note is in the step's messages before it.
    const prompt = h.model.requests
      .filter((r) => r.script === 'console-desktop-takeover' && r.call === 'action')
      .at(-1)?.allText;
    expect(prompt).toMatch(/A person took over the browser for .* and handed it back\./);
    expect(prompt).toContain('Windows:');
    expect(prompt).toContain('Their note: I looked at the desktop.');
    // The link is only for a desktop taken over, and only for a signed-in session.
    expect((await fetch(`${server.url}/api/tasks/${id}/desktop`)).status).toBe(401);
    expect(await page.evaluate(async (url) => (await fetch(url)).status, `/api/tasks/${id}/desktop`)).toBe(409);
    await page.close();
  }, 180_000);
});
