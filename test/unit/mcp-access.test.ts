// Who may use `cua mcp --http` (mcp/access.ts): the token rule by address, and each request's Host, Origin and bearer
// token, in the order they are checked.
import { describe, expect, it } from 'vitest';
import { mcpToken, McpAccessError, refusalOf } from '../../mcp/access';

const check = { host: '127.0.0.1', port: 8310, token: 'the-token-0123456789' };
const auth = `Bearer ${check.token}`;

describe('mcpToken', () => {
  it('takes the configured token, makes a random one on loopback, and refuses none elsewhere', () => {
    expect(mcpToken('0.0.0.0', 'configured-token-0123')).toEqual({ token: 'configured-token-0123', generated: false });
    const random = mcpToken('127.0.0.1', undefined);
    expect(random.generated).toBe(true);
    expect(random.token.length).toBeGreaterThanOrEqual(32);
    expect(mcpToken('localhost', undefined).token).not.toBe(random.token);
    expect(() => mcpToken('0.0.0.0', undefined)).toThrow(McpAccessError);
    expect(() => mcpToken('0.0.0.0', undefined)).toThrow('needs an explicit token: set mcp.token');
  });
});

describe('refusalOf', () => {
  it.each([
    ['a program with the token', { host: '127.0.0.1:8310', authorization: auth }, null],
    ['the server’s own origin', { host: 'localhost:8310', origin: 'http://localhost:8310', authorization: auth }, null],
    ['no token', { host: '127.0.0.1:8310' }, 401],
    ['a wrong token', { host: '127.0.0.1:8310', authorization: 'Bearer nope' }, 401],
    [
      'a foreign Origin, even with the token',
      { host: '127.0.0.1:8310', origin: 'http://evil.example', authorization: auth },
      403,
    ],
    ['a foreign Origin without the token', { host: '127.0.0.1:8310', origin: 'https://evil.example' }, 403],
    ['a rebound Host', { host: 'evil.example:8310', authorization: auth }, 403],
    ['another port’s origin', { host: '127.0.0.1:8310', origin: 'http://127.0.0.1:8300', authorization: auth }, 403],
  ] as const)('%s', (_what, headers, code) => {
    expect(refusalOf(check, headers)?.code ?? null).toBe(code);
  });

  it('lets any Host reach a server bound beyond loopback, but not a foreign Origin', () => {
    const wide = { ...check, host: '0.0.0.0' };
    expect(refusalOf(wide, { host: 'mcp.internal:8310', authorization: auth })).toBeNull();
    expect(
      refusalOf(wide, { host: 'mcp.internal:8310', origin: 'https://mcp.internal:8310', authorization: auth }),
    ).toBeNull();
    expect(
      refusalOf(wide, { host: 'mcp.internal:8310', origin: 'https://evil.example', authorization: auth })?.code,
    ).toBe(403);
  });
});
