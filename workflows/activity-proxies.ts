// The workflow's activity proxies, one per named retry policy: what each kind of activity may retry, for how long,
// and on which queue. The failure types named here come from src/agent/failure-types.ts (one vocabulary). Every
// activity may wait inside for a run store that is full or unreachable (store.faultWaitMinutes, heartbeating), so
// each one's start-to-close timeout is its own work plus that wait, and a heartbeat timeout tells a dead worker.
import { proxyActivities } from '@temporalio/workflow';
import type { SessionRef, TaskActivities } from '../src/contract/activities';
import type { EvalActivities } from '../src/eval/records';
import type { BranchActivities } from '../src/eval/branches';
import { MODEL_NOT_RETRIED, OPEN_NOT_RETRIED } from '../src/agent/failure-types';
import type { TaskInput } from '../src/contract/task';
import { MAX_STORE_FAULT_WAIT_MINUTES } from '../src/trajectory/store-wait';

/**
 * Milliseconds for an activity of `ownMinutes` that may wait for an unusable run store as long as any worker may
 * (store.faultWaitMinutes, heartbeating): what workflows with no session's worker to ask (evaluations) give reading
 * task sets and recording verdicts.
 */
export const upToLongestStoreWait = (ownMinutes: number) => (ownMinutes + MAX_STORE_FAULT_WAIT_MINUTES) * 60_000;

/** Every activity a workflow may call (the worker's catalog implements them: activities/catalog.ts). */
export type Activities = TaskActivities & EvalActivities & BranchActivities;

export interface ActivityProxies {
  /** Run-folder bookkeeping on the shared queue: quick, retried a few times. */
  shared(summary: string): Activities;
  /**
   * Opening a session waits out full pools as long as it takes (any worker with a free slot may take it; the
   * activity gives up on other errors after a few attempts); a start page the policy refuses fails at once.
   * `taskQueue`: a queue of its own (browserOpenQueue) that workers poll only while they have a free slot; absent: the
   * workflow's queue.
   */
  opener(summary: string, taskQueue?: string): Activities;
  /** The model call: long, heartbeating, retried with backoff unless the endpoint refused the request. */
  model(summary: string): Activities;
  /** Observe/act/release on the worker that holds the session: one attempt (a failure puts the session in doubt). */
  onSession(ref: SessionRef, summary: string): Activities;
}

/**
 * `storeWaitMinutes`: how long the workers wait for an unusable run store (what the session's worker reported when
 * it opened; store.faultWaitMinutes), added to each activity's own time limit.
 */
export function activityProxies(t: TaskInput['timing'], storeWaitMinutes: () => number): ActivityProxies {
  /** Milliseconds: the activity's own minutes plus the store wait. */
  const upTo = (ownMinutes: number) => Math.round((ownMinutes + storeWaitMinutes()) * 60_000);
  return {
    shared: (summary) =>
      proxyActivities<Activities>({
        startToCloseTimeout: upTo(2),
        heartbeatTimeout: `${t.heartbeatSeconds}s`,
        retry: { initialInterval: '1s', maximumAttempts: 5 },
        summary,
      }),
    opener: (summary, taskQueue) =>
      proxyActivities<Activities>({
        ...(taskQueue ? { taskQueue } : {}),
        startToCloseTimeout: upTo(2),
        heartbeatTimeout: `${t.heartbeatSeconds}s`,
        retry: {
          initialInterval: '1s',
          backoffCoefficient: 2,
          maximumInterval: '5s',
          // No maximumAttempts (unlimited): a full pool is waited out; openSession itself turns any other error
          // final after a few tries.
          nonRetryableErrorTypes: [...OPEN_NOT_RETRIED],
        },
        summary,
      }),
    model: (summary) =>
      proxyActivities<Activities>({
        startToCloseTimeout: upTo(10),
        heartbeatTimeout: `${t.heartbeatSeconds}s`,
        retry: {
          initialInterval: `${t.modelRetryInitialSeconds}s`,
          maximumInterval: `${t.modelRetryMaxSeconds}s`,
          backoffCoefficient: 2,
          maximumAttempts: t.modelRetryAttempts,
          nonRetryableErrorTypes: [...MODEL_NOT_RETRIED],
        },
        summary,
      }),
    onSession: (ref, summary) =>
      proxyActivities<Activities>({
        taskQueue: ref.taskQueue,
        scheduleToStartTimeout: `${t.sessionScheduleToStartSeconds}s`,
        startToCloseTimeout: upTo(10),
        heartbeatTimeout: `${t.heartbeatSeconds}s`,
        // One attempt: a failed observe/act means the session is in doubt; the loop re-opens and re-observes.
        retry: { maximumAttempts: 1 },
        summary,
      }),
  };
}
