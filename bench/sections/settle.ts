// Section 2, settle cost: how long an action waits for the page to settle (src/browser/settle.ts, by signals)
// on a static page, an SPA-style debounced search and a slowly loading page, against the original's fixed 3 s
// sleep — and whether the page was actually ready when the wait ended.
import path from 'node:path';
import { BrowserPool } from '../../src/browser/pool';
import type { ActionOutcome, BrowserEnvironment } from '../../src/browser/environment';
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { fmtMs, round, summarize, table } from '../stats';

const FIXED_WAIT_MS = 3_000;

interface Scenario {
  name: string;
  reps: number;
  /** Puts the page in its starting state (not measured). */
  prepare: (env: BrowserEnvironment) => Promise<unknown>;
  act: (env: BrowserEnvironment) => Promise<ActionOutcome>;
  /** Whether the page shows its final content right after the settle. */
  ready: (env: BrowserEnvironment) => Promise<boolean>;
}

interface Measured {
  name: string;
  settleMs: number[];
  actionMs: number[];
  ready: number;
  reps: number;
}

async function measure(env: BrowserEnvironment, s: Scenario): Promise<Measured> {
  const out: Measured = { name: s.name, settleMs: [], actionMs: [], ready: 0, reps: s.reps };
  for (let i = 0; i < s.reps; i++) {
    await s.prepare(env);
    const t0 = performance.now();
    const outcome = await s.act(env);
    out.actionMs.push(performance.now() - t0);
    out.settleMs.push(outcome.settle.ms);
    if (await s.ready(env)) out.ready += 1;
  }
  return out;
}

export async function benchSettle(b: Bench): Promise<SectionOutput> {
  const [site, pages] = await Promise.all([b.site(), b.pages()]);
  const pool = new BrowserPool({ slots: 1 });
  const stop = onCleanup('settle browser', () => pool.shutdown());
  try {
    const { env } = await pool.openSession({
      viewport: { width: 1440, height: 900 },
      downloadsDir: path.join(b.dir, 'settle-downloads'),
      url: `${site.url}/`,
    });
    const home = `${site.url}/`;
    const atHome = async (e: BrowserEnvironment) => {
      if (e.url() !== home) await e.visitUrl(home);
    };
    const scenarios: Scenario[] = [
      {
        name: 'static page, click (no navigation)',
        reps: 6,
        prepare: atHome,
        act: (e) => e.leftClick(720, 180),
        ready: async () => true,
      },
      {
        name: 'static page, click a link (navigation)',
        reps: 4,
        prepare: (e) => e.visitUrl(`${site.url}/search?q=lisbon`),
        act: (e) => e.leftClick(720, 230),
        ready: async (e) => /\/hotel\/1$/.test(e.url()) && (await e.page.locator('#price').count()) === 1,
      },
      {
        name: 'SPA debounced search (type "ap")',
        reps: 4,
        prepare: (e) => e.visitUrl(pages.url('/pages/search.html')),
        act: (e) => e.type('ap', { at: { x: 170, y: 35 } }),
        ready: async (e) => (await e.page.locator('#suggestions li').count()) > 0,
      },
      {
        name: 'slow loading page (1.2 s fetch)',
        reps: 3,
        prepare: atHome,
        act: (e) => e.visitUrl(pages.url('/pages/slow.html')),
        ready: async (e) => (await e.page.locator('#status').textContent()) === 'READY',
      },
    ];
    const results: Measured[] = [];
    for (const s of scenarios) {
      b.log(`[bench] settle: ${s.name} × ${s.reps}`);
      results.push(await measure(env, s));
    }
    const rows: Row[] = [];
    const lines = [['scenario', 'settle p50', 'settle max', 'action p50', 'ready', 'saved vs fixed 3 s (p50)']];
    for (const r of results) {
      const settle = summarize(r.settleMs);
      const action = summarize(r.actionMs);
      lines.push([
        r.name,
        fmtMs(settle.p50),
        fmtMs(settle.max),
        fmtMs(action.p50),
        `${r.ready}/${r.reps}`,
        fmtMs(FIXED_WAIT_MS - settle.p50),
      ]);
      rows.push(
        row(
          'settle',
          `${r.name}: settle p50 (ready ${r.ready}/${r.reps})`,
          fmtMs(settle.p50),
          '< 3000 ms, ready',
          settle.max < FIXED_WAIT_MS && r.ready === r.reps,
        ),
      );
    }
    b.log(table(lines));
    return {
      name: 'settle',
      rows,
      data: {
        fixedWaitMs: FIXED_WAIT_MS,
        scenarios: results.map((r) => ({
          name: r.name,
          reps: r.reps,
          ready: r.ready,
          settleMs: r.settleMs.map((v) => round(v)),
          actionMs: r.actionMs.map((v) => round(v)),
        })),
      },
    };
  } finally {
    await stop();
  }
}
