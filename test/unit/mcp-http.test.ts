// `cua mcp --http`'s sessions (mcp/http-sessions.ts) over a stand-in of the typed client, with the SDK's own client
// on a real local port: an initialize opens a session whose id later requests carry; a subscription's
// resources/updated and a wait's progress notifications reach the client; DELETE ends the session, an idle one
// expires, an unknown session id is 404, a request without one 400; and every request still needs the token.
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentClient, TaskSnapshot } from '../../client/client';
import { opensSession } from '../../mcp/http-sessions';
import { startMcpHttp } from '../../mcp/http';
import type { McpHttpServer } from '../../mcp/http';
import { sleep } from '../../src/common/sleep';
import { fakeDeps, snapshot } from './mcp.fixtures';

const TOKEN = 'unit-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
const state: { now: TaskSnapshot } = { now: snapshot('t-1') };
const agent = { status: async () => state.now } as unknown as AgentClient;

let server: McpHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  state.now = snapshot('t-1');
});

async function serve(sessionIdleMs?: number): Promise<McpHttpServer> {
  const options = { deps: fakeDeps(agent), version: '0', token: TOKEN, host: '127.0.0.1', port: 0 };
  server = await startMcpHttp({ ...options, ...(sessionIdleMs ? { sessionIdleMs } : {}) });
  return server;
}

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } });
  const client = new Client({ name: 'unit-http', version: '0' });
  await client.connect(transport);
  return { client, transport };
}

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(10);
}

const post = (url: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

describe('opensSession', () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
  };
  it.each([
    ['an initialize request', init, true],
    ['a batch with one', [init], true],
    ['another request', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, false],
    ['not JSON-RPC', 'hello', false],
  ] as const)('%s', (_what, body, opens) => expect(opensSession(body)).toBe(opens));
});

describe('sessions over HTTP', () => {
  it('carries resources/updated and progress to the client, and DELETE ends the session', async () => {
    const { url, sessions } = await serve();
    const { client, transport } = await connect(url);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sessions()).toBe(1);

    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.subscribeResource({ uri: 'cua://tasks/t-1/report' });
    state.now = snapshot('t-1', { status: 'paused' });
    await until(() => updates.length > 0);
    expect(updates).toEqual(['cua://tasks/t-1/report']);

    state.now = snapshot('t-1');
    const progress: number[] = [];
    const waited = (await client.callTool(
      { name: 'wait_for_task', arguments: { task_id: 't-1', wait_seconds: 0.2 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    )) as CallToolResult;
    expect(waited.isError).toBeFalsy();
    expect(progress.length).toBeGreaterThan(0);

    await transport.terminateSession();
    expect(sessions()).toBe(0);
    await client.close();
  });

  it('ends a session left idle, and answers its id with 404', async () => {
    const { url, sessions } = await serve(50);
    const { client, transport } = await connect(url);
    const id = transport.sessionId!;
    await client.close(); // closes its notification stream: nothing is open any more
    await until(() => sessions() === 0);
    expect(sessions()).toBe(0);
    const late = await post(url, { ...auth, 'mcp-session-id': id }, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(late.status).toBe(404);
  });

  it('refuses a request with no session (400) and one without the token whatever its session (401)', async () => {
    const { url } = await serve();
    const { client, transport } = await connect(url);
    const list = { jsonrpc: '2.0', id: 3, method: 'tools/list' };
    expect((await post(url, auth, list)).status).toBe(400);
    expect((await post(url, { 'mcp-session-id': transport.sessionId! }, list)).status).toBe(401);
    expect((await fetch(url, { headers: auth })).status).toBe(400);
    await client.close();
  });
});
