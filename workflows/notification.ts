// The notification workflow: one webhook notification of a task, sent by the notify activity and retried with
// backoff (1 s doubling to 5 min) for up to an hour; a refusal (4xx) ends it at once. A workflow of its own, which the
// task starts as a child and does not wait for (parent-close policy ABANDON): a slow or unreachable webhook never
// holds the task up, and the notification of a task's end still goes out after the task has closed.
import { proxyActivities } from '@temporalio/workflow';
import type { NotifyInput, TaskActivities } from '../src/contract/activities';

/** How long a notification is retried before it is given up (the workflow then fails, visibly, in the UI). */
const NOTIFY_RETRY_WINDOW = '1 hour';

export async function notification(input: NotifyInput): Promise<void> {
  const { notify } = proxyActivities<Pick<TaskActivities, 'notify'>>({
    // Room above the longest request a worker may allow (notifications.webhook.timeoutSeconds, at most 60 s).
    startToCloseTimeout: '90s',
    scheduleToCloseTimeout: NOTIFY_RETRY_WINDOW,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
    summary: `${input.event} → webhook`,
  });
  await notify(input);
}
