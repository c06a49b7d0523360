// `cua adopt` (issue 28) on the real dev server and Chromium: a run folder the original (Fara) wrote
// (test/fixtures/trajectory/fara_waiting: a click, then the question which city, status waiting_for_user) is adopted
// through the CLI; the task waits for the reply, `cua reply` answers it, and the scripted model — with the chat rebuilt
// from the folder's events, the reply and the note of the reopened page in it — searches the city and completes. The
// source folder is unchanged; the adopted folder loads in our reader and in the reader written from the field contract
// alone (docs/architecture.md#the-run-folder-format; test/fixtures/format-reader/reader.py), the reply recorded as a
// critical_point_response. A copy of the folder that was cut off while running goes on at its next step at once.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/cli';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { copyFaraFolder, FARA_WAITING_FIXTURE } from './fara-folder';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const PYTHON = path.join(ROOT, '.tools/venv/bin/python');
const READER = path.join(ROOT, 'test/fixtures/format-reader/reader.py');
const QUESTION = 'Which city should I search in?';
const ANSWER = 'Searched Lisbon as you asked (adopted).';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

/** Every file of a folder, names and bytes, in one hash. */
function treeHash(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      hash.update(path.relative(dir, p));
      if (fs.statSync(p).isDirectory()) walk(p);
      else hash.update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return hash.digest('hex');
}

/** The fixture as Fara would have written it against the fixture site, in the harness's folder. */
const faraFolder = (name: string, status?: object) =>
  copyFaraFolder(path.join(h.dir, 'fara', name), h.site.url, status);

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

async function adopt(folder: string): Promise<{ id: string; steps: number; question: string | null }> {
  const args = ['adopt', folder, '--model', 'adopt-fara', '--model-base-url', h.model.url, '--json'];
  const { code, out, err } = await cua(args);
  expect(err).toBe('');
  expect(code).toBe(0);
  return JSON.parse(out) as { id: string; steps: number; question: string | null };
}

interface ReaderResult {
  ok: boolean;
  errors: string[];
  summary: {
    status: string | null;
    message_types: string[];
    start_page: { index: number; screenshot: string } | null;
    data_point: { status: string | null } | null;
    steps: { action_name: string; screenshot: string }[];
  };
}

/** The folder through the reader written from the field contract alone (docs/architecture.md#the-run-folder-format). */
function readInFormatReader(dir: string): ReaderResult {
  const r = spawnSync(PYTHON, [READER, dir], { encoding: 'utf8', timeout: 60_000 });
  if (r.error || (r.status !== 0 && r.status !== 1)) throw new Error(`the reader failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as ReaderResult;
}

describe('cua adopt', () => {
  it('answers a Fara folder’s pending question and completes it; the folder stays readable by FORMAT.md’s rules', async () => {
    const fixtureBefore = treeHash(FARA_WAITING_FIXTURE);
    const source = faraFolder('waiting');
    const sourceBefore = treeHash(source);

    const { id, steps, question } = await adopt(source);
    expect(id).toMatch(/^adopt-waiting-[0-9a-f]{6}$/);
    expect({ steps, question }).toEqual({ steps: 2, question: QUESTION });
    const handle = h.client.workflow.getHandle(id);
    expect((await untilWaiting(handle)).question).toMatchObject({ text: QUESTION, step: 2 });
    expect((await handle.describe()).memo).toMatchObject({ adoptOf: { folder: source } });
    // While it waits, the adopted folder (once its pause snapshot is written) reads as the original's waiting folder.
    const snapshot = path.join(h.runDir(id), 'data_point.json');
    await eventually(async () => fs.existsSync(snapshot), 10_000, 'the pause snapshot');
    const waiting = readInFormatReader(h.runDir(id));
    expect(waiting.errors).toEqual([]);
    expect(waiting.summary).toMatchObject({ status: 'waiting_for_user', data_point: { status: 'waiting_for_user' } });

    expect(await cua(['reply', id, 'Lisbon'])).toMatchObject({ code: 0 });
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: ANSWER, steps: 5 });

    // The model went on from step 3 with the folder's two steps in its chat, the reply and the reopened page.
    const decided = h.model.requests.filter((r) => r.script === 'adopt-fara' && !r.subcall);
    expect(decided.map((r) => r.index)).toEqual([2, 3, 4]);
    expect(decided[0]?.allText).toContain('I will click the search box.');
    expect(decided[0]?.lastUserText).toContain('Lisbon');
    expect(decided[0]?.lastUserText).toContain(`the browser was reopened at ${h.site.url}/`);

    expect(treeHash(source)).toBe(sourceBefore);
    expect(treeHash(FARA_WAITING_FIXTURE)).toBe(fixtureBefore);

    const run = await readRun(h.runDir(id));
    expect(run).toMatchObject({
      status: 'complete',
      fileStatus: 'complete',
      outcome: { answer: ANSWER },
      warnings: [],
    });
    expect(run.task.metadata).toMatchObject({ adopted_from: { folder: source, status: 'waiting_for_user', steps: 2 } });
    const ids = run.events.map((e) => e.id);
    expect(ids.slice(0, 10)).toEqual([
      'user-0000-task-g0',
      'step-0000-pre-g0',
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-tool-g0',
      'step-0001-post-g0',
      'step-0002-pre-g0',
      'step-0002-action-g0',
      'step-0002-tool-g0',
      'step-0002-post-g0',
    ]);
    expect(ids.slice(10, 13)).toEqual(['user-0002-reply-g0', 'step-0003-restored-g1', 'step-0003-pre-g1']);
    expect(run.events[10]).toMatchObject({ message_type: 'critical_point_response', content: 'Lisbon' });
    expect(run.events[11]).toMatchObject({ metadata: { page_reopened: `${h.site.url}/` } });
    expect(run.events[12]).toMatchObject({ url: `${h.site.url}/`, screenshot_path: 'screenshot_3_g1_pre.png' });
    // The search the model typed in the reopened page went through.
    expect(run.events.find((e) => e.id === 'step-0005-pre-g1')).toMatchObject({ url: `${h.site.url}/search?q=Lisbon` });

    const read = readInFormatReader(h.runDir(id));
    expect(read.errors).toEqual([]);
    expect(read.ok).toBe(true);
    expect(read.summary).toMatchObject({
      status: 'complete',
      message_types: ['task', 'critical_point_response'],
      start_page: { index: 1, screenshot: 'screenshot_0_pre.png' },
      data_point: { status: 'complete' },
    });
    expect(read.summary.steps.map((s) => s.action_name)).toEqual([
      'left_click',
      'ask_user_question',
      'left_click',
      'type',
      'terminate',
    ]);
  }, 180_000);

  it('a folder cut off while running goes on at its next step at once', async () => {
    const source = faraFolder('running', { status: 'running', outcome: null });
    const { id, steps, question } = await adopt(source);
    expect({ steps, question }).toEqual({ steps: 2, question: null });
    const result = (await h.client.workflow.getHandle(id).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: ANSWER, steps: 5 });
    const run = await readRun(h.runDir(id));
    expect(run.events.some((e) => e.id === 'step-0003-restored-g1')).toBe(true);
    expect(run.events.find((e) => e.id === 'step-0005-pre-g1')).toMatchObject({ url: `${h.site.url}/search?q=Lisbon` });
    expect(
      run.events.some(
        (e) =>
          e.type === 'observation' &&
          e.observation_type === 'user_message' &&
          e.message_type === 'critical_point_response',
      ),
    ).toBe(false);
    expect(readInFormatReader(h.runDir(id)).errors).toEqual([]);
  }, 180_000);
});
