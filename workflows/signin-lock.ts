// The lock of one saved sign-in (workflow id `signin-lock:NAME`): one task at a time uses it, since many sites sign
// out a second session. A task asks with the acquire signal (the first one starts the lock, as a child it leaves
// running); the lock answers each task with a notice signal (granted, or waiting behind the holder) and grants the next
// in line when the holder releases it. A holder that ended without releasing (terminated) is noticed while others
// wait: the lock tells it again every few seconds, and a notice that cannot be delivered means it is gone. Ends after
// a minute with nobody; continues as new when its history grows. Deterministic.
import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { LockQueue } from './signin-queue';
import type { LockNotice, LockState } from './signin-queue';

export type { LockNotice, LockState };

/** The lock workflow's type name, and its id for a sign-in. */
export const SIGNIN_LOCK_WORKFLOW = 'signinLock';
export const signinLockId = (name: string): string => `signin-lock:${name}`;

/** A task asks for the sign-in (or asks again). */
export const signinAcquireSignal = defineSignal<[{ taskId: string }]>('signinAcquire');
/** A task is done with the sign-in, or no longer waits for it. */
export const signinReleaseSignal = defineSignal<[{ taskId: string }]>('signinRelease');
/** To a task: it holds the sign-in now, or waits behind the holder. */
export const signinNoticeSignal = defineSignal<[LockNotice]>('signinNotice');
/** The holder and the tasks waiting, in order. */
export const signinLockQuery = defineQuery<LockState>('signinLock');

export type SigninLockInput = {
  name: string;
  /** The task that started the lock: it asks first. */
  first?: string;
  /** What a continued run carries over. */
  state?: LockState;
  /** While tasks wait, how often the holder is checked (default 30 s). */
  checkSeconds?: number;
};

/** The lock ends after this long with nobody holding or waiting (the next task starts it again). */
const IDLE_MS = 60_000;
/** Continue as new past this many history events (or when Temporal suggests it). */
const HISTORY_LIMIT = 2_000;

export async function signinLock(input: SigninLockInput): Promise<void> {
  const queue = new LockQueue(input.state);
  setHandler(signinAcquireSignal, ({ taskId }) => queue.acquire(taskId));
  setHandler(signinReleaseSignal, ({ taskId }) => queue.release(taskId));
  setHandler(signinLockQuery, () => queue.state());
  if (input.first) queue.acquire(input.first);
  const checkMs = (input.checkSeconds ?? 30) * 1000;
  for (;;) {
    await tell(queue);
    if (queue.idle()) {
      if (await condition(() => queue.hasNotices() || !queue.idle(), IDLE_MS)) continue;
      return;
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > HISTORY_LIMIT) {
      return continueAsNew<typeof signinLock>({ ...input, first: undefined, state: queue.state() });
    }
    const changed = queue.contended()
      ? await condition(() => queue.hasNotices(), checkMs)
      : await condition(() => queue.hasNotices()).then(() => true);
    // Tasks wait and nothing changed: tell the holder again (a holder that ended is released on the way).
    if (!changed && queue.current !== null) queue.acquire(queue.current);
  }
}

/** Sends the queue's notices; a task that cannot be told has ended: it is released (which may grant the next). */
async function tell(queue: LockQueue): Promise<void> {
  while (queue.hasNotices()) {
    for (const notice of queue.takeNotices()) {
      try {
        await getExternalWorkflowHandle(notice.taskId).signal(signinNoticeSignal, notice);
      } catch (err) {
        log.info('a task of the sign-in lock has ended; released', { taskId: notice.taskId, error: String(err) });
        queue.release(notice.taskId);
      }
    }
  }
}
