// Taking a desktop over (issue 26): the session's display shared with x11vnc (loopback only, a password per lease)
// and noVNC served by websockify. The VNC port answers the RFB handshake, noVNC in Chromium connects with the lease's
// token as its password, and the hand-back stops both and says which windows were open.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../src/browser';
import { DesktopPool, VncShare, desktopSupport, vncSupport } from '../../src/desktop';
import { greeting } from '../../src/desktop/vnc';

const desktop = desktopSupport();
const vnc = vncSupport();
const skip = !desktop.ok || !vnc.ok;
if (skip) console.warn(`desktop takeover tests skipped: missing ${[...desktop.missing, ...vnc.missing].join(', ')}`);

describe.skipIf(skip)('desktop takeover over VNC', () => {
  let home: string;
  let pool: DesktopPool;
  let sessionId: string;
  let display: string;

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'cua-desk-takeover-'));
    pool = new DesktopPool({ slots: 1 });
    const opened = await pool.open({ homeDir: home, width: 800, height: 600 });
    sessionId = opened.sessionId;
    display = opened.session.display;
  });

  afterAll(async () => {
    await pool?.closeAll();
    await rm(home, { recursive: true, force: true });
  });

  it('x11vnc on the display answers the RFB handshake on loopback; stopped, it is gone', async () => {
    const share = await VncShare.start({ display });
    try {
      expect(share.password).toHaveLength(8);
      expect(await greeting(share.vncPort)).toMatch(/^RFB 003\.00\d\n$/);
    } finally {
      await share.stop();
    }
    expect(await greeting(share.vncPort)).toBeUndefined();
  });

  it('a lease gives noVNC with the token as its password; the hand-back stops it and names the windows', async () => {
    const grant = await pool.takeovers.lease(sessionId, display, 'desk-lease-1', () =>
      Promise.resolve('Windows: xterm'),
    );
    expect(grant.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/vnc\.html\?autoconnect=true&resize=scale$/);
    expect(pool.takeovers.isLeased(sessionId)).toBe(true);
    expect(await pool.takeovers.lease(sessionId, display, 'desk-lease-1', () => Promise.resolve(''))).toEqual(grant);

    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${grant.url}&password=${grant.token}`);
      // noVNC marks its page connected once the RFB handshake and the password check passed.
      await page.waitForFunction(() => document.documentElement.classList.contains('noVNC_connected'), undefined, {
        timeout: 20_000,
      });
      const wrong = await browser.newPage();
      await wrong.goto(grant.url.replace('autoconnect=true', 'autoconnect=true&password=wrongpw1'));
      await wrong.waitForFunction(() => /fail/i.test(document.getElementById('noVNC_status')?.textContent ?? ''));
    } finally {
      await browser.close();
    }

    const summary = await pool.takeovers.end('desk-lease-1');
    expect(summary).toMatchObject({ inputs: 0, titleBefore: 'Windows: xterm', titleAfter: 'Windows: xterm' });
    expect(await pool.takeovers.end('desk-lease-1')).toEqual(summary);
    expect(pool.takeovers.isLeased(sessionId)).toBe(false);
    const port = Number(new URL(grant.url).port);
    await expect(fetch(`http://127.0.0.1:${port}/vnc.html`)).rejects.toThrow();
  });
});
