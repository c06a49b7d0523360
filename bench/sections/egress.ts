// Section: what the secrets guards cost per page load (issue 39). Three contexts load the same pages: one with no
// route at all (a context no secret was typed into, under a policy that restricts nothing), one under the worker's
// default policy (the control plane denied: every request goes through the URL policy's route), and one armed by a
// typed secret on top (the egress guard checks every request's URL, headers and body first). Pages: the hotel home
// page, and a page with 40 images (the per-request cost). Loads alternate between the contexts, round by round.
import path from 'node:path';
import { BrowserPool } from '../../src/browser/pool';
import type { BrowserEnvironment } from '../../src/browser/environment';
import { configFromObject } from '../../src/runtime/config';
import { workerUrlPolicy } from '../../src/runtime/control-plane';
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { fmtMs, round, summarize, table } from '../stats';

const VIEWPORT = { width: 1440, height: 900 };
const ROUNDS = 15;
const IMAGES = 40;
const MODES = ['no route (unarmed)', 'control plane denied', 'control plane denied + armed'] as const;
type Mode = (typeof MODES)[number];

/** A tiny PNG (1×1). */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

async function timeLoad(env: BrowserEnvironment, url: string): Promise<number> {
  const t0 = performance.now();
  await env.page.goto(url, { waitUntil: 'load' });
  return performance.now() - t0;
}

export async function benchEgress(b: Bench): Promise<SectionOutput> {
  const [site, pages] = await Promise.all([b.site(), b.pages()]);
  pages.route('/bench/pixel.png', (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
    res.end(PIXEL);
  });
  pages.route('/bench/images', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    const imgs = Array.from({ length: IMAGES }, (_, i) => `<img src="/bench/pixel.png?i=${i}&t=${Date.now()}">`);
    res.end(`<!doctype html><title>Images</title>${imgs.join('')}`);
  });
  const pool = new BrowserPool({ slots: 3 });
  const stop = onCleanup('egress browser', () => pool.shutdown());
  try {
    const open = async (mode: Mode, withPolicy: boolean): Promise<[Mode, BrowserEnvironment]> => {
      const { env } = await pool.openSession({
        viewport: VIEWPORT,
        downloadsDir: path.join(b.dir, `egress-downloads-${MODES.indexOf(mode)}`),
        url: 'about:blank',
        ...(withPolicy ? { urlPolicy: workerUrlPolicy(configFromObject({})) } : {}),
      });
      return [mode, env];
    };
    const envs = [await open(MODES[0], false), await open(MODES[1], true), await open(MODES[2], true)];
    await envs[2]?.[1].egress.arm([{ name: 'PW', value: 'bench-secret-value', hosts: ['bank.example'] }]);
    const scenarios = [
      { name: 'hotel home page', url: `${site.url}/` },
      { name: `page with ${IMAGES} images`, url: pages.url('/bench/images') },
    ];
    const ms = new Map<string, number[]>();
    for (const s of scenarios) {
      for (const [, env] of envs) await timeLoad(env, s.url); // warm up, untimed
      for (let i = 0; i < ROUNDS; i++) {
        for (const [mode, env] of envs) {
          const key = `${s.name}|${mode}`;
          ms.set(key, [...(ms.get(key) ?? []), await timeLoad(env, s.url)]);
        }
      }
      b.log(`[bench] egress: ${s.name} × ${ROUNDS} per context`);
    }
    const lines = [['page', 'context', 'n', 'p50', 'p95']];
    const rows: Row[] = [];
    for (const s of scenarios) {
      const base = summarize(ms.get(`${s.name}|${MODES[0]}`) ?? []).p50;
      for (const mode of MODES) {
        const sum = summarize(ms.get(`${s.name}|${mode}`) ?? []);
        lines.push([s.name, mode, `${sum.n}`, fmtMs(sum.p50), fmtMs(sum.p95)]);
        const extra = mode === MODES[0] ? '' : ` (+${fmtMs(sum.p50 - base)})`;
        rows.push(
          row('egress', `${s.name}: page load, ${mode}, p50 / p95`, `${fmtMs(sum.p50)} / ${fmtMs(sum.p95)}${extra}`),
        );
      }
    }
    b.log(table(lines));
    return {
      name: 'egress',
      rows,
      data: {
        rounds: ROUNDS,
        images: IMAGES,
        ms: Object.fromEntries([...ms].map(([k, v]) => [k, v.map((x) => round(x))])),
      },
    };
  } finally {
    await stop();
  }
}
