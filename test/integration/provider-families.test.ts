// The provider families end to end, each against the stand-in of its provider's API (the scripted model server
// speaking /v1/responses, /v1/messages or generateContent), and the open models' families (UI-TARS-1.5, Qwen2.5-VL,
// Qwen3-VL) against the chat route answering in their own formats: the demo booking on the Tidewater site, driven by
// worker processes. One worker is killed with SIGKILL mid-task; the model's first call is a batch (the destination clicked,
// Lisbon typed); one output is malformed in the way that provider's model really errs and is fed back; the person is
// asked whose name to book under; and before the paid booking is confirmed the provider asks for a confirmation
// (OpenAI's pending safety check, Gemini's require_confirmation; Anthropic asks in plain text), which waits through
// another worker's SIGKILL and is answered yes. The stand-in checks each request against the provider's format (a bad
// one is a 400, which would fail the task) and records the acknowledgement it saw on the wire.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDemoSite } from '../../demo/site';
import type { DemoSite } from '../../demo/site';
import { DEMO_INSTRUCTION } from '../../cli/commands/demo';
import { replyToTask, startTask, validateTaskInput } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { statusQuery } from '../../workflows/messages';
import { eventually, failureOf, FAST_TIMING, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

/** A family under test: its name, its endpoint's computer-use tool or generation, and whether it speaks chat. */
interface Case {
  label: string;
  family: string;
  tool?: string;
  chat?: boolean;
  /** The provider asks for a confirmation on the wire (else the model asks in plain text). */
  check?: boolean;
  /** A call can carry several actions (Qwen's one call per output cannot). */
  batches?: boolean;
}
const CASES: Case[] = [
  { label: 'openai-computer', family: 'openai-computer', check: true, batches: true },
  { label: 'anthropic-computer', family: 'anthropic-computer', batches: true },
  { label: 'gemini-computer', family: 'gemini-computer', check: true, batches: true },
  { label: 'ui-tars-1.5', family: 'ui-tars-1.5', chat: true, batches: true },
  { label: 'qwen-vl 2.5', family: 'qwen-vl', tool: '2.5', chat: true },
  { label: 'qwen-vl 3', family: 'qwen-vl', tool: '3', chat: true },
];
const SCRIPT = 'tidewater-providers';
const GUEST = 'Ana Silva';

let h: Harness;
let site: DemoSite;
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  h = await startHarness({ worker: false });
  site = await startDemoSite();
  await workers.prepare();
}, 180_000);

afterAll(async () => {
  workers.killAll();
  await site?.close();
  await h?.close();
});

/**
 * A worker process whose default endpoint is the stand-in (a provider's API at the server's root, or the chat route),
 * with a key, from a config file (the endpoint's tool or generation has no environment variable).
 */
function spawnWorker(c: Pick<Case, 'family' | 'tool' | 'chat'>, env: Record<string, string> = {}) {
  const config = path.join(h.dir, `config-${c.family}-${c.tool ?? ''}.json`);
  const endpoint = {
    baseUrl: c.chat ? h.model.url : h.model.url.replace(/\/v1$/, ''),
    model: SCRIPT,
    family: c.family,
    ...(c.tool ? { tool: c.tool } : {}),
    ...(env.NO_KEY ? {} : { apiKey: `test-key-${c.family}` }),
  };
  fs.writeFileSync(config, JSON.stringify({ models: { default: endpoint } }));
  return workers.spawn({
    CUA_CONFIG: config,
    CUA_MODEL_API_KEY: '',
    OPENAI_API_KEY: '',
    CUA_TASK_QUEUE: queueOf(c),
    ...env,
  });
}

/** Each case's own task queue: a worker of another case (another endpoint) never takes its task. */
const queueOf = (c: Pick<Case, 'family' | 'tool'>) => `${h.config.taskQueue}-${c.family}-${c.tool ?? ''}`;

afterEach(() => workers.killAll());

describe.each(CASES)('$label against its stand-in', (c) => {
  const { family } = c;
  it('books the stay through a kill -9, a batch, a malformed output, a question and a confirmation across a restart', async () => {
    const marker = path.join(h.dir, `marker-${c.label.replace(' ', '-')}`);
    const first = spawnWorker(c, { CUA_TEST_HOLD: 'decide:4', CUA_TEST_MARKER: marker });
    const input = validateTaskInput({
      runId: `providers-${c.label.replace(/[ .]/g, '-')}-${Date.now().toString(36)}`,
      instruction: DEMO_INSTRUCTION,
      startUrl: `${site.url}/`,
      profile: family,
      maxSteps: 40,
      timing: FAST_TIMING,
      model: { endpoint: 'default' },
    });
    const started = Date.now();
    const handle = await startTask(h.client, queueOf(c), input);
    await eventually(async () => fs.existsSync(marker), 240_000, 'the first worker to reach the model call of step 4');
    await workers.kill(first);
    const second = spawnWorker(c);

    const asked = (kind: string, after?: string) =>
      eventually(
        async () => {
          const s = await handle.query(statusQuery);
          if (s.status === 'failed' || s.status === 'complete') throw new Error(`the task ended: ${s.error}`);
          const q = s.status === 'waiting_for_user' ? s.question : null;
          return q && q.id !== after && (q.kind ?? 'model') === kind ? q : undefined;
        },
        240_000,
        `a question of kind ${kind}`,
      );
    const name = await asked('model');
    expect(name.text).toMatch(/name/i);
    await replyToTask(h.client, input.runId, GUEST, name.id);

    // Anthropic and the chat models have no confirmation field: the model asks in plain text, like any question.
    const check = await asked(c.check ? 'provider_check' : 'model', name.id);
    expect(check.text).toMatch(/paid booking/);
    await workers.kill(second);
    spawnWorker(c);
    await replyToTask(h.client, input.runId, 'Yes, go ahead', check.id);

    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete' });
    expect(result.answer).toMatch(/Booked a Standard double at Harbor View Lisbon/);
    const bookings = await (await fetch(`${site.url}/_bookings`)).json();
    expect(bookings).toEqual(expect.arrayContaining([expect.objectContaining({ guest: GUEST })]));

    const requests = h.model.requests.filter((r) => r.script === SCRIPT && r.at >= started);
    expect(requests.length).toBeGreaterThan(5);
    expect(requests.flatMap((r) => r.problems ?? [])).toEqual([]);
    expect(requests.every((r) => (c.chat ? r.format : r.provider) !== undefined)).toBe(true);
    if (c.check) expect(requests.some((r) => (r.acknowledged ?? []).length > 0)).toBe(true);
    else expect(requests.some((r) => r.lastUserText.includes('Yes, go ahead'))).toBe(true);

    const run = await readRun(h.runDir(input.runId));
    const actions = run.events.flatMap((e) => (e.type === 'action' ? [e] : []));
    const meta = (a: (typeof actions)[number]) => a.metadata as Record<string, unknown>;
    // The batch: a step that carried out the first call's next action, with no call of its own.
    const continued = actions.some((a) => (meta(a).batch as { continues?: boolean })?.continues === true);
    expect(continued).toBe(c.batches === true);
    // The malformed output was recorded with its error and the task went on.
    expect(actions.some((a) => meta(a).invalid_reply !== undefined)).toBe(true);
    // Each step of a provider's API keeps the provider's own action beside ours.
    if (!c.chat) expect(actions.filter((a) => meta(a).native_action !== undefined).length).toBeGreaterThan(5);
    expect(actions.every((a) => String(a.agent_state.agent).endsWith(family) || a.agent_state.agent === '')).toBe(true);
  }, 900_000);
});

describe('a provider family without a key', () => {
  it('fails the task at its first model call, saying where the key goes, without retrying', async () => {
    const queue = `${h.config.taskQueue}-no-key`;
    const worker = spawnWorker({ family: 'openai-computer' }, { NO_KEY: '1', CUA_TASK_QUEUE: queue });
    try {
      const input = validateTaskInput({
        runId: `providers-no-key-${Date.now().toString(36)}`,
        instruction: DEMO_INSTRUCTION,
        startUrl: `${site.url}/`,
        profile: 'openai-computer',
        timing: FAST_TIMING,
        model: { endpoint: 'default' },
      });
      const before = h.model.requests.length;
      const handle = await startTask(h.client, queue, input);
      const failure = (await failureOf(handle.result())) as { cause?: { message?: string } };
      expect(failure.cause?.message).toMatch(
        /model endpoint 'default' has no API key, and openai-computer calls its provider's API/,
      );
      expect(h.model.requests.length).toBe(before);
    } finally {
      await workers.kill(worker);
    }
  }, 240_000);
});
