// Payload encryption end to end: with `encryption` configured the raw history (what anyone with namespace access
// reads through `temporal workflow show`) holds no instruction, reply, question, step summary or answer; the Web UI
// in Chromium shows them decoded through `cua codec-server`; a worker still runs tasks from a plaintext client unless
// told to refuse them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, Locator } from 'playwright';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Payload } from '@temporalio/common';
import { ENCRYPTED_ENCODING } from '../../src/codec/aes-gcm-codec';
import { createCodec } from '../../src/codec/data-converter';
import { startCodecServer } from '../../src/codec/server';
import type { CodecServer } from '../../src/codec/server';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { freePort } from '../../src/infra/devserver';
import { chromiumPath, temporalCliPath } from '../../src/infra/paths';
import { loadConfig } from '../../src/runtime/config';
import { createWorkerRuntime } from '../../worker/main';
import { replyToTask, startTask, validateTaskInput } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import {
  CONTROL_PATCH,
  FOLD_OBSERVE_PATCH,
  HOLD_SESSION_PATCH,
  LIMITS_PATCH,
  OPEN_QUEUE_PATCH,
} from '../../workflows/agent';
import { FAST_TIMING, eventually, startHarness, untilWaiting, workflowBundle } from './harness';
import type { Harness } from './harness';

const run = promisify(execFile);
const ENV = {
  CUA_ENCRYPTION_KEYS: `k2:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`,
};
const INSTRUCTION = 'Search hotels in the city I want; the guest is Ada Lovelace.';
const REPLY = 'Lisbon, for Grace Hopper';
const QUESTION = 'Which city should I search in?';
const ANSWER = 'Searched Lisbon as you asked.';
const UI_TIMEOUT = 30_000;

/** Every string in a JSON value, with the text of those that are base64 (payload data in proto JSON). */
function texts(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    out.push(value);
    if (value.length >= 8 && /^[A-Za-z0-9+/]+={0,2}$/.test(value))
      out.push(Buffer.from(value, 'base64').toString('utf8'));
  } else if (Array.isArray(value)) value.forEach((v) => texts(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => texts(v, out));
  return out;
}

/** The encodings of every payload in a JSON value, with where they sit ("events.3.…"). */
function encodings(value: unknown, at = ''): { at: string; encoding: string; data: string }[] {
  if (!value || typeof value !== 'object') return [];
  const found: { at: string; encoding: string; data: string }[] = [];
  const meta = (value as { metadata?: { encoding?: unknown } }).metadata;
  if (typeof meta?.encoding === 'string' && 'data' in value) {
    const data = (value as { data?: unknown }).data;
    found.push({
      at,
      encoding: Buffer.from(meta.encoding, 'base64').toString('utf8'),
      data: typeof data === 'string' ? Buffer.from(data, 'base64').toString('utf8') : '',
    });
  }
  for (const [k, v] of Object.entries(value)) found.push(...encodings(v, `${at}.${k}`));
  return found;
}

/** `temporal workflow show|describe … --output json`, raw (no codec) unless `codecEndpoint` is given. */
async function temporalCli(
  h: Harness,
  command: 'show' | 'describe',
  workflowId: string,
  codecEndpoint?: string,
): Promise<string> {
  const args = ['workflow', command, '--workflow-id', workflowId, '--address', h.server.address, '--output', 'json'];
  if (codecEndpoint) args.push('--codec-endpoint', codecEndpoint);
  return (await run(temporalCliPath(), args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
}

describe('payload encryption (dev server with UI, codec server, real Chromium)', () => {
  let h: Harness;
  let codecServer: CodecServer;
  let browser: Browser;
  beforeAll(async () => {
    const codec = createCodec(loadConfig({ env: ENV }).encryption!, { acceptPlaintext: true });
    // The UI calls the codec server only when a page shows payloads; its origin is known once the harness started.
    const codecPort = await freePort();
    h = await startHarness({ ui: true, uiCodecEndpoint: `http://127.0.0.1:${codecPort}`, env: ENV });
    codecServer = await startCodecServer({ codec, port: codecPort, uiOrigins: [h.server.uiUrl ?? ''] });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await codecServer?.close();
  });

  let workflowId = '';
  let temporalRunId = '';

  it('keeps the instruction, question, reply, step summaries and answer out of the raw history', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: INSTRUCTION });
    workflowId = handle.workflowId;
    temporalRunId = handle.firstExecutionRunId;
    const waiting = await untilWaiting(handle);
    expect(waiting.question?.text).toBe(QUESTION); // the client decrypts what the worker encrypted
    expect(await (await handle.describe()).staticSummary()).toBe(INSTRUCTION);
    await replyToTask(h.client, workflowId, REPLY);
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: ANSWER });

    for (const command of ['show', 'describe'] as const) {
      const raw = await temporalCli(h, command, workflowId);
      const all = texts(JSON.parse(raw)).join('\n');
      for (const secret of [INSTRUCTION, 'Ada Lovelace', REPLY, QUESTION, ANSWER, '· observe', '· left_click']) {
        expect(all, `${command}: ${secret}`).not.toContain(secret);
      }
    }
    // The memo (its fields: the instruction, the environment) and the static summary (describe) are encrypted too.
    const described = encodings(JSON.parse(await temporalCli(h, 'describe', workflowId)));
    const encodingsOf = (field: RegExp) => described.filter((p) => field.test(p.at)).map((p) => p.encoding);
    expect(encodingsOf(/memo/i)).toEqual([ENCRYPTED_ENCODING, ENCRYPTED_ENCODING]);
    expect(encodingsOf(/summary/i)).toEqual([ENCRYPTED_ENCODING]);
    // Every payload is encrypted, except the search attributes (CuaStatus, CuaStep), which the server must index,
    // and the SDK's own patch markers (`patched()`), which hold only a patch id of our code, never task data.
    const found = encodings(JSON.parse(await temporalCli(h, 'show', workflowId)));
    expect(found.filter((p) => p.encoding === ENCRYPTED_ENCODING).length).toBeGreaterThan(10);
    const plain = found.filter((p) => p.encoding !== ENCRYPTED_ENCODING && !/searchAttributes/i.test(p.at));
    expect(plain.filter((p) => !/markerRecordedEventAttributes.*patch-data/i.test(p.at))).toEqual([]);
    // Each plain marker names one of our patches, and nothing else (one marker per patch at most).
    const ids = plain.map((p) => (JSON.parse(p.data) as { id?: unknown }).id);
    for (const [i, id] of ids.entries())
      expect(
        [FOLD_OBSERVE_PATCH, OPEN_QUEUE_PATCH, HOLD_SESSION_PATCH, CONTROL_PATCH, LIMITS_PATCH],
        plain[i]!.at,
      ).toContain(id);
    expect(new Set(ids).size).toBe(ids.length);

    // `cua list` reads the instruction from the memo: the client decrypts it.
    const memo = await eventually(
      async () => {
        for await (const w of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) return w.memo;
        return undefined;
      },
      20_000,
      'the visibility store to list the task',
    );
    expect(memo).toEqual({ instruction: INSTRUCTION, environment: 'browser' });

    // The same CLI pointed at the codec server reads them.
    const decoded = texts(JSON.parse(await temporalCli(h, 'show', workflowId, codecServer.url))).join('\n');
    expect(decoded).toContain(INSTRUCTION);
    expect(decoded).toContain(ANSWER);
  });

  it('shows the decoded instruction, step summaries and answer in the Web UI through the codec server', async () => {
    const ui = h.server.uiUrl;
    if (!ui || !workflowId) throw new Error('needs the UI and the task of the previous test');
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const shown = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: UI_TIMEOUT });
    const tab = async (testId: string) => {
      await page.getByTestId(testId).click();
      await page.waitForSelector(`[data-testid="${testId}"][aria-selected="true"]`, { timeout: UI_TIMEOUT });
    };
    try {
      await page.goto(`${ui}/namespaces/default/workflows/${workflowId}/${temporalRunId}/history`);
      // The input and result panels, decoded; the newest events (descending) carry the later step summaries.
      await shown(page.getByText(INSTRUCTION));
      await shown(page.getByText(ANSWER));
      await shown(page.getByText('step 3 · type "Lisbon"', { exact: true }));
      await tab('user-metadata-tab');
      await shown(page.frameLocator('#user-metadata-summary').getByText(INSTRUCTION));
    } catch (err) {
      await page.screenshot({ path: path.join(h.dir, 'encryption-ui-failure.png') });
      throw err;
    } finally {
      await page.close();
    }
  }, 120_000);

  it('encrypts failure messages and stack traces; the client reads them', async () => {
    const handle = await h.start({ script: 'faults-400' });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    const chain: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) chain.push(e.message);
    expect(chain.join(' | ')).toContain('scripted bad request: prompt too long');
    const raw = texts(JSON.parse(await temporalCli(h, 'show', handle.workflowId))).join('\n');
    expect(raw).toContain('Encoded failure');
    expect(raw).not.toContain('scripted bad request');
    expect(raw).not.toMatch(/rejected the request|at .*\.ts:\d+/);
  });

  it('runs a task started by a plaintext client (acceptPlaintext is the default) and encrypts what it writes', async () => {
    const plain = new Client({ connection: h.client.connection });
    const input = validateTaskInput({
      runId: `plain-${Date.now().toString(36)}`,
      instruction: 'A plaintext instruction from another client.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default', baseUrl: h.model.url, model: 'click-then-finish' },
    });
    const started = await startTask(plain, h.config.taskQueue, input);
    const result = (await h.client.workflow.getHandle(started.workflowId).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'clicked' });
    // The control for the checks above: a plaintext input does show in the raw history; the worker's output does not.
    const all = texts(JSON.parse(await temporalCli(h, 'show', started.workflowId))).join('\n');
    expect(all).toContain('A plaintext instruction from another client.');
    expect(all).not.toContain('Click the search box.');
  });

  it('refuses a plaintext task when acceptPlaintext is false: its workflow task fails with a clear error', async () => {
    const taskQueue = `${h.config.taskQueue}-strict`;
    const config = { ...h.config, taskQueue, encryption: { ...h.config.encryption!, acceptPlaintext: false } };
    const connection = await NativeConnection.connect({ address: h.server.address });
    const strict = await createWorkerRuntime(config, { workflowBundle: await workflowBundle(config), connection });
    const running = strict.run();
    try {
      const plain = new Client({ connection: h.client.connection });
      const input = validateTaskInput({
        runId: `refused-${Date.now().toString(36)}`,
        instruction: 'This must not run.',
        startUrl: `${h.site.url}/`,
        timing: FAST_TIMING,
        model: { endpoint: 'default', baseUrl: h.model.url, model: 'click-then-finish' },
      });
      const started = await startTask(plain, taskQueue, input);
      const codec = createCodec(h.config.encryption!);
      const failure = await eventually(
        async () => {
          const events = (await h.client.workflow.getHandle(started.workflowId).fetchHistory()).events ?? [];
          const failed = events.find((e) => e.workflowTaskFailedEventAttributes);
          return failed?.workflowTaskFailedEventAttributes?.failure ?? undefined;
        },
        30_000,
        'the workflow task to fail',
      );
      // The message itself is encrypted (encodeCommonAttributes); decrypted it names the refusal.
      expect(failure.message).toBe('Encoded failure');
      const [attrs] = await codec.decode([failure.encodedAttributes as Payload]);
      const { message } = JSON.parse(Buffer.from(attrs?.data ?? []).toString('utf8')) as { message: string };
      expect(message).toMatch(
        /refused a plaintext payload \(encoding json\/plain\): encryption.acceptPlaintext is false/,
      );
      expect(fs.existsSync(h.runDir(started.workflowId))).toBe(false); // no activity ran: no run folder
      await h.client.workflow.getHandle(started.workflowId).terminate('refused by the strict worker (test)');

      // An encrypting client's task runs on the same strict worker.
      const ok = await startTask(h.client, taskQueue, { ...input, runId: `${input.runId}-encrypted` });
      expect((await ok.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'clicked' });
    } finally {
      await strict.shutdown();
      await running;
      await connection.close();
    }
  });
});
