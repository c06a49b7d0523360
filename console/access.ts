// Who may use the web console. One access token (random per start unless configured) is carried once in the printed
// link and exchanged for a session: an HttpOnly, SameSite=Strict cookie. Every request needs the session (or the token
// as `Authorization: Bearer`). A state-changing request is a POST that must come from the console's own pages: a
// cross-site Sec-Fetch-Site or a foreign Origin is refused, and a cookie session must send its CSRF token as a header.
// On loopback the Host header must name the console itself, so a DNS-rebound page cannot talk to it either.
import crypto from 'node:crypto';

export const SESSION_COOKIE = 'cua_console';
export const CSRF_HEADER = 'x-csrf-token';
/** A session lasts this long after its last request. */
export const SESSION_IDLE_MS = 12 * 3600_000;
const SESSION_LIMIT = 1000;

/** The console cannot start with this access setting (one line, for the terminal). */
export class ConsoleAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The token to require: the configured one (config `console.token` or CUA_CONSOLE_TOKEN), else a random one — but
 * only on loopback: a console reachable from other machines needs a token its operator chose and keeps.
 */
export function accessToken(host: string, configured: string | undefined): { token: string; generated: boolean } {
  if (configured) return { token: configured, generated: false };
  if (!isLoopback(host)) {
    throw new ConsoleAccessError(
      `the console on ${host} needs an explicit token: set console.token in the config or CUA_CONSOLE_TOKEN`,
    );
  }
  return { token: crypto.randomBytes(24).toString('base64url'), generated: true };
}

/** Compares two secrets in constant time (whatever their lengths). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(a), digest(b));
}

export interface Session {
  id: string;
  csrf: string;
  lastSeen: number;
}

/** The signed-in browsers, in memory: a restarted console asks for its link again. */
export class Sessions {
  private readonly byId = new Map<string, Session>();

  create(now = Date.now()): Session {
    if (this.byId.size >= SESSION_LIMIT) {
      const oldest = [...this.byId.values()].sort((a, b) => a.lastSeen - b.lastSeen)[0];
      if (oldest) this.byId.delete(oldest.id);
    }
    const session = {
      id: crypto.randomBytes(32).toString('base64url'),
      csrf: crypto.randomBytes(32).toString('base64url'),
      lastSeen: now,
    };
    this.byId.set(session.id, session);
    return session;
  }

  find(id: string | undefined, now = Date.now()): Session | undefined {
    const session = id ? this.byId.get(id) : undefined;
    if (!session) return undefined;
    if (now - session.lastSeen > SESSION_IDLE_MS) {
      this.byId.delete(session.id);
      return undefined;
    }
    session.lastSeen = now;
    return session;
  }
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(session: Session): string {
  return `${SESSION_COOKIE}=${session.id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_IDLE_MS / 1000}`;
}

/** The Host headers a loopback console answers to (null: any, for a console bound beyond loopback). */
export function allowedHosts(host: string, port: number): Set<string> | null {
  if (!isLoopback(host)) return null;
  const names = host === '::1' || host === '[::1]' ? ['[::1]', 'localhost'] : [host, 'localhost'];
  return new Set(names.map((name) => `${name}:${port}`));
}

/**
 * Why a state-changing request does not come from the console's own pages, or null when it does (or carries no
 * browser headers at all, as `curl` with a Bearer token does).
 */
export function crossSiteReason(headers: { origin?: string; 'sec-fetch-site'?: string; host?: string }): string | null {
  const site = headers['sec-fetch-site'];
  if (site && site !== 'same-origin' && site !== 'none') return `a ${site} request`;
  const origin = headers.origin;
  if (origin && origin !== `http://${headers.host}` && origin !== `https://${headers.host}`) {
    return `a request from ${origin}`;
  }
  return null;
}

export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * The host patterns a worker's URL policy must deny so the agent's browser cannot reach the console (a hostile page
 * could send it to 127.0.0.1:8300): its own address, and on loopback the other names of it.
 */
export function consoleDenyHosts(host: string, port: number): string[] {
  const own = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const names = isLoopback(host) ? [own, '127.0.0.1', 'localhost', '[::1]'] : [own];
  return [...new Set(names)].map((name) => `${name}:${port}`);
}
