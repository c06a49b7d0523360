// The webhook's signature: an HMAC-SHA256, with the worker's secret, of `<timestamp>.<raw body>`, sent as
// `X-Cua-Signature: sha256=<hex>` beside `X-Cua-Timestamp: <unix seconds>`. The timestamp is signed too, so a
// receiver that refuses old timestamps also refuses a recorded request sent again. verifyWebhookSignature is the
// receiver's half (exported to applications from `durable-cua/contract`).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Cua-Signature';
export const TIMESTAMP_HEADER = 'X-Cua-Timestamp';
export const EVENT_HEADER = 'X-Cua-Event';
export const DELIVERY_HEADER = 'X-Cua-Delivery';

/** A receiver's default: a request signed more than five minutes from its own clock is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The X-Cua-Signature value of a body sent at `timestamp` (unix seconds). */
export function signWebhook(body: string | Uint8Array, secret: string, timestamp: number): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(body);
  return `sha256=${mac.digest('hex')}`;
}

/** Node's request headers (lower-case names) or a fetch Headers object. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export type WebhookVerification = { ok: true; timestamp: number } | { ok: false; reason: string };

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const lower = name.toLowerCase();
  const key = Object.keys(headers).find((k) => k.toLowerCase() === lower);
  const value = key === undefined ? undefined : (headers as Record<string, string | string[] | undefined>)[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Whether a webhook request is genuine: its signature matches the raw body (the bytes as received, before any JSON
 * parsing) under `secret`, and its timestamp is within `toleranceSeconds` of `nowMs`. The reason says which check
 * failed (for the receiver's log; answer the sender 401 whatever it is).
 */
export function verifyWebhookSignature(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowMs = Date.now(),
): WebhookVerification {
  const signature = headerOf(headers, SIGNATURE_HEADER);
  const stamp = headerOf(headers, TIMESTAMP_HEADER);
  if (!signature) return { ok: false, reason: `no ${SIGNATURE_HEADER} header` };
  if (!stamp || !/^\d{1,12}$/.test(stamp)) return { ok: false, reason: `no valid ${TIMESTAMP_HEADER} header` };
  const timestamp = Number(stamp);
  const skew = Math.abs(nowMs / 1000 - timestamp);
  if (skew > toleranceSeconds) {
    return { ok: false, reason: `the timestamp is ${Math.round(skew)} s from now (more than ${toleranceSeconds} s)` };
  }
  const expected = Buffer.from(signWebhook(body, secret, timestamp));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'the signature does not match the body' };
  }
  return { ok: true, timestamp };
}
