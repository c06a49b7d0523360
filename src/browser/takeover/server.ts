// The worker's takeover endpoint: one HTTP server (started at the first lease) through which a person drives a
// session's browser while its agent waits. Per lease: GET /takeover/<id> the viewer page, /takeover/<id>/ws the
// screencast and input socket, and with raw CDP on, /takeover/<id>/cdp a DevTools WebSocket to the whole browser
// (operator only; docs/security.md). Every request carries the lease's token (`?token=` or `Authorization: Bearer`):
// a missing or wrong one is a 401, an ended lease a 410. A lease outlives its viewers' disconnects; it ends when
// handed back (`end`) or when its session closes.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { StartTakeoverResult } from '../../contract/activities';
import type { BrowserEnvironment } from '../environment';
import { TakeoverError } from '../errors';
import { tunnelToDevTools, versionInfo } from './cdp-proxy';
import type { DevToolsEndpoint } from './devtools';
import { Lease, pageFacts } from './lease';
import type { LeaseSummary } from './lease';
import { viewerPage, viewerPolicy } from './viewer-page';

export type TakeoverOptions = {
  /** The address the endpoint listens on (default 127.0.0.1: this machine only). */
  host?: string;
  /** Its port (default 0: a free one, chosen when the first lease starts). */
  port?: number;
  /** The endpoint's address as people reach it (a reverse proxy's, https), instead of http://host:port. */
  publicUrl?: string;
  /** Offer raw CDP with each lease (browser.takeoverCdp; the operator's only). */
  cdp?: boolean;
  /** Where the browser listens for DevTools (raw CDP); undefined: it does not. */
  devTools?: () => Promise<DevToolsEndpoint | undefined>;
  /** A lease of this session ended (the pool starts its idle clock again). */
  onEnd?: (sessionId: string) => void;
  log?: (line: string) => void;
};

/** What a person needs to take a session over: the viewer's address, the lease's token, and raw CDP when offered. */
export type LeaseGrant = StartTakeoverResult;

/** A lease id is one path segment. */
const LEASE_ID = /^[A-Za-z0-9._-]{1,128}$/;
const ROUTE = /^\/takeover\/([^/]+)(\/ws|\/cdp|\/cdp\/json\/version\/?)?\/?$/;
/** Ended leases remembered (for a 410, and a repeated end's summary). */
const ENDED_KEPT = 256;

type Route = { id: string; kind: 'page' | 'ws' | 'cdp' | 'cdp-version' };
type Access = { ok: true; lease: Lease } | { ok: false; status: 401 | 404 | 410; message: string };

function routeOf(url: URL): Route | undefined {
  const match = ROUTE.exec(url.pathname);
  const id = match?.[1];
  if (!match || id === undefined || !LEASE_ID.test(id)) return undefined;
  const kinds = { '': 'page', '/ws': 'ws', '/cdp': 'cdp' } as const;
  const tail = match[2] ?? '';
  return { id, kind: tail in kinds ? kinds[tail as keyof typeof kinds] : 'cdp-version' };
}

function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  return bearer ?? url.searchParams.get('token') ?? undefined;
}

const PLAIN = { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' };

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { ...PLAIN, 'Referrer-Policy': 'no-referrer' });
  res.end(`${message}\n`);
}

/** Refuses an upgrade with a plain HTTP answer on the raw socket. */
export function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export class TakeoverServer {
  private server: http.Server | undefined;
  private listening: Promise<AddressInfo> | undefined;
  private readonly sockets = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly leases = new Map<string, Lease>();
  /** Leases being ended: a second end waits for the first. */
  private readonly ending = new Map<string, Promise<LeaseSummary>>();
  private readonly ended = new Map<string, { summary: LeaseSummary; authorizes: Lease['authorizes'] }>();

  constructor(private readonly options: TakeoverOptions = {}) {}

  /**
   * Lends the session's browser (`env`) to a person under `leaseId`. The same id again (a retried activity, or the
   * session re-opened on this worker) keeps its lease: same token and start, now showing `env`.
   */
  async lease(env: BrowserEnvironment, leaseId: string, opts: { sessionId?: string } = {}): Promise<LeaseGrant> {
    if (!LEASE_ID.test(leaseId)) {
      throw new TakeoverError(
        `A lease id is 1 to 128 letters, digits, '.', '_' or '-': not ${JSON.stringify(leaseId)}`,
      );
    }
    const address = await this.listen();
    await this.ending.get(leaseId); // a lease of this id being ended is ended first; this one is new
    let lease = this.leases.get(leaseId);
    if (lease) lease.repoint(env);
    else {
      lease = new Lease(leaseId, env, opts.sessionId, await pageFacts(env));
      this.leases.set(leaseId, lease);
      this.ended.delete(leaseId);
    }
    return this.grant(lease, address);
  }

  /**
   * Ends a lease (handed back); what the person did. A lease already ended (or ending) answers the same; an unknown
   * one: none. The session counts as leased until the end is done, so it is not closed as idle meanwhile.
   */
  end(leaseId: string, reason = 'handed back'): Promise<LeaseSummary | undefined> {
    const lease = this.leases.get(leaseId);
    if (!lease) return Promise.resolve(this.ended.get(leaseId)?.summary);
    this.ending.set(leaseId, this.ending.get(leaseId) ?? this.finish(lease, reason));
    return this.ending.get(leaseId) as Promise<LeaseSummary>;
  }

  private async finish(lease: Lease, reason: string): Promise<LeaseSummary> {
    try {
      const summary = await lease.end(reason);
      this.ended.set(lease.id, { summary, authorizes: lease.authorizes });
      for (const old of [...this.ended.keys()].slice(0, Math.max(0, this.ended.size - ENDED_KEPT))) {
        this.ended.delete(old);
      }
      return summary;
    } finally {
      this.leases.delete(lease.id);
      this.ending.delete(lease.id);
      if (lease.sessionId !== undefined) this.options.onEnd?.(lease.sessionId);
    }
  }

  /** Whether a session is lent out now (the pool does not close it for being idle). */
  isLeased(sessionId: string): boolean {
    return [...this.leases.values()].some((l) => l.sessionId === sessionId);
  }

  /** The session is closing: its leases end (their summaries kept for the hand-back). */
  async endSession(sessionId: string): Promise<void> {
    const ids = [...this.leases.values()].filter((l) => l.sessionId === sessionId).map((l) => l.id);
    await Promise.all(ids.map((id) => this.end(id, 'the session closed')));
  }

  /** Ends every lease and stops listening. */
  async close(): Promise<void> {
    await Promise.all([...this.leases.keys()].map((id) => this.end(id, 'the worker is shutting down')));
    const server = this.server;
    this.server = undefined;
    this.listening = undefined;
    for (const ws of this.sockets.clients) ws.terminate();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The endpoint's address, once listening. */
  get address(): AddressInfo | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address : undefined;
  }

  private async grant(lease: Lease, address: AddressInfo): Promise<LeaseGrant> {
    const base = this.baseUrl(address);
    const url = `${base}/takeover/${lease.id}`;
    const cdp = this.options.cdp ? await this.devTools() : undefined;
    if (this.options.cdp && !cdp)
      this.options.log?.(`takeover ${lease.id}: no raw CDP (this browser has no DevTools port)`);
    const cdpUrl = cdp ? `${base.replace(/^http/, 'ws')}/takeover/${lease.id}/cdp?token=${lease.token}` : undefined;
    return {
      url,
      token: lease.token,
      ...(cdpUrl ? { cdpUrl } : {}),
      startedAt: lease.startedAt.toISOString(),
      page: lease.before,
    };
  }

  private baseUrl(address: AddressInfo): string {
    if (this.options.publicUrl) return this.options.publicUrl.replace(/\/+$/, '');
    const host = this.options.host ?? '127.0.0.1';
    const named = host === '0.0.0.0' || host === '::' ? os.hostname() : host;
    return `http://${named.includes(':') ? `[${named}]` : named}:${address.port}`;
  }

  private devTools(): Promise<DevToolsEndpoint | undefined> {
    return this.options.devTools?.() ?? Promise.resolve(undefined);
  }

  private listen(): Promise<AddressInfo> {
    this.listening ??= new Promise<AddressInfo>((resolve, reject) => {
      const server = http.createServer((req, res) => void this.onRequest(req, res));
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        void this.onUpgrade(req, socket, head).catch(() => socket.destroy());
      });
      const host = this.options.host ?? '127.0.0.1';
      const port = this.options.port ?? 0;
      server.once('error', (err) => {
        this.listening = undefined;
        reject(new TakeoverError(`The takeover endpoint cannot listen on ${host}:${port}: ${err.message}`));
      });
      server.listen(port, host, () => {
        this.server = server;
        const address = server.address() as AddressInfo;
        this.options.log?.(`takeover endpoint listening on ${this.baseUrl(address)}`);
        resolve(address);
      });
    });
    return this.listening;
  }

  /** Whether the request may use the lease it names: the lease is live and the token is its own. */
  private access(id: string, token: string | undefined): Access {
    const lease = this.leases.get(id);
    if (lease) {
      if (lease.authorizes(token)) return { ok: true, lease };
      return { ok: false, status: 401, message: 'This takeover needs its token (?token= or Authorization: Bearer).' };
    }
    const ended = this.ended.get(id);
    if (ended?.authorizes(token)) return { ok: false, status: 410, message: 'This takeover has ended.' };
    if (ended) return { ok: false, status: 401, message: 'This takeover needs its token.' };
    return { ok: false, status: 404, message: 'No such takeover.' };
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://takeover');
    const route = routeOf(url);
    if (!route) return reply(res, 404, 'No such takeover endpoint.');
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'Only GET.');
    const access = this.access(route.id, tokenOf(req, url));
    if (!access.ok) return reply(res, access.status, access.message);
    if (route.kind === 'page') {
      const nonce = randomBytes(16).toString('base64');
      res.writeHead(200, {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
        'Content-Security-Policy': viewerPolicy(nonce),
      });
      return void res.end(viewerPage(nonce));
    }
    if (route.kind === 'ws' || route.kind === 'cdp') return reply(res, 426, 'This is a WebSocket endpoint.');
    const devTools = this.options.cdp ? await this.devTools() : undefined;
    if (!devTools) return reply(res, 404, 'Raw CDP is off on this worker (browser.takeoverCdp).');
    const base = this.options.publicUrl?.replace(/\/+$/, '') ?? `http://${req.headers.host ?? 'localhost'}`;
    const wsUrl = `${base.replace(/^http/, 'ws')}/takeover/${route.id}/cdp?token=${access.lease.token}`;
    const info = await versionInfo(devTools, wsUrl).catch(() => undefined);
    if (!info) return reply(res, 502, "The browser's DevTools endpoint did not answer.");
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(info));
  }

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://takeover');
    const route = routeOf(url);
    if (!route || (route.kind !== 'ws' && route.kind !== 'cdp')) return refuseUpgrade(socket, 404, 'No such socket.');
    const access = this.access(route.id, tokenOf(req, url));
    if (!access.ok) return refuseUpgrade(socket, access.status, access.message);
    const { lease } = access;
    if (route.kind === 'ws') {
      return this.sockets.handleUpgrade(req, socket, head, (ws) => lease.addViewer(ws));
    }
    const devTools = this.options.cdp ? await this.devTools() : undefined;
    if (!devTools) return refuseUpgrade(socket, 404, 'Raw CDP is off on this worker (browser.takeoverCdp).');
    tunnelToDevTools(req, socket, head, devTools);
    lease.addTunnel(socket);
  }
}
