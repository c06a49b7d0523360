// The control plane kept out of the agent's reach: the addresses of the servers that run and watch the agent (the
// Temporal frontend and Web UI, the console, the codec server, the metrics endpoint, a trace UI) become denyHosts
// patterns of the worker's URL policy, so neither its browsers nor the desktop sandbox's proxy can load them. An
// address on loopback is denied under each of its loopback names (127.0.0.1, localhost, [::1]), on its port only: the
// rest of loopback stays reachable. Pure: the URL policy's own rules enforce the patterns.
import { isLocalhostName, nonPublicRange } from '../common/addresses';
import { formatHostPattern, parseHostPattern } from '../common/host-patterns';
import type { UrlPolicy } from '../contract/url-policy';

/** The loopback names one local server answers on, besides the one it was given. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** `host` and `port` of an address written as `host:port`, `[v6]:port` or an http(s)/grpc URL; undefined if neither. */
export function parseAddress(text: string): { host: string; port: number } | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `tcp://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  const defaults: Record<string, number> = { 'http:': 80, 'https:': 443 };
  const port = url.port === '' ? defaults[url.protocol] : Number(url.port);
  if (!url.hostname || port === undefined) return undefined;
  return { host: url.hostname, port };
}

/** A loopback host (a name or address) or the unspecified address, which reaches loopback too. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return isLocalhostName(bare) || nonPublicRange(bare) === 'loopback' || bare === '0.0.0.0' || bare === '::';
}

/**
 * The denyHosts patterns for control-plane addresses: each `host:port` (or URL) itself, and for a loopback or
 * unspecified (0.0.0.0) host the same port under every loopback name. Text that is no address is skipped.
 */
export function controlPlanePatterns(addresses: readonly string[]): string[] {
  const out = new Set<string>();
  for (const text of addresses) {
    const address = parseAddress(text.trim());
    if (!address) continue;
    const host = address.host.includes(':') && !address.host.startsWith('[') ? `[${address.host}]` : address.host;
    const hosts = isLoopbackHost(host) ? [host, ...LOOPBACK_NAMES] : [host];
    for (const name of hosts) {
      const pattern = parseHostPattern(`${name}:${address.port}`);
      if (pattern) out.add(formatHostPattern(pattern));
    }
  }
  return [...out];
}

/** `policy` with the control plane's addresses denied too (its own denyHosts kept, first). */
export function denyControlPlane(policy: UrlPolicy, addresses: readonly string[]): UrlPolicy {
  const patterns = controlPlanePatterns(addresses);
  if (patterns.length === 0) return policy;
  return { ...policy, denyHosts: [...new Set([...policy.denyHosts, ...patterns])] };
}
