// Sessions held while their tasks wait for a reply (src/runtime/session-holds.ts): a hold ends unclaimed after its
// time (saved, then closed), a reply takes it back, the longest held is found for an open that needs a slot, and
// the idle sweep (session-lifetimes.ts) leaves held sessions alone. On fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionHolds } from '../../src/runtime/session-holds';
import { SessionLifetimes } from '../../src/runtime/session-lifetimes';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function holds() {
  const events: string[] = [];
  const kept = new SessionHolds(async (id) => void events.push(`close ${id}`));
  const hold = (id: string, ms: number) => kept.hold(id, ms, async (why) => void events.push(`save ${id} ${why}`));
  return { kept, hold, events };
}

describe('SessionHolds', () => {
  it('a hold that runs out saves, then closes the session; one taken back in time is not touched', async () => {
    const { kept, hold, events } = holds();
    hold('a', 1000);
    hold('b', 1000);
    expect(kept.take('b')).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(events).toEqual(['save a expired', 'close a']);
    expect(kept.take('a')).toBe(false);
    expect(kept.count).toBe(0);
  });

  it('finds the one held longest, and ends all holds at shutdown', async () => {
    const { kept, hold, events } = holds();
    hold('a', 10_000);
    vi.advanceTimersByTime(5);
    hold('b', 10_000);
    expect(kept.longest()).toBe('a');
    await kept.end('a', 'pool_needed');
    expect(kept.longest()).toBe('b');
    await kept.endAll('shutdown');
    expect(events).toEqual(['save a pool_needed', 'close a', 'save b shutdown', 'close b']);
  });

  it('frees a slot for an open: ends the holds, longest held first, while the pool is full', async () => {
    let open = 3;
    const events: string[] = [];
    const kept = new SessionHolds(async (id) => {
      events.push(`close ${id}`);
      open -= 1;
    });
    for (const id of ['a', 'b', 'c']) {
      kept.hold(id, 10_000, async (why) => void events.push(`save ${id} ${why}`));
      vi.advanceTimersByTime(5);
    }
    await kept.freeSlot(() => open >= 2); // a pool of 2 slots, 3 of them open
    expect(events).toEqual(['save a pool_needed', 'close a', 'save b pool_needed', 'close b']);
    expect([kept.count, kept.has('c')]).toEqual([1, true]);
    await kept.freeSlot(() => false); // a free slot: nothing ends
    expect(kept.count).toBe(1);
  });

  it('a hold being ended is kept from the idle sweep, and can be waited for until the session is closed', async () => {
    let finishSave = (): void => undefined;
    const events: string[] = [];
    const kept = new SessionHolds(async (id) => void events.push(`close ${id}`));
    kept.hold('a', 10, () => new Promise<void>((resolve) => (finishSave = resolve)));
    expect(kept.keeps('a')).toBe(true);
    await vi.advanceTimersByTimeAsync(10);
    expect([kept.has('a'), kept.isEnding('a'), kept.keeps('a')]).toEqual([false, true, true]);
    const settled = kept.settled('a').then(() => events.push('settled'));
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual([]);
    finishSave();
    await settled;
    expect(events).toEqual(['close a', 'settled']);
    expect(kept.keeps('a')).toBe(false);
    await kept.settled('never-held');
  });

  it('a save that fails still closes the session (the save at the hold start is there)', async () => {
    const closed: string[] = [];
    const log: string[] = [];
    const kept = new SessionHolds(
      async (id) => void closed.push(id),
      (l) => log.push(l),
    );
    kept.hold('a', 10, () => Promise.reject(new Error('disk full')));
    await vi.advanceTimersByTimeAsync(10);
    expect(closed).toEqual(['a']);
    expect(log[0]).toContain('disk full');
  });
});

describe('SessionLifetimes with held sessions', () => {
  it('the idle sweep skips a held session; one taken back starts its idle clock again', async () => {
    const held = new Set(['h']);
    const closed: string[] = [];
    const kept: SessionLifetimes = new SessionLifetimes(
      { idleTimeoutMs: 1000 },
      async (id) => {
        closed.push(id);
        kept.delete(id);
      },
      (id) => held.has(id),
    );
    kept.add('h', () => 5000);
    kept.add('i', () => 5000);
    expect(await kept.closeIdle()).toEqual(['i']);
    held.delete('h');
    kept.touch('h');
    expect(await kept.closeIdle()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000); // the sweep closes it now
    expect(closed).toEqual(['i', 'h']);
    kept.stop();
  });
});
