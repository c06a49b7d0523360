// The element record an act takes before it acts (src/browser/element-record.ts), in real Chromium on fixture pages:
// tag, role, name, text, a selector that finds the same element again, the box in viewport and model space; through
// open shadow roots and same-origin frames; a focused field without its value; a page that tampers with the DOM's
// prototypes; and a page that cannot be read gives null with a reason instead of failing.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright';
import { launchBrowser } from '../../src/browser';
import { readElement } from '../../src/browser/element-record';
import type { ElementNote, ElementProbe, ElementRecord } from '../../src/browser/element-record';
import { NORM1000 } from '../../src/coords/viewport';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

let server: FixtureServer;
let browser: Browser;
let context: BrowserContext;

const VIEWPORT = { width: 1000, height: 500 };
const at = (x: number, y: number): ElementProbe => ({ kind: 'point', x, y });
const FOCUS: ElementProbe = { kind: 'focus' };

const abs = (left: number, top: number, w: number, h: number, more = '') =>
  `class="abs" style="left:${left}px;top:${top}px;width:${w}px;height:${h}px;${more}"`;

const ELEMENTS =
  '<!doctype html><title>Elements</title><style>body{margin:0;font:16px sans-serif}.abs{position:absolute}</style>' +
  `<button id="save" ${abs(20, 20, 120, 40)}><span>Save</span> draft</button>` +
  `<button ${abs(160, 20, 120, 40)} aria-label="Close dialog">×</button>` +
  `<label for="email" ${abs(20, 80, 120, 30)}>Email address</label>` +
  `<input id="email" name="email" ${abs(160, 80, 200, 30)} placeholder="you@example.com">` +
  `<input type="password" name="pw" data-testid="password" ${abs(380, 80, 200, 30)} aria-label="Password">` +
  `<a href="/next" ${abs(20, 140, 200, 30)}>Next <b>page</b><span style="display:none">hidden words</span></a>` +
  `<ul ${abs(20, 180, 200, 60, 'margin:0;padding:0;list-style:none;line-height:30px')}><li><a href="#a">Item</a></li><li><a href="#b">Item</a></li></ul>` +
  `<div id="host" ${abs(20, 260, 200, 40)}></div>` +
  `<iframe id="frame" src="/elements-frame" ${abs(300, 240, 300, 100, 'border:0')}></iframe>` +
  `<button id="secret-btn" ${abs(620, 20, 200, 40)}>Code TOPSECRET here</button>` +
  `<img alt="Company logo" ${abs(20, 320, 50, 50)} src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">` +
  "<script>document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<button>Shadow click</button>';</script>";

/** Everything a page could tamper with in its own world: none of it reaches the isolated world. */
const TAMPERING =
  '<script>' +
  "Element.prototype.getBoundingClientRect = () => { throw new Error('tampered'); };" +
  'Document.prototype.elementFromPoint = () => null;' +
  "Document.prototype.querySelectorAll = () => { throw new Error('tampered'); };" +
  "Element.prototype.getAttribute = () => 'tampered';" +
  'Array.from = () => [];' +
  "String.prototype.trim = function () { return 'tampered'; };" +
  "CSS.escape = () => 'tampered';" +
  "JSON.stringify = () => 'tampered';" +
  '</script>';

beforeAll(async () => {
  server = await startFixtureServer();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: VIEWPORT });
  const html = (body: string) => (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  server.route('/elements', html(ELEMENTS));
  server.route('/hostile-elements', html(ELEMENTS + TAMPERING));
  server.route(
    '/elements-frame',
    html(
      '<!doctype html><body style="margin:0"><button id="inner" style="margin:10px;width:100px;height:30px">In frame</button>',
    ),
  );
  server.route(
    '/cross-origin',
    html(
      '<!doctype html><body style="margin:0">' +
        `<iframe id="other" src="http://localhost:${server.port}/elements-frame" style="border:0;width:300px;height:100px"></iframe>`,
    ),
  );
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(server.url(path));
  await page.waitForLoadState('load');
  return page;
}

async function record(page: Page, probe: ElementProbe, redact?: (s: string) => string): Promise<ElementRecord> {
  const note = await readElement(page, probe, { space: NORM1000, viewport: VIEWPORT, ...(redact ? { redact } : {}) });
  if (note.element === null) throw new Error(`no record: ${note.element_error}`);
  return note.element;
}

/** Whether `selector` finds exactly the element at the point (in the top document). */
async function resolvesBack(page: Page, selector: string, x: number, y: number): Promise<boolean> {
  return page.evaluate(
    ([s, px, py]) => {
      const found = document.querySelectorAll(s);
      const hit = document.elementFromPoint(px, py);
      return found.length === 1 && !!hit && (found[0] === hit || found[0]!.contains(hit));
    },
    [selector, x, y] as [string, number, number],
  );
}

describe('the element record of a pointer action', () => {
  it('records a button: tag, role, name, text, selector, box in viewport and model space', async () => {
    const page = await open('/elements');
    const el = await record(page, at(40, 40)); // on the <span> inside the button
    expect(el).toMatchObject({
      source: 'point',
      tag: 'button',
      role: 'button',
      name: 'Save draft',
      text: 'Save draft',
      selector: '#save',
      selector_unique: true,
      attributes: { id: 'save', type: 'submit' },
      box: { x: 20, y: 20, width: 120, height: 40 },
      // norm1000 on a 1000×500 viewport: y and height double.
      model_box: { x: 20, y: 40, width: 120, height: 80 },
    });
    expect(el.screenshot_box).toBeUndefined();
    expect(await resolvesBack(page, el.selector, 40, 40)).toBe(true);
    await page.close();
  });

  it.each([
    ['an aria-label and no id', 200, 40, { tag: 'button', role: 'button', name: 'Close dialog' }],
    ['a link with hidden text', 60, 150, { tag: 'a', role: 'link', name: 'Next page', text: 'Next page' }],
    ['the second of two like links (a path)', 20, 225, { tag: 'a', role: 'link', name: 'Item' }],
    ['an image', 40, 340, { tag: 'img', role: 'img', name: 'Company logo', text: '' }],
    ['a labelled field', 200, 95, { tag: 'input', role: 'textbox', name: 'Email address', selector: '#email' }],
  ])('records %s with a selector that finds it again', async (_what, x, y, expected) => {
    const page = await open('/elements');
    const el = await record(page, at(x, y));
    expect(el).toMatchObject(expected);
    expect(el.selector_unique).toBe(true);
    expect(await resolvesBack(page, el.selector, x, y)).toBe(true);
    await page.close();
  });

  it('follows an open shadow root and a same-origin frame, with the box in the top viewport', async () => {
    const page = await open('/elements');
    const shadow = await record(page, at(40, 270));
    expect(shadow).toMatchObject({
      tag: 'button',
      name: 'Shadow click',
      within: [{ kind: 'shadow', selector: '#host' }],
    });
    const inShadow = await page.evaluate(
      (s) => document.querySelector('#host')?.shadowRoot?.querySelectorAll(s).length,
      shadow.selector,
    );
    expect(inShadow).toBe(1);
    const framed = await record(page, at(330, 265));
    expect(framed).toMatchObject({
      tag: 'button',
      name: 'In frame',
      selector: '#inner',
      within: [{ kind: 'frame', selector: '#frame' }],
      box: { x: 310, y: 250, width: 100, height: 30 },
    });
    await page.close();
  });

  it("records another origin's frame as its frame element", async () => {
    const page = await open('/cross-origin');
    await page.frameLocator('#other').locator('#inner').waitFor();
    expect(await record(page, at(30, 20))).toMatchObject({
      tag: 'iframe',
      selector: '#other',
      cross_origin_frame: true,
    });
    await page.close();
  });

  it('passes every recorded string through the redaction', async () => {
    const page = await open('/elements');
    const el = await record(page, at(700, 40), (s) => s.replaceAll('TOPSECRET', '[secret]'));
    expect(el).toMatchObject({ name: 'Code [secret] here', text: 'Code [secret] here' });
    expect(JSON.stringify(el)).not.toContain('TOPSECRET');
    await page.close();
  });

  it("is not fooled by a page that tampers with its own world's prototypes", async () => {
    const page = await open('/hostile-elements');
    expect(await page.evaluate(() => 'x '.trim())).toBe('tampered'); // the page's own world is tampered
    expect(await record(page, at(40, 40))).toMatchObject({
      tag: 'button',
      name: 'Save draft',
      selector: '#save',
      box: { x: 20, y: 20, width: 120, height: 40 },
    });
    await page.close();
  });
});

describe('the element record of typing', () => {
  it('records the focused field by its label, never its value', async () => {
    const page = await open('/elements');
    await page.click('[data-testid="password"]');
    await page.keyboard.type('hunter2-value');
    const el = await record(page, FOCUS);
    expect(el).toMatchObject({
      source: 'focus',
      tag: 'input',
      role: 'textbox',
      name: 'Password',
      text: '',
      selector: '[data-testid="password"]',
      attributes: { name: 'pw', type: 'password', test_id: 'password' },
    });
    expect(JSON.stringify(el)).not.toContain('hunter2');
    await page.fill('#email', 'ada@example.com');
    const email = await record(page, FOCUS);
    expect(email).toMatchObject({
      name: 'Email address',
      selector: '#email',
      attributes: { placeholder: 'you@example.com' },
    });
    expect(JSON.stringify(email)).not.toContain('ada@');
    await page.close();
  });

  it('says when nothing has the focus', async () => {
    const page = await open('/elements');
    expect(await readElement(page, FOCUS, { space: NORM1000, viewport: VIEWPORT })).toEqual({
      element: null,
      element_error: 'no focused element',
    });
    await page.close();
  });
});

describe('a page that cannot be read', () => {
  it('gives null with the reason, in time, when the page is busy', async () => {
    const page = await open('/elements');
    await page.evaluate(() => {
      setTimeout(() => {
        const end = Date.now() + 2_000;
        while (Date.now() < end);
      }, 0);
    });
    const t0 = Date.now();
    const note: ElementNote = await readElement(page, at(40, 40), {
      space: NORM1000,
      viewport: VIEWPORT,
      timeoutMs: 300,
    });
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(note).toEqual({ element: null, element_error: 'the page did not answer within 300 ms' });
    await page.close();
  });

  it('gives null with the reason for a closed page', async () => {
    const page = await open('/elements');
    await page.close();
    const note = await readElement(page, at(40, 40), { space: NORM1000, viewport: VIEWPORT });
    expect(note.element).toBeNull();
    expect(note).toHaveProperty('element_error');
  });
});
