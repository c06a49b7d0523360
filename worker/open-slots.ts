// The activity slot supplier of a worker's session-open queue (src/contract/queues.ts): it hands the SDK an activity
// slot, and so lets the worker poll for an open, only while its browser pool has a free slot. A worker whose browsers
// are all in use takes no opens; they go to a worker with a free slot, or wait in Temporal's queue until one frees up.
// Several workers (on several machines) then share the load without any of them holding an open it cannot serve.
import type { CustomSlotSupplier, SlotPermit, ActivitySlotInfo } from '@temporalio/worker';

/** What the supplier needs of a pool (BrowserPool has it). */
export interface FreeSlotSource {
  readonly slots: number;
  /** Slots taken: open sessions, and sessions being opened or closed. */
  readonly busy: number;
  /** Calls `listener` whenever a slot may have come free; returns a function that stops it. */
  onFreeSlot(listener: () => void): () => void;
}

export interface FreeSlotSupplier extends CustomSlotSupplier<ActivitySlotInfo> {
  /** Slots handed out and not released yet (reserved by a poller, or running an open). */
  readonly outstanding: number;
  /** Stops listening to the pool (the worker is done). */
  dispose(): void;
}

/** The SDK expects the signal's own reason back (anything else it logs as an error of the supplier). */
function abortError(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const err = new Error('slot reservation aborted');
  err.name = 'AbortError';
  return err;
}

/**
 * An activity slot per free slot of the pool. An activity slot is counted from the moment a poller reserves it until
 * the SDK releases it (after the open finished), and the session the open created is counted by the pool from then
 * on: so the activity slots never promise more than the pool's free slots, and the count is briefly conservative while
 * an open runs (never too generous).
 */
export function freeSlotSupplier(pool: FreeSlotSource): FreeSlotSupplier {
  let outstanding = 0;
  const waiting: Array<{ grant: () => void }> = [];
  const free = () => pool.slots - pool.busy - outstanding;
  const pump = () => {
    while (waiting.length > 0 && free() > 0) {
      outstanding += 1;
      waiting.shift()?.grant();
    }
  };
  const stop = pool.onFreeSlot(pump);
  return {
    type: 'custom',
    get outstanding() {
      return outstanding;
    },
    reserveSlot(_ctx, abortSignal): Promise<SlotPermit> {
      if (waiting.length === 0 && free() > 0) {
        outstanding += 1;
        return Promise.resolve({});
      }
      return new Promise<SlotPermit>((resolve, reject) => {
        const entry = {
          grant: () => {
            abortSignal.removeEventListener('abort', onAbort);
            resolve({});
          },
        };
        const onAbort = () => {
          const at = waiting.indexOf(entry);
          if (at >= 0) waiting.splice(at, 1);
          reject(abortError(abortSignal));
        };
        if (abortSignal.aborted) return onAbort();
        abortSignal.addEventListener('abort', onAbort, { once: true });
        waiting.push(entry);
      });
    },
    tryReserveSlot(): SlotPermit | null {
      if (waiting.length > 0 || free() <= 0) return null;
      outstanding += 1;
      return {};
    },
    markSlotUsed(): void {},
    releaseSlot(): void {
      outstanding = Math.max(0, outstanding - 1);
      pump();
    },
    dispose: stop,
  };
}
