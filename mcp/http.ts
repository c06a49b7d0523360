// `cua mcp --http`: the MCP server over Streamable HTTP (the SDK's transport) at /mcp, stateless: each POST gets its
// own server and transport over the shared typed client, so any number of clients, one after another or at once, see
// the same tasks. Every request passes access.ts first (Host, Origin, bearer token).
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { refusalOf } from './access';
import type { McpDeps } from './deps';
import { createMcpServer } from './server';

export const MCP_PATH = '/mcp';

export interface McpHttpOptions {
  deps: McpDeps;
  version: string;
  token: string;
  host: string;
  /** 0 for a free port. */
  port: number;
}

export interface McpHttpServer {
  /** http://host:port/mcp */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

function refuse(res: ServerResponse, code: number, message: string, extra: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', ...extra });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function serveMcp(opts: McpHttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    return refuse(res, 405, 'this server is stateless: POST JSON-RPC requests to /mcp', { allow: 'POST' });
  }
  const server = createMcpServer(opts.deps, opts.version);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

/** Starts the HTTP server and returns its address. */
export async function startMcpHttp(opts: McpHttpOptions): Promise<McpHttpServer> {
  let port = opts.port;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://mcp');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    const why = refusalOf(
      { host: opts.host, port, token: opts.token },
      { host: req.headers.host, origin: req.headers.origin, authorization: req.headers.authorization },
    );
    if (why) {
      return refuse(res, why.code, why.message, why.code === 401 ? { 'www-authenticate': 'Bearer' } : {});
    }
    serveMcp(opts, req, res).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, err instanceof Error ? err.message.split('\n')[0]! : String(err));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host, port: opts.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : port;
  const base = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  return {
    url: `${base}${MCP_PATH}`,
    host: opts.host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
