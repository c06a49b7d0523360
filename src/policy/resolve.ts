// The private-address rule after DNS: a host name is refused when any of its addresses is not public, so a name that
// points at 127.0.0.1 or 169.254.169.254 is caught as surely as the literal. Answers are cached briefly; the egress
// proxy connects to the very address it checked, so a name that re-resolves elsewhere later (DNS rebinding) cannot
// slip past it.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIpLiteral, nonPublicRange } from '../common/addresses';
import { checkUrl, privateHostReason } from '../contract/url-policy';
import type { LoadKind, UrlPolicy, Verdict } from '../contract/url-policy';

export type ResolvedAddress = { address: string; family: number };
/** Resolves a host name to all its addresses (tests inject a fake). */
export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

export type Resolution = { ok: true; addresses: ResolvedAddress[] } | { ok: false; reason: string };

const CACHE_MS = 30_000;
const CACHE_MAX = 500;

/** Looks host names up (briefly cached) and judges them for denyPrivateAddresses. */
export class HostResolver {
  private readonly cache = new Map<string, { at: number; answer: Promise<Resolution> }>();

  constructor(private readonly lookup: Lookup = systemLookup) {}

  /** The addresses of `host` (a URL hostname: IPv6 in brackets) when all are public, else why not. */
  resolvePublic(host: string): Promise<Resolution> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (isIpLiteral(bare)) {
      const reason = privateHostReason(host);
      return Promise.resolve(reason ? { ok: false, reason } : { ok: true, addresses: [literal(bare)] });
    }
    const reason = privateHostReason(host);
    if (reason) return Promise.resolve({ ok: false, reason });
    const hit = this.cache.get(host);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.answer;
    const answer = this.judge(host);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(host, { at: Date.now(), answer });
    return answer;
  }

  private async judge(host: string): Promise<Resolution> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.lookup(host);
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'lookup failed';
      return { ok: false, reason: `${host} could not be resolved (${code}); denyPrivateAddresses needs its address` };
    }
    if (addresses.length === 0) return { ok: false, reason: `${host} has no address` };
    for (const { address } of addresses) {
      const range = nonPublicRange(address);
      if (range)
        return { ok: false, reason: `${host} resolves to ${address}, a ${range} address (denyPrivateAddresses)` };
    }
    return { ok: true, addresses };
  }

  /** `checkUrl`, then (with denyPrivateAddresses) the host's addresses. */
  async check(policy: UrlPolicy, url: string, kind: LoadKind = 'document'): Promise<Verdict> {
    const verdict = checkUrl(policy, url, kind);
    if (!verdict.ok || !policy.denyPrivateAddresses) return verdict;
    const parsed = new URL(url);
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol)) return verdict;
    const resolution = await this.resolvePublic(parsed.hostname);
    return resolution.ok ? verdict : { ok: false, reason: resolution.reason };
  }
}

function literal(address: string): ResolvedAddress {
  return { address, family: address.includes(':') ? 6 : 4 };
}
