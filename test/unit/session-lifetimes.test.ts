// Specification of the session lifetimes every pool shares: an idle clock per session, the sweep that closes
// sessions idle past the limit, and the owners whose older sessions a new open closes. On fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleClock, SessionLifetimes } from '../../src/runtime/session-lifetimes';
import type { LifetimeEnd, LifetimeOptions } from '../../src/runtime/session-lifetimes';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('IdleClock', () => {
  it('counts from the end of the last operation, and stands at 0 while one runs', async () => {
    const clock = new IdleClock();
    vi.advanceTimersByTime(500);
    expect(clock.idleFor()).toBe(500);
    let finish = () => undefined as void;
    const running = clock.track(() => new Promise<void>((r) => (finish = r)));
    vi.advanceTimersByTime(2000);
    expect(clock.idleFor()).toBe(0);
    finish();
    await running;
    vi.advanceTimersByTime(300);
    expect(clock.idleFor()).toBe(300);
  });

  it('ends an operation that fails too', async () => {
    const clock = new IdleClock();
    vi.advanceTimersByTime(1000);
    await expect(clock.track(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(clock.idleFor()).toBe(0);
    vi.advanceTimersByTime(10);
    expect(clock.idleFor()).toBe(10);
  });
});

/** Lifetimes over fake sessions whose idle times the test sets; `closed` lists what was closed and why. */
function lifetimes(options: LifetimeOptions) {
  const idle = new Map<string, number>();
  const closed: [string, LifetimeEnd][] = [];
  const kept: SessionLifetimes = new SessionLifetimes(options, async (id, why) => {
    closed.push([id, why]);
    kept.delete(id);
  });
  const add = (id: string, idleMs: number, owner?: string) => {
    idle.set(id, idleMs);
    kept.add(id, () => idle.get(id) ?? 0, owner);
  };
  return { kept, add, closed };
}

describe('SessionLifetimes', () => {
  it.each<[string, number, string[]]>([
    ['none idle that long', 999, []],
    ['the ones idle exactly the limit or longer', 1000, ['b', 'c']],
  ])('closeIdle closes %s', async (_case, bIdle, expected) => {
    const { kept, add, closed } = lifetimes({ idleTimeoutMs: 1000 });
    add('a', 0);
    add('b', bIdle);
    add('c', bIdle === 999 ? 10 : 5000);
    expect(await kept.closeIdle()).toEqual(expected);
    expect(closed).toEqual(expected.map((id) => [id, 'idle']));
    kept.stop();
  });

  it('without an idle limit nothing is closed for idling and no sweep runs', async () => {
    const { kept, add, closed } = lifetimes({});
    add('a', 10 ** 9);
    vi.advanceTimersByTime(10 ** 9);
    expect(await kept.closeIdle()).toEqual([]);
    expect(closed).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("closeOwnedBy closes only that owner's sessions; no owner closes none", async () => {
    const { kept, add, closed } = lifetimes({});
    add('a1', 0, 'run-a');
    add('b1', 0, 'run-b');
    add('n1', 0);
    add('a2', 0, 'run-a');
    expect(await kept.closeOwnedBy(undefined)).toEqual([]);
    expect(await kept.closeOwnedBy('run-a')).toEqual(['a1', 'a2']);
    expect(closed).toEqual([
      ['a1', 'replaced'],
      ['a2', 'replaced'],
    ]);
    expect(await kept.closeOwnedBy('run-a')).toEqual([]);
  });

  it.each<[string, LifetimeOptions, number]>([
    ['a quarter of the limit', { idleTimeoutMs: 1000 }, 250],
    ['at most 30 s', { idleTimeoutMs: 600_000 }, 30_000],
    ['at least 50 ms', { idleTimeoutMs: 100 }, 50],
    ['as given', { idleTimeoutMs: 1000, sweepIntervalMs: 20 }, 20],
  ])('sweeps every %s, from the first session on, until stopped', async (_case, options, every) => {
    const limit = options.idleTimeoutMs ?? 0;
    const { kept, add, closed } = lifetimes(options);
    expect(vi.getTimerCount()).toBe(0);
    add('a', limit);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(every - 1);
    expect(closed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toEqual([['a', 'idle']]);
    kept.stop();
    expect(vi.getTimerCount()).toBe(0);
    add('b', limit); // a later session starts the sweep again
    await vi.advanceTimersByTimeAsync(every);
    expect(closed.at(-1)).toEqual(['b', 'idle']);
    kept.stop();
  });

  it('a close that fails does not stop the sweep', async () => {
    let tries = 0;
    const kept = new SessionLifetimes({ idleTimeoutMs: 100, sweepIntervalMs: 50 }, async () => {
      tries += 1;
      throw new Error('close failed');
    });
    kept.add('a', () => 100);
    await vi.advanceTimersByTimeAsync(150);
    expect(tries).toBe(3);
    kept.stop();
  });
});
