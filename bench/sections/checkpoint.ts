// Section: the page checkpoint every browser act writes (activities/environments/browser-state.ts): capturing the
// page (storage with IndexedDB, sessionStorage, forms in every frame, scroll, focus) and writing the step's file and
// the latest pointer into a local run store, on the page-state fixture (a form in an iframe, a scrolled panel, a
// sessionStorage app), after a visit to a second origin. One field changes each step, storage does not (as on most
// steps), so no storage blob is written after the first. Target: ≤ 10 ms p50 per step.
import fs from 'node:fs';
import path from 'node:path';
import { PageCheckpoints } from '../../activities/environments/browser-state';
import { RunFiles } from '../../activities/support';
import type { ActivityDeps } from '../../activities/support';
import { captureDocumentState } from '../../src/browser/page-state';
import { BrowserPool } from '../../src/browser/pool';
import { loadConfig } from '../../src/runtime/config';
import { onCleanup } from '../cleanup';
import type { Bench } from '../context';
import { row } from '../report';
import type { SectionOutput } from '../report';
import { fmtMs, round, summarize } from '../stats';

const STEPS = 40;
const TARGET_MS = 10;

export async function benchCheckpoint(b: Bench): Promise<SectionOutput> {
  const pages = await b.pages();
  const pool = new BrowserPool({ slots: 1 });
  const stop = onCleanup('checkpoint browser', () => pool.shutdown());
  try {
    const runsDir = path.join(b.dir, 'checkpoint-runs');
    fs.mkdirSync(path.join(runsDir, 'bench-ckpt'), { recursive: true });
    const files = new RunFiles(runsDir);
    const deps = { config: loadConfig({ env: { CUA_RUNS_DIR: runsDir } }), pool, sessionQueue: 'bench' };
    const checkpoints = new PageCheckpoints(deps as ActivityDeps, files);
    const { env } = await pool.openSession({
      viewport: { width: 1280, height: 800 },
      downloadsDir: path.join(b.dir, 'checkpoint-downloads'),
      url: pages.url('/pages/page-state.html'),
    });
    // A second origin visited first: Playwright's own storage state would open it again at every step (~150 ms).
    await env.visitUrl(`http://localhost:${pages.port}/pages/page-state.html`);
    await env.visitUrl(pages.url('/pages/page-state.html'));
    await env.page.fill('#name', 'Ada Lovelace');
    await env.page.evaluate(() => sessionStorage.setItem('cart', '2 apples'));
    const stepMs: number[] = [];
    const captureMs: number[] = [];
    for (let step = 1; step <= STEPS; step++) {
      await env.page.fill('input[name="qty"]', String(step));
      const t0 = performance.now();
      await checkpoints.saveStep('bench-ckpt', step, 0, env);
      stepMs.push(performance.now() - t0);
      const t1 = performance.now();
      await captureDocumentState(env.page);
      captureMs.push(performance.now() - t1);
    }
    const blobs = fs
      .readdirSync(path.join(runsDir, 'bench-ckpt', 'checkpoints'))
      .filter((f) => f.startsWith('storage-'));
    const step = summarize(stepMs.slice(1)); // the first writes the storage blob
    const doc = summarize(captureMs);
    const stepFile = fs.statSync(path.join(runsDir, 'bench-ckpt', 'checkpoints', 'step-0002.json')).size;
    b.log(
      `[bench] checkpoint: p50 ${fmtMs(step.p50)} per step (document part ${fmtMs(doc.p50)}), ${blobs.length} blob`,
    );
    return {
      name: 'checkpoint',
      rows: [
        row(
          'checkpoint',
          `page checkpoint per step, p50 (${STEPS - 1} steps)`,
          fmtMs(step.p50),
          `≤ ${TARGET_MS} ms`,
          step.p50 <= TARGET_MS,
        ),
        row('checkpoint', 'of which the document part (forms, scroll, focus, sessionStorage), p50', fmtMs(doc.p50)),
        row('checkpoint', 'step checkpoint file size; storage blobs written', `${stepFile} B; ${blobs.length}`),
      ],
      data: {
        stepMs: stepMs.map((v) => round(v)),
        documentMs: captureMs.map((v) => round(v)),
        stepFileBytes: stepFile,
        storageBlobs: blobs.length,
      },
    };
  } finally {
    await stop();
  }
}
