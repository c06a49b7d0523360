// A session's egress proxy: every connection the browser makes (pages, frames, redirect hops, images, scripts, XHR,
// WebSockets, and Playwright's own document fetches) goes through it when the URL policy has deny rules. It resolves
// the host once, applies the deny rules (denyHosts, private addresses) to the addresses found, and connects to exactly
// that address: a name that answers differently to a second lookup (DNS rebinding) gets no second chance.
// Plain HTTP arrives as absolute-form requests; HTTPS, WSS and Playwright's fetches arrive as CONNECT tunnels.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

export type EgressDecision = { ok: true; address: string } | { ok: false; reason: string };

export type EgressProxyOptions = {
  /** Decides a connection to `url` (for a tunnel: `https://host:port/`) and picks the address to connect to. */
  decide: (url: string) => Promise<EgressDecision>;
  /** Told about every refused connection. */
  onBlocked: (url: string, reason: string) => void;
  /** Listen on this UNIX socket path instead of 127.0.0.1 (a desktop sandbox reaches it through a bind mount). */
  listen?: { path: string };
};

/** `url` is `http://127.0.0.1:<port>`, or `unix:<path>` when listening on a socket path; close removes the socket. */
export type EgressProxy = { url: string; close(): Promise<void> };

/** Request headers that belong to the hop to the proxy, not to the origin server. */
const HOP_HEADERS = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive'];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function refusal(res: http.ServerResponse, url: string, reason: string): void {
  res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
  res.end(
    `<!doctype html><title>Blocked by policy</title><h1>Blocked by policy</h1>` +
      `<p>${escapeHtml(url)}</p><p>${escapeHtml(reason)}</p>`,
  );
}

async function forward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: EgressProxyOptions,
): Promise<void> {
  let target: URL;
  try {
    target = new URL(req.url ?? '');
    if (target.protocol !== 'http:') throw new Error('not an absolute http URL');
  } catch {
    res.writeHead(400).end('absolute http URLs only');
    return;
  }
  const decision = await options.decide(target.href);
  if (!decision.ok) {
    options.onBlocked(target.href, decision.reason);
    refusal(res, target.href, decision.reason);
    return;
  }
  const headers = { ...req.headers };
  for (const name of HOP_HEADERS) delete headers[name];
  const upstream = http.request(
    {
      host: decision.address,
      port: Number(target.port || 80),
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
      setHost: false,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream connection failed');
    else res.destroy();
  });
  req.pipe(upstream);
}

async function tunnel(req: http.IncomingMessage, client: Duplex, head: Buffer, options: EgressProxyOptions) {
  let target: URL;
  try {
    target = new URL(`https://${req.url ?? ''}/`);
  } catch {
    client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    return;
  }
  const label = `${target.hostname}:${target.port || 443}`;
  const decision = await options.decide(target.href);
  if (!decision.ok) {
    options.onBlocked(label, decision.reason);
    client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    return;
  }
  let established = false;
  const upstream = net.connect(Number(target.port || 443), decision.address, () => {
    established = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => {
    if (!established && client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
    else client.destroy();
  });
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
}

/** Starts a proxy on 127.0.0.1 (a free port), or on `options.listen.path`, for one browser context or desktop. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const sockets = new Set<Duplex>();
  const server = http.createServer((req, res) => void forward(req, res, options).catch(() => res.destroy()));
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => undefined);
    void tunnel(req, client, head, options).catch(() => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (options.listen) server.listen(options.listen.path, resolve);
    else server.listen(0, '127.0.0.1', resolve);
  });
  const url = options.listen
    ? `unix:${options.listen.path}`
    : `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
