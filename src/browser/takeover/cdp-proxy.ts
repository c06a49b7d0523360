// The raw CDP side of a takeover: an authorised WebSocket upgrade forwarded to Chromium's browser target on its
// loopback DevTools port (the request re-addressed: path, Host; the token's headers left behind), then bytes both
// ways; and /json/version answered with the lease's own WebSocket URL, so `chromium.connectOverCDP` takes either.
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { DevToolsEndpoint } from './devtools';

/** Request headers not passed on to Chromium: the token's, and the ones naming our address instead of its. */
const DROPPED = new Set(['host', 'authorization', 'origin', 'referer']);

/** The upgrade request as Chromium's browser target must see it. */
function forwardedRequest(req: IncomingMessage, endpoint: DevToolsEndpoint): string {
  const lines = [`GET ${endpoint.browserPath} HTTP/1.1`, `Host: 127.0.0.1:${endpoint.port}`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] ?? '';
    if (!DROPPED.has(name.toLowerCase())) lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Connects an authorised upgrade (`socket`, with what was read past its headers in `head`) to the browser target;
 * returns the connection to Chromium. Either side closing closes the other.
 */
export function tunnelToDevTools(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  endpoint: DevToolsEndpoint,
): Duplex {
  const upstream = net.connect(endpoint.port, '127.0.0.1', () => {
    upstream.write(forwardedRequest(req, endpoint));
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
  upstream.on('close', () => socket.destroy());
  socket.on('close', () => upstream.destroy());
  return upstream;
}

/** Chromium's /json/version, with the browser's WebSocket URL replaced by the lease's (`wsUrl`). */
export async function versionInfo(endpoint: DevToolsEndpoint, wsUrl: string): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${endpoint.port}/json/version`, {
    signal: AbortSignal.timeout(5_000),
  });
  const info = (await response.json()) as Record<string, unknown>;
  return { ...info, webSocketDebuggerUrl: wsUrl };
}
