// Specification of a webhook notification's body, its signature and the receiver's check (src/notify/): what each
// event carries, and which requests verifyWebhookSignature refuses (a tampered body, a wrong secret, an old or
// future timestamp, missing headers).
import { describe, expect, it } from 'vitest';
import type { NotifyInput } from '../../src/contract/activities';
import { INSTRUCTION_CHARS, webhookBody } from '../../src/notify/body';
import { webhookHeaders } from '../../src/notify/send';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  signWebhook,
  verifyWebhookSignature,
} from '../../src/notify/signature';
import type { WebhookHeaders } from '../../src/notify/signature';

const BASE: NotifyInput = {
  event: 'waiting',
  deliveryId: 'task-7-notify-waiting-1',
  taskId: 'task-7',
  status: 'waiting_for_user',
  step: 3,
  instruction: 'Book a room in Lisbon.',
  at: '2026-11-30T10:00:00.000Z',
};

describe('webhookBody', () => {
  it.each<[string, Partial<NotifyInput>, Record<string, unknown>]>([
    [
      'waiting: the question, its id and the command that answers it',
      { question: { id: 'q1', text: 'Which city?' } },
      {
        event: 'waiting',
        delivery_id: 'task-7-notify-waiting-1',
        task_id: 'task-7',
        status: 'waiting_for_user',
        step: 3,
        question: 'Which city?',
        question_id: 'q1',
        reply_command: 'npx cua reply task-7 "<your reply>" --question q1',
        at: '2026-11-30T10:00:00.000Z',
        instruction: 'Book a room in Lisbon.',
      },
    ],
    [
      'waiting for an approval: the question kind says so',
      { question: { id: 'q2', text: 'The agent is about to send POST /checkout …', kind: 'approval' } },
      {
        question_id: 'q2',
        question_kind: 'approval',
        reply_command: 'npx cua reply task-7 "<your reply>" --question q2',
      },
    ],
    [
      'completed: the answer and the end reason, no question',
      { event: 'completed', status: 'complete', answer: '€120 a night', endReason: 'complete' },
      { event: 'completed', status: 'complete', answer: '€120 a night', end_reason: 'complete' },
    ],
    [
      'completed with an empty answer keeps it',
      { event: 'completed', status: 'complete', answer: '', endReason: 'complete' },
      { answer: '' },
    ],
    [
      'completed with an output schema: the output, whether partial',
      { event: 'completed', status: 'max_rounds', output: { value: { price: 95 }, partial: true } },
      { output: { price: 95 }, output_partial: true },
    ],
    [
      'completed with an output schema and no valid output: null, and why',
      { event: 'completed', status: 'complete', output: null, outputError: 'not valid: price: must be number' },
      { output: null, output_error: 'not valid: price: must be number' },
    ],
    [
      'failed: the error and the end reason',
      { event: 'failed', status: 'failed', error: 'no reply within 60s', endReason: 'ask_timeout' },
      { event: 'failed', status: 'failed', error: 'no reply within 60s', end_reason: 'ask_timeout' },
    ],
  ])('%s', (_name, change, expected) => {
    expect(webhookBody({ ...BASE, ...change })).toMatchObject(expected);
  });

  it.each<[string, Partial<NotifyInput>, string[]]>([
    ['waiting', { question: { id: 'q1', text: '?' } }, ['answer', 'error', 'end_reason']],
    [
      'completed',
      { event: 'completed', status: 'complete', answer: 'a' },
      ['question', 'reply_command', 'error', 'output', 'output_partial'],
    ],
    ['a question of no kind (recorded before kinds)', { question: { id: 'q1', text: '?' } }, ['question_kind']],
  ])('%s leaves out what does not apply', (_name, change, absent) => {
    const body = webhookBody({ ...BASE, ...change });
    for (const key of absent) expect(body).not.toHaveProperty(key);
  });

  it.each([
    ['a short instruction is kept whole', 'Book a room.', 'Book a room.'],
    ['one of exactly the limit is kept whole', 'x'.repeat(INSTRUCTION_CHARS), 'x'.repeat(INSTRUCTION_CHARS)],
    ['a longer one is cut, with an ellipsis', 'y'.repeat(500), `${'y'.repeat(INSTRUCTION_CHARS - 1)}…`],
  ])('%s', (_name, instruction, expected) => {
    expect(webhookBody({ ...BASE, instruction }).instruction).toBe(expected);
  });
});

const SECRET = 'a-webhook-secret-of-some-length';
const NOW = Date.parse('2026-11-30T10:00:00Z');
const TEXT = JSON.stringify(webhookBody({ ...BASE, question: { id: 'q1', text: 'Which city?' } }));

/** The request as the notify activity sends it, at NOW. */
const sent = () => webhookHeaders(TEXT, webhookBody(BASE), SECRET, NOW);

describe('the request headers', () => {
  it('carry the event, the delivery id, the send time and the signature of `<timestamp>.<body>`', () => {
    const h = sent();
    expect(h).toMatchObject({
      'content-type': 'application/json',
      [EVENT_HEADER]: 'waiting',
      [DELIVERY_HEADER]: 'task-7-notify-waiting-1',
      [TIMESTAMP_HEADER]: String(NOW / 1000),
    });
    expect(h[SIGNATURE_HEADER]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(h[SIGNATURE_HEADER]).toBe(signWebhook(TEXT, SECRET, NOW / 1000));
  });

  it('sign the timestamp too: the same body at another time has another signature', () => {
    expect(signWebhook(TEXT, SECRET, NOW / 1000)).not.toBe(signWebhook(TEXT, SECRET, NOW / 1000 + 1));
  });

  it('the signature is the HMAC-SHA256 a receiver in any language computes (a known vector)', () => {
    // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'key-of-sixteen-chars'
    expect(signWebhook('{"a":1}', 'key-of-sixteen-chars', 1_700_000_000)).toBe(
      'sha256=83da986b13614c0a5976656d090651c6ac5b6cd549670963be6b806aa3cd3c55',
    );
  });
});

describe('verifyWebhookSignature', () => {
  /** Node's request headers: lower-case names. */
  const lower = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
  const withHeader = (name: string, value: string | undefined) => {
    const h: Record<string, string> = { ...sent() };
    if (value === undefined) delete h[name];
    else h[name] = value;
    return h;
  };

  it.each<[string, string | Buffer, WebhookHeaders, string, number]>([
    ['the request as sent', TEXT, sent(), SECRET, NOW],
    ['the raw body as bytes', Buffer.from(TEXT), sent(), SECRET, NOW],
    ["Node's lower-case header names", TEXT, lower(sent()), SECRET, NOW],
    ['a fetch Headers object', TEXT, new Headers(sent()), SECRET, NOW],
    ['received 4 minutes later', TEXT, sent(), SECRET, NOW + 240_000],
    ["a receiver's clock 4 minutes behind", TEXT, sent(), SECRET, NOW - 240_000],
  ])('accepts %s', (_name, body, headers, secret, now) => {
    expect(verifyWebhookSignature(body, headers, secret, 300, now)).toEqual({ ok: true, timestamp: NOW / 1000 });
  });

  it.each<[string, string, WebhookHeaders, string, number, RegExp]>([
    ['a tampered body', TEXT.replace('Which city?', 'Which town?'), sent(), SECRET, NOW, /signature does not match/],
    ['a wrong secret', TEXT, sent(), 'another-secret-of-some-length', NOW, /signature does not match/],
    ['a request 6 minutes old (replayed)', TEXT, sent(), SECRET, NOW + 360_000, /360 s from now \(more than 300 s\)/],
    ['a timestamp 6 minutes ahead', TEXT, sent(), SECRET, NOW - 360_000, /360 s from now/],
    [
      'a timestamp moved to now (its signature was made for the old one)',
      TEXT,
      withHeader(TIMESTAMP_HEADER, String(NOW / 1000 + 3600)),
      SECRET,
      NOW + 3_600_000,
      /signature does not match/,
    ],
    ['no signature', TEXT, withHeader(SIGNATURE_HEADER, undefined), SECRET, NOW, /no X-Cua-Signature header/],
    ['no timestamp', TEXT, withHeader(TIMESTAMP_HEADER, undefined), SECRET, NOW, /no valid X-Cua-Timestamp/],
    ['a timestamp in words', TEXT, withHeader(TIMESTAMP_HEADER, 'now'), SECRET, NOW, /no valid X-Cua-Timestamp/],
    ['a signature without its prefix', TEXT, withHeader(SIGNATURE_HEADER, 'abc'), SECRET, NOW, /does not match/],
  ])('refuses %s', (_name, body, headers, secret, now, reason) => {
    const result = verifyWebhookSignature(body, headers, secret, 300, now);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toMatch(reason);
  });

  it('takes the tolerance the receiver gives', () => {
    expect(verifyWebhookSignature(TEXT, sent(), SECRET, 30, NOW + 60_000).ok).toBe(false);
    expect(verifyWebhookSignature(TEXT, sent(), SECRET, 3600, NOW + 600_000).ok).toBe(true);
  });
});
