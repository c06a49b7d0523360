// The MCP server of durable-cua (`cua mcp`): the official SDK's McpServer with the task tools, each task's report and
// steps as resources with subscriptions, a thin layer over the typed client. One is made per session (the stdio
// connection, an HTTP session); they share the client.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerControlTools } from './control-tools';
import type { McpDeps } from './deps';
import { registerResources } from './resources';
import { registerRunTools } from './run-tools';
import { registerSubscriptions } from './subscriptions';
import { registerScheduleTools } from './schedule-tools';
import { registerTaskTools } from './task-tools';

export const MCP_SERVER_NAME = 'durable-cua';

const INSTRUCTIONS =
  'Durable computer-use tasks: an agent works in a browser step by step, on workers that survive restarts. ' +
  'start_task returns a task id at once; the task runs on without you. Come back with wait_for_task (up to 60 s per ' +
  'call) or get_task, answer its questions with reply_to_task, read its answer when it has ended. Each task has ' +
  'resources cua://tasks/{id}/report and cua://tasks/{id}/steps; subscribe to one to hear when the task changes.';

export function createMcpServer(deps: McpDeps, version: string): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version }, { instructions: INSTRUCTIONS });
  registerTaskTools(server, deps);
  registerControlTools(server, deps);
  registerRunTools(server, deps);
  registerResources(server, deps);
  registerSubscriptions(server, deps);
  registerScheduleTools(server, deps);
  return server;
}
