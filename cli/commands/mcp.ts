// `cua mcp`: the MCP server, so any agent can start durable tasks, leave, and come back for the answer. Over stdio (the
// default: a client starts it as its own process; only protocol messages go to stdout, log lines to stderr), or with
// --http over Streamable HTTP on 127.0.0.1:8310 with a bearer token. Started before the Temporal server, it waits for
// it as the worker does and serves once the server answers.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { agentClientFor } from '../../client/client';
import type { AgentClient } from '../../client/client';
import { consoleDenyHosts } from '../../console/access';
import { DEFAULT_MCP_PORT, mcpToken } from '../../mcp/access';
import { McpRefusal } from '../../mcp/deps';
import type { McpDeps } from '../../mcp/deps';
import { startMcpHttp } from '../../mcp/http';
import { createMcpServer } from '../../mcp/server';
import { sleep } from '../../src/common/sleep';
import { PROJECT_ROOT } from '../../src/infra/paths';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { endpointFamilies } from '../../src/runtime/config-models';
import { untilReachable } from '../../src/runtime/connect';
import { openRunStore } from '../../src/trajectory/open-store';
import { intFlag, parse, UsageError } from '../args';
import { temporalUiUrlFor } from './console';

export const MCP_USAGE = `npx cua mcp [--http [--host 127.0.0.1] [--port ${DEFAULT_MCP_PORT}]] [--temporal-ui URL] [--config FILE]`;

/** How long a tool call waits for the Temporal connection before it refuses (a call just after the start waits it out). */
const CONNECT_GRACE_MS = 5_000;

const log = (line: string) => console.error(`[mcp] ${line}`);

function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function depsOf(config: Config, client: () => Promise<AgentClient>, temporalUi: string | undefined): McpDeps {
  return {
    client,
    store: () => openRunStore(config),
    endpoints: Object.keys(config.models),
    families: endpointFamilies(config.models),
    temporalUiUrl: temporalUiUrlFor(config, temporalUi),
    namespace: config.temporal.namespace,
    consoleUrl: config.mcp?.consoleUrl ?? null,
    runsDir: config.store.kind === 'folder' ? config.runsDir : null,
    callersMayApprove: config.mcp?.callersMayApprove ?? false,
    ...(config.mcp?.callers ? { policy: { rules: config.mcp.callers, callers: 'MCP callers' } } : {}),
  };
}

export async function mcpCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      http: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      'temporal-ui': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    MCP_USAGE,
  );
  if (values.help) return (console.log(`usage: ${MCP_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${MCP_USAGE}`);
  if (!values.http && (values.host !== undefined || values.port !== undefined)) {
    throw new UsageError(`--host and --port are for --http\nusage: ${MCP_USAGE}`);
  }
  const config = loadConfig({ file: values.config });
  const host = values.host ?? '127.0.0.1';
  const port = intFlag(values.port, 'port', 0) ?? DEFAULT_MCP_PORT;
  const token = values.http ? mcpToken(host, config.mcp?.token) : undefined;
  const stop = new AbortController();
  let stopNow = () => {};
  const stopped = new Promise<void>((resolve) => {
    stopNow = () => (stop.abort(), resolve());
    process.once('SIGINT', stopNow);
    process.once('SIGTERM', stopNow);
    if (!values.http) process.stdin.once('end', stopNow); // the client went away
  });
  // Serve at once (a client's handshake must not wait on Temporal); until it answers, a tool call waits a few
  // seconds for it, then refuses in one line.
  let agent: AgentClient | undefined;
  let failed: unknown;
  const connecting = connect(config, stop.signal).then(
    (a) => (agent = a),
    (err: unknown) => ((failed = err), stopNow(), undefined),
  );
  const client = async () => {
    if (!agent) await Promise.race([connecting, sleep(CONNECT_GRACE_MS)]);
    if (agent) return agent;
    throw new McpRefusal(
      `the Temporal server at ${config.temporal.address} is not reachable yet; this server connects as soon as it ` +
        'answers: try again shortly',
    );
  };
  const deps = depsOf(config, client, values['temporal-ui']);
  const version = packageVersion();
  if (token) {
    const server = await startMcpHttp({ deps, version, token: token.token, host, port });
    console.log(`[mcp] serving ${server.url} (Streamable HTTP)`);
    console.log(`[mcp] token: ${token.generated ? token.token : '(the configured mcp.token)'}`);
    console.log(
      `[mcp] add it to a client: {"url": "${server.url}", "headers": {"Authorization": "Bearer ${token.generated ? token.token : '<token>'}"}}`,
    );
    console.log(
      `[mcp] keep the agent's browser away from it: workers' urlPolicy.denyHosts needs ${JSON.stringify(consoleDenyHosts(host, server.port))}`,
    );
    await stopped;
    await server.close();
  } else {
    const server = createMcpServer(deps, version);
    await server.connect(new StdioServerTransport());
    log(`serving over stdio: tasks from ${config.temporal.address} (namespace ${config.temporal.namespace})`);
    await stopped;
    await server.close();
  }
  stop.abort();
  await (await connecting)?.close();
  if (failed) throw failed; // a configuration the client cannot connect with: one line, as every command
  return 0;
}

/** The client, once the Temporal server answers; undefined when a signal ended the wait. */
async function connect(config: Config, signal: AbortSignal): Promise<AgentClient | undefined> {
  try {
    return await untilReachable(config.temporal.address, () => agentClientFor(config), log, signal);
  } catch (err) {
    if (!signal.aborted) throw err;
    log('stopped before the Temporal server was reachable');
    return undefined;
  }
}
