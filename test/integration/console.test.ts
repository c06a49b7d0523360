// The web console (issue 29), driven in Chromium: a real dev server, worker and scripted model (the harness), the
// console on a free port, and a person's browser signed in through the printed link.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, BrowserContext, Page } from 'playwright';
import { AgentClient, TaskError } from '../../client/client';
import { startConsole } from '../../console/server';
import type { ConsoleServer } from '../../console/server';
import { denyConsole } from '../../console/policy';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { chromiumPath } from '../../src/infra/paths';
import { checkUrl } from '../../src/contract/url-policy';
import { openRunStore } from '../../src/trajectory/open-store';
import { startFixtureServer } from '../fixtures/browser/server';
import { routeKettleShop } from '../fixtures/browser/order-pages';
import { untilWaiting } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const TOKEN = 'console-test-token-0123456789';
let h: Harness;
let agent: AgentClient;
let server: ConsoleServer;
let browser: Browser;
let context: BrowserContext;

useHarness((harness) => (h = harness));

beforeAll(async () => {
  agent = new AgentClient(h.client, h.config.taskQueue, () => openRunStore(h.config));
  server = await startConsole({
    agent,
    store: () => openRunStore(h.config),
    token: TOKEN,
    port: 0,
    temporalUiUrl: 'http://127.0.0.1:8233',
    pollMs: 300,
  });
  browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  context = await browser.newContext();
  // Signing in: the link carries the token once; the console swaps it for a cookie and drops it from the URL.
  const page = await context.newPage();
  await page.goto(`${server.url}/?token=${TOKEN}`);
  expect(page.url()).toBe(`${server.url}/`);
  await page.close();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const openTask = async (id: string): Promise<Page> => {
  const page = await context.newPage();
  await page.goto(`${server.url}/tasks/${id}`);
  return page;
};
const authHeader = { authorization: `Bearer ${TOKEN}` };
const stepCount = (page: Page) => page.locator('#steps li[data-step]').count();

describe('access', () => {
  it('refuses a request without the cookie or token (401), and a wrong token', async () => {
    for (const path of ['/', '/api/tasks', '/tasks/x', '/api/tasks/x/screenshot?file=a.png']) {
      expect((await fetch(`${server.url}${path}`)).status).toBe(401);
    }
    expect((await fetch(`${server.url}/?token=wrong`, { redirect: 'manual' })).status).toBe(401);
    const bearer = await fetch(`${server.url}/api/tasks`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
    // A page that reached the console by another name (DNS rebinding) is refused by its Host header.
    const rebound = await new Promise<number>((resolve, reject) =>
      http
        .get(
          `${server.url}/api/tasks`,
          { headers: { authorization: `Bearer ${TOKEN}`, host: `evil.example:${server.port}` } },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        )
        .on('error', reject),
    );
    expect(rebound).toBe(403);
  });

  it('refuses a cross-site form post (403), and a same-site POST without the CSRF token', async () => {
    const page = await context.newPage();
    await page.goto(`${h.site.url}/`);
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/tasks/some-task/cancel'));
    await page.evaluate((action) => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = action;
      document.body.append(form);
      form.submit();
    }, `${server.url}/api/tasks/some-task/cancel`);
    expect((await refused).status()).toBe(403);
    await page.waitForURL(/\/cancel$/);
    expect(await page.textContent('body')).toContain('cannot change anything here');

    await page.goto(`${server.url}/`);
    const status = await page.evaluate(
      async () => (await fetch('/api/tasks/some-task/pause', { method: 'POST' })).status,
    );
    expect(status).toBe(403);
    await page.close();
  });

  it("denies the console's address in the URL policy of a worker started beside it", () => {
    const policy = denyConsole({}, '127.0.0.1', server.port).urlPolicy;
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      expect(checkUrl(policy, `http://${host}:${server.port}/?token=x`).ok).toBe(false);
    }
    expect(checkUrl(policy, `${h.site.url}/`).ok).toBe(true);
  });
});

describe('a task that asks', () => {
  it('is listed first with its question, answered from its page, and completes; its steps grow live', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I name.' });
    const id = handle.workflowId;
    await untilWaiting(handle);

    const list = await context.newPage();
    await list.goto(`${server.url}/`);
    const waitingRow = list.locator(`#waiting tr[data-id="${id}"]`);
    await waitingRow.waitFor();
    expect(await waitingRow.textContent()).toContain('Which city should I search in?');
    expect(await list.locator(`#tasks tr[data-id="${id}"]`).count()).toBe(0);

    const page = await openTask(id);
    await page.locator('#question', { hasText: 'Which city should I search in?' }).waitFor();
    expect(await stepCount(page)).toBe(1);
    expect(await page.locator('#temporal-link').getAttribute('href')).toBe(
      `http://127.0.0.1:8233/namespaces/default/workflows/${id}`,
    );
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await page.fill('#reply-text', 'Lisbon');
    await page.click('#reply-send');
    await page.locator('#status', { hasText: 'complete' }).waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => document.querySelectorAll('#steps li[data-step]').length === 4);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await page.locator('#answer', { hasText: 'Searched Lisbon as you asked.' }).waitFor();
    // What its model calls used (issue 30's totals): 4 decisions, no price configured.
    await page
      .locator('#marks', { hasText: /4 model calls · [\d,]+ prompt \+ [\d,]+ completion tokens · cost unknown/ })
      .waitFor();
    expect(await page.locator('#steps').textContent()).toContain('Lisbon');
    expect(await handle.result()).toMatchObject({ status: 'complete' });

    // The latest screenshot is served, and only files the run's events name.
    const shot = await page.locator('#shot').getAttribute('src');
    expect(shot).toMatch(/screenshot\?file=screenshot_\d+(_g\d+)?_pre\.png$/);
    const read = (file: string) =>
      page.evaluate(
        async (url) => (await fetch(url)).status,
        `/api/tasks/${id}/screenshot?file=${encodeURIComponent(file)}`,
      );
    expect(await read(decodeURIComponent(shot!.split('file=')[1]!))).toBe(200);
    expect(await read('../../temporal.sqlite')).toBe(400);
    expect(await read('task.json')).toBe(404);

    const report = await context.newPage();
    const res = await report.goto(`${server.url}/tasks/${id}/report`);
    expect(res?.status()).toBe(200);
    expect(await res?.text()).toContain('Searched Lisbon as you asked.');
    await Promise.all([list.close(), page.close(), report.close()]);
  });

  it('shows the one-line error of a stale reply, as `cua reply` does', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I name.' });
    const id = handle.workflowId;
    const asked = await untilWaiting(handle);
    const page = await context.newPage();
    // A page that has not caught up yet: no live updates reach it.
    await page.route('**/events', (route) => route.abort());
    await page.goto(`${server.url}/tasks/${id}`);
    await page.locator('#question', { hasText: 'Which city' }).waitFor();
    // Someone else answers first, and the task goes on to its end; this page still shows the question.
    await agent.reply(id, 'Lisbon');
    await handle.result();
    const expected = await agent.reply(id, 'Porto', { questionId: asked.question!.id }).then(
      () => '',
      (err: unknown) => (err instanceof TaskError ? err.message : String(err)),
    );
    expect(expected).toMatch(/is not waiting for a reply/);
    await page.fill('#reply-text', 'Porto');
    await page.click('#reply-send');
    await page.locator('#error', { hasText: expected }).waitFor();
    expect(await page.locator('#error').textContent()).toBe(expected);
    // An empty reply is refused as the CLI refuses it.
    await page.fill('#reply-text', '   ');
    await page.click('#reply-send');
    await page.locator('#error', { hasText: /reply/ }).waitFor();
    await page.close();
  });
});

describe('an approval', () => {
  it('shows Approve and Deny for a held checkout; Approve sends yes with the note, and the order goes out once', async () => {
    const orders: string[] = [];
    const shop = await startFixtureServer();
    try {
      routeKettleShop(shop, ({ body }) => orders.push(body));
      const handle = await h.start({
        script: 'approval-order',
        instruction: 'Order the kettle.',
        startUrl: shop.url('/shop'),
        approvals: [{ hosts: ['127.0.0.1'], methods: ['POST'], path: '/checkout', label: 'payment' }],
      });
      const id = handle.workflowId;
      await untilWaiting(handle);
      const page = await openTask(id);
      await page
        .locator('#question', { hasText: /^The agent is about to send POST \/checkout to 127\.0\.0\.1/ })
        .waitFor();
      expect(await page.locator('#approve').isVisible()).toBe(true);
      expect(await page.locator('#deny').isVisible()).toBe(true);
      expect(await page.locator('#reply-send').isVisible()).toBe(false);
      expect(orders).toEqual([]);
      await page.fill('#reply-text', 'within budget');
      await page.click('#approve');
      await page.locator('#status', { hasText: 'complete' }).waitFor({ timeout: 30_000 });
      expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'ordered' });
      expect(orders).toEqual(['item=kettle']);
      // The reply the button sent, and the report's line for the approval.
      const approved =
        /Approval asked: POST \/checkout to 127\.0\.0\.1:\d+ \(label payment\) — approved by the person \(within budget\)/;
      await page.locator('#steps .mark', { hasText: approved }).waitFor();
      expect(await page.locator('#steps').textContent()).toContain('yes: within budget');
      const report = await (await fetch(`${server.url}/tasks/${id}/report`, { headers: authHeader })).text();
      expect(report).toMatch(approved);
      await page.close();
    } finally {
      await shop.close();
    }
  });
});

describe('controls', () => {
  it('pauses and resumes a task from the buttons', async () => {
    const handle = await h.start({ script: 'book-lisbon-slow' });
    const id = handle.workflowId;
    const page = await openTask(id);
    await page.waitForFunction(() => document.querySelectorAll('#steps li[data-step]').length >= 2, undefined, {
      timeout: 30_000,
    });
    await page.click('#pause');
    await page.locator('#status', { hasText: 'paused' }).waitFor({ timeout: 30_000 });
    expect((await agent.status(id)).status).toBe('paused');
    const stepsWhilePaused = await stepCount(page);
    await page.click('#resume');
    await page.locator('#status', { hasText: 'complete' }).waitFor({ timeout: 30_000 });
    expect(await stepCount(page)).toBeGreaterThan(stepsWhilePaused);
    expect(await handle.result()).toMatchObject({
      status: 'complete',
      answer: 'Harbor View Lisbon costs €120 per night.',
    });
    await page.close();
  });
});
