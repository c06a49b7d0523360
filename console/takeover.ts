// The console's live view of a taken-over task (issue 29). The lease (the worker's socket address and its token) lives
// in the workflow's state, so a reloaded page or a restarted console finds it again with a status query. Its token
// stays on the server: the page opens /api/tasks/<id>/live on the console, which checks the person's session like any
// request (plus the Origin, which a browser always sends with a WebSocket), reads the lease from Temporal, and relays
// the messages both ways to the worker's /takeover/<lease>/ws with the token as a Bearer header. The page never sees
// the token, so only a signed-in session can drive the browser, and a hand-back (which ends the lease) ends it all.
// A desktop's lease is noVNC's page on the worker: its token is the VNC password, which noVNC itself must know.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import type { RawData } from 'ws';
import { TaskNotFoundError } from '../client/client';
import type { AgentClient, TaskSnapshot } from '../client/client';
import type { HandbackInput, TakeoverLease } from '../src/contract/task';
import { refuseUpgrade } from '../src/browser/takeover/server';
import { allowedHosts, bearerToken, cookieValue, crossSiteReason, sameSecret, SESSION_COOKIE } from './access';
import type { Sessions } from './access';
import { TASK_ID } from './data';
import { LIVE_CSS, LIVE_JS } from './live-page';

/** What the console's pages see of a lease: never its token (nor raw CDP, an operator's tool). */
export type PublicLease = { leaseId: string; since: string; kind: 'browser' | 'desktop' };

/** A browser lease's URL is the worker's viewer page `/takeover/<id>`; a desktop's is noVNC's `vnc.html`. */
const leaseKind = (lease: TakeoverLease): PublicLease['kind'] =>
  new URL(lease.url).pathname.startsWith('/takeover/') ? 'browser' : 'desktop';

export function publicLease(lease: TakeoverLease): PublicLease {
  return { leaseId: lease.leaseId, since: lease.since, kind: leaseKind(lease) };
}

/** A task's snapshot as the console's JSON shows it: its lease without the secrets. */
export function withoutLeaseSecrets<T extends { snapshot: TaskSnapshot | null }>(detail: T): T {
  const takeover = detail.snapshot?.progress?.takeover;
  if (!detail.snapshot?.progress || !takeover || 'pending' in takeover) return detail;
  const progress = { ...detail.snapshot.progress, takeover: publicLease(takeover) as unknown as TakeoverLease };
  return { ...detail, snapshot: { ...detail.snapshot, progress } };
}

/** The hand-back's input from a request body: the note (optional) and the lease the page showed. */
export function handbackInput(body: Record<string, unknown>): HandbackInput {
  const note = typeof body['note'] === 'string' ? body['note'].trim() : '';
  const leaseId = typeof body['leaseId'] === 'string' ? body['leaseId'] : '';
  return { ...(note ? { note } : {}), ...(leaseId ? { leaseId } : {}) };
}

/** The worker's screencast-and-input socket of a browser lease (its token goes as a header, not in the URL). */
export function leaseSocketUrl(lease: TakeoverLease): string {
  const url = new URL(lease.url);
  url.searchParams.delete('token');
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws`;
  return url.toString();
}

/** noVNC's page of a desktop lease, with its password so it connects at once. */
export function desktopViewUrl(lease: TakeoverLease): string {
  const url = new URL(lease.url);
  url.searchParams.set('password', lease.token);
  return url.toString();
}

const LIVE_PATH = /^\/api\/tasks\/([^/?]+)\/live(?:\?.*)?$/;
/** A page whose socket has this much unsent is behind: frames skip it until it catches up. */
const BACKLOG_BYTES = 4 * 1024 * 1024;

export interface LiveViewOptions {
  agent: AgentClient;
  sessions: Sessions;
  token: string;
  host: string;
  port: () => number;
}

/** The live view's assets, the desktop link, and the WebSocket relay on the console's own server. */
export function addLiveView(app: FastifyInstance, opts: LiveViewOptions): void {
  app.get('/assets/live.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').send(LIVE_JS),
  );
  app.get('/assets/live.css', async (_req, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').send(LIVE_CSS),
  );
  // noVNC does the VNC authentication itself, in the person's browser: the link carries the lease's VNC password.
  // Behind the session like every request; cross-site pages cannot read the answer (no CORS, SameSite cookie).
  app.get('/api/tasks/:id/desktop', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const lease = TASK_ID.test(id) ? await currentLease(opts.agent, id).catch(() => undefined) : undefined;
    if (!lease || leaseKind(lease) !== 'desktop') {
      return reply.code(409).send({ error: `task ${id} has no desktop taken over` });
    }
    return reply.header('cache-control', 'no-store').send({ url: desktopViewUrl(lease) });
  });

  const relay = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy()); // a page that went away while its socket was being set up
    void onUpgrade(relay, opts, req, socket, head).catch((err: unknown) =>
      refuseUpgrade(socket, 502, `the live view failed: ${(err as Error).message.split('\n')[0]}`),
    );
  });
  app.addHook('onClose', async () => {
    for (const ws of relay.clients) ws.terminate();
  });
}

async function currentLease(agent: AgentClient, id: string): Promise<TakeoverLease | undefined> {
  const takeover = (await agent.status(id)).progress?.takeover;
  return takeover && !('pending' in takeover) ? takeover : undefined;
}

/** Why an upgrade may not open the live view (the console's own access rules), or null when it may. */
export function upgradeRefusal(req: IncomingMessage, opts: LiveViewOptions): { code: number; message: string } | null {
  const hosts = allowedHosts(opts.host, opts.port());
  if (hosts && !hosts.has(req.headers.host ?? '')) return { code: 403, message: `unknown Host: ${req.headers.host}` };
  const bearer = bearerToken(req.headers.authorization);
  if (bearer !== undefined) {
    return sameSecret(bearer, opts.token) ? null : { code: 401, message: 'wrong token' };
  }
  if (!opts.sessions.find(cookieValue(req.headers.cookie, SESSION_COOKIE))) {
    return { code: 401, message: 'not signed in: open the link `cua console` printed (it carries the token)' };
  }
  // A browser sends its page's Origin with every WebSocket, and a page of another site may open one to us (a socket
  // has no CORS); SameSite=Strict keeps the cookie from most of them, the Origin check from the rest.
  const origin = req.headers.origin;
  const why = origin ? crossSiteReason({ origin, host: req.headers.host ?? '' }) : 'a socket without an Origin';
  return why ? { code: 403, message: `refused: ${why} cannot open the live view` } : null;
}

async function onUpgrade(
  relay: WebSocketServer,
  opts: LiveViewOptions,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const id = LIVE_PATH.exec(req.url ?? '')?.[1];
  if (id === undefined || !TASK_ID.test(id)) return refuseUpgrade(socket, 404, 'no such socket');
  const refusal = upgradeRefusal(req, opts);
  if (refusal) return refuseUpgrade(socket, refusal.code, refusal.message);
  const lease = await currentLease(opts.agent, id).catch((err: unknown) => {
    if (err instanceof TaskNotFoundError) return null;
    throw err;
  });
  if (lease === null) return refuseUpgrade(socket, 404, `no task ${id}`);
  if (!lease || leaseKind(lease) !== 'browser') {
    return refuseUpgrade(socket, 409, `task ${id} has no browser taken over`);
  }
  const upstream = await openUpstream(lease);
  if (socket.destroyed) return upstream.close(); // the page went away meanwhile
  relay.handleUpgrade(req, socket, head, (page) => pipe(page, upstream));
}

/** Opens the worker's socket of the lease; rejects with its HTTP answer (410: the lease ended) or error. */
function openUpstream(lease: TakeoverLease): Promise<WebSocket> {
  const ws = new WebSocket(leaseSocketUrl(lease), { headers: { authorization: `Bearer ${lease.token}` } });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      reject(new Error(`the worker answered ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
}

/** Relays text messages both ways; either side closing closes the other (a 1012 "connect again" passes through). */
function pipe(page: WebSocket, upstream: WebSocket): void {
  upstream.on('message', (data: RawData, isBinary: boolean) => {
    if (isBinary || page.readyState !== page.OPEN) return;
    const text = String(data);
    if (page.bufferedAmount > BACKLOG_BYTES && text.startsWith('{"type":"frame"')) return;
    page.send(text);
  });
  page.on('message', (data: RawData, isBinary: boolean) => {
    if (!isBinary && upstream.readyState === upstream.OPEN) upstream.send(String(data));
  });
  const closeCode = (code: number) => (code === 1012 ? 1012 : 1000);
  upstream.on('close', (code, reason) => page.close(closeCode(code), reason.toString().slice(0, 120)));
  page.on('close', () => upstream.close());
  upstream.on('error', () => page.terminate());
  page.on('error', () => upstream.terminate());
}
