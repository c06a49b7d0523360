// Any Temporal SDK can drive our agents: examples/python/agent_client.py (the official Python SDK, `temporalio`,
// installed into .tools/venv by scripts/setup.sh) starts an `agentTask` with JSON input, waits for its question on
// the `status` query and answers with the `reply` update, against a real dev server, worker and scripted model;
// with cua_codec.py it also talks to a worker that encrypts every payload and refuses plaintext.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replyToTask } from '../../client/tasks';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../src/codec/aes-gcm-codec';
import { readRun } from '../../src/trajectory/reader';
import { statusQuery, stepsQuery } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import { FAST_TIMING, untilWaiting } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const ROOT = path.resolve(__dirname, '../..');
const PYTHON = path.join(ROOT, '.tools/venv/bin/python');
const EXAMPLE = path.join(ROOT, 'examples/python/agent_client.py');
const QUESTION = 'Which city should I search in?';

let sdkChecked = false;
/** Fails (never skips) when the project venv lacks the Temporal Python SDK: each test then says what to run. */
function requireTemporalio(): void {
  if (sdkChecked) return;
  const r = spawnSync(PYTHON, ['-c', 'import temporalio'], { encoding: 'utf8' });
  const why = r.error ? `${PYTHON} cannot run: ${r.error.message}` : r.stderr.trim().split('\n').pop();
  if (r.error || r.status !== 0) {
    throw new Error(`the Temporal Python SDK (temporalio) is missing from .tools/venv: run \`npm run setup\` (${why})`);
  }
  sdkChecked = true;
}

interface PyResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let counter = 0;

/** Runs the example against a harness (stdin is no terminal: it answers with --reply only). */
function runExample(h: Harness, extra: string[], env: Record<string, string> = {}): Promise<PyResult & { id: string }> {
  requireTemporalio();
  const id = `py-it-${Date.now().toString(36)}-${++counter}`;
  const args = [
    EXAMPLE,
    'Search hotels in the city I want.',
    ...['--address', h.server.address, '--namespace', 'default', '--task-queue', h.config.taskQueue],
    ...['--id', id, '--url', `${h.site.url}/`],
    ...['--model-base-url', h.model.url, '--model', 'ask-echo'],
    ...['--input-json', JSON.stringify({ timing: FAST_TIMING })],
    ...extra,
  ];
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const key of ['CUA_ENCRYPTION_KEYS', 'CUA_ENCRYPTION_KEY']) if (!(key in env)) delete childEnv[key];
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, id });
    });
  });
}

describe('a Python client (temporalio) drives an agent task', () => {
  let h: Harness;
  useHarness((x) => (h = x));

  it('starts a task, answers its question with the reply update, and gets the answer', async () => {
    const py = await runExample(h, ['--reply', 'Lisbon, please']);
    expect(py.stderr).toBe('');
    expect(py.code).toBe(0);
    expect(py.stdout).toContain(`started task ${py.id} (workflow agentTask`);
    expect(py.stdout).toContain(`question q1 (step 1): ${QUESTION}`);
    expect(py.stdout).toContain(`replied to q1: 'Lisbon, please' (accepted at step 1)`);
    expect(py.stdout).toMatch(/step {3}1 · ask_user_question/);
    expect(py.stdout).toContain('answer: You chose Lisbon, please.');

    // The same task through the TypeScript client: completed with the answer built from the Python reply.
    const handle = h.client.workflow.getHandle(py.id);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', endReason: 'complete', answer: 'You chose Lisbon, please.' });
    expect(result.steps).toBe(2);
    expect(await (await handle.describe()).staticSummary()).toBe('Search hotels in the city I want.');
    const steps = await handle.query(stepsQuery);
    expect(steps.map((s) => s.action)).toEqual(['ask_user_question', 'terminate']);

    // The run folder records the reply as the user's answer to the critical point.
    const run = await readRun(h.runDir(py.id));
    const replies = run.events.flatMap((e) =>
      e.type === 'observation' && e.observation_type === 'user_message' && e.message_type === 'critical_point_response'
        ? [e.content]
        : [],
    );
    expect(replies).toEqual(['Lisbon, please']);
  });

  it('reports a reply to a stale question id as rejected; the task keeps waiting', async () => {
    const py = await runExample(h, ['--reply', 'Porto', '--question-id', 'q7']);
    expect(py.code).toBe(1);
    expect(py.stdout).toContain(`question q1 (step 1): ${QUESTION}`);
    expect(py.stderr).toMatch(/^error: reply rejected: stale reply.*q7.*q1/m);
    // Nothing was harmed: the task still waits, and a right reply (here from TypeScript) finishes it.
    const handle = h.client.workflow.getHandle(py.id);
    const waiting = await untilWaiting(handle);
    expect(waiting.question?.id).toBe('q1');
    await replyToTask(h.client, py.id, 'Porto', 'q1');
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'You chose Porto.' });
    expect((await handle.query(statusQuery)).status).toBe('complete');
  });

  it('reports input the workflow refuses with its TaskInput error and end reason', async () => {
    const py = await runExample(h, ['--max-steps', '0', '--reply', 'unused']);
    expect(py.code).toBe(1);
    expect(py.stderr).toMatch(/^task py-it-\S+: failed \(input\): invalid task input: maxSteps: /m);
    expect(py.stdout).not.toContain('question');
  });
});

describe('a Python client with its own codec drives a worker that encrypts payloads', () => {
  const keys = `k2:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`;
  let h: Harness;
  // The worker refuses plaintext: the task runs only if Python encrypts exactly as cua does.
  useHarness((x) => (h = x), { env: { CUA_ENCRYPTION_KEYS: keys, CUA_ENCRYPTION_ACCEPT_PLAINTEXT: 'false' } });

  it('encrypts the input and the reply with examples/python/cua_codec.py and reads the encrypted answers', async () => {
    const stale = await runExample(h, ['--reply', 'Porto', '--question-id', 'q7'], { CUA_ENCRYPTION_KEYS: keys });
    expect(stale.stdout).toContain("payload encryption on: new payloads use key 'k2'");
    expect(stale.stdout).toContain(`question q1 (step 1): ${QUESTION}`);
    // The rejection's message travels encrypted (encoded failure attributes) and is read back.
    expect(stale.stderr).toMatch(/^error: reply rejected: stale reply.*q7.*q1/m);
    expect(stale.code).toBe(1);
    await replyToTask(h.client, stale.id, 'Porto', 'q1');

    const py = await runExample(h, ['--reply', 'Lisbon'], { CUA_ENCRYPTION_KEYS: keys });
    expect(py.stderr).toBe('');
    expect(py.code).toBe(0);
    expect(py.stdout).toContain('answer: You chose Lisbon.');
    const handle = h.client.workflow.getHandle(py.id);
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'You chose Lisbon.' });
    // What the server stored is ciphertext under the active key: the start input and the reply update's argument.
    const events = (await handle.fetchHistory()).events ?? [];
    const input = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const reply = events.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes)
      ?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0];
    for (const payload of [input, reply]) {
      expect(Buffer.from(payload?.metadata?.encoding ?? []).toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(payload?.metadata?.[KEY_ID_METADATA] ?? []).toString()).toBe('k2');
      expect(Buffer.from(payload?.data ?? []).toString()).not.toMatch(/Search hotels|Lisbon/);
    }
  });
});
