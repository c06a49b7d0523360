// The request journal's pure parts (src/browser/request-journal.ts): which requests are journaled, which entries are
// in doubt or held back, a torn line, and body previews that never show a password or a known secret.
import { describe, expect, it } from 'vitest';
import {
  bodyPreview,
  heldBack,
  inDoubt,
  isChanging,
  parseJournal,
  requestKey,
} from '../../src/browser/request-journal';
import type { JournalLine, JournalStart } from '../../src/browser/request-journal';

const start = (id: string): JournalStart => ({
  kind: 'start',
  id,
  method: 'POST',
  url: 'https://shop.test/order',
  resource_type: 'document',
  body_sha256: '',
  body_bytes: 0,
  body_preview: '',
  request_sha256: '',
  started_at: '2026-12-02T10:00:00Z',
  step: 1,
  generation: 0,
});
const at = '2026-12-02T10:00:01Z';
const redact = (text: string) => text.replaceAll('s3cr3t', '[secret]');

describe('the request journal', () => {
  it.each<[string, string, boolean]>([
    ['POST', 'document', true],
    ['post', 'fetch', true],
    ['PUT', 'xhr', true],
    ['DELETE', 'fetch', true],
    ['PATCH', 'xhr', true],
    ['GET', 'document', false],
    ['HEAD', 'fetch', false],
    ['OPTIONS', 'xhr', false],
    ['POST', 'image', false],
    ['POST', 'ping', false],
  ])('%s of a %s changes something: %s', (method, type, expected) => {
    expect(isChanging(method, type)).toBe(expected);
  });

  it('in doubt: started, no end, not resolved; held back: in doubt and held', () => {
    const lines: JournalLine[] = [
      start('a'),
      start('b'),
      start('c'),
      start('d'),
      { kind: 'end', id: 'a', ended_at: at, status: 200 },
      { kind: 'held', id: 'b', at, step: 2, generation: 1 },
      { kind: 'held', id: 'c', at, step: 2, generation: 1 },
      { kind: 'resolved', id: 'c', at, how: 'user_replied' },
    ];
    expect(inDoubt(lines).map((e) => e.id)).toEqual(['b', 'd']);
    expect(heldBack(lines).map((e) => e.id)).toEqual(['b']);
  });

  it('a torn last line (a crash mid-append) and foreign lines are skipped', () => {
    const text = `${JSON.stringify(start('a'))}\n{"kind":"nonsense","id":"x"}\n\n{"kind":"end","id":"a","ended_at`;
    expect(parseJournal(text).map((l) => l.id)).toEqual(['a']);
  });

  it('a resend is the same method, URL and body', () => {
    const body = Buffer.from('qty=1');
    const key = requestKey('POST', 'https://shop.test/order', body);
    expect(requestKey('post', 'https://shop.test/order', Buffer.from('qty=1'))).toBe(key);
    expect(requestKey('POST', 'https://shop.test/order', Buffer.from('qty=2'))).not.toBe(key);
    expect(requestKey('POST', 'https://shop.test/order?x', body)).not.toBe(key);
    expect(requestKey('PUT', 'https://shop.test/order', body)).not.toBe(key);
  });

  it.each<[string, string, string, string]>([
    [
      'form fields',
      'user=ada&password=hunter2&qty=3',
      'application/x-www-form-urlencoded',
      'user=ada&password=***&qty=3',
    ],
    ['card fields', 'card_number=4111&cvv=123', 'application/x-www-form-urlencoded', 'card_number=***&cvv=***'],
    ['JSON keys', '{"user":"ada","auth":{"token":"t"}}', 'application/json', '{"user":"ada","auth":"***"}'],
    ['a known secret anywhere', 'note=my s3cr3t', 'application/x-www-form-urlencoded', 'note=my [secret]'],
    ['a secret in plain text', 'the s3cr3t', 'text/plain', 'the [secret]'],
    [
      'multipart',
      '--x\r\nContent-Disposition: form-data; name="password"\r\n\r\nhunter2',
      'multipart/form-data; boundary=x',
      '(multipart form data)',
    ],
    ['binary', '\u0000\u0001\u0002abc', 'application/octet-stream', '(6 bytes of binary data)'],
    ['nothing', '', 'text/plain', ''],
  ])('a body preview: %s', (_name, body, type, expected) => {
    expect(bodyPreview(Buffer.from(body), type, redact)).toBe(expected);
  });

  it('a long preview is cut', () => {
    expect(bodyPreview(Buffer.from('x'.repeat(500)), 'text/plain', redact)).toBe(`${'x'.repeat(200)}…`);
  });
});
