// A schedule's monitor decides when to notify (workflows/monitor-book.ts): `changed` after a baseline, a condition
// when it becomes true and not while it stays true, a run heard twice counted once, failed and partial runs not
// compared. And the schedule's spec refusals (client/schedule-spec.ts): cron, time zone, interval, one line each.
import { describe, expect, it } from 'vitest';
import { MonitorBook } from '../../workflows/monitor-book';
import type { MonitorReport } from '../../src/contract/monitor';
import type { NotifyWhen } from '../../src/contract/condition-logic';
import { checkCron, checkTimezone, parseDuration, parseEvery, ScheduleSpecError } from '../../client/schedule-spec';

let n = 0;
const report = (value: unknown, over: Partial<MonitorReport> = {}): MonitorReport => ({
  taskId: `prices-2026-11-30T09:00:0${++n}Z`,
  status: 'complete',
  endReason: 'complete',
  answer: 'done',
  output: { value, partial: false },
  hasSchema: true,
  steps: 3,
  instruction: 'Read the price.',
  at: '2026-11-30T09:00:05.000Z',
  ...over,
});
const book = (notifyWhen: NotifyWhen) => new MonitorBook({ schedule: 'prices', notifyWhen });

describe('monitor: changed', () => {
  it('the first run is the baseline; a deep-unequal value notifies with old and new; an equal one does not', () => {
    const b = book('changed');
    expect(b.hear(report({ price: 120, tags: ['a'] }))).toBeNull();
    expect(b.hear(report({ tags: ['a'], price: 120 }))).toBeNull();
    const first = report({ price: 95, tags: ['a'] });
    expect(b.hear(first)).toMatchObject({
      taskId: first.taskId,
      deliveryId: `prices-monitor-notify-${first.taskId}`,
      old: { price: 120, tags: ['a'] },
      new: { price: 95, tags: ['a'] },
    });
    expect(b.hear(report({ price: 95, tags: ['a'] }))).toBeNull();
    expect(b.state.runs.map((r) => r.verdict)).toEqual(['baseline', 'unchanged', 'changed', 'unchanged']);
    expect(b.state.notifications).toHaveLength(1);
  });

  it('a report heard twice (a redelivery) does not notify twice', () => {
    const b = book('changed');
    b.hear(report({ price: 120 }));
    const changed = report({ price: 95 });
    expect(b.hear(changed)).not.toBeNull();
    expect(b.hear(changed)).toBeNull();
    expect(b.state.reports).toBe(2);
  });

  it('failed and partial runs are not compared: the comparison goes on from the last good value', () => {
    const b = book('changed');
    b.hear(report({ price: 120 }));
    expect(b.hear(report(null, { status: 'failed', endReason: 'model_endpoint', output: null }))).toBeNull();
    expect(b.hear(report({ price: 1 }, { output: { value: { price: 1 }, partial: true } }))).toBeNull();
    expect(b.hear(report({ price: 95 }))).toMatchObject({ old: { price: 120 }, new: { price: 95 } });
    expect(b.state.runs.map((r) => r.verdict)).toEqual(['baseline', 'ignored', 'ignored', 'changed']);
    expect(b.state.runs[1]?.note).toMatch(/ended failed/);
    expect(b.state.runs[2]?.note).toMatch(/partial/);
  });

  it('a run without an output schema is compared by its answer', () => {
    const b = book('changed');
    b.hear(report(null, { hasSchema: false, output: null, answer: '120 EUR' }));
    expect(b.hear(report(null, { hasSchema: false, output: null, answer: '95 EUR' }))).toMatchObject({
      old: '120 EUR',
      new: '95 EUR',
    });
  });
});

describe('monitor: a condition notifies when it becomes true', () => {
  it('false → true notifies; true → true does not; true → false → true notifies again', () => {
    const b = book('output.price < 100');
    const verdicts = [120, 95, 90, 130, 80].map((price) => [b.hear(report({ price })) !== null, price]);
    expect(verdicts).toEqual([
      [false, 120],
      [true, 95],
      [false, 90],
      [false, 130],
      [true, 80],
    ]);
    expect(b.state.runs.map((r) => r.verdict)).toEqual(['false', 'became_true', 'still_true', 'false', 'became_true']);
    expect(b.state.notifications.map((x) => [x.old, x.new])).toEqual([
      [{ price: 120 }, { price: 95 }],
      [{ price: 130 }, { price: 80 }],
    ]);
  });

  it('true at the first run notifies (old: null)', () => {
    const b = book({ '<': [{ var: 'output.price' }, 100] });
    expect(b.hear(report({ price: 95 }))).toMatchObject({ old: null, new: { price: 95 }, previousTaskId: null });
  });

  it('carried over (continue-as-new): a condition that held stays held', () => {
    const b = book('output.price < 100');
    b.hear(report({ price: 95 }));
    const next = new MonitorBook({ schedule: 'prices', notifyWhen: 'output.price < 100', state: b.state });
    expect(next.hear(report({ price: 90 }))).toBeNull();
  });
});

describe('schedule spec: refusals, one line each', () => {
  it.each([
    '0 9 * * 1-5',
    '*/15 * * * *',
    '0 9 * * MON-FRI',
    '0 0 1 jan,jul *',
    '30 0 9 * * * 2027',
    '@daily',
    '0 9 * * 1-5 # weekdays',
  ])('cron %j is accepted', (cron) => expect(() => checkCron(cron)).not.toThrow());

  it.each([
    ['0 9 * *', /has 4 field\(s\); expected 5/],
    ['61 9 * * *', /cron minute: 61 is outside 0–59/],
    ['0 25 * * *', /cron hour: 25 is outside 0–23/],
    ['0 9 * * 1-9', /cron day of week: 9 is outside 0–7/],
    ['0 9 * * FOO', /cron day of week: 'FOO' is no number or name/],
    ['0 9 5-1 * *', /ends before it starts/],
    ['0 9 */0 * *', /a step must be ≥ 1/],
    ['@sometimes', /unknown shorthand/],
    ['', /empty/],
    ['TZ=Europe/Lisbon 0 9 * * *', /--timezone/],
  ])('cron %j is refused', (cron, message) => {
    const err = (() => {
      try {
        checkCron(cron);
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ScheduleSpecError);
    expect(err?.message).toMatch(message);
    expect(err?.message).not.toContain('\n');
  });

  it('time zones as Intl knows them', () => {
    expect(() => checkTimezone('Europe/Lisbon')).not.toThrow();
    expect(() => checkTimezone('UTC')).not.toThrow();
    expect(() => checkTimezone('Mars/Olympus')).toThrow(/--timezone: unknown time zone 'Mars\/Olympus'/);
  });

  it('intervals and windows', () => {
    expect(parseEvery('6h')).toBe(6 * 3_600_000);
    expect(parseEvery('5s')).toBe(5000);
    expect(parseEvery('1h30m')).toBe(5_400_000);
    expect(() => parseEvery('6 hours')).toThrow(/--every '6 hours' is no duration/);
    expect(() => parseEvery('0s')).toThrow(/at least 1 s/);
    expect(() => parseDuration('soon', '--catchup-window')).toThrow(/--catchup-window 'soon'/);
  });
});
