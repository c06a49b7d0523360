// Section: the element record every pointer and typing act takes just before it acts (src/browser/element-record.ts):
// one evaluation in an isolated world, timed from the act's side (CDP round trips included), on the hotel site's home
// and results pages, a focused field, and a 3,000-row table whose cells have no ids (the selector is a path, so
// uniqueness is checked with querySelectorAll at each step). No target: it is what an act pays for replay.
import path from 'node:path';
import { BrowserPool } from '../../src/browser/pool';
import type { BrowserEnvironment } from '../../src/browser/environment';
import { readElement } from '../../src/browser/element-record';
import type { ElementProbe } from '../../src/browser/element-record';
import { NORM1000 } from '../../src/coords/viewport';
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { Row, SectionOutput } from '../report';
import { fmtMs, round, summarize, table } from '../stats';

const VIEWPORT = { width: 1440, height: 900 };
const ROUNDS = 8;

interface Scenario {
  name: string;
  url: string;
  /** Puts the page in its state (not timed). */
  prepare?: (env: BrowserEnvironment) => Promise<unknown>;
  probes: ElementProbe[];
}

const point = (x: number, y: number): ElementProbe => ({ kind: 'point', x, y });

/** A table of `rows` rows without ids or classes: a cell's selector is a tag + nth-of-type path. */
function bigTable(rows: number): string {
  const cells = (i: number) => `<td>${i}</td><td>Row ${i} name</td><td><a href="#r${i}">open ${i}</a></td>`;
  const body = Array.from({ length: rows }, (_, i) => `<tr>${cells(i)}</tr>`).join('');
  return `<!doctype html><title>Big table</title><table>${body}</table>`;
}

export async function benchElement(b: Bench): Promise<SectionOutput> {
  const [site, pages] = await Promise.all([b.site(), b.pages()]);
  pages.route('/bench/big-table', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(bigTable(3_000));
  });
  const pool = new BrowserPool({ slots: 1 });
  const stop = onCleanup('element browser', () => pool.shutdown());
  try {
    const { env } = await pool.openSession({
      viewport: VIEWPORT,
      downloadsDir: path.join(b.dir, 'element-downloads'),
      url: `${site.url}/`,
    });
    const scenarios: Scenario[] = [
      {
        name: 'hotel home: field, button, heading, empty area',
        url: `${site.url}/`,
        probes: [point(720, 180), point(1000, 180), point(720, 60), point(200, 700)],
      },
      {
        name: 'results page: links',
        url: `${site.url}/search?q=lisbon`,
        probes: [point(720, 230), point(720, 310), point(720, 390)],
      },
      {
        name: 'focused field (typing)',
        url: `${site.url}/`,
        prepare: (e) => e.page.focus('#q'),
        probes: [{ kind: 'focus' }],
      },
      {
        name: '3,000-row table: cells with no ids (path selector)',
        url: pages.url('/bench/big-table'),
        probes: [point(20, 200), point(120, 500), point(250, 800)],
      },
    ];
    const results: { name: string; ms: number[]; missing: number }[] = [];
    for (const s of scenarios) {
      await env.visitUrl(s.url);
      await s.prepare?.(env);
      const ms: number[] = [];
      let missing = 0;
      // One untimed record first (the isolated world is created for the document then).
      await readElement(env.page, s.probes[0] ?? { kind: 'focus' }, { space: NORM1000, viewport: VIEWPORT });
      for (let pass = 0; pass < ROUNDS; pass++) {
        for (const probe of s.probes) {
          const t0 = performance.now();
          const note = await readElement(env.page, probe, { space: NORM1000, viewport: VIEWPORT });
          ms.push(performance.now() - t0);
          if (note.element === null) missing += 1;
        }
      }
      b.log(`[bench] element: ${s.name} × ${ms.length}`);
      results.push({ name: s.name, ms, missing });
    }
    const all = summarize(results.flatMap((r) => r.ms));
    const lines = [['scenario', 'n', 'p50', 'p95', 'max', 'no record']];
    const rows: Row[] = [
      row('element', 'element record per action (all pages), p50 / p95', `${fmtMs(all.p50)} / ${fmtMs(all.p95)}`),
    ];
    for (const r of results) {
      const s = summarize(r.ms);
      lines.push([r.name, `${s.n}`, fmtMs(s.p50), fmtMs(s.p95), fmtMs(s.max), `${r.missing}`]);
      rows.push(row('element', `  ${r.name}, p50 / p95`, `${fmtMs(s.p50)} / ${fmtMs(s.p95)}`));
    }
    b.log(table(lines));
    return {
      name: 'element',
      rows,
      data: {
        viewport: VIEWPORT,
        rounds: ROUNDS,
        allMs: { n: all.n, p50: round(all.p50), p95: round(all.p95), max: round(all.max) },
        scenarios: results.map((r) => ({ name: r.name, missing: r.missing, ms: r.ms.map((v) => round(v)) })),
      },
    };
  } finally {
    await stop();
  }
}
