// The sessions of `cua mcp --http`: an initialize request without a session id opens one (its own MCP server and the
// SDK's Streamable HTTP transport, over the shared typed client); the transport gives it an id (the Mcp-Session-Id
// header) that every later request carries, so subscriptions and progress notifications reach the client on its
// streams. DELETE ends a session; one with no request open for `idleMs` (30 min by default) ends too. A request with
// an id this server does not know (ended, expired, or from before a restart) gets 404, and the client starts anew.
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpDeps } from './deps';
import { createMcpServer } from './server';

/** How long a session with no open request lives on. */
export const SESSION_IDLE_MS = 30 * 60_000;

/** The largest request body read (a JSON-RPC message or a batch). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export const SESSION_HEADER = 'mcp-session-id';

interface Session {
  transport: StreamableHTTPServerTransport;
  /** Requests under way (a notification stream counts while it is open). */
  open: number;
  lastSeen: number;
}

/** A refusal as the SDK's transport words its own: a JSON-RPC error with no id. */
export function refuse(res: ServerResponse, code: number, message: string, extra: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', ...extra });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Whether a request body opens a session: an initialize request, alone or in a batch. */
export function opensSession(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
}

/** The request's JSON body, or undefined (with the refusal sent) when it is too large or not JSON. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return void refuse(res, 413, `a request body is at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return void refuse(res, 400, 'the body is not JSON: POST a JSON-RPC message');
  }
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: McpDeps,
    private readonly version: string,
    private readonly idleMs = SESSION_IDLE_MS,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(10, idleMs / 2)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves one request to /mcp (its access already checked). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = req.headers[SESSION_HEADER];
    if (typeof id === 'string') {
      const session = this.sessions.get(id);
      if (!session) return refuse(res, 404, `no session ${id} (it ended or expired): initialize a new one`);
      return this.serve(session, req, res);
    }
    if (req.method !== 'POST') {
      return refuse(res, 400, `no session: POST an initialize request first, then send its ${SESSION_HEADER} header`);
    }
    const read = await readJson(req, res);
    if (!read) return;
    if (!opensSession(read.body)) {
      return refuse(res, 400, `no session: POST an initialize request first, then send its ${SESSION_HEADER} header`);
    }
    await this.serve(await this.open(), req, res, read.body);
  }

  /** Ends every session (the server stops). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close()));
    this.sessions.clear();
  }

  private async open(): Promise<Session> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, session),
    });
    const session: Session = { transport, open: 0, lastSeen: Date.now() };
    // Set before connecting: the server chains its own close (which stops the session's watchers) after this.
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await createMcpServer(this.deps, this.version).connect(transport);
    return session;
  }

  private async serve(session: Session, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    session.open++;
    session.lastSeen = Date.now();
    res.on('close', () => {
      session.open--;
      session.lastSeen = Date.now();
    });
    await session.transport.handleRequest(req, res, body);
  }

  private sweep(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.open === 0 && now - session.lastSeen > this.idleMs) void session.transport.close();
    }
  }
}
