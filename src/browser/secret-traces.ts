// Whether a request carries a typed secret: the value itself, or as pages commonly encode it — URL-encoded (`%20` or
// `+` for a space), JSON-escaped, base64 (standard or URL-safe, at any byte offset inside a longer base64 text).
// Anywhere in the URL, a header or the body (form fields and multipart parts are body text). Pure.
import { hostMatches } from '../agent/secrets';
import type { TypedSecret } from '../agent/secrets';

/** A secret as the egress guard looks for it: its name, hosts and every form of its value it checks. */
export interface WatchedSecret {
  name: string;
  hosts: readonly string[];
  forms: string[];
  /** A one-time code's end of worth (ms since the epoch); absent: watched until the context closes. */
  expiresAtMs?: number;
}

/** The base64 text of `value` wherever it starts inside longer data: the characters that depend on it alone. */
function base64Forms(value: Buffer): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const text = Buffer.concat([Buffer.alloc(offset), value]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + value.length) * 8) / 6);
    const core = text.slice(first, last);
    if (core.length >= 4) out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/** Every form of a value the guard looks for (the encoded ones a request's text is not decoded from). */
export function watchedForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  return [...new Set([value, json, ...base64Forms(Buffer.from(value, 'utf8'))].filter((f) => f.length > 0))];
}

export function watch(typed: TypedSecret): WatchedSecret {
  const expiry = typed.expiresAtMs === undefined ? {} : { expiresAtMs: typed.expiresAtMs };
  return { name: typed.name, hosts: typed.hosts, forms: watchedForms(typed.value), ...expiry };
}

/** `text` with its percent-escapes decoded (runs that are no valid UTF-8 stay as they are). */
function percentDecoded(text: string): string {
  return text.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** Rounds of URL-decoding tried (a value URL-encoded inside a URL that is URL-encoded again, as redirects do). */
const DECODE_ROUNDS = 3;

/** The texts a request part is searched as: itself, and URL-decoded (`+` kept, or a space) up to three times over. */
export function readings(text: string): string[] {
  if (!/[%+]/.test(text)) return [text];
  const out = new Set([text]);
  let plain = text;
  let form = text;
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    plain = percentDecoded(plain);
    form = percentDecoded(form.replace(/\+/g, ' '));
    out.add(plain).add(form);
  }
  return [...out];
}

export interface OutgoingRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  body?: Buffer | null | undefined;
}

/** The request's host (URL.host), or undefined for a URL that is no http(s)/ws(s) one. */
export function requestHost(url: string): string | undefined {
  try {
    const u = new URL(url);
    return /^(https?|wss?):$/.test(u.protocol) ? u.host : undefined;
  } catch {
    return undefined;
  }
}

/** True when `host` is one the secret may be sent to (the hosts it may be typed on). */
export function boundTo(secret: Pick<WatchedSecret, 'hosts'>, host: string): boolean {
  return secret.hosts.some((pattern) => hostMatches(host, pattern));
}

/** The secrets whose value the request carries, wherever it goes (none for a URL that is no http(s)/ws(s) one). */
export function carriedSecrets(secrets: readonly WatchedSecret[], request: OutgoingRequest): WatchedSecret[] {
  if (secrets.length === 0 || requestHost(request.url) === undefined) return [];
  const parts = [request.url, ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`)];
  if (request.body && request.body.length > 0)
    parts.push(request.body.toString('utf8'), request.body.toString('latin1'));
  return carriedIn(secrets, parts.flatMap(readings));
}

/** The secrets with a form of their value in one of `texts`. */
function carriedIn(secrets: readonly WatchedSecret[], texts: readonly string[]): WatchedSecret[] {
  return secrets.filter((s) => s.forms.some((form) => texts.some((text) => text.includes(form))));
}

/** The first secret the request carries to a host it is not bound to, or undefined. */
export function leakedSecret(secrets: readonly WatchedSecret[], request: OutgoingRequest): WatchedSecret | undefined {
  const host = requestHost(request.url);
  if (host === undefined) return undefined;
  return carriedSecrets(
    secrets.filter((s) => !boundTo(s, host)),
    request,
  )[0];
}

/** The secrets a WebSocket message carries (a binary one read as UTF-8), its text decoded once for all of them. */
export function messageSecrets(secrets: readonly WatchedSecret[], message: string | Buffer): WatchedSecret[] {
  if (secrets.length === 0) return [];
  return carriedIn(secrets, readings(typeof message === 'string' ? message : message.toString('utf8')));
}

/** Whether a WebSocket message carries `secret`. */
export function messageCarries(secret: WatchedSecret, message: string | Buffer): boolean {
  return messageSecrets([secret], message).length > 0;
}
