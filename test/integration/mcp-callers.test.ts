// `cua mcp` with a deployment's limits on its callers (config `mcp.callers`), and a worker lost while a caller waits:
// a model, environment, step count or start URL the limits refuse is a tool error of one line; a task a caller starts
// carries the limits' URL policy; a worker killed with SIGKILL during wait_for_task leaves the MCP session working,
// and the task completes on a second worker while the caller keeps waiting. Real dev server, worker processes,
// Chromium and the scripted model.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { firstInput } from '../../client/control';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';
import { WorkerProcesses } from './worker-processes';

const ROOT = path.resolve(__dirname, '../..');
const CUA_BIN = path.join(ROOT, 'bin', 'cua.js');

let h: Harness;
let client: Client;
let configFile = '';
const workers = new WorkerProcesses(() => h);

beforeAll(async () => {
  h = await startHarness({ worker: false });
  await workers.prepare();
  // The script is the endpoint's model name; callers may use only `book-lisbon`, in a browser, on the fixture site.
  const models = {
    'book-lisbon': { baseUrl: h.model.url, model: 'book-lisbon' },
    'ask-city': { baseUrl: h.model.url, model: 'ask-city' },
  };
  const callers = {
    models: ['book-lisbon'],
    environments: ['browser'],
    maxSteps: 20,
    urlPolicy: { allowHosts: [new URL(h.site.url).host] },
  };
  configFile = path.join(h.dir, 'mcp-callers.config.json');
  fs.writeFileSync(configFile, JSON.stringify({ models, mcp: { callers } }));
  client = new Client({ name: 'mcp-callers-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CUA_BIN, 'mcp'],
      cwd: ROOT,
      env: {
        ...process.env,
        CUA_CONFIG: configFile,
        TEMPORAL_ADDRESS: h.server.address,
        CUA_TASK_QUEUE: h.config.taskQueue,
        CUA_RUNS_DIR: h.config.runsDir,
      } as Record<string, string>,
      stderr: 'ignore',
    }),
  );
}, 120_000);

afterAll(async () => {
  await client?.close();
  workers.killAll();
  await h?.close();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
const data = (r: CallToolResult) => r.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const text = (r: CallToolResult) => (r.content[0]?.type === 'text' ? r.content[0].text : '');

describe("a deployment's limits on MCP callers", () => {
  it('refuses a model, environment, step count or start URL outside them, one line each', async () => {
    const start = (over: Record<string, unknown>) =>
      call('start_task', { instruction: 'Book a hotel.', start_url: `${h.site.url}/`, ...over });
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'ask-city' }, "invalid task: model: MCP callers may use the models book-lisbon, not 'ask-city'"],
      [
        { environment: 'desktop', start_url: undefined },
        "invalid task: environment: MCP callers may use the environments browser, not 'desktop'",
      ],
      [{ max_steps: 50 }, 'invalid task: maxSteps: MCP callers may ask for at most 20 steps, not 50'],
      [{ start_url: 'http://pages.example/' }, 'invalid task: startUrl: blocked by policy'],
    ];
    for (const [over, line] of cases) {
      const refused = await start(over);
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain(line);
      expect(text(refused)).not.toContain('\n');
    }
    // A schedule's runs keep to the same limits.
    const schedule = await call('create_schedule', {
      name: 'callers-check',
      instruction: 'Read the price.',
      start_url: `${h.site.url}/`,
      model: 'ask-city',
      every: '1h',
    });
    expect(schedule.isError).toBe(true);
    expect(text(schedule)).toBe("invalid schedule: model: MCP callers may use the models book-lisbon, not 'ask-city'");
    expect((await h.client.workflow.count(`TaskQueue = '${h.config.taskQueue}'`)).count).toBe(0);
  }, 60_000);
});

describe('a worker killed with SIGKILL while a caller waits', () => {
  it('the MCP session goes on, and the task completes on a second worker; it carried the callers’ URL policy', async () => {
    const marker = path.join(h.dir, 'marker-mcp-wait');
    const first = workers.spawn({ CUA_CONFIG: configFile, CUA_TEST_HOLD: 'act:3', CUA_TEST_MARKER: marker });
    // No model named: the first the callers may use.
    const started = await call('start_task', { instruction: 'Book a hotel in Lisbon.', start_url: `${h.site.url}/` });
    expect(started.isError).toBeFalsy();
    const id = data(started).id as string;

    const progress: string[] = [];
    const waiting = client.callTool(
      { name: 'wait_for_task', arguments: { task_id: id, wait_seconds: 60 } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => progress.push(p.message ?? ''),
      },
    ) as Promise<CallToolResult>;
    await eventually(async () => fs.existsSync(marker), 60_000, 'the worker to reach act of step 3');
    await workers.kill(first);
    workers.spawn({ CUA_CONFIG: configFile });

    let view = data(await waiting);
    // A wait ends at its limit at the latest: the caller calls again, as the tool's description says.
    for (let i = 0; i < 3 && !view.closed; i++)
      view = data(await call('wait_for_task', { task_id: id, wait_seconds: 60 }));
    expect(view).toMatchObject({
      status: 'complete',
      closed: true,
      answer: 'Harbor View Lisbon costs €120 per night.',
    });
    expect(progress.some((m) => /step 3/.test(m))).toBe(true);

    const input = await firstInput(h.client, id);
    expect(input.model.endpoint).toBe('book-lisbon');
    expect(input.urlPolicy?.allowHosts).toEqual([new URL(h.site.url).host]);
  }, 180_000);
});
