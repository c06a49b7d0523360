// Store faults: which failures of a run store are the environment's (waited out) and which are not, the backoff,
// the once-a-minute log per store, the give-up after the limit, and cancellation. Fake clock, no I/O.
import { describe, expect, it } from 'vitest';
import { LockTimeoutError, RunStoreUnavailableError } from '../../src/trajectory/errors';
import { classifyStoreFault, humanDuration, StoreFaultPolicy, storeBackoffMs } from '../../src/trajectory/store-faults';
import type { StoreWaitHooks } from '../../src/trajectory/store-faults';
import type { StoreWait } from '../../src/trajectory/store-wait';

const errno = (code: string, message = `${code}: something, open '/runs/r/x.png'`) =>
  Object.assign(new Error(message), { code });
const s3 = (name: string, status: number, message = name) =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });

describe('which run store failures are waited out', () => {
  it.each([
    ['ENOSPC (a full disk)', errno('ENOSPC', 'ENOSPC: no space left on device, write'), 'full'],
    ['EDQUOT (a quota)', errno('EDQUOT'), 'full'],
    ['EROFS (remounted read-only)', errno('EROFS'), 'read_only'],
    [
      'ECONNREFUSED (the endpoint is down)',
      errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9000'),
      'unreachable',
    ],
    ['ECONNRESET', errno('ECONNRESET'), 'unreachable'],
    ['ETIMEDOUT', errno('ETIMEDOUT'), 'unreachable'],
    ['EAI_AGAIN (DNS)', errno('EAI_AGAIN'), 'unreachable'],
    [
      'a refusal on every address (AggregateError)',
      Object.assign(new AggregateError([errno('ECONNREFUSED')], ''), {}),
      'unreachable',
    ],
    [
      'a code on the cause (the SDK wraps it)',
      Object.assign(new Error('socket hang up'), { cause: errno('ECONNRESET') }),
      'unreachable',
    ],
    [
      "the SDK's own timeout",
      Object.assign(new Error('Connection timed out after 5000 ms'), { name: 'TimeoutError' }),
      'unreachable',
    ],
    ['HTTP 503 SlowDown', s3('SlowDown', 503, 'Please reduce your request rate.'), 'unreachable'],
    ['HTTP 503 ServiceUnavailable', s3('ServiceUnavailable', 503), 'unreachable'],
    ['HTTP 500 InternalError', s3('InternalError', 500), 'unreachable'],
    ['HTTP 502 with no name', s3('Unknown', 502, 'Bad Gateway'), 'unreachable'],
    ['HTTP 429', s3('TooManyRequests', 429), 'unreachable'],
    ['HTTP 507 (a full server)', s3('Unknown', 507, 'Insufficient Storage'), 'full'],
    ["MinIO's full disk", s3('XMinioStorageFull', 507), 'full'],
    [
      "the S3 store's own unreachable error",
      new RunStoreUnavailableError('S3 run store http://h:9000: cannot reach it (ECONNREFUSED)', {
        kind: 'unreachable',
      }),
      'unreachable',
    ],
  ])('%s: %s', (_what, error, kind) => {
    const fault = classifyStoreFault(error);
    expect(fault?.kind).toBe(kind);
    expect(fault?.reason).not.toContain('\n');
    expect(fault?.reason.length).toBeGreaterThan(0);
  });

  it.each([
    // A run that is not there stays not there: waiting would only delay "not a run folder".
    ['ENOENT (a missing run)', errno('ENOENT')],
    // Permissions and credentials are the configuration's; the worker reads its keys once, so only a restart helps.
    ['EACCES', errno('EACCES')],
    ['EPERM', errno('EPERM')],
    ['HTTP 403 AccessDenied', s3('AccessDenied', 403)],
    ['HTTP 403 InvalidAccessKeyId', s3('InvalidAccessKeyId', 403)],
    [
      'credentials refused, as the S3 store says it',
      new RunStoreUnavailableError('… credentials refused', { kind: 'refused' }),
    ],
    // A deleted bucket does not come back by itself.
    ['HTTP 404 NoSuchBucket', s3('NoSuchBucket', 404)],
    // A request we got wrong is wrong every time.
    ['HTTP 400 InvalidArgument', s3('InvalidArgument', 400)],
    // A failing disk is not repaired by waiting.
    ['EIO', errno('EIO')],
    // A wait that already gave up is final: nothing waits for it again.
    [
      'a store error that already waited',
      new RunStoreUnavailableError('the run store is full: …; gave up after 30 min', {
        kind: 'full',
        waitedMs: 1_800_000,
      }),
    ],
    ['a lock held too long', new LockTimeoutError('/runs/r/solver_log/events.jsonl.lock')],
    ['a bug', new RangeError('key "../x" leaves the store root')],
    ['not even an Error', 'boom'],
  ])('%s is not', (_what, error) => {
    expect(classifyStoreFault(error)).toBeNull();
  });
});

describe('the backoff', () => {
  it('is 1 s doubling to 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map((n) => storeBackoffMs(n))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });

  it.each([
    [12_000, '12 s'],
    [12 * 60_000, '12 min'],
    [90 * 60_000, '1 h 30 min'],
    [120 * 60_000, '2 h'],
  ])('%d ms reads as %s', (ms, text) => expect(humanDuration(ms)).toBe(text));
});

/** A policy on a fake clock whose pauses move the clock; what it logged, paused and reported. */
function fixture(limitMs: number, hooks: StoreWaitHooks = {}, onPause?: (policy: StoreFaultPolicy) => Promise<void>) {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const logs: { at: number; line: string }[] = [];
  const pauses: number[] = [];
  const waits: (StoreWait | null)[] = [];
  const policy = new StoreFaultPolicy({
    where: '/srv/runs',
    limitMs,
    log: (line) => logs.push({ at: now, line }),
    hooks: { ...hooks, onWait: (w) => waits.push(w) },
    now: () => now,
    sleep: async (ms) => {
      pauses.push(ms);
      now += ms;
      await onPause?.(policy);
    },
  });
  return {
    policy,
    logs,
    pauses,
    waits,
    advance: (ms: number) => (now += ms),
    at: () => now,
  };
}

/** An operation that fails with `error` `times` times, then returns 'ok'. */
function failing(times: number, error: unknown = errno('ENOSPC', 'ENOSPC: no space left on device, write')) {
  let calls = 0;
  const op = async () => {
    calls++;
    if (calls <= times) throw error;
    return 'ok';
  };
  return { op, calls: () => calls };
}

describe('waiting out a fault', () => {
  it('retries with backoff until the store is back, reporting the wait, and logs the start and the end', async () => {
    const f = fixture(30 * 60_000);
    const flaky = failing(3);
    await expect(f.policy.run(flaky.op)).resolves.toBe('ok');
    expect(flaky.calls()).toBe(4);
    expect(f.pauses).toEqual([1000, 2000, 4000]);
    expect(f.waits.at(-1)).toBeNull();
    const first = f.waits[0];
    expect(first).toMatchObject({ kind: 'full', since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:30:00.000Z' });
    expect(first?.lastError).toBe('ENOSPC: no space left on device, write');
    expect(f.logs.map((l) => l.line)).toEqual([
      'the run store is full: ENOSPC: no space left on device, write (/srv/runs); tasks wait for it, retrying ' +
        'with backoff, for up to 30 min (store.faultWaitMinutes)',
      'the run store is back (/srv/runs) after 7 s; it was full: ENOSPC: no space left on device, write',
    ]);
  });

  it('logs once a minute while it waits, not once per retry', async () => {
    const f = fixture(30 * 60_000);
    const flaky = failing(14); // tries at 0, 1, 3, 7, 15, 31, 61, 91, … 271 s fail; the one at 301 s goes through
    await f.policy.run(flaky.op);
    const still = f.logs.filter((l) => l.line.includes('still waiting'));
    expect(still.length).toBe(4); // at 61, 121, 181 and 241 s
    expect(still.length).toBeLessThan(flaky.calls() - 1);
    expect(still[0]?.line).toMatch(/^the run store is full: .*\(\/srv\/runs\); still waiting, 1 min so far$/);
    const times = [f.logs[0], ...still].map((l) => l?.at ?? 0);
    for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(60_000);
    expect(f.logs.at(-1)?.line).toMatch(/^the run store is back \(\/srv\/runs\) after 5 min;/);
  });

  it('gives up after the limit with a final, one-line error of the fault kind', async () => {
    const f = fixture(12_000);
    const down = failing(Infinity, errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9000'));
    const err = await f.policy.run(down.op).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunStoreUnavailableError);
    const e = err as RunStoreUnavailableError;
    expect(e.kind).toBe('unreachable');
    expect(e.waitedMs).toBeGreaterThanOrEqual(12_000);
    expect(e.message).toBe(
      'the run store is unreachable: connect ECONNREFUSED 127.0.0.1:9000; gave up after 12 s ' +
        '(store.faultWaitMinutes: 12 s)',
    );
    expect(classifyStoreFault(e)).toBeNull(); // never waited for again
    // The last pause ends at the limit, not a full backoff step past it.
    expect(f.pauses.reduce((a, b) => a + b, 0)).toBe(12_000);
    expect(f.waits.at(-1)).toBeNull();
    expect(f.logs.at(-1)?.line).toMatch(
      /^gave up waiting for the run store \(\/srv\/runs\): the run store is unreachable/,
    );
  });

  it('a call during an outage that outlasted the limit fails at once; one after a quiet minute waits again', async () => {
    const f = fixture(10_000);
    await f.policy.run(failing(Infinity).op).catch(() => undefined);
    const pausesBefore = f.pauses.length;
    const finalize = failing(Infinity);
    await expect(f.policy.run(finalize.op)).rejects.toThrow(/gave up after 10 s/);
    expect(finalize.calls()).toBe(1);
    expect(f.pauses.length).toBe(pausesBefore);
    f.advance(61_000); // nobody met the store for a minute: the next fault starts a new outage
    const later = failing(2);
    await expect(f.policy.run(later.op)).resolves.toBe('ok');
    expect(later.calls()).toBe(3);
  });

  it('throws other failures at once, without waiting', async () => {
    const f = fixture(60_000);
    const missing = failing(1, errno('ENOENT'));
    await expect(f.policy.run(missing.op)).rejects.toThrow(/ENOENT/);
    expect(missing.calls()).toBe(1);
    expect(f.pauses).toEqual([]);
    expect(f.logs).toEqual([]);
  });

  it('a read that goes through does not end a full store (reads work on a full disk); a write does', async () => {
    const backs: boolean[] = [];
    const f = fixture(60_000, {}, async (policy) => {
      await policy.run(async () => 'read', 'read'); // another task reads while this write waits
      backs.push(f.logs.some((l) => l.line.includes('is back')));
    });
    await f.policy.run(failing(2).op, 'write');
    expect(backs).toEqual([false, false]);
    expect(f.logs.filter((l) => l.line.includes('is back'))).toHaveLength(1);
  });

  it('an unreachable store is back with any request that goes through, a read too', async () => {
    const backs: boolean[] = [];
    const f = fixture(60_000, {}, async (policy) => {
      await policy.run(async () => 'listed', 'read');
      backs.push(f.logs.some((l) => l.line.includes('is back')));
    });
    await f.policy.run(failing(1, errno('ECONNREFUSED')).op, 'write');
    expect(backs).toEqual([true]);
  });

  it('stops waiting when its activity is cancelled, with the cancellation', async () => {
    const abort = new AbortController();
    const reason = new Error('activity cancelled');
    const f = fixture(60_000, { signal: () => abort.signal });
    let calls = 0;
    const op = async () => {
      calls++;
      if (calls === 2) abort.abort(reason);
      throw errno('ENOSPC');
    };
    await expect(f.policy.run(op)).rejects.toBe(reason);
    expect(calls).toBe(2);
    expect(f.waits.at(-1)).toBeNull();
  });

  it('waits no longer than the hooks allow (the time its activity has left), and says so', async () => {
    const f = fixture(30 * 60_000, { limitMs: () => 5_000 });
    await expect(f.policy.run(failing(Infinity).op)).rejects.toThrow(
      /; gave up after 5 s \(all the 5 s its activity had left\)$/,
    );
    const g = fixture(30 * 60_000, { limitMs: () => 0 });
    const once = failing(Infinity);
    await expect(g.policy.run(once.op)).rejects.toThrow(/\(not waited for here\)$/);
    expect(once.calls()).toBe(1);
  });

  it('a limit of 0 (store.faultWaitMinutes: 0) fails at the first fault', async () => {
    const f = fixture(0);
    await expect(f.policy.run(failing(Infinity, errno('EROFS')).op)).rejects.toThrow(
      /^the run store is read-only: EROFS: .* \(store\.faultWaitMinutes is 0\)$/,
    );
  });
});
