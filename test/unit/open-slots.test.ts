// The session-open queue's slot supplier: a worker offers as many activity slots as its pool has free slots,
// waiting pollers get one when a slot frees up (first come, first served), and an aborted reservation leaves the line.
import { describe, expect, it } from 'vitest';
import { freeSlotSupplier } from '../../worker/open-slots';
import type { FreeSlotSource } from '../../worker/open-slots';

/** A pool's bookkeeping: slots taken, and the listeners BrowserPool calls when one may have come free. */
class PoolSlots implements FreeSlotSource {
  busy = 0;
  private readonly listeners = new Set<() => void>();
  constructor(readonly slots: number) {}
  onFreeSlot(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  free(n = 1): void {
    this.busy -= n;
    for (const l of this.listeners) l();
  }
}

const ctx = {} as never;
const settled = async <T>(p: Promise<T>): Promise<'granted' | 'pending' | 'rejected'> =>
  Promise.race([
    p.then(
      () => 'granted' as const,
      () => 'rejected' as const,
    ),
    new Promise<'pending'>((r) => setTimeout(() => r('pending'), 20)),
  ]);

describe('freeSlotSupplier', () => {
  it('grants one activity slot per free slot and holds further pollers until a slot frees up', async () => {
    const pool = new PoolSlots(2);
    const slots = freeSlotSupplier(pool);
    const abort = new AbortController();
    expect(await settled(slots.reserveSlot(ctx, abort.signal))).toBe('granted');
    expect(await settled(slots.reserveSlot(ctx, abort.signal))).toBe('granted');
    const third = slots.reserveSlot(ctx, abort.signal);
    expect(await settled(third)).toBe('pending');
    expect(slots.tryReserveSlot(ctx)).toBeNull();
    // The first open finished: its session now holds the slot, the activity slot is released; still none free.
    pool.busy += 1;
    slots.releaseSlot(ctx);
    expect(await settled(third)).toBe('pending');
    // That session closes: the waiting poller gets its slot.
    pool.free();
    expect(await settled(third)).toBe('granted');
    expect(slots.outstanding).toBe(2);
    slots.dispose();
  });

  it('counts slots the pool took by other paths (an open on the old shared queue)', async () => {
    const pool = new PoolSlots(1);
    pool.busy = 1;
    const slots = freeSlotSupplier(pool);
    expect(slots.tryReserveSlot(ctx)).toBeNull();
    pool.free();
    expect(slots.tryReserveSlot(ctx)).toEqual({});
    expect(slots.tryReserveSlot(ctx)).toBeNull();
  });

  it('serves waiting pollers first come, first served; an aborted one leaves the line', async () => {
    const pool = new PoolSlots(1);
    pool.busy = 1;
    const slots = freeSlotSupplier(pool);
    const first = new AbortController();
    const order: string[] = [];
    const a = slots.reserveSlot(ctx, first.signal).then(
      () => order.push('a'),
      (err: Error) => order.push(`a:${err.name}`),
    );
    const b = slots.reserveSlot(ctx, new AbortController().signal).then(() => order.push('b'));
    first.abort();
    await a;
    pool.free();
    await b;
    expect(order).toEqual(['a:AbortError', 'b']);
    expect(slots.outstanding).toBe(1);
  });
});
