// Credentials stay with the worker, end to end (real dev server, real Chromium): a configured model key goes only to
// its own base URL, whatever URL a task points at; overrides can be refused; a `{{secret:NAME}}` is typed only on
// its hosts (the page's, or the focused iframe's) and never appears in the run folder, the workflow history or what
// the model is sent.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretResolver } from '../../activities/support';
import { failedResult, startTask, validateTaskInput } from '../../client/tasks';
import type { AgentAction } from '../../src/actions/schemas';
import { dispatchAction } from '../../src/agent/dispatch';
import { BrowserPool } from '../../src/browser/pool';
import { NORM1000 } from '../../src/coords/viewport';
import type { Config } from '../../src/runtime/config';
import { createWorkerRuntime } from '../../worker/main';
import type { WorkerOptions, WorkerRuntime } from '../../worker/main';
import type { TaskInputArgs, TaskResult } from '../../src/contract/task';
import { FAST_TIMING, failureOf, workflowBundle } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const KEY = 'sk-secret-123';
const SITE_PASSWORD = 'hunter2-correct-horse';
const BANK_PIN = '80417';
const TERMINATE =
  '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "answer": "ok"}}\n</tool_call>';

/** A stand-in model endpoint that records each request's Authorization header and always answers "terminate". */
interface CaptureServer {
  url: string;
  authorizations: string[];
  close(): Promise<void>;
}

async function startCaptureServer(): Promise<CaptureServer> {
  const authorizations: string[] = [];
  const server = http.createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-capture',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'capture',
          choices: [{ index: 0, message: { role: 'assistant', content: TERMINATE }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A worker with its own config on its own task queue, sharing the harness's dev server and runs folder. */
async function startWorkerWith(config: Config, checkpoint?: WorkerOptions['checkpoint']) {
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const runtime = await createWorkerRuntime(config, { workflowBundle: await workflowBundle(), connection, checkpoint });
  const running = runtime.run().finally(() => connection.close());
  return {
    runtime,
    stop: async () => {
      await runtime.shutdown();
      await running;
    },
  };
}

let h: Harness;
useHarness((x) => (h = x), { worker: false });

let counter = 0;
function start(queue: string, model: Omit<NonNullable<TaskInputArgs['model']>, 'endpoint'>) {
  const input = validateTaskInput({
    runId: `creds-${Date.now().toString(36)}-${++counter}`,
    instruction: 'Find the nightly price of the first hotel in Lisbon.',
    startUrl: `${h.site.url}/`,
    timing: FAST_TIMING,
    model: { endpoint: 'default', ...model },
  });
  return startTask(h.client, queue, input);
}

/** Every file of a run folder as text (screenshots skipped). */
function runFolderText(taskId: string): string {
  const dir = h.runDir(taskId);
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => !f.endsWith('.png'));
  return files
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
}

/** A workflow history as text, with every payload decoded (fetchHistory gives payload data as base64). */
function historyText(history: unknown): string {
  return JSON.stringify(history, (key, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    if (key === 'data' && typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8');
    return v;
  });
}

describe('model credentials stay with the worker', () => {
  let a: CaptureServer; // the configured endpoint
  let b: CaptureServer; // an allowed override without a key of its own
  let c: CaptureServer; // an allowed override the config names a key for
  let d: CaptureServer; // an override the allow-list does not hold
  let open: Awaited<ReturnType<typeof startWorkerWith>>;
  let locked: Awaited<ReturnType<typeof startWorkerWith>>;
  const queue = () => `${h.config.taskQueue}-creds`;
  const lockedQueue = () => `${h.config.taskQueue}-locked`;

  beforeAll(async () => {
    [a, b, c, d] = await Promise.all([
      startCaptureServer(),
      startCaptureServer(),
      startCaptureServer(),
      startCaptureServer(),
    ]);
    const models = { default: { baseUrl: a.url, model: 'capture', apiKey: KEY } };
    open = await startWorkerWith({
      ...h.config,
      taskQueue: queue(),
      models,
      modelKeys: { [`${c.url}/`]: 'sk-for-c' },
      modelOverrides: { allow: true, allowedBaseUrls: [b.url, c.url] },
    });
    locked = await startWorkerWith({
      ...h.config,
      taskQueue: lockedQueue(),
      models,
      modelOverrides: { allow: false },
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([open?.stop(), locked?.stop()]);
    await Promise.all([a, b, c, d].map((s) => s?.close()));
  });

  it('the configured endpoint gets its key', async () => {
    const result = (await (await start(queue(), {})).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'ok' });
    expect(a.authorizations).toEqual([`Bearer ${KEY}`]);
  }, 90_000);

  it('a task pointed at another server still completes, and that server never sees the key', async () => {
    const result = (await (await start(queue(), { baseUrl: b.url })).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'ok' });
    expect(b.authorizations).toHaveLength(1);
    expect(b.authorizations.join('\n')).not.toContain(KEY);
    expect(a.authorizations).toHaveLength(1); // only the earlier test's request
  }, 90_000);

  it('an override gets the key the config names for that URL (compared without the trailing slash)', async () => {
    const result = (await (await start(queue(), { baseUrl: c.url, model: 'other' })).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete' });
    expect(c.authorizations).toEqual(['Bearer sk-for-c']);
  }, 90_000);

  it('an override outside the allow-list fails the task with one line naming the setting', async () => {
    const handle = await start(queue(), { baseUrl: d.url });
    const err = await failureOf(handle.result());
    const message = `task overrides the model base URL to ${d.url}, which the worker does not allow (config modelOverrides.allowedBaseUrls)`;
    expect(failedResult(err)).toMatchObject({ status: 'failed', endReason: 'input', error: message });
    expect(d.authorizations).toEqual([]);
  }, 90_000);

  it('with overrides turned off a task that overrides fails at once; one that does not still runs', async () => {
    const before = b.authorizations.length;
    const err = await failureOf((await start(lockedQueue(), { baseUrl: b.url })).result());
    const result = failedResult(err);
    expect(result).toMatchObject({ status: 'failed', endReason: 'input' });
    expect(result?.error).toBe(
      `task overrides the model base URL to ${b.url}, which the worker does not allow (config modelOverrides.allow is false)`,
    );
    expect(b.authorizations).toHaveLength(before);
    const fine = (await (await start(lockedQueue(), {})).result()) as TaskResult;
    expect(fine).toMatchObject({ status: 'complete', answer: 'ok' });
    expect(a.authorizations.at(-1)).toBe(`Bearer ${KEY}`);
  }, 90_000);
});

describe('secrets are typed only on their hosts, and recorded only as placeholders', () => {
  let worker: Awaited<ReturnType<typeof startWorkerWith>>;
  /** The search box's value after each act ran (read in the browser at the act checkpoint), by run and step. */
  const typed = new Map<string, string | null>();

  beforeAll(async () => {
    process.env.CUA_IT_BANK_PIN = BANK_PIN;
    const siteHost = new URL(h.site.url).host;
    const config: Config = {
      ...h.config,
      taskQueue: `${h.config.taskQueue}-secrets`,
      secrets: {
        SITE_PASSWORD: { value: SITE_PASSWORD, hosts: [siteHost] },
        BANK_PIN: { env: 'CUA_IT_BANK_PIN', hosts: ['bank.example', '*.bank.example'] },
      },
    };
    const runtime: { current?: WorkerRuntime } = {};
    worker = await startWorkerWith(config, async (point, req) => {
      const pool = runtime.current?.pool;
      if (point !== 'act' || !pool) return;
      for (const id of pool.sessionIds()) {
        const value = await pool
          .get(id)
          .page.evaluate(() => document.querySelector<HTMLInputElement>('#q')?.value ?? null);
        typed.set(`${req.runId}#${req.step}`, value);
      }
    });
    runtime.current = worker.runtime;
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    delete process.env.CUA_IT_BANK_PIN;
  });

  it('types the value on its host, refuses another host, and records only the placeholder', async () => {
    const handle = await start(`${h.config.taskQueue}-secrets`, { baseUrl: h.model.url, model: 'type-secret' });
    const taskId = handle.workflowId;
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'typed', steps: 4 });

    // The browser got the real value; the refused secret typed nothing.
    expect(typed.get(`${taskId}#2`)).toBe(SITE_PASSWORD);
    expect(typed.get(`${taskId}#3`)).toBe(SITE_PASSWORD);

    // The run folder: the placeholder and the refusal, never a value.
    const refusal = `Refused to type secret BANK_PIN: this page's host (${new URL(h.site.url).host}) is not one it may be typed on.`;
    const folder = runFolderText(taskId);
    expect(folder).toContain("I typed '{{secret:SITE_PASSWORD}}'.");
    expect(folder).toContain(refusal);
    expect(folder).not.toContain(SITE_PASSWORD);
    expect(folder).not.toContain(BANK_PIN);

    // The workflow history: same.
    const history = historyText(await handle.fetchHistory());
    expect(history).toContain('{{secret:SITE_PASSWORD}}');
    expect(history).toContain(refusal);
    expect(history).not.toContain(SITE_PASSWORD);
    expect(history).not.toContain(BANK_PIN);

    // What the model was sent: the placeholder and the refusal as the next step's observation.
    const sent = h.model.requests.filter((r) => r.script === 'type-secret');
    expect(sent.at(-1)?.allText).toContain(refusal);
    expect(sent.map((r) => r.allText).join('\n')).not.toContain(SITE_PASSWORD);
  }, 120_000);
});

describe('a secret is checked against the frame the keyboard types into', () => {
  let pool: BrowserPool;
  let server: http.Server;
  let port: number;
  const PIN = '2468-frame';

  beforeAll(async () => {
    const box = 'position:absolute;left:10px;top:10px;width:300px;height:30px';
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        req.url === '/inner'
          ? `<!doctype html><input id="inner" style="${box}">`
          : `<!doctype html><input id="outer" style="${box}">
             <iframe src="http://localhost:${port}/inner" style="position:absolute;left:10px;top:100px;width:400px;height:200px"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    pool = new BrowserPool({ slots: 1 });
  }, 60_000);

  afterAll(async () => {
    await pool?.shutdown();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('refuses inside an embedded frame of another host, types in the page of its own host', async () => {
    const { env } = await pool.openSession({
      viewport: { width: 1440, height: 900 },
      downloadsDir: path.join(h.dir, 'frame-downloads'),
      url: `http://127.0.0.1:${port}/outer`,
    });
    await env.page.frameLocator('iframe').locator('#inner').waitFor();
    const config: Config = { ...h.config, secrets: { PIN: { value: PIN, hosts: [`127.0.0.1:${port}`] } } };
    const ctx = {
      target: env,
      space: NORM1000,
      viewport: { width: 1440, height: 900 },
      answerFromPage: async () => '',
      resolveSecrets: secretResolver(config, env),
    };
    const typeAt = (coordinate: [number, number]) =>
      dispatchAction({ action: 'type', text: '{{secret:PIN}}', coordinate } as AgentAction, ctx);
    const inner = () => env.page.frameLocator('iframe').locator('#inner').inputValue();

    // (21, 133) in 1000×1000 space is inside the iframe's field (another host: localhost).
    const refused = await typeAt([21, 133]);
    expect(refused.error).toBe(
      `Refused to type secret PIN: this page's host (localhost:${port}) is not one it may be typed on.`,
    );
    expect(await inner()).toBe('');

    // (35, 28) is the page's own field (127.0.0.1, listed).
    const typed = await typeAt([35, 28]);
    expect(typed).toEqual({
      output: "I clicked at coordinates (50.4, 25.2) and typed '{{secret:PIN}}'.",
      error: null,
      textObservation: null,
    });
    expect(await env.page.locator('#outer').inputValue()).toBe(PIN);
    expect(await inner()).toBe('');
  }, 60_000);
});
