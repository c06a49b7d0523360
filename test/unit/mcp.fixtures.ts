// What the MCP unit tests share: a task's snapshot as the typed client returns it, and an MCP client connected (on an
// in-memory transport) to the server over a stand-in of the typed client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { AgentClient, TaskSnapshot } from '../../client/client';
import type { McpDeps } from '../../mcp/deps';
import { createMcpServer } from '../../mcp/server';
import { LocalRunStore } from '../../src/trajectory/store';

export function snapshot(id: string, over: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return {
    id,
    status: 'running',
    closed: false,
    step: 3,
    question: null,
    answer: null,
    error: null,
    endReason: null,
    workflowStatus: 'RUNNING',
    progress: null,
    result: null,
    failure: null,
    waitingForSession: null,
    waitingForModel: null,
    waitingForStore: null,
    ...over,
  };
}

export function fakeDeps(agent: AgentClient, over: Partial<McpDeps> = {}): McpDeps {
  return {
    client: async () => agent,
    store: () => new LocalRunStore('/nonexistent-run-store'),
    endpoints: ['default'],
    families: {},
    temporalUiUrl: 'http://127.0.0.1:8233',
    namespace: 'default',
    consoleUrl: null,
    runsDir: '/runs',
    callersMayApprove: false,
    pollMs: 10,
    ...over,
  };
}

/** An MCP client of a server over `agent`; `client` is the new Client, `close` ends both ends. */
export async function connect(agent: AgentClient, over: Partial<McpDeps> = {}): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createMcpServer(fakeDeps(agent, over), '0.0.0').connect(a);
  const client = new Client({ name: 'unit', version: '0' });
  await client.connect(b);
  return client;
}
