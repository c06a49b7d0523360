// Secrets a task may have typed without ever seeing them: an instruction or reply says `{{secret:NAME}}`, the model
// copies the placeholder into a `type` action, and only the act activity swaps in the value, from the worker's own
// secret source, and only on a page whose host the worker config lists for that secret. Everything recorded (the
// action, its observation, events, history) keeps the placeholder. A secret of kind 'totp' holds a one-time-code seed
// and is typed as `{{totp:NAME}}`: the current code (one-time-codes.ts), never the seed. Pure: the page URL, the
// environment and the clock are passed in.

import { matchesHost, parseHostPattern } from '../common/host-patterns';
import { TOTP_DEFAULTS, totpCode } from './one-time-codes';
import type { TotpAlgorithm } from './one-time-codes';

/** A secret as the worker config gives it: its value, or the worker environment variable holding it, and its hosts. */
export interface SecretSpec {
  value?: string | undefined;
  /** Name of an environment variable of the worker process holding the value, read when the secret is typed. */
  env?: string | undefined;
  /** Host patterns it may be typed on: `example.com`, `*.example.com` (subdomains only), `127.0.0.1:8500`. */
  hosts: readonly string[];
  /** 'totp': the value is an RFC 6238 seed (base32), typed as `{{totp:NAME}}` one code at a time. Absent: a password. */
  kind?: 'password' | 'totp' | undefined;
  /** TOTP only: code length (default 6), seconds per code (default 30), HMAC algorithm (default SHA1). */
  digits?: number | undefined;
  period?: number | undefined;
  algorithm?: TotpAlgorithm | undefined;
}

export type SecretSpecs = Readonly<Record<string, SecretSpec>>;

/** A secret's name, as in the config and in `{{secret:NAME}}`. */
export const SECRET_NAME = /^[A-Za-z0-9_.-]+$/;

const PLACEHOLDER = /\{\{\s*(secret|totp):([A-Za-z0-9_.-]+)\s*\}\}/g;

/** A host pattern: a host name or IP (optionally `*.` in front), optionally `:port`; `[…]` for IPv6. */
const HOST_PATTERN = /^(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/i;

export function isHostPattern(pattern: string): boolean {
  return HOST_PATTERN.test(pattern);
}

/** True when `text` holds at least one `{{secret:NAME}}` or `{{totp:NAME}}` placeholder. */
export function hasSecretPlaceholder(text: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(text);
}

/** The secret names a text refers to, in order of first appearance. */
export function secretNames(text: string): string[] {
  return [...new Set(placeholders(text).map((p) => p.name))];
}

type Placeholder = { kind: 'secret' | 'totp'; name: string };

/** The distinct placeholders of a text, in order of first appearance. */
function placeholders(text: string): Placeholder[] {
  const seen = new Map<string, Placeholder>();
  for (const m of text.matchAll(PLACEHOLDER)) {
    const kind = m[1] === 'totp' ? 'totp' : 'secret';
    seen.set(`${kind}:${m[2] ?? ''}`, { kind, name: m[2] ?? '' });
  }
  return [...seen.values()];
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

/** A value about to be typed, with the hosts it is bound to (what the egress guard watches for). */
export type TypedSecret = {
  name: string;
  value: string;
  hosts: readonly string[];
  /** A one-time code: no longer worth guarding after this (ms since the epoch; the next period's end). */
  expiresAtMs?: number;
};

export type SecretResolution =
  | {
      ok: true;
      text: string;
      /** the values typed, for scrubbing error messages */
      values: string[];
      /** each value with its secret's name and hosts */
      typed: TypedSecret[];
      /** wait this long before typing (a one-time code whose period has not begun yet) */
      waitMs: number;
    }
  | { ok: false; name: string; /** one line for the model; never holds a value */ refusal: string };

export interface ResolveContext {
  secrets: SecretSpecs;
  /** The URL of the page (frame) the keyboard types into. */
  pageUrl: string;
  /** The worker's environment, for secrets given by `env`. */
  env: Readonly<Record<string, string | undefined>>;
  /** Now, in ms since the epoch (one-time codes); default Date.now(). */
  now?: number;
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

function refused(name: string, reason: string): Extract<SecretResolution, { ok: false }> {
  return { ok: false, name, refusal: `Refused to type secret ${name}: ${reason}.` };
}

/**
 * The text to type with every placeholder replaced by its value (a one-time code for `{{totp:NAME}}`), or the refusal
 * of the first placeholder that may not be typed here (then nothing is typed at all). A text without placeholders
 * comes back unchanged.
 */
export function resolveSecrets(text: string, ctx: ResolveContext): SecretResolution {
  const refs = placeholders(text);
  if (refs.length === 0) return { ok: true, text, values: [], typed: [], waitMs: 0 };
  const page = hostOf(ctx.pageUrl);
  const values = new Map<string, string>();
  const typed: TypedSecret[] = [];
  let waitMs = 0;
  for (const ref of refs) {
    const spec = Object.hasOwn(ctx.secrets, ref.name) ? ctx.secrets[ref.name] : undefined;
    const value = spec ? resolveOne(ref, spec, page, ctx) : refused(ref.name, NO_SUCH_SECRET);
    if (!value.ok) return value;
    values.set(`${ref.kind}:${ref.name}`, value.value);
    const expiry = value.expiresAtMs === undefined ? {} : { expiresAtMs: value.expiresAtMs };
    typed.push({ name: ref.name, value: value.value, hosts: spec?.hosts ?? [], ...expiry });
    waitMs = Math.max(waitMs, value.waitMs);
  }
  return {
    ok: true,
    text: text.replace(PLACEHOLDER, (_m, kind: string, name: string) => values.get(`${kind}:${name}`) ?? ''),
    values: typed.map((t) => t.value),
    typed,
    waitMs,
  };
}

const NO_SUCH_SECRET = 'no secret of that name is configured on this worker';

type OneValue =
  { ok: true; value: string; waitMs: number; expiresAtMs?: number } | Extract<SecretResolution, { ok: false }>;

/** One placeholder's value on this page: the secret's own, or the one-time code of its seed now. */
function resolveOne(
  ref: Placeholder,
  spec: SecretSpec,
  page: { host: string; web: boolean },
  ctx: ResolveContext,
): OneValue {
  const name = ref.name;
  const totp = spec.kind === 'totp';
  if (ref.kind === 'secret' && totp) return refused(name, `it is a one-time-code seed: type {{totp:${name}}}`);
  if (ref.kind === 'totp' && !totp) return refused(name, 'it is no one-time-code (totp) secret');
  if (!page.web || !spec.hosts.some((pattern) => hostMatches(page.host, pattern))) {
    return refused(name, `this page's host (${page.host}) is not one it may be typed on`);
  }
  const value = secretValue(spec, ctx.env);
  if (!value) {
    const source = spec.env !== undefined ? `its environment variable ${spec.env} is not set` : 'it has no value';
    return refused(name, `${source} on this worker`);
  }
  if (!totp) return { ok: true, value, waitMs: 0 };
  const settings = {
    digits: spec.digits ?? TOTP_DEFAULTS.digits,
    period: spec.period ?? TOTP_DEFAULTS.period,
    algorithm: spec.algorithm ?? TOTP_DEFAULTS.algorithm,
  };
  try {
    const now = ctx.now ?? Date.now();
    const { code, waitMs } = totpCode(value, settings, now);
    // Sites accept a code for about a period after its own: past that it is worth nothing to anyone.
    const periodMs = settings.period * 1000;
    const expiresAtMs = (Math.floor((now + waitMs) / periodMs) + 2) * periodMs;
    return { ok: true, value: code, waitMs, expiresAtMs };
  } catch {
    return refused(name, 'its seed is not base32 text');
  }
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
