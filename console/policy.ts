// The URL policy a worker started beside the console gets: its own, with the console's address denied (so a hostile
// page cannot make the agent's browser call the console). A worker in another process needs the same line in its
// config: `urlPolicy.denyHosts` with the patterns `cua console` prints.
import { DEFAULT_URL_POLICY } from '../src/contract/url-policy';
import type { UrlPolicy } from '../src/contract/url-policy';
import type { Config } from '../src/runtime/config';
import { consoleDenyHosts } from './access';

export function denyConsole<C extends Pick<Config, 'urlPolicy'>>(
  config: C,
  host: string,
  port: number,
): C & { urlPolicy: UrlPolicy } {
  const policy = config.urlPolicy ?? DEFAULT_URL_POLICY;
  const denyHosts = [...new Set([...policy.denyHosts, ...consoleDenyHosts(host, port)])];
  return { ...config, urlPolicy: { ...policy, denyHosts } };
}
