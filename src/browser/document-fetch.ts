// Fetching a document for the URL policy's interception (policy-guard.ts), with redirects off and a cap on its size
// and time. Playwright's own route.fetch reads the whole body into this process with no limit, so one hostile page
// (an endless attachment, a gzip bomb) could fill a shared worker's memory; here the body is streamed, decoded and
// counted, and a response past the cap is cut off. The request is the browser's own: its method, headers and body,
// the context's cookies for the address, sent to the address the policy checked (no second DNS answer).
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import type { Transform } from 'node:stream';
import { mib } from './downloads';

export interface DocumentRequest {
  url: string;
  method: string;
  /** The browser's request headers (names in lower case); cookie and host are set here. */
  headers: Record<string, string>;
  body?: Buffer | null;
  /** The `Cookie` header value the browser would send (the context's cookies for the address), or ''. */
  cookie: string;
}

export interface DocumentLimits {
  /** Most bytes of (decoded) body kept; a larger response fails with DocumentTooLargeError. */
  maxBytes: number;
  /** Most time for the whole exchange; past it the fetch fails with a timeout. */
  timeoutMs: number;
  /** Where to connect (the address the policy judged); default: the URL's host, looked up as usual. */
  connectTo?: string;
}

export type FetchedDocument =
  /** `setCookie`: the hop's Set-Cookie headers, one a line (the browser must still get them). */
  | { kind: 'redirect'; status: number; location: string; setCookie: string }
  | { kind: 'response'; status: number; headers: Record<string, string>; body: Buffer };

/** A document larger than the cap; its message says so in the model's terms. */
export class DocumentTooLargeError extends Error {
  override name = 'DocumentTooLargeError';
}

const isRedirect = (status: number): boolean => status >= 300 && status < 400 && status !== 304;

/** Request headers not passed on: set here, or hop-by-hop. */
const DROPPED_REQUEST = new Set(['host', 'cookie', 'connection', 'keep-alive', 'proxy-connection', 'content-length']);
/** Response headers not passed to the browser: they describe the wire form, which the browser gets decoded. */
const DROPPED_RESPONSE = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function decoder(encoding: string | undefined): Transform | null {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

export function fetchDocument(req: DocumentRequest, limits: DocumentLimits): Promise<FetchedDocument> {
  const url = new URL(req.url);
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (!DROPPED_REQUEST.has(name.toLowerCase()) && !name.startsWith(':')) headers[name] = value;
  }
  headers['host'] = url.host;
  // Only encodings decoded here (the browser would also offer zstd).
  headers['accept-encoding'] = 'gzip, deflate, br';
  if (req.cookie) headers['cookie'] = req.cookie;
  if (req.body && req.body.length > 0) headers['content-length'] = String(req.body.length);

  return new Promise<FetchedDocument>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, value?: FetchedDocument) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        request.destroy();
        reject(error);
      } else resolve(value as FetchedDocument);
    };
    const options: https.RequestOptions = {
      method: req.method,
      host: limits.connectTo ?? hostname,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      ...(secure && !net.isIP(hostname) ? { servername: hostname } : {}),
    };
    const request = (secure ? https : http).request(options, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (isRedirect(status) && location !== undefined) {
        res.resume();
        const setCookie = (res.headers['set-cookie'] ?? []).join('\n');
        finish(null, { kind: 'redirect', status, location, setCookie });
        request.destroy();
        return;
      }
      const decode = decoder(res.headers['content-encoding']);
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined || DROPPED_RESPONSE.has(name)) continue;
        if (name === 'content-encoding' && decode) continue;
        out[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const body = decode ? res.pipe(decode) : res;
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) {
          finish(new DocumentTooLargeError(`the response is larger than ${mib(limits.maxBytes)}, the download limit`));
          res.destroy();
          decode?.destroy();
          return;
        }
        chunks.push(chunk);
      });
      body.once('end', () => finish(null, { kind: 'response', status, headers: out, body: Buffer.concat(chunks) }));
      body.once('error', (error: Error) => finish(error));
      res.once('aborted', () => finish(new Error('ECONNRESET: the server closed the connection mid-response')));
    });
    const timer = setTimeout(
      () => finish(new Error(`Timeout: no complete answer within ${Math.round(limits.timeoutMs / 1000)} s`)),
      limits.timeoutMs,
    );
    request.once('error', (error) => finish(error));
    request.end(req.body && req.body.length > 0 ? req.body : undefined);
  });
}
