// The egress guard end to end (real dev server, real Chromium, scripted model, two fixture sites on two loopback
// ports): a secret bound to site A is typed into pages of A that try to send it to site B every way a page can — a
// cross-host form, fetch, sendBeacon, an image URL, a WebSocket, a navigation with it in the query, base64 and
// URL-encoded copies, a header, a multipart part, an open redirect on A itself. Each is blocked before it leaves:
// B's log holds no form of the value, the model reads one line naming the secret and the host, and neither the run
// folder nor the history holds the value. The same pages sending to A itself go through.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../src/browser/pool';
import type { TaskResult } from '../../src/contract/task';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { leakedSecret, watch, watchedForms } from '../../src/browser/secret-traces';
import { EXFIL_PATHS, startSecretSite } from '../fixtures/secrets/sites';
import type { SecretSite } from '../fixtures/secrets/sites';
import type { Harness } from './harness';
import {
  clickField,
  historyText,
  runFolderText,
  scriptedModel,
  startScripted,
  startWorkerWith,
  terminate,
  typeAndEnter,
  visit,
} from './secrets-harness';
import type { Entry } from './secrets-harness';
import { useHarness } from './use-harness';

const PASSWORD = 'hunter2 correct/horse+"q"&=';
const PATHS = ['form', ...Object.keys(EXFIL_PATHS)];

let h: Harness;
useHarness((x) => (h = x), { worker: false });

/** Every way the value could be written down, for searching a log. */
const FORMS = [
  ...watchedForms(PASSWORD),
  encodeURIComponent(PASSWORD),
  new URLSearchParams({ p: PASSWORD }).toString().slice(2),
];

describe('the egress guard', () => {
  let a: SecretSite;
  let b: SecretSite;
  let model: ScriptedModelServer;
  let worker: { stop(): Promise<void> };
  const queue = () => `${h.config.taskQueue}-egress`;

  beforeAll(async () => {
    [a, b] = await Promise.all([startSecretSite(), startSecretSite()]);
    const tryAll = (to: SecretSite): Entry[] =>
      PATHS.flatMap((path) => [
        visit(`${a.url}/exfil/${path}?to=${to.url}`),
        clickField,
        typeAndEnter('{{secret:PW}}'),
      ]);
    model = await scriptedModel({
      'exfil-other': [...tryAll(b), terminate('tried')],
      'exfil-self': [...tryAll(a), terminate('sent')],
    });
    worker = await startWorkerWith({
      ...h.config,
      taskQueue: queue(),
      secrets: { PW: { value: PASSWORD, hosts: [a.host] } },
    });
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await Promise.all([model?.close(), a?.close(), b?.close()]);
  });

  it('blocks every path to another host before it leaves, and says so in one line', async () => {
    const handle = await startScripted(h, queue(), model, 'exfil-other', `${a.url}/exfil/form?to=${b.url}`, 40);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'tried' });

    // B never got the value in any form.
    const got = b.received();
    for (const form of FORMS) expect(got).not.toContain(form);
    expect(b.wsMessages).toEqual([]);

    // The model read the refusals: one line naming the secret and the host, for requests and the WebSocket.
    const told = model.requests.filter((r) => r.script === 'exfil-other' && !r.subcall).map((r) => r.lastUserText);
    const line = `blocked by policy: ${b.host}: the page tried to send secret PW to ${b.host}`;
    const refusals = told.filter((t) => t.includes(line));
    expect(refusals.length).toBeGreaterThanOrEqual(PATHS.length - 2);
    expect(told.join('\n')).toContain('(a WebSocket message)');
    expect(told.join('\n')).toContain('it was blocked and nothing was sent');

    // Nothing recorded holds the value; the run folder keeps the refusal.
    const folder = runFolderText(h, handle.workflowId);
    expect(folder).toContain(`the page tried to send secret PW to ${b.host}`);
    const history = await historyText(handle);
    for (const form of FORMS) {
      expect(folder).not.toContain(form);
      expect(history).not.toContain(form);
      expect(model.requests.map((r) => r.allText).join('\n')).not.toContain(form);
    }
  }, 180_000);

  it('the same requests to the bound host go through', async () => {
    const before = a.requests.length;
    const handle = await startScripted(h, queue(), model, 'exfil-self', `${a.url}/exfil/form?to=${a.url}`, 40);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'sent' });
    const probe = [watch({ name: 'PW', value: PASSWORD, hosts: ['nowhere.invalid'] })];
    const carried = a.requests.slice(before).filter((r) => {
      const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
      return leakedSecret(probe, { url: `${a.url}${r.url}`, headers, body: Buffer.from(r.body) });
    });
    const paths = new Set(carried.map((r) => `${r.method} ${r.url.split('?')[0]}`));
    expect(paths).toEqual(
      new Set(['POST /collect', 'GET /collect', 'GET /pixel.gif', 'GET /landing', 'GET /redirect']),
    );
    // Every path but the WebSocket (its message is below); the open redirect's two requests both carry it.
    expect(carried.length).toBe(PATHS.length);
    expect(a.wsMessages).toContain(PASSWORD);
    const told = model.requests.filter((r) => r.script === 'exfil-self' && !r.subcall).map((r) => r.lastUserText);
    expect(told.join('\n')).not.toContain('the page tried to send secret');
  }, 180_000);
});

describe('an armed context closes the paths a route does not see', () => {
  let pool: BrowserPool;
  let site: SecretSite;

  beforeAll(async () => {
    site = await startSecretSite();
    pool = new BrowserPool({ slots: 1 });
  }, 60_000);

  afterAll(async () => {
    await pool?.shutdown();
    await site?.close();
  });

  it('WebRTC gone, service workers refused, DNS prefetch off; an unarmed context keeps them', async () => {
    const { env } = await pool.openSession({
      viewport: { width: 1440, height: 900 },
      downloadsDir: path.join(h.dir, 'egress-downloads'),
      url: `${site.url}/exfil/fetch?to=${site.url}`,
    });
    const probe = () =>
      env.page.evaluate(async () => ({
        rtc: typeof RTCPeerConnection,
        sw: await navigator.serviceWorker.register('/sw.js').then(
          () => 'registered',
          (e: Error) => e.name,
        ),
        prefetch: document.querySelector('meta[http-equiv="x-dns-prefetch-control"]')?.getAttribute('content') ?? null,
      }));
    const before = await probe();
    expect(before.rtc).toBe('function');
    expect(before.prefetch).toBeNull();
    expect(before.sw).not.toBe('NotAllowedError');
    expect(env.egress.isArmed).toBe(false);

    await env.egress.arm([{ name: 'PW', value: PASSWORD, hosts: [site.host] }]);
    expect((await probe()).rtc).toBe('undefined'); // the page already open
    await env.page.goto(`${site.url}/exfil/image?to=${site.url}`);
    await env.page.evaluate(() => {
      const link = document.createElement('link');
      link.rel = 'dns-prefetch';
      link.href = '//leak.example';
      document.head.append(link);
    });
    const after = await probe();
    expect(after).toEqual({ rtc: 'undefined', sw: 'NotAllowedError', prefetch: 'off' });
    expect(await env.page.evaluate(() => document.querySelectorAll('link[rel="dns-prefetch"]').length)).toBe(0);
  }, 60_000);
});
