// The notify activity (shared queue): POSTs one notification to this worker's webhook (notifications.webhook), signed
// with its secret. No webhook here, or an event it does not want: returns at once. A failure that may pass throws
// and the notification workflow's retry policy tries again; a refusal (a 4xx) is final.
import { webhookBody } from '../src/notify/body';
import { webhookTarget } from '../src/notify/config';
import { postWebhook, WebhookRefusedError } from '../src/notify/send';
import type { NotifyInput } from '../src/contract/activities';
import { activitySignal, nonRetryable } from './support';
import type { ActivityDeps } from './support';

/** `env`: where a secretEnv is read, when the worker starts (an unset one stops the start: ConfigError). */
export function createNotifyActivity(deps: Pick<ActivityDeps, 'config' | 'log'>, env: NodeJS.ProcessEnv = process.env) {
  const target = webhookTarget(deps.config.notifications, env);
  return {
    async notify(req: NotifyInput): Promise<void> {
      if (!target?.events.includes(req.event)) {
        // The worker that started the task has a webhook for it; this one does not (give workers the same section).
        deps.log?.(`notification ${req.deliveryId} not sent: this worker has no webhook for ${req.event} events`);
        return;
      }
      try {
        await postWebhook(target, webhookBody(req), { signal: activitySignal() });
      } catch (err) {
        if (err instanceof WebhookRefusedError) nonRetryable(err);
        throw err;
      }
    },
  };
}
