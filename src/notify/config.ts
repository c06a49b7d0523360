// The `notifications` section of the worker configuration (zod schema), its environment overrides, and the webhook
// it resolves to when the worker starts. The URL and the secret are the worker's: a task's starter cannot choose where
// a task's notifications go, and neither value ever enters workflow history.
import { z } from 'zod';
import { ConfigError } from '../common/config-error';
import { NOTIFY_EVENTS } from '../contract/activities';
import type { NotifyEvent } from '../contract/activities';

/** A shorter secret is refused: the signature is only as strong as it. */
export const MIN_SECRET_CHARS = 16;
/** The longest one request may take (the notify activity's start-to-close timeout leaves room above it). */
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 60;
const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;

const WebhookSchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }),
    /** The HMAC secret itself, or the worker environment variable holding it (read when the worker starts). */
    secret: z.string().min(MIN_SECRET_CHARS, `at least ${MIN_SECRET_CHARS} characters`).optional(),
    secretEnv: z.string().min(1).optional(),
    /** Which events are sent (default: all). */
    events: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1)
      .default([...NOTIFY_EVENTS]),
    /** How long one request may take before it counts as failed (and is retried). */
    timeoutSeconds: z.number().positive().max(MAX_WEBHOOK_TIMEOUT_SECONDS).default(DEFAULT_WEBHOOK_TIMEOUT_SECONDS),
  })
  .refine(
    (w) => (w.secret === undefined) !== (w.secretEnv === undefined),
    'give exactly one of secret and secretEnv (or set CUA_WEBHOOK_SECRET)',
  );

export const NotificationsSchema = z.strictObject({ webhook: WebhookSchema.optional() });
export type NotificationsConfig = z.infer<typeof NotificationsSchema>;

/**
 * The section with the environment's overrides, or undefined when none is set: `CUA_WEBHOOK_URL` sets the URL (and so
 * turns the webhook on), `CUA_WEBHOOK_SECRET` the secret (in place of the file's secret or secretEnv).
 */
export function notificationsEnvOverride(
  section: unknown,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> | undefined {
  const { CUA_WEBHOOK_URL: url, CUA_WEBHOOK_SECRET: secret } = env;
  if (!url && !secret) return undefined;
  const out: Record<string, unknown> = isObject(section) ? { ...section } : {};
  const webhook: Record<string, unknown> = isObject(out.webhook) ? { ...out.webhook } : {};
  if (url) webhook.url = url;
  if (secret) {
    webhook.secret = secret;
    delete webhook.secretEnv;
  }
  // A secret alone does not turn a webhook on (the worker's environment may carry it for another program).
  if (webhook.url === undefined) return undefined;
  out.webhook = webhook;
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where a worker sends its notifications, its secret resolved. */
export interface WebhookTarget {
  url: string;
  secret: string;
  events: readonly NotifyEvent[];
  timeoutMs: number;
}

/**
 * The worker's webhook, or undefined when it has none. A `secretEnv` that is unset or too short is a ConfigError,
 * raised when the worker starts rather than at its first notification.
 */
export function webhookTarget(
  section: NotificationsConfig | undefined,
  env: NodeJS.ProcessEnv,
): WebhookTarget | undefined {
  const webhook = section?.webhook;
  if (!webhook) return undefined;
  const secret = webhook.secret ?? env[webhook.secretEnv ?? ''];
  if (!secret) {
    throw new ConfigError(`notifications.webhook.secretEnv: the environment variable ${webhook.secretEnv} is not set`);
  }
  if (secret.length < MIN_SECRET_CHARS) {
    throw new ConfigError(
      `notifications.webhook.secretEnv: the value of ${webhook.secretEnv} is shorter than ${MIN_SECRET_CHARS} characters`,
    );
  }
  return { url: webhook.url, secret, events: webhook.events, timeoutMs: webhook.timeoutSeconds * 1000 };
}

/** The worker's start line about notifications: the webhook's origin (its path may itself be a credential). */
export function webhookSummary(target: WebhookTarget): string {
  return `notifications: webhook ${new URL(target.url).origin} for ${target.events.join(', ')}`;
}
