// What the settle after typing, keys and navigation waits for: the timers the input started (debounces, also re-armed
// from their own callback, also in an iframe), then short quiet windows; after a navigation, the load and what is
// fetched at and after it. A key that starts nothing settles at once.
import { describe, expect, it } from 'vitest';
import type { BrowserEnvironment } from '../../src/browser';
import type { FixtureServer } from '../fixtures/browser/server';
import { useFixtureBrowser } from './use-fixture-browser';

let server: FixtureServer;
let env: BrowserEnvironment;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const INPUT = '<input id="q" autocomplete="off" style="position:absolute;left:20px;top:20px;width:300px;height:30px">';

const LIST = '<ul id="s" style="margin-top:60px"></ul>';

/** Fetches suggestions for the box and lists them (`root`: the document or shadow root holding both). */
const search = (root = 'document'): string => `const q = ${root}.getElementById('q');
async function search() {
  const items = await (await fetch('/suggest?q=' + encodeURIComponent(q.value))).json();
  ${root}.getElementById('s').innerHTML = items.map((s) => '<li>' + s + '</li>').join('');
}`;

/** A debounce as lodash writes it: one timer, taken once; when it fires early it re-arms for the time left. */
const rearmingDebounce = (waitMs: number): string =>
  `<!doctype html>${INPUT}${LIST}<script>${search()}
const setTimer = window.setTimeout;
let timer, last = 0;
function expired() {
  const since = Date.now() - last;
  if (since < ${waitMs}) { timer = setTimer(expired, ${waitMs} - since); return; }
  timer = undefined;
  search();
}
q.addEventListener('input', () => { last = Date.now(); if (timer === undefined) timer = setTimer(expired, ${waitMs}); });
</script>`;

/** A debounce that clears and sets its timer on every input. */
const plainDebounce = (waitMs: number, root = 'document'): string => `${search(root)}
let timer;
q.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(search, ${waitMs}); });`;

const debouncePage = (waitMs: number): string =>
  `<!doctype html>${INPUT}${LIST}<script>${plainDebounce(waitMs)}</script>`;

function page(pathname: string, body: string): string {
  server.route(pathname, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  return server.url(pathname);
}

function slowRoute(pathname: string, ms: number, type: string, body: string | Buffer): void {
  server.route(pathname, async (_req, res) => {
    await sleep(ms);
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  });
}

const suggestions = (): Promise<string[]> => env.page.locator('#s li').allTextContents();

useFixtureBrowser((b) => ({ server, env } = b));

describe('after typing and keys', () => {
  it('a lodash-style debounce that re-arms from its own callback is waited for, then its fetch', async () => {
    await env.visitUrl(page('/rearming', rearmingDebounce(300)));
    const outcome = await env.type('ap', { at: { x: 100, y: 35 } });
    expect(await suggestions()).toEqual(['apple', 'apricot']);
    expect(outcome.settle.timersMs).toBeGreaterThan(200);
  });

  it('a timer set from the callback of one the input started is waited for too', async () => {
    const chained = `<!doctype html>${INPUT}${LIST}<script>${search()}
q.addEventListener('input', () => setTimeout(() => setTimeout(search, 250), 100));</script>`;
    await env.visitUrl(page('/chained', chained));
    const outcome = await env.type('a', { at: { x: 100, y: 35 } });
    expect(await suggestions()).toEqual(['apple', 'apricot']);
    expect(outcome.settle.timersMs).toBeGreaterThanOrEqual(300);
  });

  it('a debounce longer than a fixed 300 ms window (500 ms) is waited for', async () => {
    await env.visitUrl(page('/debounce-500', debouncePage(500)));
    const outcome = await env.type('apr', { at: { x: 100, y: 35 } });
    expect(await suggestions()).toEqual(['apricot']);
    expect(outcome.settle.timersMs).toBeGreaterThanOrEqual(400);
    expect(outcome.settle).toMatchObject({ network: true, dom: true });
  });

  it('a debounce inside an iframe is waited for', async () => {
    const inner = page('/framed-search', debouncePage(300));
    await env.visitUrl(
      page('/frame-host', `<!doctype html><iframe src="${inner}" style="border:0;width:600px;height:300px"></iframe>`),
    );
    const outcome = await env.type('ban', { at: { x: 100, y: 35 } });
    const frame = env.page.frames().find((f) => f.url() === inner);
    expect(await frame?.locator('#s li').allTextContents()).toEqual(['banana']);
    expect(outcome.settle.timersMs).toBeGreaterThan(200);
  });

  it('a debounce inside a shadow root (where window.event is not set) is waited for', async () => {
    const shadow = `<!doctype html><div id="host"></div><script>
const root = document.getElementById('host').attachShadow({ mode: 'open' });
root.innerHTML = '${INPUT}${LIST}';
${plainDebounce(300, 'root')}</script>`;
    await env.visitUrl(page('/shadow', shadow));
    const outcome = await env.type('ban', { at: { x: 100, y: 35 } });
    expect(await suggestions()).toEqual(['banana']);
    expect(outcome.settle.timersMs).toBeGreaterThan(200);
  });

  it('a key that starts nothing settles well within the old 300 ms window', async () => {
    await env.visitUrl(page('/still', `<!doctype html>${INPUT}<button>Go</button>`));
    await env.leftClick(100, 35);
    const outcome = await env.keys(['Tab']);
    expect(outcome.settle).toMatchObject({ network: true, dom: true, timersMs: 0 });
    expect(outcome.settle.ms).toBeLessThan(200);
  });

  it('a transition the key set going is waited for, an endless spinner is not', async () => {
    const style = `<style>#q { transition: width 400ms linear } #q:focus { width: 500px !important }
      @keyframes spin { to { transform: rotate(360deg) } } #spinner { animation: spin 1s linear infinite }</style>`;
    await env.visitUrl(page('/focus-transition', `<!doctype html>${style}<div id="spinner">*</div>${INPUT}`));
    await env.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const outcome = await env.keys(['Tab']);
    expect(await env.page.evaluate(() => document.activeElement?.id)).toBe('q');
    expect(outcome.settle.timersMs).toBeGreaterThanOrEqual(300);
    expect(outcome.settle.ms).toBeLessThan(1_000);
    expect(await env.page.evaluate(() => getComputedStyle(document.getElementById('q') as Element).width)).toBe(
      '500px',
    );
  });

  it('a timer longer than a debounce (1.5 s) and a cleared one are not waited for', async () => {
    const script = `document.getElementById('q').addEventListener('keydown', () => {
      setTimeout(() => { document.title = 'late'; }, 1500);
      clearTimeout(setTimeout(() => { document.title = 'cleared'; }, 800));
    });`;
    await env.visitUrl(page('/long-timer', `<!doctype html><title>t</title>${INPUT}<script>${script}</script>`));
    const outcome = await env.type('x', { at: { x: 100, y: 35 } });
    expect(outcome.settle.timersMs).toBe(0);
    expect(outcome.settle.ms).toBeLessThan(400);
    expect(await env.page.title()).toBe('t');
  });
});

describe('after a navigation', () => {
  it('waits for a slow image and for data the page fetches at its load event', async () => {
    slowRoute('/slow-image', 300, 'image/gif', Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
    slowRoute('/slow-json', 400, 'application/json', '{"ready":true}');
    const script = `addEventListener('load', () =>
      fetch('/slow-json').then((r) => r.json()).then(() => { document.getElementById('status').textContent = 'READY'; }));`;
    const url = page(
      '/load-fetch',
      `<!doctype html><p id="status">…</p><img src="/slow-image"><script>${script}</script>`,
    );
    const outcome = await env.visitUrl(url);
    expect(await env.page.textContent('#status')).toBe('READY');
    expect(outcome.settle.ms).toBeGreaterThanOrEqual(600);
  });

  it('a key that submits a form through a redirect waits for the slow page it ends on', async () => {
    const form = `<form action="/redirect"><input type="hidden" name="to" value="/pages/slow.html">${INPUT}</form>`;
    await env.visitUrl(page('/form', `<!doctype html>${form}`));
    await env.leftClick(100, 35);
    const outcome = await env.keys(['Enter']);
    expect(env.page.url()).toBe(server.url('/pages/slow.html'));
    expect(await env.page.textContent('#status')).toBe('READY');
    expect(outcome.settle.ms).toBeGreaterThanOrEqual(1_000);
  });

  it('a page that is already loaded and quiet settles quickly', async () => {
    const outcome = await env.visitUrl(page('/plain', '<!doctype html><p>plain</p>'));
    expect(outcome.settle).toMatchObject({ load: true, network: true, dom: true });
    expect(outcome.settle.ms).toBeLessThan(250);
  });
});
