// Host patterns (the URL policy's host lists, src/contract/url-policy.ts, and the secrets' hosts): `example.com` (that
// host), `*.example.com` (its subdomains at any depth, not example.com itself), either with an optional `:port`
// (without one, every port matches), IPv4 or `[IPv6]` hosts. Patterns are normalised the way the URL parser
// normalises a URL's host (lower case, punycode, IPv4 forms such as `0x7f.1`, compressed IPv6), so a pattern and a
// URL compare like for like. Pure.

export type HostPattern = { wildcard: boolean; host: string; port?: number };

const PATTERN = /^(\*\.)?(\[[0-9a-fA-F:.]+\]|[^:/\s[\]*]+)(?::(\d{1,5}))?$/;

/** The host as `new URL` would normalise it, or undefined when it is no valid host. */
function normaliseHost(host: string): string | undefined {
  try {
    const url = new URL(`http://${host}/`);
    return url.hostname === '' ? undefined : url.hostname.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/** Parses a pattern; undefined when it is not one. */
export function parseHostPattern(text: string): HostPattern | undefined {
  const m = PATTERN.exec(text.trim());
  if (!m) return undefined;
  const host = normaliseHost(m[2] ?? '');
  if (host === undefined) return undefined;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  if (m[1] && host.startsWith('[')) return undefined; // *.[::1] means nothing
  return { wildcard: m[1] !== undefined, host, ...(port === undefined ? {} : { port }) };
}

/** The canonical text of a pattern (what the policy stores and reports). */
export function formatHostPattern(p: HostPattern): string {
  return `${p.wildcard ? '*.' : ''}${p.host}${p.port === undefined ? '' : `:${p.port}`}`;
}

/** Whether host name `host` (a URL's hostname, normalised) falls in the pattern's host set. */
function hostIn(host: string, p: HostPattern): boolean {
  const h = host.replace(/\.$/, '');
  return p.wildcard ? h.endsWith(`.${p.host}`) : h === p.host;
}

/** Whether a URL's host and effective port match the pattern. */
export function matchesHost(p: HostPattern, host: string, port: number): boolean {
  return hostIn(host, p) && (p.port === undefined || p.port === port);
}

/** The host set of `a` is inside that of `b`. */
function hostSubset(a: HostPattern, b: HostPattern): boolean {
  if (!b.wildcard) return !a.wildcard && a.host === b.host;
  return a.host.endsWith(`.${b.host}`) || (a.wildcard && a.host === b.host);
}

/**
 * The pattern matching exactly what both match, or undefined when nothing does. Host sets of two patterns are
 * either nested or disjoint, and ports are "any" or one number, so the intersection is always one pattern.
 */
export function intersectHostPatterns(a: HostPattern, b: HostPattern): HostPattern | undefined {
  const host = hostSubset(a, b) ? a : hostSubset(b, a) ? b : undefined;
  if (!host) return undefined;
  if (a.port !== undefined && b.port !== undefined && a.port !== b.port) return undefined;
  const port = a.port ?? b.port;
  return { wildcard: host.wildcard, host: host.host, ...(port === undefined ? {} : { port }) };
}
