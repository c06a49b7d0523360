// The bad-input catalogue: hostile or broken inputs from every side — CLI flags, workflow input (also sent with the
// plain `temporal` CLI), replies, config files, model outputs, hostile pages — each with its expected one-line error
// or handled outcome, and nothing already recorded lost. Real dev server, real Chromium, real HTTP model endpoints.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { replyToTask, rootMessage, startTask, validateTaskInput } from '../../client/tasks';
import type { AgentAction } from '../../src/actions/schemas';
import { dispatchAction } from '../../src/agent/dispatch';
import type { DispatchResult } from '../../src/agent/dispatch';
import { BrowserPool } from '../../src/browser';
import type { BrowserEnvironment } from '../../src/browser';
import { NORM1000 } from '../../src/coords/viewport';
import { temporalCliPath } from '../../src/infra/paths';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';
import type { TaskResult } from '../../src/contract/task';
import { AGENT_WORKFLOW } from '../../src/contract/task';
import { statusQuery } from '../../workflows/messages';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { FAST_TIMING, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const CUA_BIN = path.join(ROOT, 'bin/cua.js');
let h: Harness;
let hostile: HostileModel;

beforeAll(async () => {
  h = await startHarness();
  hostile = await startHostileModel();
}, 120_000);
afterAll(async () => {
  await hostile?.close();
  await h?.close();
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cua(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: h.server.address,
      CUA_RUNS_DIR: h.config.runsDir,
      CUA_TASK_QUEUE: h.config.taskQueue,
    };
    for (const key of ['CUA_CONFIG', 'CUA_MODEL_BASE_URL', 'CUA_MODEL', 'NODE_OPTIONS']) delete env[key];
    const child = spawn(process.execPath, [CUA_BIN, ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end();
  });
}

const firstLine = (text: string) => text.split('\n').find((l) => l.trim() !== '') ?? '';

/** A model endpoint that misbehaves on purpose: its output for a request depends on the model name and the step. */
interface HostileModel {
  url: string;
  close(): Promise<void>;
}

const TERMINATE =
  'Done.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "answer": "survived"}}\n</tool_call>';

function hostileOutput(model: string, step: number): string {
  if (step > 0) return TERMINATE;
  if (model === 'huge') return `${'x'.repeat(100 * 1024 * 1024)}`;
  if (model === 'binary')
    return Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)).toString('latin1');
  if (model === 'nested') {
    const depth = 100_000;
    return `<tool_call>{"name": "computer_use", "arguments": ${'{"a": '.repeat(depth)}1${'}'.repeat(depth)}}</tool_call>`;
  }
  return TERMINATE;
}

async function startHostileModel(): Promise<HostileModel> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        messages: { role: string }[];
      };
      const step = body.messages.filter((m) => m.role === 'assistant').length;
      const content = hostileOutput(body.model, step);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 0,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('CLI flags: exit 2 and one line naming the problem', () => {
  it.each([
    [['run'], /missing instruction/],
    [['run', 'x', '--max-steps', '0'], /--max-steps must be a whole number ≥ 1, got '0'/],
    [['run', 'x', '--max-steps', 'abc'], /--max-steps must be a whole number/],
    [
      ['run', 'x', '--profile', 'gpt-4'],
      /--profile must be one of fara-1.5, fara-7b, openai-computer, anthropic-computer, gemini-computer, ui-tars-1.5, qwen-vl, got 'gpt-4'/,
    ],
    [['run', 'x', '--ask-timeout', '0'], /--ask-timeout must be a positive number of seconds/],
    [['run', 'x', '--ask-timeout=-5'], /--ask-timeout must be a positive number of seconds/],
    [['run', 'x', '--url', 'not a url'], /invalid task: startUrl/],
    [['run', 'x', '--id', '../../etc'], /invalid task: runId/],
    [['run', 'x', '--model-base-url', 'file:///etc/passwd'], /model base URL must be an http\(s\) URL/],
    [['run', 'x', '--max-invalid-outputs', '0'], /--max-invalid-outputs must be a whole number ≥ 1/],
    [['run', 'x', '--max-invalid-replies', '0'], /--max-invalid-replies must be a whole number ≥ 1/],
    [['replay', 'x', '--replies', 'maybe'], /--replies must be ask or recorded, got 'maybe'/],
    [['replay', 'x', '--answers', 'maybe'], /--answers must be ask or recorded, got 'maybe'/],
    [['run', 'x', '--identity', 'fara_7b'], /invalid task: identity: identity "fara_7b" is fara-7b's, not fara-1\.5's/],
    [
      ['run', 'x', '--identity', 'You are a friendly shopping assistant.'],
      /invalid task: identity: .*a custom identity text can be set only in the worker config/,
    ],
    [['run', 'x', '--bogus-flag'], /--bogus-flag/],
    [['list', '--status', 'nope'], /--status must be one of/],
    [
      ['run', 'x', '--env', 'Big VM'],
      /--env must be browser, desktop, or the name of an environment your workers host .*got 'Big VM'/,
    ],
    [['run', 'x', '--env', 'desktop', '--url', 'https://example.com/'], /--url is for the browser/],
    [['demo', '--desktop', '--family', 'claude'], /--family must be one of fara-1\.5, .*got 'claude'/],
  ])('cua %j', async (args, pattern) => {
    const res = await cua(args);
    expect(res.code, res.stderr).toBe(2);
    expect(firstLine(res.stderr)).toMatch(/^cua: /);
    expect(firstLine(res.stderr)).toMatch(pattern);
  });
});

describe('workflow input sent straight to the workflow: InvalidTaskInput naming the field, nothing created', () => {
  it.each([
    ['a task id that climbs out of runsDir', { runId: '../escape', instruction: 'x' }, /runId/],
    ['an empty instruction', { runId: 'bad-empty', instruction: '  ' }, /instruction/],
    ['a field the workflow does not know', { runId: 'bad-extra', instruction: 'x', evil: 1 }, /evil|Unrecognized/],
    ['a step budget of a billion', { runId: 'bad-steps', instruction: 'x', maxSteps: 1e9 }, /maxSteps/],
    ['a file: model base URL', { runId: 'bad-url', instruction: 'x', model: { baseUrl: 'file:///x' } }, /baseUrl/],
    // (A well-formed name no worker hosts fails at its open instead: custom-environment.test.ts.)
    [
      'an environment name that cannot be one',
      { runId: 'bad-env', instruction: 'x', environment: 'Big VM!' },
      /environment/,
    ],
    // (An identity of another family, or a family no process registered, is refused where the families are known:
    // by the client, and by the worker's startRun: activities.test.ts.)
    [
      'a desktop screen of 10×10 pixels',
      { runId: 'bad-screen', instruction: 'x', environment: 'desktop', screen: { width: 10, height: 10 } },
      /screen\.width/,
    ],
  ])('%s', async (_what, args, field) => {
    const handle = await h.client.workflow.start(AGENT_WORKFLOW, {
      taskQueue: h.config.taskQueue,
      workflowId: `bad-input-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
      args: [{ ...args, searchAttributes: false }],
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidTaskInput');
    expect(cause.message).toMatch(/^invalid task input: /);
    expect(cause.message).toMatch(field);
    expect(cause.message).not.toContain('\n');
    expect(fs.existsSync(path.join(h.config.runsDir, String(args.runId)))).toBe(false);
  });

  it('input that is not an object at all (a string) is refused the same way', async () => {
    const handle = await h.client.workflow.start(AGENT_WORKFLOW, {
      taskQueue: h.config.taskQueue,
      workflowId: `bad-input-string-${Date.now().toString(36)}`,
      args: ['hello' as never],
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('InvalidTaskInput');
  });

  const temporalCli = (args: string[]) =>
    promisify(execFile)(temporalCliPath(), [...args, '--address', h.server.address], { cwd: ROOT });

  it('the plain temporal CLI: a hostile task id is refused with the same one-line error', async () => {
    const id = `bad-cli-${Date.now().toString(36)}`;
    await temporalCli([
      'workflow',
      'start',
      '--type',
      AGENT_WORKFLOW,
      '--task-queue',
      h.config.taskQueue,
      '--workflow-id',
      id,
      '--input',
      JSON.stringify({ runId: '../../etc', instruction: 'x', searchAttributes: false }),
    ]);
    const err = await h.client.workflow
      .getHandle(id)
      .result()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).message).toMatch(/invalid task input: runId/);
  });

  it('the plain temporal CLI: a good task started with plain JSON runs to completion', async () => {
    const id = `plain-cli-${Date.now().toString(36)}`;
    const input = {
      runId: id,
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      startUrl: `${h.site.url}/`,
      searchAttributes: false,
      timing: FAST_TIMING,
      model: { baseUrl: h.model.url, model: 'book-lisbon' },
    };
    const common = ['--task-queue', h.config.taskQueue, '--workflow-id', id, '--input', JSON.stringify(input)];
    await temporalCli(['workflow', 'start', '--type', AGENT_WORKFLOW, ...common]);
    const result = (await h.client.workflow.getHandle(id).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', endReason: 'complete', steps: 5 });
  });
});

describe('replies to a waiting task: refused in one line, the task keeps waiting, nothing is lost', () => {
  it('refuses empty, control-only, oversized and stale replies, then takes a good one (control characters removed)', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await untilWaiting(handle, 60_000);
    const eventsFile = path.join(h.runDir(handle.workflowId), 'solver_log/events.jsonl');
    const before = fs.readFileSync(eventsFile, 'utf8');
    const refused: [string, string | undefined, RegExp][] = [
      ['', undefined, /must not be empty/],
      ['   \n\t ', undefined, /must not be empty/],
      ['\u0000\u0007\u001b', undefined, /must not be empty/],
      ['x'.repeat(10_001), undefined, /too long \(10001 characters; at most 10000\)/],
      ['Lisbon', 'q9', /stale reply: it is for question q9, the pending question is q1/],
    ];
    for (const [text, questionId, pattern] of refused) {
      const err = await replyToTask(h.client, handle.workflowId, text, questionId).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message, JSON.stringify(text.slice(0, 20))).toMatch(pattern);
      expect(err?.message).not.toContain('\n');
      // Past the client's own check, the workflow's validator refuses it too.
      if (questionId === undefined) {
        const direct = await handle.executeUpdate('reply', { args: [{ text }] }).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(rootMessage(direct), 'workflow validator').toMatch(pattern);
      }
    }
    expect((await handle.query(statusQuery)).status).toBe('waiting_for_user');
    expect(fs.readFileSync(eventsFile, 'utf8')).toBe(before);

    await replyToTask(h.client, handle.workflowId, 'Lis\u0007bon\u0000');
    const result = (await handle.result()) as TaskResult;
    expect(result.status).toBe('complete');
    const run = await readRun(h.runDir(handle.workflowId));
    const reply = run.events.find(
      (e) => e.type === 'observation' && e.observation_type === 'user_message' && e.id.includes('reply'),
    );
    expect(reply?.type === 'observation' && reply.observation_type === 'user_message' && reply.content).toBe('Lisbon');
    expect(fs.readFileSync(eventsFile, 'utf8').startsWith(before)).toBe(true);
  }, 120_000);
});

describe('config files: one-line ConfigError naming the problem', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-badconfig-'));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  it.each([
    ['not JSON', () => file('a.json', '{ "taskQueue": '), /is not valid JSON/],
    ['a JSON array', () => file('b.json', '[1, 2]'), /config must be a JSON object/],
    ['an unknown key', () => file('c.json', '{"evil": true}'), /Unrecognized key.*evil|evil/],
    ['a number given as words', () => file('d.json', '{"browser": {"maxSessions": "lots"}}'), /browser\.maxSessions/],
    [
      'a model URL that is no URL',
      () => file('e.json', '{"models": {"default": {"baseUrl": "nope", "model": "m"}}}'),
      /models\.default\.baseUrl/,
    ],
    ['a directory instead of a file', () => dir, /cannot be read/],
    ['a NUL byte inside', () => file('f.json', '{"taskQueue": "a\u0000b"}'), /not valid JSON|taskQueue/],
    [
      'a negative desktop command timeout',
      () => file('g.json', '{"desktop": {"maxCommandTimeoutSeconds": -1}}'),
      /desktop\.maxCommandTimeoutSeconds/,
    ],
    ['a desktop app list that is a string', () => file('h.json', '{"desktop": {"apps": "xterm"}}'), /desktop\.apps/],
  ])('%s', (_what, make, pattern) => {
    let err: unknown;
    try {
      loadConfig({ file: make(), env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(pattern);
    expect((err as Error).message).not.toContain('\n');
  });
});

describe('model outputs: an invalid output is an observation, never a crash', () => {
  const run = async (model: string) => {
    const input = validateTaskInput({
      runId: `hostile-${model}-${Date.now().toString(36)}`,
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default', baseUrl: hostile.url, model },
    });
    const handle = await startTask(h.client, h.config.taskQueue, input);
    const result = (await handle.result()) as TaskResult;
    const folder = await readRun(h.runDir(input.runId));
    return { result, rows: stepSummaries(folder.events), folder };
  };

  it('a 100 MB output is not read: an error observation, only its head recorded, then the task goes on', async () => {
    const { result, rows, folder } = await run('huge');
    expect(result).toMatchObject({ status: 'complete', answer: 'survived', steps: 2 });
    expect(rows[0]?.invalid).toMatch(/104857600 characters long/);
    const raw = JSON.stringify(folder.events.find((e) => e.type === 'action'));
    expect(raw.length).toBeLessThan(20_000);
  }, 120_000);

  it('binary bytes: an error observation, then the task goes on', async () => {
    const { result, rows } = await run('binary');
    expect(result).toMatchObject({ status: 'complete', steps: 2 });
    expect(rows[0]?.invalid).toMatch(/no tool call|could not be read/);
  }, 120_000);

  it('JSON nested 100,000 deep: an error observation, then the task goes on', async () => {
    const { result, rows } = await run('nested');
    expect(result).toMatchObject({ status: 'complete', steps: 2 });
    expect(rows[0]?.invalid).toBeTruthy();
  }, 120_000);
});

describe('pages: hostile pages end in a one-line observation, and the next action works', () => {
  const VIEWPORT = { width: 800, height: 600 };
  const CAP = { maxDownloadBytes: 5 * 1024 * 1024, maxDownloadMs: 10_000 };
  let site: FixtureServer;
  let pool: BrowserPool;
  let downloadsDir: string;
  let env: BrowserEnvironment;

  beforeAll(async () => {
    site = await startFixtureServer();
    downloadsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-hostile-downloads-'));
    pool = new BrowserPool({ slots: 2, defaults: CAP });
    ({ env } = await pool.openSession({ viewport: VIEWPORT, downloadsDir }));
  });
  afterAll(async () => {
    await pool?.shutdown();
    await site?.close();
    if (downloadsDir) fs.rmSync(downloadsDir, { recursive: true, force: true });
  });

  const actIn = (target: BrowserEnvironment) => (action: AgentAction) =>
    dispatchAction(action, { target, space: NORM1000, viewport: VIEWPORT, answerFromPage: async () => '' });
  const act = (action: AgentAction) => actIn(env)(action);
  /** The action's observation line and how long it took. */
  const timed = async (run: Promise<DispatchResult>) => {
    const started = Date.now();
    const result = await run;
    return { ...result, ms: Date.now() - started };
  };
  const expectWorks = async () => {
    const next = await act({ action: 'visit_url', url: site.url('/counter') });
    expect(next.error).toBeNull();
    expect(await env.page.textContent('h1')).toMatch(/^\d+$/);
  };

  it('infinite redirects: the ERR_TOO_MANY_REDIRECTS observation in about a second', async () => {
    const url = site.url('/hostile/redirect-loop');
    const result = await timed(act({ action: 'visit_url', url }));
    expect(result.textObservation).toBe(
      `I tried to open ${url}, but it failed: NavigationError: Could not open ${url}: page.goto: net::ERR_TOO_MANY_REDIRECTS at ${url}`,
    );
    expect(result.ms).toBeLessThan(5_000);
    await expectWorks();
  });

  it('a dialog loop: the page is closed with a DialogLoopError observation, the session goes on', async () => {
    const url = site.url('/hostile/dialogs');
    const result = await timed(act({ action: 'visit_url', url }));
    expect(result.textObservation).toBe(
      `I tried to open ${url}, but it failed: DialogLoopError: the page ${url} opened 11 dialog boxes in 3 s; it was closed`,
    );
    expect(result.ms).toBeLessThan(15_000);
    const png = await env.screenshot();
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(env.url()).toBe('about:blank');
    expect(env.page.context().pages()).toHaveLength(1);
    await expectWorks();
  });

  it('a dialog loop starting between actions: the screenshot shows the blank page, the next action reports it', async () => {
    const url = site.url('/hostile/dialogs?after=2000');
    expect((await act({ action: 'visit_url', url })).error).toBeNull();
    await expect.poll(() => env.url(), { timeout: 10_000 }).toBe('about:blank');
    expect((await env.screenshot()).subarray(1, 4).toString('latin1')).toBe('PNG');
    const click = await act({ action: 'left_click', coordinate: [500, 500] });
    expect(click.textObservation).toBe(
      `The action failed: DialogLoopError: the page ${url} opened 11 dialog boxes in 3 s; it was closed`,
    );
    await expectWorks();
  });

  it('a single alert and confirm are dismissed and the page works', async () => {
    const result = await act({ action: 'visit_url', url: site.url('/hostile/one-dialog') });
    expect(result.error).toBeNull();
    expect(await env.page.textContent('#answer')).toBe('no');
  });

  it('a download bomb is stopped at the size cap and its partial file removed', async () => {
    expect((await act({ action: 'visit_url', url: site.url('/hostile/links') })).error).toBeNull();
    const result = await timed(act({ action: 'left_click', coordinate: [250, 80] })); // the top link
    expect(result.textObservation).toBe(
      'The action failed: DownloadLimitError: download of bomb.bin stopped: larger than 5 MiB',
    );
    expect(result.ms).toBeLessThan(15_000);
    expect(fs.readdirSync(downloadsDir)).toEqual([]);
    await expectWorks();
  });

  it('a download that never ends is stopped at the time cap', async () => {
    const slow = await pool.openSession({ viewport: VIEWPORT, downloadsDir, environment: { maxDownloadMs: 2_000 } });
    try {
      const result = await timed(actIn(slow.env)({ action: 'visit_url', url: site.url('/hostile/trickle') }));
      expect(result.textObservation).toBe(
        `I tried to open ${site.url('/hostile/trickle')}, but it failed: ` +
          'DownloadLimitError: download of trickle.bin stopped: took longer than 2 s',
      );
      expect(result.ms).toBeLessThan(8_000);
      expect(fs.readdirSync(downloadsDir)).toEqual([]);
    } finally {
      await pool.close(slow.sessionId);
    }
  });
});
