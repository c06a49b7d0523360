// `cua mcp --http`: the MCP server over Streamable HTTP (the SDK's transport) at /mcp, with sessions (http-sessions.ts):
// each client's session has its own server over the shared typed client, so any number of clients, one after another
// or at once, see the same tasks, and each gets its subscriptions' and waits' notifications. Every request passes
// access.ts first (Host, Origin, bearer token), whatever its session.
import http from 'node:http';
import { refusalOf } from './access';
import type { McpDeps } from './deps';
import { McpSessions, refuse } from './http-sessions';

export const MCP_PATH = '/mcp';

export interface McpHttpOptions {
  deps: McpDeps;
  version: string;
  token: string;
  host: string;
  /** 0 for a free port. */
  port: number;
  /** How long a session with no open request lives on (default 30 min). */
  sessionIdleMs?: number;
}

export interface McpHttpServer {
  /** http://host:port/mcp */
  url: string;
  host: string;
  port: number;
  /** The sessions open now. */
  sessions(): number;
  close(): Promise<void>;
}

/** Starts the HTTP server and returns its address. */
export async function startMcpHttp(opts: McpHttpOptions): Promise<McpHttpServer> {
  let port = opts.port;
  const sessions = new McpSessions(opts.deps, opts.version, opts.sessionIdleMs);
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
    sessions.handle(req, res).catch((err: unknown) => {
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
    sessions: () => sessions.size,
    close: async () => {
      await sessions.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
