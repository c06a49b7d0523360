// The URL policy inside one browser context. Addresses the agent asks for are checked before the browser is sent
// there (`admit`). When the policy restricts the web at all, every request is intercepted: documents (pages, frames,
// popups, form posts, downloads) meet every rule, other requests the deny rules. Chromium follows redirects without
// showing the hops to interception, so a document is fetched here with redirects off (document-fetch.ts: at the
// address the policy checked, its size and time capped), each Location is checked before anything is sent to it, and
// an allowed hop is handed to the browser as a tiny page that moves on to it (so the next hop is intercepted too).
// With deny rules and a local browser, an egress proxy (egress-proxy.ts) also checks every connection at the address
// it connects to. Committed pages are checked once more (`watch`), downloads too.
// Refusals are recorded; the environment turns a refused page into a PolicyBlockedError the model is told about.
import type { BrowserContext, BrowserContextOptions, Page, Request, Route } from 'playwright';
import { HostResolver } from '../policy/resolve';
import type { Lookup } from '../policy/resolve';
import { checkUrl, DEFAULT_URL_POLICY, restrictsWeb } from '../contract/url-policy';
import type { LoadKind, UrlPolicy, Verdict } from '../contract/url-policy';
import { DocumentTooLargeError, fetchDocument } from './document-fetch';
import { DEFAULT_DOWNLOAD_LIMITS } from './downloads';
import type { FetchedDocument } from './document-fetch';
import { startEgressProxy } from './egress-proxy';
import type { EgressDecision, EgressProxy } from './egress-proxy';
import { PolicyBlockedError } from './errors';

/**
 * A refused load: `page` a top-level document (the page, a popup, a download), `frame` an iframe's document,
 * `request` anything else. `page` is the tab it happened in, when known (a popup's first load has none yet).
 */
export type BlockedLoad = { url: string; reason: string; kind: 'page' | 'frame' | 'request'; page?: Page };

export type GuardOptions = {
  /** Route the context through an egress proxy when the policy has deny rules (the browser must reach 127.0.0.1). */
  egressProxy?: boolean;
  /** Host name lookup (tests inject one). */
  lookup?: Lookup;
  /** Most bytes of one document fetched under interception (default: the download cap's default, 100 MiB). */
  maxDocumentBytes?: number;
};

/** More hops than this in one chain is refused, as Chromium refuses it (ERR_TOO_MANY_REDIRECTS). */
const MAX_REDIRECTS = 20;
/** Cap on fetching one document ourselves; past it the load fails as timed out. */
const FETCH_TIMEOUT_MS = 60_000;
/** Cap on one document's (decoded) size when none is given: the download cap's default. */
const MAX_DOCUMENT_BYTES = DEFAULT_DOWNLOAD_LIMITS.maxBytes;
/** Pages of the browser's own making that no policy applies to. */
const INTERNAL_SCHEMES = new Set(['about:', 'data:', 'blob:', 'chrome-error:', 'chrome-extension:', 'javascript:']);

function isInternalUrl(url: string): boolean {
  if (url === '') return true;
  const colon = url.indexOf(':');
  return colon > 0 && INTERNAL_SCHEMES.has(url.slice(0, colon + 1).toLowerCase());
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page shown where a refused document would have been (an iframe, or a page that redirected to it). */
export function blockedPageHtml(url: string, reason: string): string {
  return (
    '<!doctype html><html><head><meta charset="utf-8"><title>Blocked by policy</title></head>' +
    '<body style="font:16px sans-serif;margin:24px"><h1>Blocked by policy</h1>' +
    `<p>The browser may not open <code>${escapeHtml(url)}</code>:</p><p>${escapeHtml(reason)}</p></body></html>`
  );
}

/**
 * A redirect hop handed to the browser: a page that replaces itself with the next address once loaded (so its own
 * load completes, which waiting for a page relies on, also when the next address turns out to be a download).
 */
function redirectStubHtml(next: string): string {
  const target = JSON.stringify(next).replace(/</g, '\\u003c');
  return (
    '<!doctype html><html><head><meta charset="utf-8"><title>Redirecting</title></head>' +
    `<body><script>addEventListener('load', () => location.replace(${target}))</script></body></html>`
  );
}

/** Where a document request loads: the top level of a tab or an iframe. */
function origin(request: Request): { kind: 'page' | 'frame'; page?: Page } {
  try {
    const frame = request.frame();
    return { kind: frame.parentFrame() ? 'frame' : 'page', page: frame.page() };
  } catch {
    return { kind: 'page' }; // a popup's first navigation is issued before its frame exists
  }
}

/** The net error a failed fetch of ours stands for, so the browser reports the failure as it would have. */
function abortCode(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  if (/ECONNREFUSED|statusCode=5\d\d|502/.test(text)) return 'connectionrefused';
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return 'namenotresolved';
  if (/ECONNRESET|socket hang up/.test(text)) return 'connectionreset';
  if (/[Tt]imeout|ETIMEDOUT/.test(text)) return 'timedout';
  return 'failed';
}

/**
 * An egress proxy's decision on a connection to `url` (a tunnel's is `https://host:port/`): the policy's rules for
 * `kind`, and the address to connect to — the very one checked when private addresses are denied, so a second DNS
 * answer gets no chance. The browser's proxy checks `request`s (documents go through the guard's routing); the
 * desktop's, which cannot tell a page from its images, checks everything as a `document`.
 */
export async function egressDecision(
  policy: UrlPolicy,
  resolver: HostResolver,
  url: string,
  kind: 'request' | 'document',
): Promise<EgressDecision> {
  const verdict = checkUrl(policy, url, kind);
  if (!verdict.ok) return verdict;
  const host = new URL(url).hostname;
  if (!policy.denyPrivateAddresses) return { ok: true, address: host.replace(/^\[(.*)\]$/, '$1') };
  const resolution = await resolver.resolvePublic(host);
  if (!resolution.ok) return resolution;
  return { ok: true, address: resolution.addresses[0]?.address ?? host };
}

export class PolicyGuard {
  private blocks: BlockedLoad[] = [];
  /** Addresses we sent the browser on to from a redirect, with the hop count of their chain. */
  private readonly hops = new Map<string, number>();
  /** The context attached (its cookies go with the documents fetched here). */
  private context?: BrowserContext;

  constructor(
    readonly policy: UrlPolicy = DEFAULT_URL_POLICY,
    private readonly resolver: HostResolver = new HostResolver(),
    private readonly proxy?: EgressProxy,
    private readonly maxDocumentBytes = MAX_DOCUMENT_BYTES,
  ) {}

  /** A guard for one session; starts its egress proxy when asked for and the policy has deny rules. */
  static async open(policy: UrlPolicy, options: GuardOptions = {}): Promise<PolicyGuard> {
    const resolver = new HostResolver(options.lookup);
    const wantsProxy = policy.denyPrivateAddresses || policy.denyHosts.length > 0;
    const maxBytes = options.maxDocumentBytes ?? MAX_DOCUMENT_BYTES;
    if (!options.egressProxy || !wantsProxy) return new PolicyGuard(policy, resolver, undefined, maxBytes);
    const holder: { guard?: PolicyGuard } = {};
    const proxy = await startEgressProxy({
      decide: (url) => egressDecision(policy, resolver, url, 'request'),
      onBlocked: (url, reason) => holder.guard?.record({ url, reason, kind: 'request' }),
    });
    holder.guard = new PolicyGuard(policy, resolver, proxy, maxBytes);
    return holder.guard;
  }

  /** Whether this guard routes every request of its context (the policy restricts the web). */
  get intercepts(): boolean {
    return restrictsWeb(this.policy);
  }

  /** Options the session's browser context must be created with. */
  contextOptions(): Pick<BrowserContextOptions, 'permissions' | 'proxy' | 'serviceWorkers'> {
    if (!restrictsWeb(this.policy)) return {};
    return {
      // A service worker answers navigations without the network: no interception would see them.
      serviceWorkers: 'block',
      ...(this.proxy ? { proxy: { server: this.proxy.url } } : {}),
      // Documents we fulfil carry no server address, so Chromium's Local Network Access takes them for public pages
      // and blocks their requests to private and loopback hosts (an intranet page's assets on a sibling host). Where
      // the policy allows private addresses, the policy decides, as without interception; where it denies them, the
      // rule and the egress proxy refuse such requests themselves.
      ...(this.policy.denyPrivateAddresses ? {} : { permissions: ['local-network-access'] }),
    };
  }

  /** Starts intercepting the context's requests (only when the policy restricts the web). */
  async attach(context: BrowserContext): Promise<void> {
    if (!restrictsWeb(this.policy)) return;
    this.context = context;
    await context.route('**/*', async (route) => {
      try {
        await this.handle(route);
      } catch {
        await route.abort('failed').catch(() => undefined); // fail closed
      }
    });
  }

  /** A URL's verdict: its text, then (private-address rule) its host's addresses. */
  check(url: string, kind: LoadKind = 'document'): Promise<Verdict> {
    // With the egress proxy, other requests' addresses are checked where they connect: no lookup here.
    if (kind === 'request' && this.proxy) return Promise.resolve(checkUrl(this.policy, url, kind));
    return this.resolver.check(this.policy, url, kind);
  }

  /** Before the browser is sent to `url` (visit_url, web_search, the start page): throws if it is refused. */
  async admit(url: string): Promise<void> {
    const verdict = await this.check(url, 'document');
    if (!verdict.ok) throw new PolicyBlockedError(url, verdict.reason);
  }

  /** Throws if the page at `url` may not be read (it got there despite the policy). */
  assertReadable(url: string): void {
    if (isInternalUrl(url)) return;
    const verdict = checkUrl(this.policy, url, 'document');
    if (!verdict.ok) throw new PolicyBlockedError(url, verdict.reason);
  }

  /** Whether a download from `url` may be kept; a refused one is recorded as a refused page. */
  allowsDownload(url: string): boolean {
    if (isInternalUrl(url)) return true;
    const verdict = checkUrl(this.policy, url, 'document');
    if (!verdict.ok) this.record({ url, reason: verdict.reason, kind: 'page' });
    return verdict.ok;
  }

  /** The last check, on committed top-level pages: one the policy refuses is left for about:blank at once. */
  watch(page: Page): void {
    page.on('framenavigated', (frame) => {
      if (frame !== page.mainFrame()) return;
      const url = frame.url();
      if (isInternalUrl(url)) return;
      const verdict = checkUrl(this.policy, url, 'document');
      if (verdict.ok) return;
      this.record({ url, reason: verdict.reason, kind: 'page', page });
      void page.goto('about:blank').catch(() => undefined);
    });
  }

  record(block: BlockedLoad): void {
    this.blocks.push(block);
    if (this.blocks.length > 200) this.blocks.splice(0, this.blocks.length - 200);
  }

  /** Refusals since the last call, oldest first. */
  takeBlocks(): BlockedLoad[] {
    return this.blocks.splice(0);
  }

  /** True when a top-level document was refused since the last `takeBlocks`. */
  get pageBlocked(): boolean {
    return this.blocks.some((b) => b.kind === 'page');
  }

  /** True when a tab with no page yet (a popup's first load) was refused since the last `takeBlocks`. */
  get popupRefused(): boolean {
    return this.blocks.some((b) => b.kind === 'page' && b.page === undefined);
  }

  /** A popup that never got past about:blank because its first document was refused. */
  refusedPopup(popup: Page): boolean {
    const blank = popup.url() === '' || popup.url() === 'about:blank';
    return blank && this.blocks.some((b) => b.kind === 'page' && (b.page === undefined || b.page === popup));
  }

  async close(): Promise<void> {
    await this.proxy?.close();
  }

  private async handle(route: Route): Promise<void> {
    const request = route.request();
    const url = request.url();
    if (request.resourceType() !== 'document') {
      const verdict = await this.check(url, 'request');
      if (verdict.ok) return route.fallback();
      this.record({ url, reason: verdict.reason, kind: 'request' });
      return route.abort('blockedbyclient');
    }
    const where = origin(request);
    const hop = this.takeHop(url);
    const refuse = (reason: string): Promise<void> => {
      this.record({ url, reason, ...where });
      // A tab's own navigation is cancelled (it stays on its page); a frame or a redirected page shows why.
      if (where.kind === 'page' && hop === 0) return route.abort('aborted');
      return route.fulfill({ status: 403, contentType: 'text/html', body: blockedPageHtml(url, reason) });
    };
    if (hop > MAX_REDIRECTS) return refuse(`more than ${MAX_REDIRECTS} redirects`);
    // Only http(s) answers redirect: an allowed file: page is loaded by the browser itself.
    if (!/^https?:/i.test(url)) {
      const verdict = await this.check(url, 'document');
      return verdict.ok ? route.fallback() : refuse(verdict.reason);
    }
    // One verdict with the address to fetch from: the one judged when private addresses are denied (a second DNS
    // answer gets no chance).
    const verdict = await egressDecision(this.policy, this.resolver, url, 'document');
    if (!verdict.ok) return refuse(verdict.reason);
    let response: FetchedDocument;
    try {
      const cookies = (await this.context?.cookies(url)) ?? [];
      response = await fetchDocument(
        {
          url,
          method: request.method(),
          headers: request.headers(),
          body: request.postDataBuffer(),
          cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '),
        },
        {
          maxBytes: this.maxDocumentBytes,
          timeoutMs: FETCH_TIMEOUT_MS,
          connectTo: verdict.address,
        },
      );
    } catch (error) {
      if (error instanceof DocumentTooLargeError) return refuse(error.message);
      return route.abort(abortCode(error));
    }
    if (response.kind === 'response') {
      return route.fulfill({ status: response.status, headers: response.headers, body: response.body });
    }
    // The cookies the hop set reach the browser with the page that stands for it.
    const hopHeaders: Record<string, string> = {
      'content-type': 'text/html',
      ...(response.setCookie ? { 'set-cookie': response.setCookie } : {}),
    };
    let next: string;
    try {
      next = new URL(response.location, url).href;
    } catch {
      return route.fulfill({ status: response.status, headers: hopHeaders, body: '' });
    }
    const hopVerdict = await this.check(next, 'document');
    if (!hopVerdict.ok) {
      // The refused address is never contacted; the page that sent the browser there says why.
      this.record({ url: next, reason: hopVerdict.reason, ...where });
      return route.fulfill({ status: 403, headers: hopHeaders, body: blockedPageHtml(next, hopVerdict.reason) });
    }
    this.rememberHop(next, hop + 1);
    return route.fulfill({ status: 200, headers: hopHeaders, body: redirectStubHtml(next) });
  }

  private takeHop(url: string): number {
    const hop = this.hops.get(url) ?? 0;
    this.hops.delete(url);
    return hop;
  }

  private rememberHop(url: string, hop: number): void {
    if (this.hops.size > 100) this.hops.clear();
    this.hops.set(url, hop);
  }
}
