// IP address ranges a hosted worker's browser must not reach: loopback, private, link-local (cloud metadata at
// 169.254.169.254), carrier-grade NAT, multicast and other non-public ranges, in IPv4 and IPv6 (with the IPv6 forms
// that embed an IPv4 address). Pure (no node:net): the workflow sandbox imports the URL policy that uses it
// (src/contract/url-policy.ts).

/** A parsed address: IPv4 as one 32-bit number, IPv6 as eight 16-bit groups. */
type Parsed = { v: 4; n: number } | { v: 6; groups: number[] };

/** Dotted-quad IPv4 (the form the URL parser and DNS give; `0x7f.1` etc. are normalised by `new URL` first). */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    n = n * 256 + octet;
  }
  return n;
}

/** IPv6 text (`::1`, `fe80::1%eth0`, `::ffff:127.0.0.1`, with or without brackets) as eight groups. */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  s = s.replace(/%.*$/, ''); // zone id
  if (!s.includes(':')) return undefined;
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    // An embedded IPv4 tail (::ffff:127.0.0.1) becomes its two 16-bit groups.
    const v4 = parseIPv4(last);
    if (v4 === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groupsOf(halves[0] ?? '');
  const rest = halves.length === 2 ? groupsOf(halves[1] ?? '') : [];
  if (!head || !rest) return undefined;
  const explicit = head.length + rest.length;
  if (halves.length === 1) return explicit === 8 ? head : undefined;
  if (explicit > 7) return undefined;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest];
}

function parse(text: string): Parsed | undefined {
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return { v: 4, n: v4 };
  const groups = parseIPv6(text);
  return groups ? { v: 6, groups } : undefined;
}

/** True when `text` is an IPv4 or IPv6 address literal (brackets allowed). */
export function isIpLiteral(text: string): boolean {
  return parse(text) !== undefined;
}

/** IPv4 ranges that are not the public internet: [first address, prefix length, what it is]. */
const V4_RANGES: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, '"this" network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

function v4Range(n: number): string | undefined {
  for (const [start, bits, what] of V4_RANGES) {
    const base = parseIPv4(start) ?? 0;
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return what;
  }
  return undefined;
}

function v6Range(g: number[]): string | undefined {
  const at = (i: number): number => g[i] ?? 0;
  const zeroUpTo = (k: number): boolean => g.slice(0, k).every((x) => x === 0);
  const embedded = (hi: number, lo: number): string | undefined => v4Range(at(hi) * 65536 + at(lo));
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && at(7) === 1) return 'loopback';
  if (zeroUpTo(5) && at(5) === 0xffff) return embedded(6, 7) ?? undefined; // IPv4-mapped
  if (zeroUpTo(6)) return embedded(6, 7) ?? 'IPv4-compatible'; // deprecated ::a.b.c.d
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(6, 7); // NAT64
  if (at(0) === 0x2002) return embedded(1, 2); // 6to4
  if ((at(0) & 0xfe00) === 0xfc00) return 'unique local (private)';
  if ((at(0) & 0xffc0) === 0xfe80) return 'link-local';
  if ((at(0) & 0xffc0) === 0xfec0) return 'site-local';
  if ((at(0) & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

/**
 * What kind of non-public address `text` is ("loopback", "private", "link-local (cloud metadata)", …), or undefined
 * for a public address or text that is no IP address.
 */
export function nonPublicRange(text: string): string | undefined {
  const ip = parse(text);
  if (!ip) return undefined;
  return ip.v === 4 ? v4Range(ip.n) : v6Range(ip.groups);
}

/** Host names that are loopback by definition (Chromium answers `*.localhost` itself, without DNS). */
export function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}
