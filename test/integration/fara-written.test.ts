// A run folder laid out as Fara-1.5's own writer lays it out (test/fixtures/trajectory/fara_written: no start URL in
// task.json, a start page observation with `url: ""`, uuid-hex ids, timestamps without a zone, `run_id: null`),
// recorded on http://127.0.0.1:36235/, on the real dev server and Chromium with the site on a new origin:
// - `cua replay <folder> --url <new origin>/ --strict` replays its three steps (two clicks, the question) with no model
//   call: the recording's origin is taken from its first observation that has a URL;
// - `cua adopt <folder> --url <new origin>/` reopens its last page on the new origin after the reply and finishes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/cli';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import {
  FARA_WRITTEN_FIXTURE,
  FARA_WRITTEN_ORIGIN,
  FARA_WRITTEN_QUESTION,
  routeFaraWrittenPages,
} from './fara-written';
import { startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const PYTHON = path.join(ROOT, '.tools/venv/bin/python');
const READER = path.join(ROOT, 'test/fixtures/format-reader/reader.py');

let h: Harness;
let site: FixtureServer;

beforeAll(async () => {
  h = await startHarness();
  site = await startFixtureServer();
  routeFaraWrittenPages(site);
}, 120_000);

afterAll(async () => {
  await site?.close();
  await h?.close();
});

/** Runs a `cua` command in this process against the harness; returns its exit code and what it printed. */
async function cua(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, {
    TEMPORAL_ADDRESS: h.server.address,
    CUA_RUNS_DIR: h.config.runsDir,
    CUA_TASK_QUEUE: h.config.taskQueue,
  });
  delete process.env.CUA_CONFIG;
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const code = await main(args);
    return { code, out: log.mock.calls.map((c) => String(c[0])).join('\n'), err: error.mock.calls.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    process.env = saved;
  }
}

/** A copy of the fixture (the fixture itself stays as the writer left it). */
function faraFolder(name: string): string {
  const dir = path.join(h.dir, 'fara-written', name);
  fs.cpSync(FARA_WRITTEN_FIXTURE, dir, { recursive: true });
  return dir;
}

const pageUrls = (run: Awaited<ReturnType<typeof readRun>>) =>
  run.events.flatMap((e) =>
    e.type === 'observation' && e.observation_type === 'environment' && e.action_id === null ? [e.url] : [],
  );

describe('a folder Fara wrote, on a new origin', () => {
  it('is laid out by FORMAT.md: the reader written from it alone loads the fixture', () => {
    const r = spawnSync(PYTHON, [READER, FARA_WRITTEN_FIXTURE], { encoding: 'utf8', timeout: 60_000 });
    const read = JSON.parse(r.stdout.trim()) as { ok: boolean; errors: string[]; summary: { run_id: unknown } };
    expect(read.errors).toEqual([]);
    expect(read.ok).toBe(true);
    expect(read.summary.run_id).toBeNull();
  });

  it('replays with --url and --strict: every step replayed, no model call', async () => {
    expect(site.origin).not.toBe(FARA_WRITTEN_ORIGIN);
    const calls = h.model.requests.length;
    const args = ['replay', faraFolder('replay'), '--url', `${site.origin}/`, '--strict', '--detach', '--json'];
    const started = await cua(args);
    expect(started.err).toBe('');
    expect(started.code).toBe(0);
    const { id } = JSON.parse(started.out) as { id: string };
    const handle = h.client.workflow.getHandle(id);
    // Steps 1 and 2 replayed; step 3 is the recorded question, asked again.
    expect((await untilWaiting(handle)).question).toMatchObject({ text: FARA_WRITTEN_QUESTION, step: 3 });
    const run = await readRun(h.runDir(id));
    const actions = run.events.filter((e) => e.type === 'action');
    const how = actions.map((a) => ((a.metadata ?? {}) as { replay?: { how?: string } }).replay?.how ?? 'decided');
    expect(actions.map((a) => a.action_name)).toEqual(['left_click', 'left_click', 'ask_user_question']);
    expect(how.every((x) => x === 'replayed' || x === 'healed')).toBe(true);
    expect(h.model.requests.length).toBe(calls);
    expect(pageUrls(run).slice(-3)).toEqual([`${site.origin}/`, `${site.origin}/b`, `${site.origin}/c`]);
    await handle.cancel();
  }, 180_000);

  it('is adopted with --url: after the reply its last page reopens on the new origin', async () => {
    const adopted = await cua([
      'adopt',
      faraFolder('adopt'),
      '--url',
      `${site.origin}/`,
      '--model',
      'fara-written',
      '--model-base-url',
      h.model.url,
      '--json',
    ]);
    expect(adopted.err).toBe('');
    expect(adopted.code).toBe(0);
    const { id, steps, question } = JSON.parse(adopted.out) as { id: string; steps: number; question: string };
    expect({ steps, question }).toEqual({ steps: 3, question: FARA_WRITTEN_QUESTION });
    const handle = h.client.workflow.getHandle(id);
    await untilWaiting(handle);
    expect(await cua(['reply', id, 'M'])).toMatchObject({ code: 0 });
    expect((await handle.result()) as TaskResult).toMatchObject({
      status: 'complete',
      answer: 'Size M picked on the new origin.',
      steps: 4,
    });
    const run = await readRun(h.runDir(id));
    expect(run.events.find((e) => (e.metadata as Record<string, unknown>)['page_reopened'])).toMatchObject({
      metadata: { page_reopened: `${site.origin}/c` },
    });
    expect(run.events.find((e) => e.id === 'step-0004-pre-g1')).toMatchObject({ url: `${site.origin}/c` });
    expect(site.requests).toContain('GET /c');
  }, 180_000);
});
