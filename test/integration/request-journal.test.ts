// The journal of requests that change something (src/browser/request-journal.ts) in real Chromium: a form post and a
// fetch POST are journaled as they start and end, GETs are not, a password in a body is never in its preview; with an
// entry in doubt, the same request is held back (a different body goes), a resolution in the store lets it go, and a
// worker that allows resends lets it go at once, journaled as resolved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright';
import { launchBrowser } from '../../src/browser';
import { RequestJournal, inDoubt } from '../../src/browser/request-journal';
import type { JournalLine, JournalStart } from '../../src/browser/request-journal';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { eventually } from './harness';

let server: FixtureServer;
let browser: Browser;
/** What reached the server: "METHOD path body". */
const received: string[] = [];

beforeAll(async () => {
  server = await startFixtureServer();
  browser = await launchBrowser();
  server.route('/form', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Form</title><form method="post" action="/api/order">' +
        '<input name="qty" value="2"><input name="password" type="password" value="hunter2"><button>Go</button></form>',
    );
  });
  server.route('/api/order', (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Done</title>done');
    });
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A journal over an in-memory store, in a new context at the form page; `intercepting` as under a URL policy. */
async function journaled(
  opts: { inDoubt?: JournalStart[]; allowResend?: boolean; intercepting?: boolean; beforeSend?: boolean } = {},
) {
  const lines: JournalLine[] = [];
  const journal = new RequestJournal({
    append: async (line) => void lines.push(line),
    read: async () => [...lines],
    inDoubt: opts.inDoubt ?? [],
    allowResend: opts.allowResend ?? false,
    beforeSend: opts.beforeSend ?? false,
    redact: (text) => text.replaceAll('s3cr3t', '[secret]'),
    idPrefix: 't',
  });
  const context: BrowserContext = await browser.newContext();
  await journal.attach(context, opts.intercepting ?? false);
  const page = await context.newPage();
  await page.goto(server.url('/form'));
  return { journal, lines, context, page };
}

const postFetch = (body: string) =>
  `fetch('/api/order', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(body)} }).then((r) => r.status, () => 'failed')`;

describe('the request journal', () => {
  it.each([
    ['from network events', {}],
    ['under the URL policy', { intercepting: true }],
    ['before send (journalBeforeSend)', { beforeSend: true }],
  ])('journals a form post and a fetch POST as they start and end, never a GET (%s)', async (_how, mode) => {
    const { lines, context, page } = await journaled(mode);
    await Promise.all([page.waitForURL('**/api/order'), page.click('button')]);
    expect(await page.evaluate(postFetch('{"note":"s3cr3t","token":"abc"}'))).toBe(200);
    await page.evaluate(() => fetch('/form').then((r) => r.status));
    await eventually(async () => lines.filter((l) => l.kind === 'end').length === 2, 10_000, 'two ends');
    const starts = lines.filter((l): l is JournalStart => l.kind === 'start');
    expect(starts.map((s) => [s.method, s.resource_type, s.body_preview])).toEqual([
      ['POST', 'document', 'qty=2&password=***'],
      ['POST', 'fetch', '{"note":"[secret]","token":"***"}'],
    ]);
    expect(lines.filter((l) => l.kind === 'end').map((l) => (l as { status?: number }).status)).toEqual([200, 200]);
    expect(inDoubt(lines)).toEqual([]);
    await context.close();
  });

  it('holds back a resend of an entry in doubt, lets other requests go, and lets it go once resolved', async () => {
    received.length = 0;
    const first = await journaled();
    await first.page.evaluate(postFetch('{"qty":1}'));
    await eventually(async () => first.lines.some((l) => l.kind === 'start'), 10_000, 'the start');
    const doubt = inDoubt(first.lines.filter((l) => l.kind === 'start'));
    await first.context.close();
    expect(doubt).toHaveLength(1);

    const { journal, lines, context, page } = await journaled({ inDoubt: doubt });
    expect(await page.evaluate(postFetch('{"qty":1}'))).toBe('failed');
    expect(journal.takeHeld().map((h) => h.entry.id)).toEqual([doubt[0]!.id]);
    expect(await page.evaluate(postFetch('{"qty":2}'))).toBe(200); // another body: another request
    lines.push({ kind: 'resolved', id: doubt[0]!.id, at: new Date().toISOString(), how: 'user_replied' });
    expect(await page.evaluate(postFetch('{"qty":1}'))).toBe(200);
    expect(received).toEqual(['POST /api/order {"qty":1}', 'POST /api/order {"qty":2}', 'POST /api/order {"qty":1}']);
    await context.close();
  });

  it('a form post in doubt is held back and the tab stays on its page; a worker allowing resends sends it', async () => {
    received.length = 0;
    const first = await journaled();
    await Promise.all([first.page.waitForURL('**/api/order'), first.page.click('button')]);
    const doubt = inDoubt(first.lines.filter((l) => l.kind === 'start'));
    await first.context.close();

    const held = await journaled({ inDoubt: doubt });
    await held.page.click('button');
    await eventually(async () => held.lines.some((l) => l.kind === 'held'), 10_000, 'the hold-back');
    expect(held.page.url()).toMatch(/\/form$/);
    await held.context.close();

    const resend = await journaled({ inDoubt: doubt, allowResend: true });
    await Promise.all([resend.page.waitForURL('**/api/order'), resend.page.click('button')]);
    expect(resend.journal.takeResent().map((r) => r.entry.id)).toEqual([doubt[0]!.id]);
    expect(resend.lines.find((l) => l.kind === 'resolved')).toMatchObject({ how: 'resend_allowed' });
    expect(received).toEqual(['POST /api/order qty=2&password=hunter2', 'POST /api/order qty=2&password=hunter2']);
    await resend.context.close();
  });
});
