// Sends one webhook notification: a signed JSON POST (signature.ts) with a timeout. What the answer means for a retry
// is decided here: 2xx is delivered; a network error, a timeout, 408, 429 or 5xx may pass (WebhookDeliveryError, the
// activity is retried); any other answer will not (WebhookRefusedError: not retried). Error messages name the URL's
// origin only: a webhook URL's path may itself be a credential, and these messages reach workflow history.
import type { WebhookBody } from './body';
import type { WebhookTarget } from './config';
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signWebhook } from './signature';

/** A failure that may pass: Temporal retries the notify activity. */
export class WebhookDeliveryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The receiver refused the request (a 4xx other than 408 and 429, or a redirect): sending it again would not help. */
export class WebhookRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const RETRIED_4XX = new Set([408, 429]);

/** The headers of a request whose body is `text`, sent at `nowMs`. */
export function webhookHeaders(text: string, body: WebhookBody, secret: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'durable-cua-webhook',
    [EVENT_HEADER]: body.event,
    [DELIVERY_HEADER]: body.delivery_id,
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signWebhook(text, secret, timestamp),
  };
}

/** POSTs `body`; resolves with the status of a 2xx answer, throws WebhookDeliveryError or WebhookRefusedError. */
export async function postWebhook(
  target: Pick<WebhookTarget, 'url' | 'secret' | 'timeoutMs'>,
  body: WebhookBody,
  opts: { signal?: AbortSignal | undefined; nowMs?: number } = {},
): Promise<number> {
  const origin = new URL(target.url).origin;
  const text = JSON.stringify(body);
  const timeout = AbortSignal.timeout(target.timeoutMs);
  let res: Response;
  try {
    res = await fetch(target.url, {
      method: 'POST',
      headers: webhookHeaders(text, body, target.secret, opts.nowMs ?? Date.now()),
      body: text,
      redirect: 'manual',
      signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
    });
  } catch (err) {
    const why = timeout.aborted ? `no answer within ${target.timeoutMs / 1000} s` : describe(err);
    throw new WebhookDeliveryError(`webhook ${origin}: ${why}`, { cause: err });
  }
  await res.body?.cancel().catch(() => undefined);
  const answered = `webhook ${origin} answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  if (res.status >= 200 && res.status < 300) return res.status;
  if (res.status >= 500 || RETRIED_4XX.has(res.status)) throw new WebhookDeliveryError(answered);
  const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
  throw new WebhookRefusedError(`${answered}${redirect}`);
}

/** fetch's errors say "fetch failed"; the reason is in their cause (ECONNREFUSED, a DNS failure, …). */
function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = cause && (typeof cause.code === 'string' ? cause.code : String(cause.message ?? ''));
  return detail ? `${String((err as Error).message ?? err)} (${detail})` : String((err as Error).message ?? err);
}
