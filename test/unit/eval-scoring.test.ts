// Specification of rule scoring and the evaluation's figures: each rule kind, unfinished runs scoring 0, aborted
// trials out of the denominator, pass@k and the mean over trials, step budgets, groups, and flipped tasks.
import { describe, expect, it } from 'vitest';
import { numbersIn, scoreByRules } from '../../src/eval/checks';
import type { Fetcher } from '../../src/eval/checks';
import type { Check } from '../../src/eval/task-set';
import type { FinalPageRecord } from '../../src/agent/final-page';
import { compareResults, summarize, summarizeTasks } from '../../src/eval/results';
import type { EvalResultsFile } from '../../src/eval/results';
import type { EvalRecord } from '../../src/eval/records';
import { attemptKind } from '../../src/eval/records';

const site: Fetcher = async (url) =>
  url.endsWith('/_bookings') ? { status: 200, body: '[{"guest":"Ada Lovelace"}]' } : { status: 404, body: '' };
const done = (answer: string, finalUrl = 'http://s/hotel/1') => ({ endReason: 'complete', answer, finalUrl });

describe('rule checks', () => {
  it.each<[Check, string, boolean]>([
    [{ type: 'answer_contains', value: 'harbor view' }, 'Harbor View costs €120', true],
    [{ type: 'answer_contains', value: 'harbor view', case_sensitive: true }, 'Harbor View costs €120', false],
    [{ type: 'answer_regex', pattern: '€\\s?88\\b' }, 'It is € 88.', true],
    [{ type: 'answer_regex', pattern: '€\\s?88\\b' }, 'It is €880.', false],
    [{ type: 'answer_number', value: 120 }, 'costs €1,120 or €120', true],
    [{ type: 'answer_number', value: 120, tolerance: 1 }, 'about 119.5', true],
    [{ type: 'answer_number', value: 120 }, 'about 119.5', false],
    [{ type: 'url_matches', pattern: '/hotel/1$' }, 'x', true],
    [{ type: 'url_matches', pattern: '/hotel/2$' }, 'x', false],
    [{ type: 'http', url: 'http://s/_bookings', contains: 'Ada Lovelace' }, 'x', true],
    [{ type: 'http', url: 'http://s/_bookings', contains: 'Grace Hopper' }, 'x', false],
    [{ type: 'http', url: 'http://s/nope' }, 'x', false],
  ])('%j on %j → %s', async (check, answer, passed) => {
    const s = await scoreByRules([check], done(answer), site);
    expect(s.score).toBe(passed ? 1 : 0);
  });

  describe('page_js (the final page, as the run recorded it)', () => {
    const page = (probes: FinalPageRecord['probes']): FinalPageRecord => ({
      url: 'http://s/hotel/1',
      recorded_at: '2026-12-01T00:00:00Z',
      probes,
    });
    const script = "document.getElementById('price')?.textContent";
    const ran = (value: unknown, truthy = !!value) => page([{ script, ok: true, truthy, value }]);
    it.each<[Check, FinalPageRecord | null, boolean, string]>([
      [{ type: 'page_js', script }, ran('€120'), true, 'returned "€120"'],
      [{ type: 'page_js', script }, ran(''), false, 'returned ""'],
      [{ type: 'page_js', script }, ran(null), false, 'returned null'],
      [{ type: 'page_js', script, equals: '€120' }, ran('€120'), true, 'returned "€120"'],
      [{ type: 'page_js', script, equals: '€95' }, ran('€120'), false, 'returned "€120"'],
      [{ type: 'page_js', script, equals: { n: [1, 2] } }, ran({ n: [1, 2] }), true, 'returned {"n":[1,2]}'],
      [{ type: 'page_js', script, equals: { n: [1, 2] } }, ran({ n: [2, 1] }), false, 'returned {"n":[2,1]}'],
      [
        { type: 'page_js', script },
        page([{ script, ok: false, truthy: false, error: 'did not finish within 5000 ms' }]),
        false,
        'the script failed: did not finish within 5000 ms',
      ],
      [{ type: 'page_js', script: 'document.title' }, ran('€120'), false, 'the run did not evaluate this script'],
      [{ type: 'page_js', script }, null, false, 'the final page was not recorded'],
      // A value too long to keep whole still has its truthiness, but never equals anything.
      [
        { type: 'page_js', script },
        page([{ script, ok: true, truthy: true, clipped: '"aaaa…' }]),
        true,
        'returned "aaaa…',
      ],
      [
        { type: 'page_js', script, equals: 'aaaa' },
        page([{ script, ok: true, truthy: true, clipped: '"aaaa…' }]),
        false,
        'returned "aaaa…',
      ],
    ])('%j on %j → %s', async (check, finalPage, passed, detail) => {
      const s = await scoreByRules([check], { ...done('x'), finalPage }, site);
      expect(s.score).toBe(passed ? 1 : 0);
      expect(s.checks[0]?.detail).toContain(detail);
    });
  });

  it('scores a run that did not finish 0 without running its rules', async () => {
    const s = await scoreByRules(
      [{ type: 'answer_contains', value: '€' }],
      { ...done('€'), endReason: 'max_rounds' },
      site,
    );
    expect(s).toEqual({ score: 0, reasoning: 'the agent did not finish the task (max_rounds)', checks: [] });
  });

  it('says which checks failed', async () => {
    const s = await scoreByRules(
      [
        { type: 'answer_number', value: 95 },
        { type: 'url_matches', pattern: '/hotel/2$' },
      ],
      done('Alfama costs €95'),
      site,
    );
    expect(s.score).toBe(0);
    expect(s.reasoning).toBe('failed: final URL matches //hotel/2$/ (final URL http://s/hotel/1)');
  });

  it('reads numbers with thousands separators', () => {
    expect(numbersIn('€1,234.50 and -3 and 7')).toEqual([1234.5, -3, 7]);
  });

  it.each([
    ['complete', 'scored'],
    ['max_rounds', 'scored'],
    ['invalid_replies', 'scored'],
    ['budget', 'scored'],
    ['loop', 'scored'],
    ['browser', 'retry'],
    ['model_endpoint', 'retry'],
    ['terminated', 'retry'],
    ['input', 'abort'],
    ['cancelled', 'abort'],
  ])('end reason %s is %s', (reason, kind) => {
    expect(attemptKind(reason)).toBe(kind);
  });
});

function rec(
  setTaskId: string,
  trial: number,
  outcome: 'scored' | 'aborted',
  score: number | null,
  steps = 5,
): EvalRecord {
  return {
    index: Number(setTaskId.slice(1)),
    taskId: setTaskId,
    trial,
    outcome,
    endReason: outcome === 'scored' ? 'complete' : 'browser',
    score,
    steps,
    answer: null,
    reasoning: '',
    runId: `e-${setTaskId}-t${trial}-a1`,
    attempts: [`e-${setTaskId}-t${trial}-a1`],
    site: setTaskId === 't1' ? 'demo' : 'fixture',
    level: 'easy',
    tags: ['x'],
  };
}

describe('figures', () => {
  const records = [
    rec('t1', 0, 'scored', 1, 20),
    rec('t1', 1, 'scored', 0),
    rec('t2', 0, 'scored', 0),
    rec('t2', 1, 'aborted', null),
    rec('t3', 0, 'scored', 1, 3),
    rec('t3', 1, 'scored', 1, 3),
  ];

  it('counts scored runs only; aborted ones are reported apart', () => {
    const s = summarize(records, [15, 30]);
    expect(s).toMatchObject({ runs: 6, scored: 5, aborted: 1, passed: 3, successRate: 3 / 5, trials: 2, tasks: 3 });
    expect(s.passAtK).toBeCloseTo(2 / 3);
    expect(s.meanScore).toBeCloseTo((0.5 + 0 + 1) / 3);
    expect(s.stepBudgets).toEqual({ '15': 2 / 5, '30': 3 / 5 });
    expect(s.bySite).toEqual({
      demo: { runs: 2, scored: 2, passed: 1, rate: 0.5 },
      fixture: { runs: 4, scored: 3, passed: 2, rate: 2 / 3 },
    });
  });

  it('lists the tasks that flipped between two results', () => {
    const file = (rs: EvalRecord[]): EvalResultsFile => ({
      evalId: 'e',
      createdAt: '',
      taskSet: '',
      options: {},
      summary: summarize(rs),
      tasks: summarizeTasks(rs),
    });
    const a = file([rec('t1', 0, 'scored', 1), rec('t2', 0, 'scored', 0), rec('t3', 0, 'scored', 1)]);
    const b = file([
      rec('t1', 0, 'scored', 0),
      rec('t2', 0, 'scored', 1),
      rec('t3', 0, 'scored', 1),
      rec('t4', 0, 'scored', 1),
    ]);
    expect(compareResults(a, b)).toEqual([
      { taskId: 't1', before: true, after: false },
      { taskId: 't2', before: false, after: true },
      { taskId: 't4', before: null, after: true },
    ]);
  });
});
