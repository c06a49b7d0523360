// The URL policy: which addresses the agent's browser may load. A worker configures one (`urlPolicy` in its config),
// a task may narrow it (`urlPolicy` in its input) but never widen it. `checkUrl` decides one URL by its text alone;
// resolving host names for the private-address rule is in src/policy/resolve.ts, enforcement in the browser in
// src/browser/policy-guard.ts and egress-proxy.ts. Pure (zod and the URL parser only): the workflow sandbox imports it.
import { z } from 'zod';
import { isLocalhostName, nonPublicRange } from '../common/addresses';
import { formatHostPattern, intersectHostPatterns, matchesHost, parseHostPattern } from '../common/host-patterns';
import type { HostPattern } from '../common/host-patterns';

/** Schemes a policy can allow for documents; `about:blank` is always allowed, `file:` only with `allowFile`. */
export const URL_SCHEMES = ['http', 'https'] as const;

const HostPatternText = z.string().transform((text, ctx) => {
  const pattern = parseHostPattern(text);
  if (pattern) return formatHostPattern(pattern);
  ctx.addIssue({
    code: 'custom',
    message: `not a host pattern: ${JSON.stringify(text)} (example.com, *.example.com, host:port, [::1])`,
  });
  return z.NEVER;
});

const fields = {
  /** Schemes documents may use (default both); narrowing to ['https'] refuses plain-http pages and redirect hops. */
  schemes: z.array(z.enum(URL_SCHEMES)),
  /** `file:` URLs (local files): off unless the worker turns it on; a task can only turn it off. */
  allowFile: z.boolean(),
  /** When set, documents (pages, frames, popups, redirect hops, downloads) only from hosts matching one of these. */
  allowHosts: z.array(HostPatternText),
  /** Never contacted, by any request (documents and subresources); wins over allowHosts. */
  denyHosts: z.array(HostPatternText),
  /** Refuse loopback, private, link-local (cloud metadata), CGNAT and other non-public addresses, after DNS. */
  denyPrivateAddresses: z.boolean(),
};

/** The worker's policy (config `urlPolicy`); every field has a default. */
export const UrlPolicySchema = z.strictObject({
  schemes: fields.schemes.default(['http', 'https']),
  allowFile: fields.allowFile.default(false),
  allowHosts: fields.allowHosts.optional(),
  denyHosts: fields.denyHosts.default([]),
  denyPrivateAddresses: fields.denyPrivateAddresses.default(false),
});
export type UrlPolicy = z.output<typeof UrlPolicySchema>;
export type UrlPolicyInput = z.input<typeof UrlPolicySchema>;

/** A task's narrowing (task input `urlPolicy`): the same fields, all optional; absent fields keep the worker's. */
export const TaskUrlPolicySchema = z.strictObject({
  schemes: fields.schemes.optional(),
  allowFile: fields.allowFile.optional(),
  allowHosts: fields.allowHosts.optional(),
  denyHosts: fields.denyHosts.optional(),
  denyPrivateAddresses: fields.denyPrivateAddresses.optional(),
});
export type TaskUrlPolicy = z.output<typeof TaskUrlPolicySchema>;

/** Defaults: http, https and about:blank; no file:, no host lists, private addresses reachable (local use, tests). */
export const DEFAULT_URL_POLICY: UrlPolicy = Object.freeze({
  schemes: ['http', 'https'],
  allowFile: false,
  denyHosts: [],
  denyPrivateAddresses: false,
}) as UrlPolicy;

/** The widest policy there can be; a task's narrowing of it tells what no worker could allow for that task. */
export const WIDEST_URL_POLICY: UrlPolicy = Object.freeze({
  schemes: ['http', 'https'],
  allowFile: true,
  denyHosts: [],
  denyPrivateAddresses: false,
}) as UrlPolicy;

export type Verdict = { ok: true } | { ok: false; reason: string };

/**
 * What is being loaded: a `document` (a page, frame, popup, redirect hop, download, or an address the agent asked
 * for) meets every rule; a `request` (image, script, XHR… of a page) meets the deny rules (denyHosts, private
 * addresses, file:) but not allowHosts or schemes, so pages on allowed hosts keep their CDN assets.
 */
export type LoadKind = 'document' | 'request';

const OK: Verdict = { ok: true };
const deny = (reason: string): Verdict => ({ ok: false, reason });

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

function patterns(list: readonly string[] | undefined): HostPattern[] {
  return (list ?? []).flatMap((text) => parseHostPattern(text) ?? []);
}

/** Decides one URL by its text (host names are not resolved here: see resolve.ts for denyPrivateAddresses). */
export function checkUrl(policy: UrlPolicy, raw: string, kind: LoadKind = 'document'): Verdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return deny('not a valid URL');
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'about') {
    return `${url.protocol}${url.pathname}` === 'about:blank'
      ? OK
      : deny('only about:blank is allowed of about: pages');
  }
  if (scheme === 'file') {
    return policy.allowFile ? OK : deny('file: URLs are not allowed (urlPolicy.allowFile is off)');
  }
  const web = scheme === 'http' || scheme === 'https';
  if (kind === 'document' && !(web && policy.schemes.includes(scheme))) {
    return deny(`the ${scheme}: scheme is not allowed (allowed: ${[...policy.schemes, 'about:blank'].join(', ')})`);
  }
  if (!web && !(scheme === 'ws' || scheme === 'wss')) return OK; // data:, blob: subresources are the page's own
  const host = url.hostname;
  const port = url.port === '' ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port);
  const denied = patterns(policy.denyHosts).find((p) => matchesHost(p, host, port));
  if (denied) return deny(`host ${url.host} is denied (denyHosts ${formatHostPattern(denied)})`);
  if (policy.denyPrivateAddresses) {
    const why = privateHostReason(host);
    if (why) return deny(why);
  }
  if (
    kind === 'document' &&
    policy.allowHosts &&
    !patterns(policy.allowHosts).some((p) => matchesHost(p, host, port))
  ) {
    return deny(`host ${url.host} is not in allowHosts (${policy.allowHosts.join(', ') || 'empty'})`);
  }
  return OK;
}

/** Why a host name or address literal is not public (denyPrivateAddresses), or undefined. */
export function privateHostReason(host: string): string | undefined {
  if (isLocalhostName(host)) return `${host} is a loopback name (denyPrivateAddresses)`;
  const range = nonPublicRange(host);
  return range ? `${host} is a ${range} address (denyPrivateAddresses)` : undefined;
}

function intersectHostLists(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
  if (a === undefined) return b === undefined ? undefined : [...b];
  if (b === undefined) return [...a];
  const out = patterns(a).flatMap((pa) => patterns(b).flatMap((pb) => intersectHostPatterns(pa, pb) ?? []));
  return [...new Set(out.map(formatHostPattern))];
}

/**
 * The worker's policy narrowed by a task's: only ever stricter. Schemes and allowHosts are intersected, denyHosts
 * joined, and the booleans combined towards refusal (allowFile: both must allow; denyPrivateAddresses: either).
 * A task asking for more than the worker allows (allowFile: true, a scheme or host the worker does not allow) gets
 * the worker's answer: the request is ignored, not an error, so the same task runs on stricter and looser workers.
 */
export function narrow(base: UrlPolicy, task: TaskUrlPolicy | undefined): UrlPolicy {
  if (!task) return base;
  // The worker's policy is a narrowing with every field given: joined with the task's, every field stays given.
  return narrowBoth(base, task) as UrlPolicy;
}

/**
 * Two task narrowings as one, stricter than either: what `narrow` makes of the result is what it would make of the
 * worker's policy narrowed by one and then by the other. Undefined when neither narrows anything.
 */
export function narrowBoth(a: TaskUrlPolicy | undefined, b: TaskUrlPolicy | undefined): TaskUrlPolicy | undefined {
  if (!a || !b) return a ?? b;
  const allowHosts = intersectHostLists(a.allowHosts, b.allowHosts);
  const denyHosts =
    a.denyHosts || b.denyHosts ? [...new Set([...(a.denyHosts ?? []), ...(b.denyHosts ?? [])])] : undefined;
  const schemes = a.schemes && b.schemes ? a.schemes.filter((s) => b.schemes?.includes(s)) : (a.schemes ?? b.schemes);
  const allowFile = a.allowFile === false || b.allowFile === false ? false : (a.allowFile ?? b.allowFile);
  const denyPrivate =
    a.denyPrivateAddresses || b.denyPrivateAddresses ? true : (a.denyPrivateAddresses ?? b.denyPrivateAddresses);
  return {
    ...(schemes === undefined ? {} : { schemes }),
    ...(allowFile === undefined ? {} : { allowFile }),
    ...(allowHosts === undefined ? {} : { allowHosts }),
    ...(denyHosts === undefined ? {} : { denyHosts }),
    ...(denyPrivate === undefined ? {} : { denyPrivateAddresses: denyPrivate }),
  };
}

/** True when the policy restricts http(s) loads at all (then the browser intercepts requests to enforce it). */
export function restrictsWeb(policy: UrlPolicy): boolean {
  return (
    URL_SCHEMES.some((s) => !policy.schemes.includes(s)) ||
    policy.allowHosts !== undefined ||
    policy.denyHosts.length > 0 ||
    policy.denyPrivateAddresses
  );
}

/** One line for logs: what the policy allows. */
/**
 * What a remote browser (reached over `cdpUrl`, or a Browserbase session) does not get of this policy, or null when
 * nothing is missing: the egress proxy (deny rules checked where each connection is made) needs a browser launched
 * here.
 */
export function remoteBrowserGaps(
  policy: UrlPolicy,
  remote: 'cdpUrl' | 'a Browserbase session' = 'cdpUrl',
): string | null {
  const rules = [
    ...(policy.denyHosts.length ? ['denyHosts'] : []),
    ...(policy.denyPrivateAddresses ? ['denyPrivateAddresses'] : []),
  ];
  if (!rules.length) return null;
  return (
    `the browser is ${remote === 'cdpUrl' ? 'reached over cdpUrl' : remote}, so the URL policy's ${rules.join(' and ')} ` +
    'get no egress proxy: pages are ' +
    "fetched by this worker and other requests checked before they are sent, but the browser's own connections " +
    '(sub-resources, their redirects, WebSockets) are not checked where they connect, so a name that resolves ' +
    'differently a second time (DNS rebinding) can reach a denied address (docs/security.md); launch the browser ' +
    `on the worker (${remote === 'cdpUrl' ? 'no cdpUrl' : "browser.provider 'chromium', no cdpUrl"}) for these rules ` +
    'to hold at every connection'
  );
}

export function describeUrlPolicy(policy: UrlPolicy): string {
  return [
    `schemes ${[...policy.schemes, 'about:blank', ...(policy.allowFile ? ['file'] : [])].join(', ')}`,
    `allowHosts ${policy.allowHosts ? policy.allowHosts.join(', ') || '(none)' : 'any'}`,
    `denyHosts ${policy.denyHosts.join(', ') || 'none'}`,
    policy.denyPrivateAddresses ? 'private addresses denied' : 'private addresses allowed',
  ].join('; ');
}
