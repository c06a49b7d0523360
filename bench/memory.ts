// Where a concurrent task's memory goes, without Temporal: a browser pool opens N sessions on the hotel fixture site,
// each takes the concurrency section's steps (click, scroll, scroll back, click, a screenshot after each), and the
// worker's memory is read per process role (browser, GPU, utilities, renderers; Node's heap) with no session open and
// with all N open. Light enough to run often while trying Chromium flags:
//   npx tsx bench/memory.ts [--sessions=16] [--settle-ms=1500] [--arg=--some-chromium-flag …]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BrowserPool } from '../src/browser/pool';
import { CHROMIUM_ARGS } from '../src/browser/launch';
import { startFixtureSite } from '../test/fixtures/site/server';
import { memoryByRole, roleTable } from './memory-roles';
import { fmtBytes, table } from './stats';

const VIEWPORT = { width: 1440, height: 900 };

function options(argv: string[]): { sessions: number; extraArgs: string[]; settleMs: number } {
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return {
    sessions: Number(value('sessions') ?? 16),
    extraArgs: argv.filter((a) => a.startsWith('--arg=')).map((a) => a.slice('--arg='.length)),
    settleMs: Number(value('settle-ms') ?? 1500),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The concurrency section's cycle of steps, each followed by the screenshot the worker takes after an act. */
async function steps(pool: BrowserPool, sessionId: string): Promise<void> {
  const env = pool.get(sessionId);
  await env.screenshot();
  await env.leftClick(720, 180);
  await env.screenshot();
  await env.scroll(0, 300);
  await env.screenshot();
  await env.scroll(0, -300);
  await env.screenshot();
  await env.leftClick(216, 630);
  await env.screenshot();
}

async function main(): Promise<void> {
  const { sessions, extraArgs, settleMs } = options(process.argv.slice(2));
  const site = await startFixtureSite();
  const downloadsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-memory-'));
  const pool = new BrowserPool({ slots: sessions, launch: { extraArgs } });
  try {
    const warm = await pool.openSession({ viewport: VIEWPORT, downloadsDir, url: `${site.url}/` });
    await pool.close(warm.sessionId);
    await sleep(settleMs);
    const idle = memoryByRole();
    const heapIdle = process.memoryUsage();
    const openedAt = performance.now();
    const opened = await Promise.all(
      Array.from({ length: sessions }, () =>
        pool.openSession({ viewport: VIEWPORT, downloadsDir, url: `${site.url}/` }),
      ),
    );
    const openMs = performance.now() - openedAt;
    await Promise.all(opened.map((s) => steps(pool, s.sessionId)));
    await sleep(settleMs);
    const busy = memoryByRole();
    const heapBusy = process.memoryUsage();
    console.log(`Chromium args: ${[...CHROMIUM_ARGS, ...extraArgs].join(' ')}`);
    console.log(`${sessions} sessions opened together in ${Math.round(openMs)} ms`);
    console.log(table(roleTable(idle, busy, sessions)));
    const perSession = (k: 'heapUsed' | 'external' | 'arrayBuffers') =>
      fmtBytes((heapBusy[k] - heapIdle[k]) / sessions);
    console.log(
      `Node per session: heapUsed ${perSession('heapUsed')}, external ${perSession('external')}, ` +
        `arrayBuffers ${perSession('arrayBuffers')}`,
    );
    await Promise.all(opened.map((s) => pool.close(s.sessionId)));
  } finally {
    await pool.shutdown();
    await site.close();
    fs.rmSync(downloadsDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
