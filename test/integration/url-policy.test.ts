// The URL policy in a real Chromium on local fixture servers: local files refused by default and never read; with
// deny rules, links, redirect hops, frames, popups, form posts, downloads and subresources to a denied server refused
// before it is contacted (its request log stays empty); private addresses refused after DNS, also where the egress
// proxy connects; documents fetched under interception held to the download cap (also after decompression); and a whole run whose model asks for file:///etc/hostname completes with the refusal fed back.
import fs from 'node:fs';
import http from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentAction } from '../../src/actions/schemas';
import { dispatchAction } from '../../src/agent/dispatch';
import type { DispatchResult } from '../../src/agent/dispatch';
import { BrowserPool, PolicyBlockedError } from '../../src/browser';
import type { BrowserEnvironment, Session } from '../../src/browser';
import { startEgressProxy } from '../../src/browser/egress-proxy';
import { NORM1000 } from '../../src/coords/viewport';
import type { Lookup } from '../../src/policy/resolve';
import { UrlPolicySchema } from '../../src/contract/url-policy';
import type { UrlPolicyInput } from '../../src/contract/url-policy';
import { readRun } from '../../src/trajectory/reader';
import { failedResult } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const VIEWPORT = { width: 800, height: 600 };
/** A local file with a text that must never reach a page, a model or a run folder. */
const SECRET_TEXT = `cua-local-secret-${process.pid}-${Date.now().toString(36)}`;
let secretFile: string;

let site: FixtureServer;
let denied: FixtureServer;
let pool: BrowserPool;
let downloadsDir: string;
const sessions: Session[] = [];

/** `internal.test` points at the loopback fixture servers; nothing else resolves. */
const lookup: Lookup = async (host) => {
  if (host === 'internal.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
};

beforeAll(async () => {
  site = await startFixtureServer();
  denied = await startFixtureServer();
  downloadsDir = await mkdtemp(path.join(os.tmpdir(), 'cua-policy-downloads-'));
  secretFile = path.join(downloadsDir, '..', `cua-policy-secret-${process.pid}.json`);
  fs.writeFileSync(secretFile, JSON.stringify({ apiKey: SECRET_TEXT }));
  pool = new BrowserPool({ slots: 8, lookup });
});

afterAll(async () => {
  await pool?.shutdown();
  await site?.close();
  await denied?.close();
  if (downloadsDir) await rm(downloadsDir, { recursive: true, force: true });
  if (secretFile) await rm(secretFile, { force: true });
});

async function open(policy?: UrlPolicyInput, url?: string): Promise<BrowserEnvironment> {
  const session = await pool.openSession({
    viewport: VIEWPORT,
    downloadsDir,
    ...(policy ? { urlPolicy: UrlPolicySchema.parse(policy) } : {}),
    ...(url ? { url } : {}),
  });
  sessions.push(session);
  return session.env;
}

async function closeAll(): Promise<void> {
  await Promise.all(sessions.splice(0).map((s) => pool.close(s.sessionId)));
}

/** Carries out a model action the way the act activity does; the page answer sub-call gets the page text. */
function act(env: BrowserEnvironment, action: Record<string, unknown>, pageTexts: string[] = []) {
  return dispatchAction({ thoughts: '', ...action } as AgentAction, {
    target: env,
    space: NORM1000,
    viewport: VIEWPORT,
    answerFromPage: async (_question, text) => {
      pageTexts.push(text);
      return 'no answer';
    },
  }) as Promise<DispatchResult>;
}

/** A page on the allowed server with a link, a popup button, a target=_blank link, a form and a download link to `to`. */
function linksTo(to: FixtureServer): string {
  site.route('/to-elsewhere', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      '<!doctype html><style>body{margin:0}a,button{position:absolute;left:20px;width:200px;height:30px;display:block}</style>' +
        `<a href="${to.url('/pages/target.html?from=link')}" style="top:20px">link</a>` +
        `<button style="top:80px" onclick="window.open('${to.url('/pages/target.html?from=popup')}')">popup</button>` +
        `<a href="${to.url('/pages/target.html?from=blank')}" target="_blank" style="top:140px">new tab</a>` +
        `<form method="post" action="${to.url('/pages/target.html?from=form')}"><button style="top:200px">post</button></form>` +
        `<a href="${to.url('/download/report.txt')}" style="top:260px">download</a>`,
    );
  });
  return site.url('/to-elsewhere');
}

const LINK = [60, 35] as const;
const POPUP = [60, 95] as const;
const NEW_TAB = [60, 155] as const;
const FORM_POST = [60, 215] as const;
const DOWNLOAD = [60, 275] as const;

describe('local files and other schemes', () => {
  afterAll(closeAll);

  it('refuses visit_url file:///etc/hostname with an observation; the page stays', async () => {
    const env = await open(undefined, site.url('/pages/article.html'));
    const result = await act(env, { action: 'visit_url', url: 'file:///etc/hostname' });
    const said = 'blocked by policy: file:///etc/hostname: file: URLs are not allowed (urlPolicy.allowFile is off)';
    expect(result).toMatchObject({ error: said, textObservation: said });
    expect(env.url()).toBe(site.url('/pages/article.html'));
  });

  it('a local config file the page talks the model into is never read into a page answer', async () => {
    const env = await open(undefined, site.url('/pages/article.html'));
    const result = await act(env, { action: 'visit_url', url: `file://${secretFile}` });
    expect(result.textObservation).toMatch(/^blocked by policy: file:\/\/.*: file: URLs are not allowed/);
    const texts: string[] = [];
    await act(env, { action: 'read_page_answer_question', question: 'What is the API key?' }, texts);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('Durable agents');
    expect(texts[0]).not.toContain(SECRET_TEXT);
  });

  it('a file: page reached around visit_url is left at once and cannot be read', async () => {
    const env = await open();
    await env.page.goto(`file://${secretFile}`).catch(() => undefined);
    const read = await env.pageMarkdown().catch((e: Error) => e.message);
    expect(read).not.toContain(SECRET_TEXT);
    await expect.poll(() => env.url()).toBe('about:blank');
  });

  it.each([
    ['allowFile', { allowFile: true }],
    ['allowFile under interception', { allowFile: true, denyHosts: ['elsewhere.test'] }],
  ])('%s: a local file opens', async (_name, policy) => {
    const env = await open(policy);
    await env.visitUrl(`file://${secretFile}`);
    expect(await env.pageMarkdown()).toContain(SECRET_TEXT);
  });

  it('refuses other schemes a page may suggest', async () => {
    const env = await open();
    for (const url of ['javascript:alert(1)', 'data:text/html,<h1>x</h1>', 'view-source:file:///etc/hostname']) {
      const result = await act(env, { action: 'visit_url', url });
      expect(result.textObservation).toMatch(/^blocked by policy: .*scheme is not allowed/);
    }
  });

  it('a refused start URL fails opening the session, which then does not count', async () => {
    const before = pool.size;
    await expect(
      pool.openSession({ viewport: VIEWPORT, downloadsDir, url: 'file:///etc/hostname' }),
    ).rejects.toBeInstanceOf(PolicyBlockedError);
    expect(pool.size).toBe(before);
  });
});

describe('deny rules', () => {
  let env: BrowserEnvironment;
  const policy = (): UrlPolicyInput => ({ denyHosts: [`127.0.0.1:${denied.port}`] });

  beforeAll(async () => {
    env = await open(policy());
  });
  afterAll(closeAll);

  const expectUntouched = (): void => expect(denied.requests).toEqual([]);

  it('a link to a denied host: refused, the page stays', async () => {
    const start = linksTo(denied);
    await env.visitUrl(start);
    const result = await act(env, { action: 'left_click', coordinate: [LINK[0] * 1.25, LINK[1] * (1000 / 600)] });
    expect(result.error).toMatch(
      /^PolicyBlockedError: blocked by policy: .*from=link: host 127\.0\.0\.1:\d+ is denied/,
    );
    expect(result.textObservation).toContain('blocked by policy');
    expect(env.url()).toBe(start);
    expectUntouched();
  });

  it('a redirect chain allowed → allowed → denied is refused at the denied hop', async () => {
    const third = denied.url('/pages/target.html?from=chain');
    const second = site.url(`/redirect?to=${encodeURIComponent(third)}`);
    const first = site.url(`/redirect?to=${encodeURIComponent(second)}`);
    const hops = site.requests.length;
    const failure = env.visitUrl(first);
    await expect(failure).rejects.toBeInstanceOf(PolicyBlockedError);
    await expect(failure).rejects.toThrow(`blocked by policy: ${third}: host 127.0.0.1:${denied.port} is denied`);
    expect(site.requests.slice(hops)).toEqual([
      `GET ${new URL(first).pathname}${new URL(first).search}`,
      `GET ${new URL(second).pathname}${new URL(second).search}`,
    ]);
    expectUntouched();
    expect(await env.page.textContent('h1')).toBe('Blocked by policy');
  });

  it('an allowed redirect chain arrives, with the cookies its hops set', async () => {
    site.route('/set-cookie-and-go', (_req, res) => {
      res.writeHead(302, { location: '/redirect?to=%2Faccount', 'set-cookie': 'session=hopper; Path=/' });
      res.end();
    });
    const entries = await env.page.evaluate(() => history.length);
    await env.visitUrl(site.url('/set-cookie-and-go'));
    expect(env.url()).toBe(site.url('/account'));
    expect(await env.page.textContent('#who')).toBe('Logged in as hopper');
    expect(await env.page.evaluate(() => history.length)).toBe(entries + 1); // the hops replaced themselves
  });

  it('an iframe from a denied host, or redirected to one, shows the refusal; the page itself loads', async () => {
    site.route('/framed', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const hop = site.url(`/redirect?to=${encodeURIComponent(denied.url('/pages/target.html?from=hop'))}`);
      res.end(
        `<h1>Host page</h1><iframe src="${denied.url('/pages/target.html?from=iframe')}"></iframe>` +
          `<iframe src="${hop}"></iframe>`,
      );
    });
    await env.visitUrl(site.url('/framed'));
    const frames = env.page.frames().filter((f) => f !== env.page.mainFrame());
    expect(frames).toHaveLength(2);
    for (const frame of frames) {
      await expect.poll(() => frame.textContent('h1').catch(() => null)).toBe('Blocked by policy');
    }
    expect(await env.page.textContent('h1')).toBe('Host page');
    expectUntouched();
  });

  it.each([
    ['a window.open popup', POPUP, 'popup'],
    ['a target=_blank link', NEW_TAB, 'blank'],
    ['a form post', FORM_POST, 'form'],
  ])('%s to a denied host: refused, one page, still where it was', async (_name, [x, y], from) => {
    const start = linksTo(denied);
    await env.visitUrl(start);
    const started = Date.now();
    const failure = env.leftClick(x, y);
    await expect(failure).rejects.toThrow(new RegExp(`blocked by policy: .*from=${from}: host .* is denied`));
    expect(Date.now() - started).toBeLessThan(4_000); // a refused popup is not waited for
    expect(env.page.context().pages()).toHaveLength(1);
    expect(env.url()).toBe(start);
    expectUntouched();
  });

  it('links, popups, form posts, redirects and downloads within the policy still work under interception', async () => {
    const start = linksTo(site);
    await env.visitUrl(start);
    await env.leftClick(...LINK);
    expect(env.url()).toBe(site.url('/pages/target.html?from=link'));
    await env.visitUrl(start);
    expect((await env.leftClick(...POPUP)).popupAdopted).toBe(true);
    expect(env.url()).toBe(site.url('/pages/target.html?from=popup'));
    expect(env.page.context().pages()).toHaveLength(1);
    await env.visitUrl(start);
    await env.leftClick(...FORM_POST);
    expect(env.url()).toBe(site.url('/pages/target.html?from=form'));
    expect(site.requests.at(-1)).toBe('POST /pages/target.html?from=form');
    const outcome = await env.visitUrl(site.url(`/redirect?to=${encodeURIComponent('/download/report.txt')}`));
    expect(outcome.downloads.map((d) => d.fileName)).toEqual(['report.txt']);
    await rm(outcome.downloads[0]?.path ?? '', { force: true });
    expectUntouched();
  });

  it('a download from a denied host: refused, nothing saved', async () => {
    await env.visitUrl(linksTo(denied));
    await expect(env.leftClick(...DOWNLOAD)).rejects.toThrow(/blocked by policy: .*\/download\/report\.txt/);
    expect(await readdir(downloadsDir).catch(() => [])).toEqual([]);
    expectUntouched();
  });

  it('images and fetches from a denied host fail quietly; the action does not', async () => {
    site.route('/embeds', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<h1>Embeds</h1><img src="${denied.url('/pages/pixel.png')}">`);
    });
    await env.visitUrl(site.url('/embeds'));
    const fetched = await env.page.evaluate(
      (url) =>
        fetch(url).then(
          () => 'loaded',
          () => 'failed',
        ),
      denied.url('/counter'),
    );
    expect(fetched).toBe('failed');
    expectUntouched();
  });

  it('web_search whose engine is refused says so', async () => {
    const result = await dispatchAction({ action: 'web_search', thoughts: '', query: 'cheap flights' } as AgentAction, {
      target: env,
      space: NORM1000,
      viewport: VIEWPORT,
      answerFromPage: async () => '',
      searchTemplate: denied.url('/search?q={query}'),
    });
    expect(result.textObservation).toBe(
      `blocked by policy: ${denied.url('/search?q=cheap+flights')}: host 127.0.0.1:${denied.port} is denied ` +
        `(denyHosts 127.0.0.1:${denied.port})`,
    );
    expectUntouched();
  });

  it('allowHosts keeps pages on those hosts, but not their images', async () => {
    const scoped = await open({ allowHosts: [`127.0.0.1:${site.port}`] });
    site.route('/cdn-image', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<img id="img" src="${denied.url('/cdn/pixel.png')}"><a href="${denied.url('/x')}">away</a>`);
    });
    await scoped.visitUrl(site.url('/cdn-image'));
    await expect.poll(() => denied.requests).toEqual(['GET /cdn/pixel.png']);
    await expect(scoped.visitUrl(denied.url('/x'))).rejects.toThrow(/is not in allowHosts/);
    expect(denied.requests).toEqual(['GET /cdn/pixel.png']);
    denied.requests.length = 0;
  });

  it('https only refuses an http page', async () => {
    const httpsOnly = await open({ schemes: ['https'] });
    await expect(httpsOnly.visitUrl(site.url('/pages/target.html'))).rejects.toThrow(/the http: scheme is not allowed/);
  });
});

describe('documents fetched under interception', () => {
  const CAP = 5 * 1024 * 1024;
  let env: BrowserEnvironment;
  const act = (action: AgentAction): Promise<DispatchResult> =>
    dispatchAction(action, { target: env, space: NORM1000, viewport: VIEWPORT, answerFromPage: async () => '' });

  beforeAll(async () => {
    const session = await pool.openSession({
      viewport: VIEWPORT,
      downloadsDir,
      urlPolicy: UrlPolicySchema.parse({ denyHosts: [`127.0.0.1:${denied.port}`] }),
      environment: { maxDownloadBytes: CAP },
    });
    sessions.push(session);
    env = session.env;
  });
  afterAll(closeAll);

  it('an endless download is cut off at the download cap, said in one line; nothing is saved; the session goes on', async () => {
    const url = site.url('/hostile/bomb');
    const result = await act({ action: 'visit_url', url });
    expect(result.textObservation).toBe(
      `blocked by policy: ${url}: the response is larger than 5 MiB, the download limit`,
    );
    expect(await readdir(downloadsDir)).toEqual([]);
    await env.visitUrl(site.url('/pages/target.html?from=after-bomb'));
    expect(env.url()).toBe(site.url('/pages/target.html?from=after-bomb'));
  });

  it('a compressed page is decoded for the browser; one that decodes past the cap is cut off all the same', async () => {
    site.route('/gzipped', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync('<!doctype html><h1>Packed page</h1>'));
    });
    site.route('/gzip-bomb', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(Buffer.alloc(CAP + 1024 * 1024, 0x20))); // about 6 KiB on the wire
    });
    await env.visitUrl(site.url('/gzipped'));
    expect(await env.page.textContent('h1')).toBe('Packed page');
    await expect(env.visitUrl(site.url('/gzip-bomb'))).rejects.toThrow(
      /blocked by policy: .*\/gzip-bomb: the response is larger than 5 MiB/,
    );
    expect(env.url()).toBe(site.url('/gzipped'));
  });
});

describe('denyPrivateAddresses', () => {
  let env: BrowserEnvironment;
  beforeAll(async () => {
    env = await open({ denyPrivateAddresses: true });
  });
  afterAll(closeAll);

  it('refuses a loopback address before any request', async () => {
    const before = site.requests.length;
    const result = await act(env, { action: 'visit_url', url: site.url('/pages/target.html') });
    expect(result.textObservation).toBe(
      `blocked by policy: ${site.url('/pages/target.html')}: 127.0.0.1 is a loopback address (denyPrivateAddresses)`,
    );
    expect(site.requests.length).toBe(before);
    expect(env.url()).toBe('about:blank');
  });

  it('refuses a host name that resolves to one', async () => {
    await expect(env.visitUrl(`http://internal.test:${site.port}/`)).rejects.toThrow(
      /internal\.test resolves to 127\.0\.0\.1, a loopback address/,
    );
    await expect(env.visitUrl(`http://localhost:${site.port}/`)).rejects.toThrow(/loopback name/);
  });

  it('a page’s own requests to private addresses are refused, by name where they connect (egress proxy)', async () => {
    const before = site.requests.length;
    await env.page.evaluate(
      (urls) => Promise.all(urls.map((u) => fetch(u, { mode: 'no-cors' }).catch(() => undefined))),
      [`http://internal.test:${site.port}/counter`, `http://127.0.0.1:${site.port}/counter`],
    );
    expect(site.requests.length).toBe(before);
    const refused = env.guard.takeBlocks().map((b) => `${b.kind} ${b.url}: ${b.reason}`);
    expect(refused).toEqual(
      expect.arrayContaining([
        `request http://internal.test:${site.port}/counter: internal.test resolves to 127.0.0.1, a loopback address (denyPrivateAddresses)`,
        `request http://127.0.0.1:${site.port}/counter: 127.0.0.1 is a loopback address (denyPrivateAddresses)`,
      ]),
    );
  });

  it('a private start URL fails opening the session', async () => {
    await expect(open({ denyPrivateAddresses: true }, site.url('/'))).rejects.toBeInstanceOf(PolicyBlockedError);
  });
});

describe('the egress proxy', () => {
  it('connects to the address it decided on, not to what the name resolves to later', async () => {
    const decided: string[] = [];
    const proxy = await startEgressProxy({
      decide: async (url) => {
        decided.push(url);
        return new URL(url).hostname === 'pinned.test'
          ? { ok: true, address: '127.0.0.1' }
          : { ok: false, reason: 'no' };
      },
      onBlocked: () => undefined,
    });
    try {
      const viaProxy = (target: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const { port } = new URL(proxy.url);
          const req = http.request({ host: '127.0.0.1', port, path: target, headers: { host: new URL(target).host } });
          req.on('response', (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end();
        });
      // pinned.test resolves nowhere: only the decided address can have served this.
      const ok = await viaProxy(`http://pinned.test:${site.port}/pages/target.html?via=proxy`);
      expect(ok.status).toBe(200);
      expect(site.requests.at(-1)).toBe('GET /pages/target.html?via=proxy');
      const refused = await viaProxy(`http://other.test:${site.port}/counter`);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('Blocked by policy');
      expect(decided).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('a run whose model asks for a local file', () => {
  let h: Harness;
  useHarness((x) => (h = x));

  it('completes; the refusal is recorded and fed to the next step', async () => {
    const handle = await h.start({ script: 'visit-file' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 2, answer: 'The file could not be opened.' });

    const run = await readRun(h.runDir(handle.workflowId));
    const outputs = run.events.filter((e) => e.type === 'observation' && e.observation_type === 'tool_output');
    expect(JSON.stringify(outputs[0])).toContain('blocked by policy: file:///etc/hostname');

    const calls = h.model.requests.filter((r) => r.script === 'visit-file' && !r.subcall);
    expect(calls.map((c) => c.index)).toEqual([0, 1]);
    expect(calls[1]?.lastUserText).toContain('blocked by policy: file:///etc/hostname');
  });

  it('a start URL the worker refuses fails the task at once, before any model call', async () => {
    const started = Date.now();
    const handle = await h.start({ script: 'visit-file', startUrl: `file://${secretFile}` });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failedResult(err)).toMatchObject({ status: 'failed', endReason: 'browser', steps: 1 });
    expect(failedResult(err)?.error).toMatch(/^blocked by policy: file:\/\/.*: file: URLs are not allowed/);
    expect(Date.now() - started).toBeLessThan(20_000); // not retried
    expect(h.model.requests.filter((r) => r.script === 'visit-file')).toHaveLength(2); // the first test's two
  });
});
