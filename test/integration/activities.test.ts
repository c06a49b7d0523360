// The activities without a Temporal server: each is safe to run twice (a retry), writing every event once and
// never asking the model again for a step it already decided.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities/catalog';
import type { Activities } from '../../activities/catalog';
import { BrowserPool } from '../../src/browser/pool';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { readRun } from '../../src/trajectory/reader';
import { toolSubCallsOf } from '../../src/trajectory/steps';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';
import { TemporalUnreachableError } from '../../src/runtime/connect';
import { createWorkerRuntime } from '../../worker/main';
import { TaskInputSchema } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { startFixtureSite } from '../fixtures/site/server';
import type { FixtureSite } from '../fixtures/site/server';
import { SCRIPTS_DIR } from './harness';

let pool: BrowserPool;
let model: ScriptedModelServer;
let site: FixtureSite;
let acts: Activities;
let runsDir: string;

beforeAll(async () => {
  runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-acts-'));
  pool = new BrowserPool({ slots: 2 });
  model = await startScriptedModelServer({ scriptsDir: SCRIPTS_DIR });
  site = await startFixtureSite();
  acts = createActivities({ config: loadConfig({ env: { CUA_RUNS_DIR: runsDir } }), pool, sessionQueue: 'q-test' });
}, 60_000);

afterAll(async () => {
  await pool?.shutdown();
  await model?.close();
  await site?.close();
});

describe('activities run twice (retries) write once', () => {
  it('startRun, observe, decide and act are idempotent; a stop step is recorded once too', async () => {
    const taskId = 'acts-1';
    const input = TaskInputSchema.parse({
      runId: taskId,
      instruction: 'Click the search box.',
      startUrl: `${site.url}/`,
      model: { baseUrl: model.url, model: 'click-then-finish' },
    });
    await acts.startRun(input);
    await acts.startRun(input);
    const session = await acts.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    expect(session.taskQueue).toBe('q-test');
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };

    const obs1 = await acts.observe(ref);
    const obs2 = await acts.observe(ref);
    expect(obs2).toEqual(obs1);

    const d1 = await acts.decide(ref);
    const d2 = await acts.decide(ref);
    expect(d1).toMatchObject({ kind: 'act', actionName: 'left_click', summary: 'left_click (500, 200)' });
    expect(d2).toEqual(d1);
    expect(model.requests.filter((r) => r.script === 'click-then-finish' && r.index === 0)).toHaveLength(1);

    const a1 = await acts.act({ ...ref, action: d1.action });
    const a2 = await acts.act({ ...ref, action: d1.action });
    // A retry answers what was recorded; only the first try measured where its time went.
    const { timings, ...recorded } = a1;
    expect(a2).toEqual(recorded);
    const parts = ['element', 'action', 'settle', 'record', 'screenshotSettle', 'screenshot', 'save', 'checkpoint'];
    expect(Object.keys(timings ?? {}).sort()).toEqual([...parts].sort());
    for (const ms of Object.values(timings ?? {})) expect(Number.isInteger(ms) && ms >= 0).toBe(true);
    expect(timings?.settle).toBeGreaterThan(0); // a click settles (src/browser/settle.ts)

    const ref2 = { ...ref, step: 2 };
    await acts.observe(ref2);
    const stop1 = await acts.decide(ref2);
    const stop2 = await acts.decide(ref2);
    expect(stop1).toMatchObject({ kind: 'terminate', text: 'clicked' });
    expect(stop2).toEqual(stop1);

    const run = await readRun(path.join(runsDir, taskId));
    const ids = run.events.map((e) => e.id);
    expect(ids).toEqual([
      'user-0000-task-g0',
      'step-0000-pre-g0', // the start page, written once by the first observe
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-tool-g0',
      'step-0001-post-g0',
      'step-0002-pre-g0',
      'step-0002-action-g0',
      'step-0002-tool-g0',
      'step-0002-post-g0',
    ]);
    const dir = path.join(runsDir, taskId);
    // The start page is step 1's first capture, as screenshot_0_pre.png and its copy screenshot_0_post.png.
    expect(run.events[1]).toMatchObject({
      action_id: null,
      screenshot_path: 'screenshot_0_pre.png',
      url: `${site.url}/`,
    });
    const first = fs.readFileSync(path.join(dir, 'screenshot_1_pre.png'));
    expect(fs.readFileSync(path.join(dir, 'screenshot_0_pre.png'))).toEqual(first);
    expect(fs.readFileSync(path.join(dir, 'screenshot_0_post.png'))).toEqual(first);
    // The stop step's post screenshot is a copy of its pre screenshot.
    expect(fs.readFileSync(path.join(dir, 'screenshot_2_post.png'))).toEqual(
      fs.readFileSync(path.join(dir, 'screenshot_2_pre.png')),
    );
    await acts.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
    expect(pool.size).toBe(0);
  }, 120_000);

  it('a model endpoint that is not configured is a clear, non-retryable error', async () => {
    const taskId = 'acts-2';
    const input = TaskInputSchema.parse({ runId: taskId, instruction: 'x', startUrl: `${site.url}/` });
    await acts.startRun(input);
    const session = await acts.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    await acts.observe(ref);
    await expect(acts.decide(ref)).rejects.toMatchObject({
      nonRetryable: true,
      message: expect.stringMatching(/no model endpoint 'default' configured/),
    });
    await acts.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
  }, 60_000);

  it("uses the endpoint's prompt file (placeholders filled) instead of our prompt", async () => {
    const promptFile = path.join(runsDir, 'prompt.txt');
    fs.writeFileSync(promptFile, 'CUSTOM PROMPT for a {screen_width}x{screen_height} screen.\n{tools}\n');
    const config = loadConfig({
      env: { CUA_RUNS_DIR: runsDir },
      file: writeJson(path.join(runsDir, 'cua.config.json'), {
        models: { default: { baseUrl: model.url, model: 'click-then-finish', promptFile } },
      }),
    });
    const custom = createActivities({ config, pool, sessionQueue: 'q-test' });
    const taskId = 'acts-3';
    await custom.startRun(TaskInputSchema.parse({ runId: taskId, instruction: 'x', startUrl: `${site.url}/` }));
    const session = await custom.openSession({
      runId: taskId,
      generation: 0,
      restore: false,
      reason: 'start',
      step: 1,
    });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    await custom.observe(ref);
    const before = model.requests.length;
    await custom.decide(ref);
    const request = model.requests[before];
    expect(request?.allText).toContain('CUSTOM PROMPT for a 1000x1000 screen.');
    expect(request?.allText).toContain('"name": "computer_use"');
    await custom.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
  }, 60_000);
});

describe('what decide sends the model', () => {
  /** Activities of a worker whose default endpoint is the scripted model with these settings. */
  const withEndpoint = (taskId: string, endpoint: Record<string, unknown>) => {
    const config = loadConfig({
      env: { CUA_RUNS_DIR: runsDir },
      file: writeJson(path.join(runsDir, `${taskId}.config.json`), {
        models: { default: { baseUrl: model.url, model: 'click-then-finish', ...endpoint } },
      }),
    });
    return createActivities({ config, pool, sessionQueue: 'q-test' });
  };
  const task = (taskId: string, extra: Record<string, unknown> = {}) =>
    TaskInputSchema.parse({ runId: taskId, instruction: 'Click the search box.', startUrl: `${site.url}/`, ...extra });

  /** Decides steps 1 and 2 of a click-then-finish run with the given endpoint settings; the two requests. */
  const twoSteps = async (taskId: string, endpoint: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const own = withEndpoint(taskId, endpoint);
    await own.startRun(task(taskId, extra));
    const session = await own.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    const before = model.requests.length;
    await own.observe(ref);
    const decided = await own.decide(ref);
    await own.act({ ...ref, action: decided.action, next: { step: 2, captchaWaitMs: 0 } });
    await own.decide({ ...ref, step: 2 });
    await own.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
    return model.requests.slice(before);
  };

  it.each<[string, Record<string, unknown>, string]>([
    ["Fara's own sentence by default", {}, 'Here is the next screenshot. Think about what to do next.'],
    [
      "the endpoint's stepPrompt",
      { stepPrompt: 'Your move: pick the next action.' },
      'Your move: pick the next action.',
    ],
  ])(
    'step 1 is the task with the first screenshot in one message; step 2 ends with %s',
    async (_name, endpoint, sentence) => {
      const [first, second] = await twoSteps(`acts-sentence-${Object.keys(endpoint).length}`, endpoint);
      expect(first).toMatchObject({ index: 0, messageCount: 2, imageCount: 1, lastUserText: 'Click the search box.' });
      expect(second?.index).toBe(1);
      expect(second?.lastUserText).toBe(`Current URL: ${site.url}/\n${sentence}`);
    },
    60_000,
  );
  const CUSTOM = 'You are Scout, a browsing assistant for the travel desk.';
  it.each<[string, Record<string, unknown>, Record<string, unknown>, string]>([
    ["the endpoint's own text", { identity: CUSTOM }, {}, CUSTOM],
    ["the endpoint's registry name", { identity: 'fara_qwen3vl' }, {}, 'You are Fara'],
    [
      "the task's registry name over the endpoint's",
      { identity: CUSTOM },
      { identity: 'fara_qwen3vl' },
      'You are Fara',
    ],
  ])(
    'the system prompt opens with the identity chosen: %s',
    async (_name, endpoint, extra, opening) => {
      const taskId = `acts-identity-${Math.random().toString(36).slice(2, 8)}`;
      const [first] = await twoSteps(taskId, endpoint, extra);
      expect(first?.allText.startsWith(opening)).toBe(true);
      expect(first?.allText.includes('Qwen3-VL-8B-Instruct')).toBe(opening !== CUSTOM);
    },
    60_000,
  );

  it("a task its endpoint's identity does not fit is refused when it starts (InvalidTaskInput)", async () => {
    const taskId = 'acts-identity-refused';
    const own = withEndpoint(taskId, { identity: 'fara_7b' });
    const err = await own.startRun(task(taskId)).then(
      () => null,
      (e: unknown) => e as ApplicationFailure,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'InvalidTaskInput', nonRetryable: true });
    expect(err?.message).toBe(
      `model endpoint 'default': identity "fara_7b" is fara-7b's, not fara-1.5's; fara-1.5's identities: ` +
        'fara_qwen35, fara_qwen3vl (models.default.identity)',
    );
    // The same endpoint serves a fara-7b task.
    await expect(own.startRun(task('acts-identity-7b', { profile: 'fara-7b' }))).resolves.toBeUndefined();
  }, 60_000);

  it.each([
    ['a family no process registered', { profile: 'gpt-5' }, "profile: unknown model family 'gpt-5' (known: fara-1.5"],
    [
      "an identity of another family (the contract cannot know the families' identities)",
      { profile: 'fara-7b', identity: 'fara_qwen35' },
      `identity: identity "fara_qwen35" is fara-1.5's, not fara-7b's`,
    ],
  ])(
    'a task with %s is refused when it starts (InvalidTaskInput)',
    async (_what, extra, message) => {
      const taskId = `acts-family-${Math.random().toString(36).slice(2, 8)}`;
      const err = await acts.startRun(task(taskId, extra)).then(
        () => null,
        (e: unknown) => e as ApplicationFailure,
      );
      expect(err).toMatchObject({ type: 'InvalidTaskInput', nonRetryable: true });
      expect(err?.message.startsWith(message)).toBe(true);
    },
    60_000,
  );
});

describe("a prompt file's action list (the prompt is the whitelist)", () => {
  const narrowed = () => {
    const promptFile = path.join(runsDir, `narrow-${Math.random().toString(36).slice(2, 8)}.txt`);
    fs.writeFileSync(promptFile, 'Use the tool.\n{"type": "string", "enum": ["scroll", "terminate"]}\n');
    return promptFile;
  };
  const configWith = (endpoint: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    loadConfig({
      env: { CUA_RUNS_DIR: runsDir },
      file: writeJson(path.join(runsDir, `narrow-${Math.random().toString(36).slice(2, 8)}.json`), {
        models: { default: { baseUrl: model.url, model: 'click-then-finish', ...endpoint } },
        ...extra,
      }),
    });

  it("an action the prompt leaves out is an invalid output the model is told about; the event's tools are the prompt's", async () => {
    const own = createActivities({ config: configWith({ promptFile: narrowed() }), pool, sessionQueue: 'q-test' });
    const taskId = 'acts-narrow-1';
    await own.startRun(TaskInputSchema.parse({ runId: taskId, instruction: 'x', startUrl: `${site.url}/` }));
    const session = await own.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    await own.observe(ref);
    const decided = await own.decide(ref); // the script clicks: left_click, which the prompt does not offer
    await own.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
    expect(decided).toMatchObject({
      kind: 'invalid',
      actionName: 'left_click',
      text: '"left_click" is not an available action. No action was taken. Use one of: scroll, terminate.',
    });
    const action = (await readRun(path.join(runsDir, taskId))).events.find((e) => e.type === 'action');
    expect(action?.type === 'action' && action.agent_state.tools_available).toEqual(['scroll', 'terminate']);
  }, 60_000);

  it('a task whose profile lacks an action of the prompt is refused when it starts', async () => {
    const promptFile = path.join(runsDir, 'fara15-only.txt');
    fs.writeFileSync(promptFile, '{"enum": ["left_click", "double_click", "terminate"]}');
    const own = createActivities({ config: configWith({ promptFile }), pool, sessionQueue: 'q-test' });
    await expect(
      own.startRun(TaskInputSchema.parse({ runId: 'acts-narrow-15', instruction: 'x', startUrl: `${site.url}/` })),
    ).resolves.toBeUndefined();
    const err = await own
      .startRun(TaskInputSchema.parse({ runId: 'acts-narrow-7b', instruction: 'x', profile: 'fara-7b' }))
      .then(
        () => null,
        (e: unknown) => e as ApplicationFailure,
      );
    expect(err).toMatchObject({ type: 'InvalidTaskInput', nonRetryable: true });
    expect(err?.message).toMatch(
      /^model endpoint 'default': the prompt offers double_click, which fara-7b lacks \(fara-7b's actions: key, type, .*, terminate\) \(models\.default\.promptFile\)$/,
    );
  }, 60_000);

  it('a worker says at start, in one line, that its prompt file narrows the actions; one that cannot serve stops it', async () => {
    // Nothing listens on this port: the start gets past the prompt check, then fails to connect.
    const nowhere = { temporal: { address: '127.0.0.1:9' } };
    const lines: string[] = [];
    const started = createWorkerRuntime(configWith({ promptFile: narrowed() }, nowhere), {
      log: (l) => lines.push(l),
    });
    await expect(started).rejects.toBeInstanceOf(TemporalUnreachableError);
    expect(lines.filter((l) => l.includes('promptFile'))).toEqual([
      expect.stringMatching(
        /^models\.default\.promptFile: the prompt offers 2 of fara-1\.5's 18 actions, and the model may use only those \(left out: key, type, mouse_move, left_click, .*, wait\)$/,
      ),
    ]);

    const bad = path.join(runsDir, 'bad-actions.txt');
    fs.writeFileSync(bad, '{"enum": ["left_click", "teleport"]}');
    const refused = createWorkerRuntime(configWith({ promptFile: bad }, nowhere), { log: () => undefined });
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(
      /^models\.default\.promptFile: the prompt offers teleport, which fara-1\.5 lacks/,
    );
  }, 60_000);
});

describe('read_page_answer_question: its model sub-call', () => {
  let pages: FixtureServer;
  beforeAll(async () => {
    pages = await startFixtureServer();
    const words = Array.from({ length: 1200 }, (_v, i) => `lorem${i}`).join(' '); // about 10,000 characters
    pages.route('/long', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Long</title><p>${words}</p>`);
    });
  });
  afterAll(() => pages?.close());

  /** Runs step 1 (the read) of a read-page run on /long with this worker config; the sub-call request and result. */
  const readStep = async (taskId: string, extra: Record<string, unknown>) => {
    const config = loadConfig({
      env: { CUA_RUNS_DIR: runsDir },
      file: writeJson(path.join(runsDir, `${taskId}.config.json`), {
        models: { default: { baseUrl: model.url, model: 'read-page' } },
        ...extra,
      }),
    });
    const own = createActivities({ config, pool, sessionQueue: 'q-test' });
    await own.startRun(
      TaskInputSchema.parse({ runId: taskId, instruction: 'What is listed?', startUrl: pages.url('/long') }),
    );
    const session = await own.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    await own.observe(ref);
    const decided = await own.decide(ref);
    const before = model.requests.length;
    const acted = await own.act({ ...ref, action: decided.action });
    await own.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
    return { sub: model.requests.slice(before).find((r) => r.subcall), acted };
  };

  it('records the call on the action (tool_sub_calls): model, prompt size, output, duration', async () => {
    const { acted } = await readStep('acts-read-record', {});
    expect(acted.textObservation).toBe("It lists the word 'lorem' many times.");
    const run = await readRun(path.join(runsDir, 'acts-read-record'));
    expect(run.events.map((e) => e.id)).toEqual([
      'user-0000-task-g0',
      'step-0000-pre-g0',
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-tool-g0',
      'step-0001-post-g0',
    ]);
    const action = run.events.find((e) => e.id === 'step-0001-action-g0');
    expect(action?.type).toBe('action');
    const calls = action?.type === 'action' ? toolSubCallsOf(action) : [];
    expect(calls).toEqual([
      {
        tool: 'read_page_answer_question',
        model: 'read-page',
        prompt_chars: expect.any(Number),
        page_chars: expect.any(Number),
        duration_ms: expect.any(Number),
        reply: "It lists the word 'lorem' many times.",
        error: '',
        messages: [expect.objectContaining({ raw_response: "It lists the word 'lorem' many times." })],
        // The page text's hash: a replay reuses the output when the page's text is the same (issue 28).
        page_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(calls[0]?.page_chars).toBeGreaterThan(9000);
    expect(calls[0]?.prompt_chars).toBeGreaterThan(calls[0]?.page_chars ?? 0);
  }, 60_000);

  it('a decided read whose act never ran is still recorded, before the restore note; a retried decide answers from it', async () => {
    const config = loadConfig({
      env: { CUA_RUNS_DIR: runsDir },
      file: writeJson(path.join(runsDir, 'acts-read-lost.config.json'), {
        models: { default: { baseUrl: model.url, model: 'read-page' } },
      }),
    });
    const own = createActivities({ config, pool, sessionQueue: 'q-test' });
    const taskId = 'acts-read-lost';
    await own.startRun(
      TaskInputSchema.parse({ runId: taskId, instruction: 'What is listed?', startUrl: pages.url('/long') }),
    );
    const session = await own.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    await own.observe(ref);
    const asked = model.requests.length;
    const decided = await own.decide(ref);
    expect(await own.decide(ref)).toEqual(decided); // from the deferred record
    expect(model.requests.length - asked).toBe(1);
    // The worker is lost before act: the next session opens in generation 1.
    await own.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
    const again = await own.openSession({
      runId: taskId,
      generation: 1,
      restore: true,
      reason: 'worker_lost',
      step: 1,
    });
    await own.releaseSession({ runId: taskId, sessionId: again.sessionId, save: false });
    const ids = (await readRun(path.join(runsDir, taskId))).events.map((e) => e.id);
    expect(ids).toEqual([
      'user-0000-task-g0',
      'step-0000-pre-g0',
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-restored-g1',
    ]);
  }, 60_000);

  it('sends the page text cut at browser.readPageMaxChars', async () => {
    const { sub, acted } = await readStep('acts-read-cut', { browser: { readPageMaxChars: 1000 } });
    expect(acted.textObservation).toBe("It lists the word 'lorem' many times.");
    expect(sub?.allText).toContain('[page text cut at 1000 characters]');
    expect(sub?.allText).not.toContain('lorem1199');
  }, 60_000);
});

function writeJson(file: string, value: unknown): string {
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}

describe("a step's last act observes the next step (one round trip fewer)", () => {
  const folded = async (taskId: string, startUrl: string) => {
    const scripted = { baseUrl: model.url, model: 'click-then-finish' };
    await acts.startRun(TaskInputSchema.parse({ runId: taskId, instruction: 'x', startUrl, model: scripted }));
    const session = await acts.openSession({ runId: taskId, generation: 0, restore: false, reason: 'start', step: 1 });
    const ref = { runId: taskId, step: 1, generation: 0, sessionId: session.sessionId };
    await acts.observe(ref);
    const decided = await acts.decide(ref);
    const acted = await acts.act({ ...ref, action: decided.action, next: { step: 2, captchaWaitMs: 0 } });
    const dir = path.join(runsDir, taskId);
    const post = fs.readFileSync(path.join(dir, 'screenshot_1_post.png'));
    const pre = fs.readFileSync(path.join(dir, 'screenshot_2_pre.png'));
    // The next step's observe (a retry, or the next run after continue-as-new) finds what act recorded.
    const observed = await acts.observe({ ...ref, step: 2 });
    const ids = (await readRun(dir)).events.map((e) => e.id);
    await acts.releaseSession({ runId: taskId, sessionId: session.sessionId, save: false });
    return { acted, post, pre, observed, ids };
  };

  it('a still page: the post screenshot is copied as the next pre, not captured again', async () => {
    const { acted, post, pre, observed, ids } = await folded('acts-fold-1', `${site.url}/`);
    expect(acted.next).toEqual({ url: `${site.url}/`, screenshot: 'screenshot_2_pre.png', captchaTimedOut: false });
    expect(pre).toEqual(post);
    expect(observed).toEqual(acted.next);
    expect(ids.slice(-2)).toEqual(['step-0001-post-g0', 'step-0002-pre-g0']);
  }, 60_000);

  it('a page that changed after the post screenshot is captured again for the next step', async () => {
    const { acted, post, pre, observed } = await folded('acts-fold-2', `${site.url}/ticker`);
    expect(acted.next?.screenshot).toBe('screenshot_2_pre.png');
    expect(pre).not.toEqual(post); // the counter moved on: a fresh capture
    expect(observed).toEqual(acted.next);
  }, 60_000);
});

describe('openSession: a full pool is waited out, other errors become final', () => {
  const attemptAt = (attempt: number) => new MockActivityEnvironment({ attempt });
  const openWith = async (brokenPool: BrowserPool, attempt: number) => {
    const taskId = `acts-open-${attempt}-${Math.random().toString(36).slice(2, 6)}`;
    const broken = createActivities({
      config: loadConfig({ env: { CUA_RUNS_DIR: runsDir } }),
      pool: brokenPool,
      sessionQueue: 'q-test',
    });
    await broken.startRun(TaskInputSchema.parse({ runId: taskId, instruction: 'x', startUrl: `${site.url}/` }));
    const req = { runId: taskId, generation: 0, restore: false, reason: 'start' as const, step: 1 };
    return attemptAt(attempt)
      .run(broken.openSession, req)
      .then(
        () => null,
        (e: unknown) => e as ApplicationFailure | Error,
      );
  };

  it('a browser that cannot start is retried a few times, then fails for good', async () => {
    const cannotStart = new BrowserPool({ slots: 2, launch: { executablePath: '/nonexistent/chromium' } });
    const early = await openWith(cannotStart, 2);
    expect(early).toBeInstanceOf(Error);
    expect(early).not.toBeInstanceOf(ApplicationFailure); // retryable: Temporal tries again
    const late = await openWith(cannotStart, 8);
    expect(late).toBeInstanceOf(ApplicationFailure);
    expect((late as ApplicationFailure).nonRetryable).toBe(true);
    await cannotStart.shutdown();
  }, 60_000);

  it('a full pool stays retryable at any attempt (the task queues)', async () => {
    const full = new BrowserPool({ slots: 1, maxWaiters: 0 }); // no line to wait in: refused at once
    const holder = await full.openSession({ viewport: { width: 640, height: 480 }, downloadsDir: runsDir });
    const err = await openWith(full, 50);
    expect(err?.name).toBe('PoolFullError');
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    await full.close(holder.sessionId);
    await full.shutdown();
  }, 60_000);
});
