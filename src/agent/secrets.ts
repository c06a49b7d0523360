// Secrets a task may have typed without ever seeing them: an instruction or reply says `{{secret:NAME}}`, the model
// copies the placeholder into a `type` action, and only the act activity swaps in the value, from the worker's own
// secret source, and only on a page whose host the worker config lists for that secret. Everything recorded (the
// action, its observation, events, history) keeps the placeholder. Pure: the page URL and environment are passed in.

import { matchesHost, parseHostPattern } from '../common/host-patterns';

/** A secret as the worker config gives it: its value, or the worker environment variable holding it, and its hosts. */
export interface SecretSpec {
  value?: string | undefined;
  /** Name of an environment variable of the worker process holding the value, read when the secret is typed. */
  env?: string | undefined;
  /** Host patterns it may be typed on: `example.com`, `*.example.com` (subdomains only), `127.0.0.1:8500`. */
  hosts: readonly string[];
}

export type SecretSpecs = Readonly<Record<string, SecretSpec>>;

/** A secret's name, as in the config and in `{{secret:NAME}}`. */
export const SECRET_NAME = /^[A-Za-z0-9_.-]+$/;

const PLACEHOLDER = /\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}/g;

/** A host pattern: a host name or IP (optionally `*.` in front), optionally `:port`; `[…]` for IPv6. */
const HOST_PATTERN = /^(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/i;

export function isHostPattern(pattern: string): boolean {
  return HOST_PATTERN.test(pattern);
}

/** True when `text` holds at least one `{{secret:NAME}}` placeholder. */
export function hasSecretPlaceholder(text: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(text);
}

/** The secret names a text refers to, in order of first appearance. */
export function secretNames(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''))];
}

/**
 * True when a page at `host` (URL.host: lower-case host name, `:port` unless the default) is one a pattern allows.
 * A pattern without a port allows the default port only; `*.example.com` allows `a.example.com`, `a.b.example.com`,
 * not `example.com` nor `badexample.com`.
 */
export function hostMatches(host: string, pattern: string): boolean {
  const p = parseHostPattern(pattern);
  let page: URL;
  try {
    page = new URL(`http://${host}/`);
  } catch {
    return false;
  }
  // URL.host names a port only when it is not the default one; the URL policy's matcher reads a pattern without a
  // port as "every port", so here such a pattern first requires the default port.
  const port = page.port === '' ? undefined : Number(page.port);
  if (!p || (p.port === undefined && port !== undefined)) return false;
  return matchesHost(p, page.hostname, port ?? 0);
}

export type SecretResolution =
  | { ok: true; text: string; /** the values typed, for scrubbing error messages */ values: string[] }
  | { ok: false; name: string; /** one line for the model; never holds a value */ refusal: string };

export interface ResolveContext {
  secrets: SecretSpecs;
  /** The URL of the page (frame) the keyboard types into. */
  pageUrl: string;
  /** The worker's environment, for secrets given by `env`. */
  env: Readonly<Record<string, string | undefined>>;
}

/** The host shown in a refusal: `evil.test`, `127.0.0.1:8500`, or the URL's scheme for a page without one. */
function hostOf(url: string): { host: string; web: boolean } {
  try {
    const u = new URL(url);
    const web = u.protocol === 'http:' || u.protocol === 'https:';
    return { host: u.host || u.protocol.replace(/:$/, ''), web };
  } catch {
    return { host: 'an address that is no URL', web: false };
  }
}

function refused(name: string, reason: string): SecretResolution {
  return { ok: false, name, refusal: `Refused to type secret ${name}: ${reason}.` };
}

/**
 * The text to type with every placeholder replaced by its value, or the refusal of the first placeholder that may not
 * be typed here (then nothing is typed at all). A text without placeholders comes back unchanged.
 */
export function resolveSecrets(text: string, ctx: ResolveContext): SecretResolution {
  const names = secretNames(text);
  if (names.length === 0) return { ok: true, text, values: [] };
  const page = hostOf(ctx.pageUrl);
  const values = new Map<string, string>();
  for (const name of names) {
    const spec = Object.hasOwn(ctx.secrets, name) ? ctx.secrets[name] : undefined;
    if (!spec) return refused(name, 'no secret of that name is configured on this worker');
    if (!page.web || !spec.hosts.some((pattern) => hostMatches(page.host, pattern))) {
      return refused(name, `this page's host (${page.host}) is not one it may be typed on`);
    }
    const value = secretValue(spec, ctx.env);
    if (!value) {
      const source = spec.env !== undefined ? `its environment variable ${spec.env} is not set` : 'it has no value';
      return refused(name, `${source} on this worker`);
    }
    values.set(name, value);
  }
  return {
    ok: true,
    text: text.replace(PLACEHOLDER, (_m, name: string) => values.get(name) ?? ''),
    values: [...values.values()],
  };
}

/** A secret's value: the config's own, or its environment variable's (undefined when neither is set). */
function secretValue(spec: SecretSpec, env: Readonly<Record<string, string | undefined>>): string | undefined {
  return spec.value ?? (spec.env !== undefined ? env[spec.env] : undefined);
}

/** `text` with every occurrence of the values replaced by `[secret]` (for error messages from the typing). */
export function redactSecrets(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...values].sort((a, b) => b.length - a.length)) if (v) out = out.split(v).join('[secret]');
  return out;
}

/**
 * An error safe to record after typing secret values: same name (so session errors stay session errors), message and
 * stack with the values redacted, no cause (a cause could quote the typed text).
 */
export function redactedError(err: unknown, values: readonly string[]): Error {
  const name = err instanceof Error ? err.name : 'Error';
  const clean = new Error(redactSecrets(err instanceof Error ? err.message : String(err), values));
  clean.name = name;
  clean.stack = err instanceof Error && err.stack ? redactSecrets(err.stack, values) : `${name}: ${clean.message}`;
  return clean;
}

/**
 * Every configured secret value this process can read (the config's and the environment's), each also as JSON
 * escapes it: what to redact from text recorded from a page (which may show a typed secret) without knowing which
 * were typed.
 */
export function knownSecretValues(secrets: SecretSpecs, env: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>();
  for (const spec of Object.values(secrets)) {
    const value = secretValue(spec, env);
    if (!value) continue;
    values.add(value);
    values.add(JSON.stringify(value).slice(1, -1));
  }
  return [...values];
}
