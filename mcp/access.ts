// Who may use the MCP server over HTTP. A bearer token always (random per start on loopback unless config `mcp.token`
// or CUA_MCP_TOKEN sets one; another address needs a configured one), the Origin header checked as the MCP spec asks
// (a web page elsewhere must not reach a local server: DNS rebinding), and on loopback the Host header naming the
// server itself. stdio needs none of this: it is a process of its caller.
import crypto from 'node:crypto';
import { allowedHosts, bearerToken, isLoopback, sameSecret } from '../console/access';

export const DEFAULT_MCP_PORT = 8310;

/** The MCP server cannot start with this access setting (one line, for the terminal). */
export class McpAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The token to require: the configured one, else a random one, but only on loopback. */
export function mcpToken(host: string, configured: string | undefined): { token: string; generated: boolean } {
  if (configured) return { token: configured, generated: false };
  if (!isLoopback(host)) {
    throw new McpAccessError(
      `the MCP server on ${host} needs an explicit token: set mcp.token in the config or CUA_MCP_TOKEN`,
    );
  }
  return { token: crypto.randomBytes(24).toString('base64url'), generated: true };
}

export interface AccessCheck {
  host: string;
  port: number;
  token: string;
}

export interface RequestHeaders {
  host?: string | undefined;
  origin?: string | undefined;
  authorization?: string | undefined;
}

/**
 * Why a request is refused (its HTTP status and one line), or null when it may go on. A request with no Origin (a
 * program, not a browser) passes that check; one from a page is let in only from the server's own origin.
 */
export function refusalOf(check: AccessCheck, headers: RequestHeaders): { code: 401 | 403; message: string } | null {
  const hosts = allowedHosts(check.host, check.port);
  if (hosts && !hosts.has(headers.host ?? '')) return { code: 403, message: `unknown Host: ${headers.host ?? ''}` };
  const origin = headers.origin;
  if (origin !== undefined && !ownOrigin(origin, check, headers.host)) {
    return { code: 403, message: `refused: a request from ${origin}` };
  }
  const bearer = bearerToken(headers.authorization);
  if (bearer === undefined) return { code: 401, message: 'missing token: send Authorization: Bearer <token>' };
  if (!sameSecret(bearer, check.token)) return { code: 401, message: 'wrong token' };
  return null;
}

function ownOrigin(origin: string, check: AccessCheck, hostHeader: string | undefined): boolean {
  const own = new Set([...(allowedHosts(check.host, check.port) ?? []), ...(hostHeader ? [hostHeader] : [])]);
  return [...own].some((h) => origin === `http://${h}` || origin === `https://${h}`);
}
