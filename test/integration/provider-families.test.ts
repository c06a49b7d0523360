// The three provider families end to end, each against the stand-in of its provider's API (the scripted model server
// speaking /v1/responses, /v1/messages or generateContent): the demo booking on the Tidewater site, driven by worker
// processes. One worker is killed with SIGKILL mid-task; the model's first call is a batch (the destination clicked,
// Lisbon typed); one output is malformed in the way that provider's model really errs and is fed back; the person is
// asked whose name to book under; and before the paid booking is confirmed the provider asks for a confirmation
// (OpenAI's pending safety check, Gemini's require_confirmation; Anthropic asks in plain text), which waits through
// another worker's SIGKILL and is answered yes. The stand-in checks each request against the provider's format (a bad
// one is a 400, which would fail the task) and records the acknowledgement it saw on the wire.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoSite } from '../../demo/site';
import type { DemoSite } from '../../demo/site';
import { DEMO_INSTRUCTION } from '../../cli/commands/demo';
import { replyToTask, startTask, validateTaskInput } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { statusQuery } from '../../workflows/messages';
import { eventually, FAST_TIMING, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

const FAMILIES = ['openai-computer', 'anthropic-computer', 'gemini-computer'] as const;
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

/** A worker process whose default endpoint is the stand-in of the family's provider, with a key. */
function spawnWorker(family: string, env: Record<string, string> = {}) {
  return workers.spawn({
    CUA_MODEL_BASE_URL: h.model.url.replace(/\/v1$/, ''),
    CUA_MODEL: SCRIPT,
    CUA_MODEL_FAMILY: family,
    CUA_MODEL_API_KEY: `test-key-${family}`,
    ...env,
  });
}

describe.each(FAMILIES)('%s against its stand-in', (family) => {
  it('books the stay through a kill -9, a batch, a malformed output, a question and a confirmation across a restart', async () => {
    const marker = path.join(h.dir, `marker-${family}`);
    const first = spawnWorker(family, { CUA_TEST_HOLD: 'decide:4', CUA_TEST_MARKER: marker });
    const input = validateTaskInput({
      runId: `providers-${family}-${Date.now().toString(36)}`,
      instruction: DEMO_INSTRUCTION,
      startUrl: `${site.url}/`,
      profile: family,
      maxSteps: 40,
      timing: FAST_TIMING,
      model: { endpoint: 'default' },
    });
    const handle = await startTask(h.client, h.config.taskQueue, input);
    await eventually(async () => fs.existsSync(marker), 90_000, 'the first worker to reach the model call of step 4');
    await workers.kill(first);
    const second = spawnWorker(family);

    const asked = (kind: string, after?: string) =>
      eventually(
        async () => {
          const s = await handle.query(statusQuery);
          if (s.status === 'failed' || s.status === 'complete') throw new Error(`the task ended: ${s.error}`);
          const q = s.status === 'waiting_for_user' ? s.question : null;
          return q && q.id !== after && (q.kind ?? 'model') === kind ? q : undefined;
        },
        120_000,
        `a question of kind ${kind}`,
      );
    const name = await asked('model');
    expect(name.text).toMatch(/name/i);
    await replyToTask(h.client, input.runId, GUEST, name.id);

    // Anthropic has no confirmation field: its model asks in plain text, a question like any other.
    const check = await asked(family === 'anthropic-computer' ? 'model' : 'provider_check', name.id);
    expect(check.text).toMatch(/paid booking/);
    await workers.kill(second);
    spawnWorker(family);
    await replyToTask(h.client, input.runId, 'Yes, go ahead', check.id);

    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete' });
    expect(result.answer).toMatch(/Booked a Standard double at Harbor View Lisbon/);
    const bookings = await (await fetch(`${site.url}/_bookings`)).json();
    expect(bookings).toEqual(expect.arrayContaining([expect.objectContaining({ guest: GUEST })]));

    const requests = h.model.requests.filter((r) => r.script === SCRIPT && r.provider !== undefined);
    expect(requests.every((r) => (r.problems ?? []).length === 0)).toBe(true);
    if (family === 'anthropic-computer') {
      expect(requests.some((r) => r.lastUserText.startsWith('Yes, go ahead'))).toBe(true);
    } else {
      expect(requests.some((r) => (r.acknowledged ?? []).length > 0)).toBe(true);
    }

    const run = await readRun(h.runDir(input.runId));
    const actions = run.events.flatMap((e) => (e.type === 'action' ? [e] : []));
    const meta = (a: (typeof actions)[number]) => a.metadata as Record<string, unknown>;
    // The batch: a step that carried out the first call's next action, with no call of its own.
    expect(actions.some((a) => (meta(a).batch as { continues?: boolean })?.continues === true)).toBe(true);
    // The malformed output was recorded with its error and the task went on.
    expect(actions.some((a) => meta(a).invalid_reply !== undefined)).toBe(true);
    // Each step keeps the provider's own action beside ours.
    expect(actions.filter((a) => meta(a).native_action !== undefined).length).toBeGreaterThan(5);
    expect(actions.every((a) => String(a.agent_state.agent).endsWith(family) || a.agent_state.agent === '')).toBe(true);
  }, 420_000);
});

describe('a provider family without a key', () => {
  it('fails the task at its first model call, saying where the key goes, without retrying', async () => {
    const worker = spawnWorker('openai-computer', { CUA_MODEL_API_KEY: '', OPENAI_API_KEY: '' });
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
      const handle = await startTask(h.client, h.config.taskQueue, input);
      const result = (await handle.result()) as TaskResult;
      expect(result.status).toBe('failed');
      expect(result.error).toMatch(
        /model endpoint 'default' has no API key, and openai-computer calls its provider's API/,
      );
      expect(h.model.requests.length).toBe(before);
    } finally {
      await workers.kill(worker);
    }
  }, 120_000);
});
