// What waiting for a run store looks like from outside, and its limits: pure, so the workflows (which size their
// activities' timeouts by the wait) and the client (which reads a waiting activity's heartbeat details) share it with
// the activities that wait (src/trajectory/store-faults.ts).
import type { RunStoreUnavailableKind } from './errors';

/** The faults that are waited out: a full store (ENOSPC, EDQUOT), a read-only one (EROFS), an unreachable one. */
export type StoreFaultKind = Exclude<RunStoreUnavailableKind, 'refused'>;

/** A wait, as a waiting activity heartbeats it (under STORE_WAIT_DETAIL) and the client's status() gives it. */
export interface StoreWait {
  kind: StoreFaultKind;
  /** When the store became unusable (ISO time). */
  since: string;
  /** When this wait gives up if the store is not back (ISO time). */
  until: string;
  /** The last failure's one-line reason. */
  lastError: string;
}

/** The key of a waiting activity's heartbeat details under which the wait is. */
export const STORE_WAIT_DETAIL = 'waitingForStore';

/** The default of config store.faultWaitMinutes: long enough for an operator to see the alert and react. */
export const DEFAULT_STORE_FAULT_WAIT_MINUTES = 30;
/** The most store.faultWaitMinutes may be (a night); workflows size their activities' timeouts by the waits. */
export const MAX_STORE_FAULT_WAIT_MINUTES = 720;

/** The operator's line for a fault: "the run store is full: <reason>". */
export function storeFaultLine(kind: StoreFaultKind, reason: string): string {
  const what = kind === 'full' ? 'full' : kind === 'read_only' ? 'read-only' : 'unreachable';
  return `the run store is ${what}: ${reason}`;
}
