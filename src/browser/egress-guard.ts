// The egress guard of one browser context: once a secret is typed into it (arm), every request and WebSocket leaving
// the context until it closes is checked, and one that carries a typed value (secret-traces.ts) to a host the secret
// is not bound to is aborted before it is sent. Requests that carry none fall through untouched to the URL policy's
// routing; a context where no secret was typed has no route of the guard's at all, so it pays nothing.
// Paths a route does not see are closed in an armed context: service workers (registration refused, registered
// ones unregistered), WebRTC (its constructors removed), DNS prefetch and preconnect (switched off, their link
// elements dropped). docs/security.md says what stays out of reach (a value the page hashes or encrypts first).
import type { BrowserContext, Route, WebSocketRoute } from 'playwright';
import type { TypedSecret } from '../agent/secrets';
import { boundTo, carriedSecrets, leakedSecret, messageSecrets, requestHost, watch } from './secret-traces';
import type { WatchedSecret } from './secret-traces';

/** A request the guard stopped: the secret's name and the host, never the value. */
export interface EgressRefusal {
  secret: string;
  host: string;
  /** The hosts the secret may go to. */
  bound: readonly string[];
  what: 'request' | 'WebSocket message' | 'WebSocket';
}

/** The one line the model reads (and the run folder keeps) for a refusal. */
export function refusalLine(r: EgressRefusal): string {
  return (
    `the page tried to send secret ${r.secret} to ${r.host} (a ${r.what}), a host it is not bound to ` +
    `(only ${r.bound.join(', ')}); it was blocked and nothing was sent`
  );
}

/** What an armed context runs in each new document, before the page's own scripts. */
export const ARMED_PAGE_SCRIPT = `(() => {
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceTransport']) {
    try { Object.defineProperty(globalThis, name, { value: undefined, configurable: false, writable: false }); } catch {}
  }
  if (self.ServiceWorkerContainer) {
    ServiceWorkerContainer.prototype.register = () => Promise.reject(new DOMException('service workers are blocked here', 'NotAllowedError'));
    navigator.serviceWorker.getRegistrations().then((all) => all.forEach((r) => r.unregister())).catch(() => {});
  }
  if (typeof document === 'undefined') return;
  const off = () => {
    const meta = document.createElement('meta');
    meta.httpEquiv = 'x-dns-prefetch-control';
    meta.content = 'off';
    (document.head || document.documentElement)?.prepend(meta);
  };
  const drop = (node) => {
    if (node.nodeName === 'LINK' && /(^|\\s)(dns-prefetch|preconnect)(\\s|$)/i.test(node.rel || '')) node.remove();
  };
  if (document.documentElement) off(); else document.addEventListener('readystatechange', off, { once: true });
  new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach(drop))).observe(document, {
    childList: true,
    subtree: true,
  });
  document.querySelectorAll('link').forEach(drop);
})();`;

export class EgressGuard {
  private readonly secrets = new Map<string, WatchedSecret>();
  private refusals: EgressRefusal[] = [];
  private armed = false;

  constructor(private readonly context: BrowserContext) {}

  /** Whether a secret was typed into this context (from then on every request is checked). */
  get isArmed(): boolean {
    return this.armed;
  }

  /** Watches for these values from now on; the first call installs the routes and closes the unrouted paths. */
  async arm(typed: readonly TypedSecret[]): Promise<void> {
    for (const t of typed) this.secrets.set(`${t.name}\u0000${t.value}`, watch(t));
    if (this.armed || typed.length === 0) return;
    this.armed = true;
    await this.context.addInitScript({ content: ARMED_PAGE_SCRIPT });
    const frames = this.context.pages().flatMap((page) => page.frames());
    await Promise.all(frames.map((frame) => frame.evaluate(ARMED_PAGE_SCRIPT).catch(() => undefined)));
    // Registered after the URL policy's route and the journal's, so it runs first and falls back to them.
    await this.context.route('**/*', (route) => this.check(route));
    await this.context.routeWebSocket(/.*/, (ws) => this.checkSocket(ws));
  }

  /** The values still worth guarding (a one-time code is dropped once it has expired). */
  private watched(): WatchedSecret[] {
    const now = Date.now();
    for (const [key, s] of this.secrets)
      if (s.expiresAtMs !== undefined && s.expiresAtMs < now) this.secrets.delete(key);
    return [...this.secrets.values()];
  }

  /** Refusals since the last call, oldest first. */
  takeRefusals(): EgressRefusal[] {
    return this.refusals.splice(0);
  }

  private refuse(secret: WatchedSecret, host: string, what: EgressRefusal['what']): void {
    this.refusals.push({ secret: secret.name, host, bound: secret.hosts, what });
    if (this.refusals.length > 50) this.refusals.splice(0, this.refusals.length - 50);
  }

  private async check(route: Route): Promise<void> {
    const request = route.request();
    const url = request.url();
    let carried: WatchedSecret[];
    try {
      // The headers the page can set (what `headers()` holds without a round trip; cookies are the host's own).
      carried = carriedSecrets(this.watched(), { url, headers: request.headers(), body: request.postDataBuffer() });
    } catch {
      return route.abort('blockedbyclient').catch(() => undefined); // fail closed
    }
    if (carried.length === 0) return route.fallback();
    const host = requestHost(url) ?? url;
    const leak = carried.find((s) => !boundTo(s, host));
    if (leak) {
      this.refuse(leak, host, 'request');
      return route.abort('blockedbyclient');
    }
    return request.resourceType() === 'document' ? route.fallback() : this.fetchWithoutRedirects(route);
  }

  /**
   * A sub-resource request that takes a value to its own host: Chromium would follow its redirects without showing the
   * hops, so it is fetched here, redirects off, and a Location that would carry the value to another host is refused
   * (an open redirect on the bound host). Documents' hops are the URL policy's routing's (each hop a new request).
   */
  private async fetchWithoutRedirects(route: Route): Promise<void> {
    const response = await route.fetch({ maxRedirects: 0 });
    const location = response.headers()['location'];
    if (response.status() >= 300 && response.status() < 400 && location) {
      const next = new URL(location, route.request().url()).href;
      const leak = leakedSecret(this.watched(), { url: next, headers: {} });
      if (leak) {
        this.refuse(leak, requestHost(next) ?? next, 'request');
        return route.abort('blockedbyclient');
      }
    }
    return route.fulfill({ response });
  }

  private checkSocket(ws: WebSocketRoute): void {
    const url = ws.url();
    const host = requestHost(url) ?? url;
    const inUrl = leakedSecret(this.watched(), { url, headers: {} });
    if (inUrl) {
      this.refuse(inUrl, host, 'WebSocket');
      void ws.close({ code: 1008, reason: 'blocked by policy' }).catch(() => undefined);
      return;
    }
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const leak = messageSecrets(
        this.watched().filter((s) => !boundTo(s, host)),
        message,
      )[0];
      if (leak) return this.refuse(leak, host, 'WebSocket message');
      server.send(message);
    });
    server.onMessage((message) => ws.send(message));
  }
}
