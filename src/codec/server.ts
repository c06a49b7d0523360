// The codec server: POST /encode and /decode in the Temporal codec-server JSON protocol, so the Web UI and the
// `temporal` CLI show decrypted payloads. CORS for the UI's origins only; a bind beyond loopback needs a bearer token.
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { PayloadCodec } from '@temporalio/common';
import { PayloadJsonError, payloadsFromJson, payloadsToJson } from './json-payloads';

export const DEFAULT_UI_ORIGINS: readonly string[] = ['http://127.0.0.1:8233', 'http://localhost:8233'];
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Default 127.0.0.1. Any other address needs `token`. */
  host?: string;
  /** Default 8888; 0 picks a free port. */
  port?: number;
  /** When set, every POST needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Browser origins allowed to call (the Web UI's); requests without an Origin (CLI, curl) are not affected. */
  uiOrigins?: readonly string[];
  log?: (line: string) => void;
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

export class CodecServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === 'localhost' || bare === '::1') return true;
  return net.isIPv4(bare) && bare.startsWith('127.');
}

const digest = (s: string) => createHash('sha256').update(s).digest();

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new PayloadJsonError(`the body is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const host = opts.host ?? '127.0.0.1';
  const origins = new Set(opts.uiOrigins ?? DEFAULT_UI_ORIGINS);
  const log = opts.log ?? (() => undefined);
  if (!opts.token && !isLoopbackHost(host)) {
    throw new CodecServerError(
      `the codec server decrypts for anyone who can reach it: bound to ${host} it needs --token (or CUA_CODEC_SERVER_TOKEN)`,
    );
  }
  if (origins.has('*') && !opts.token) {
    throw new CodecServerError(
      "--ui-origin '*' needs a token: without one any web page you open could decrypt through it",
    );
  }
  const expected = opts.token ? digest(opts.token) : undefined;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      const json = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { ...(json ? { 'Content-Type': 'application/json' } : {}), ...headers });
      res.end(json);
    };
    if (origin !== undefined) {
      if (!origins.has(origin) && !origins.has('*')) return send(403, { error: `origin ${origin} is not allowed` });
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      return send(204, undefined, {
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Content-Type, X-Namespace, Authorization',
        'Access-Control-Max-Age': '600',
      });
    }
    const route = /\/(encode|decode)\/?$/.exec(new URL(req.url ?? '/', 'http://codec').pathname)?.[1];
    if (!route) return send(404, { error: 'POST /encode or /decode' });
    if (req.method !== 'POST') return send(405, { error: 'use POST' }, { Allow: 'POST, OPTIONS' });
    if (expected) {
      const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (!given || !timingSafeEqual(digest(given.trim()), expected)) {
        return send(
          401,
          { error: 'a valid Authorization: Bearer token is required' },
          { 'WWW-Authenticate': 'Bearer' },
        );
      }
    }
    let payloads;
    try {
      payloads = payloadsFromJson(JSON.parse(await readBody(req)));
    } catch (err) {
      return send(400, { error: err instanceof PayloadJsonError ? err.message : 'the body is not valid JSON' });
    }
    try {
      const out = route === 'encode' ? await opts.codec.encode(payloads) : await opts.codec.decode(payloads);
      send(200, payloadsToJson(out));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(
        `${route} of ${payloads.length} payload(s) for namespace ${req.headers['x-namespace'] ?? '?'} failed: ${message}`,
      );
      send(400, { error: message });
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`codec server error: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CodecServerError(`cannot listen on ${host}:${opts.port ?? 8888}: ${err.code ?? err.message}`)),
    );
    server.listen(opts.port ?? 8888, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${net.isIPv6(host) ? `[${host}]` : host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
