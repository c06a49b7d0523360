// `cua mcp` (issue 44) driven by the MCP SDK's own Client, on the real dev server, worker, Chromium and scripted model
// (the harness): over stdio a task is started, asks, is answered with reply_to_task and completes; its screenshot
// comes back as image content; a second client, over HTTP, reads the same task after the first has gone and forks it
// (the fork completes); bad input is a tool error of one line; a server started before Temporal answers the handshake;
// the HTTP server refuses a request without its token (401) or from a foreign Origin (403). Over HTTP a client
// subscribed to a task's report hears resources/updated when the task asks and when it is answered, a wait with a
// progress token gets progress notifications, and resources/list and resources/read give the task's resources. A
// third-party client, the MCP Inspector's CLI mode, lists the tools and reads a task with get_task.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sleep } from '../../src/common/sleep';
import type { Harness } from './harness';
import { inspect } from './mcp-inspector';
import { useHarness } from './use-harness';

const ROOT = path.resolve(__dirname, '../..');
const CUA_BIN = path.join(ROOT, 'bin', 'cua.js');
const TOKEN = 'mcp-test-token-0123456789abcdef';

let h: Harness;
let env: NodeJS.ProcessEnv;
let taskId = '';
const children: ChildProcess[] = [];

useHarness((harness) => (h = harness), { worker: false });

beforeAll(async () => {
  // The script is the endpoint's model name: the MCP caller names the endpoint, the worker knows its address.
  const models = { 'ask-city': { baseUrl: h.model.url, model: 'ask-city' } };
  h.config.models = models;
  await h.startWorker();
  const configFile = path.join(h.dir, 'mcp.config.json');
  fs.writeFileSync(configFile, JSON.stringify({ models }));
  env = {
    ...process.env,
    CUA_CONFIG: configFile,
    TEMPORAL_ADDRESS: h.server.address,
    CUA_TASK_QUEUE: h.config.taskQueue,
    CUA_RUNS_DIR: h.config.runsDir,
    CUA_MCP_TOKEN: TOKEN,
  };
}, 120_000);

afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
});

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult;
const data = (r: CallToolResult) => r.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const text = (r: CallToolResult) => (r.content[0]?.type === 'text' ? r.content[0].text : '');

/** `cua mcp --http` on a free port; resolves with its URL once it prints it. */
function startHttpServer(): Promise<string> {
  const child = spawn(process.execPath, [CUA_BIN, 'mcp', '--http', '--port', '0'], { cwd: ROOT, env });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /serving (http:\/\/\S+\/mcp)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`cua mcp --http exited (${code}): ${out}`)));
  });
}

/** Spawns `node bin/cua.js mcp` (stdio) with `vars` and connects the SDK's client to it. */
async function stdioClient(vars: NodeJS.ProcessEnv): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CUA_BIN, 'mcp'],
    cwd: ROOT,
    env: vars as Record<string, string>,
    stderr: 'ignore',
  });
  await client.connect(transport);
  return client;
}

describe('over stdio', () => {
  let client: Client;
  beforeAll(async () => {
    client = await stdioClient(env);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('starts a task that asks, answers it with reply_to_task, and the task completes', async () => {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining(['start_task', 'get_task', 'wait_for_task', 'list_tasks', 'reply_to_task', 'steer_task']),
    );
    expect(tools).toEqual(expect.arrayContaining(['get_screenshot', 'get_steps', 'fork_task', 'replay_task']));

    const started = await call(client, 'start_task', {
      instruction: 'Search hotels in the city I name.',
      start_url: `${h.site.url}/`,
      model: 'ask-city',
      wait_seconds: 40,
    });
    expect(started.isError).toBeFalsy();
    taskId = data(started).id;
    expect(data(started)).toMatchObject({
      status: 'waiting_for_user',
      question: { text: 'Which city should I search in?', kind: 'model', caller_may_answer: true },
    });

    const replied = await call(client, 'reply_to_task', {
      task_id: taskId,
      text: 'Lisbon',
      question_id: data(started).question.id,
    });
    expect(replied.isError).toBeFalsy();

    const progress: number[] = [];
    const done = (await client.callTool(
      { name: 'wait_for_task', arguments: { task_id: taskId, wait_seconds: 45 } },
      undefined,
      {
        timeout: 90_000,
        onprogress: (p) => progress.push(p.progress),
      },
    )) as CallToolResult;
    expect(data(done)).toMatchObject({ status: 'complete', closed: true, answer: 'Searched Lisbon as you asked.' });
    expect(progress.length).toBeGreaterThan(0);

    const shot = await call(client, 'get_screenshot', { task_id: taskId });
    const image = shot.content.find((c) => c.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const meta = await sharp(Buffer.from((image as { data: string }).data, 'base64')).metadata();
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(1280);
    expect(text(shot)).toContain(`task ${taskId}, step`);
    const first = await call(client, 'get_screenshot', { task_id: taskId, step: 1 });
    expect(text(first)).toContain('step 1 (');

    const steps = data(await call(client, 'get_steps', { task_id: taskId })).steps as { action: string }[];
    expect(steps.map((s) => s.action)).toContain('ask_user_question');
  }, 90_000);

  it('refuses bad input as a tool error of one line', async () => {
    const unknown = await call(client, 'get_task', { task_id: 'no-such-task-123' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toBe('no task with id no-such-task-123');
    const empty = await call(client, 'start_task', { instruction: '  ', model: 'ask-city' });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toBe('invalid task: instruction: instruction must not be empty');
    const long = await call(client, 'wait_for_task', { task_id: taskId || 'x', wait_seconds: 120 });
    expect(long.isError).toBe(true);
    expect(text(long)).toContain('wait_seconds is at most 60');
    const model = await call(client, 'start_task', { instruction: 'Anything.', model: 'nope' });
    expect(text(model)).toBe("invalid task: model: no endpoint named 'nope' in the config's models (ask-city)");
    for (const r of [unknown, empty, long, model]) expect(text(r)).not.toContain('\n');
  }, 60_000);

  it('answers the handshake before the Temporal server is up; its tools say it is not reachable yet', async () => {
    const down = await stdioClient({ ...env, TEMPORAL_ADDRESS: '127.0.0.1:9' });
    const refused = await call(down, 'get_task', { task_id: 'any-task' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(
      'the Temporal server at 127.0.0.1:9 is not reachable yet; this server connects as soon as it answers: try again shortly',
    );
    await down.close();
  }, 30_000);
});

describe('over HTTP', () => {
  let url = '';
  beforeAll(async () => {
    url = await startHttpServer();
  }, 60_000);

  async function httpClient(): Promise<Client> {
    const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
    const headers = { authorization: `Bearer ${TOKEN}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return client;
  }

  it('a second client reads the same task and forks it; no token is 401, a foreign Origin 403', async () => {
    expect(taskId).not.toBe('');
    const client = await httpClient();
    const task = await call(client, 'get_task', { task_id: taskId });
    expect(data(task)).toMatchObject({ id: taskId, status: 'complete', answer: 'Searched Lisbon as you asked.' });
    const listed = data(await call(client, 'list_tasks', { text: 'city I name' })).tasks as { id: string }[];
    expect(listed.map((t) => t.id)).toContain(taskId);
    // A fork at step 2 (the click after the reply) decides step 3 anew in that page, and completes.
    const fork = await call(client, 'fork_task', { task_id: taskId, step: 2 });
    expect(fork.isError).toBeFalsy();
    const forkId = data(fork).id as string;
    expect(forkId).toMatch(new RegExp(`^${taskId}-fork-2-`));
    const forked = await call(client, 'wait_for_task', { task_id: forkId, wait_seconds: 40 });
    expect(data(forked)).toMatchObject({ status: 'complete', closed: true, answer: 'Searched Lisbon as you asked.' });
    await client.close();

    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(401);
    const wrong = { ...headers, authorization: 'Bearer wrong-token' };
    expect((await fetch(url, { method: 'POST', headers: wrong, body })).status).toBe(401);
    const foreign = { ...headers, authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' };
    expect((await fetch(url, { method: 'POST', headers: foreign, body })).status).toBe(403);
  }, 60_000);

  it('a subscribed client hears resources/updated when its task asks and is answered; a wait reports progress', async () => {
    const client = await httpClient();
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    const started = await call(client, 'start_task', {
      instruction: 'Search hotels in the city I name, for the subscriber.',
      start_url: `${h.site.url}/`,
      model: 'ask-city',
    });
    const id = data(started).id as string;
    const report = `cua://tasks/${id}/report`;
    await client.subscribeResource({ uri: report });

    const progress: number[] = [];
    const asked = (await client.callTool(
      { name: 'wait_for_task', arguments: { task_id: id, wait_seconds: 40 } },
      undefined,
      { timeout: 90_000, onprogress: (p) => progress.push(p.progress) },
    )) as CallToolResult;
    expect(data(asked)).toMatchObject({ status: 'waiting_for_user' });
    expect(progress.length).toBeGreaterThan(0); // progress notifications over HTTP, on the request's stream
    await until(() => updates.length > 0, 5_000); // the ask was a change (the start's status came before it)
    expect(updates).toContain(report);

    updates.length = 0;
    await call(client, 'reply_to_task', { task_id: id, text: 'Lisbon' });
    await until(() => updates.length > 0, 10_000);
    expect(updates).toContain(report);

    const listed = (await client.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(expect.arrayContaining([report, `cua://tasks/${id}/steps`]));
    const done = await call(client, 'wait_for_task', { task_id: id, wait_seconds: 40 });
    expect(data(done)).toMatchObject({ status: 'complete', closed: true });
    const steps = await client.readResource({ uri: `cua://tasks/${id}/steps` });
    const table = JSON.parse((steps.contents[0] as { text: string }).text) as { steps: { action: string }[] };
    expect(table.steps.map((s) => s.action)).toContain('ask_user_question');
    const text = ((await client.readResource({ uri: report })).contents[0] as { text: string }).text;
    expect(text).toContain(`task ${id}: complete`);
    expect(text).toContain('Searched Lisbon as you asked.');
    await client.close();
  }, 90_000);

  it("the MCP Inspector's CLI mode lists the tools and reads a task with get_task", async () => {
    expect(taskId).not.toBe('');
    const tools = ((await inspect(url, TOKEN, ['--method', 'tools/list'])).tools as { name: string }[]).map(
      (t) => t.name,
    );
    expect(tools).toEqual(expect.arrayContaining(['start_task', 'get_task', 'wait_for_task']));
    const got = await inspect(url, TOKEN, [
      '--method',
      'tools/call',
      '--tool-name',
      'get_task',
      '--tool-arg',
      `task_id=${taskId}`,
    ]);
    expect(got['structuredContent']).toMatchObject({ id: taskId, status: 'complete' });
  }, 360_000);
});

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
}
