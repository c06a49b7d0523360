// Best of N's pure parts (issue 27): the winner (best score, then fewest steps, then first), the verdict line, a
// branch's own steps and tokens from its events (inherited steps are the source's), and the comparison lines.
import { describe, expect, it } from 'vitest';
import { branchTaskLine, pickWinner, verdictOf } from '../../src/eval/branches';
import type { BranchesRecord, BranchRecord } from '../../src/eval/branches';
import { LocalTaskSchema } from '../../src/eval/task-set';
import { branchesLines, branchStats } from '../../src/viewer/branches';
import type { Event } from '../../src/trajectory/schema';

const branch = (index: number, over: Partial<BranchRecord> = {}): BranchRecord => ({
  index,
  runId: `p-b${index}`,
  model: null,
  hint: null,
  state: 'done',
  endReason: 'complete',
  steps: 5,
  answer: 'ok',
  score: 0,
  scoredBy: 'rules',
  reasoning: null,
  ...over,
});

describe('pickWinner', () => {
  it('takes the best passing score, then the fewest steps, then the first branch', () => {
    expect(pickWinner([branch(1), branch(2, { score: 1, steps: 6 }), branch(3, { score: 1, steps: 4 })])?.index).toBe(
      3,
    );
    expect(pickWinner([branch(1, { score: 1 }), branch(2, { score: 1 })])?.index).toBe(1);
    expect(pickWinner([branch(1, { score: 0.6 }), branch(2, { score: 0.9, steps: 9 })])?.index).toBe(2);
  });

  it('has none when no branch passed, or the passing one is not done', () => {
    expect(pickWinner([branch(1), branch(2, { score: null })])).toBeNull();
    expect(pickWinner([branch(1, { score: 0.4 })])).toBeNull();
    expect(pickWinner([branch(1, { state: 'scoring', score: 1 })])).toBeNull();
  });
});

describe('verdictOf', () => {
  it('names the winner, how it was scored, and a tie', () => {
    const two = [branch(1, { score: 1, steps: 4 }), branch(2, { score: 1, steps: 6, scoredBy: 'judge' })];
    expect(verdictOf(two, true)).toBe(
      'branch 1 (p-b1) passes its checks in 4 steps (2 of 2 passed; the fewest steps wins a tie)',
    );
    expect(verdictOf([branch(1, { score: 1, scoredBy: 'judge' })], false)).toBe(
      'branch 1 (p-b1) passes the judge in 5 steps',
    );
  });

  it('says how many still run, or why none won', () => {
    expect(verdictOf([branch(1, { state: 'running', score: null }), branch(2)], false)).toBe('1 of 2 running');
    expect(verdictOf([branch(1), branch(2, { state: 'cancelled', score: null })], true)).toBe(
      'no branch passed (1 scored, 1 not scored)',
    );
  });
});

describe('branchTaskLine', () => {
  it('is a valid line of a local task set', () => {
    const line = branchTaskLine('Order 3.', {
      checks: [{ type: 'url_matches', pattern: '/placed' }],
      judge: 'webjudge',
      referenceAnswer: '3',
    });
    expect(LocalTaskSchema.parse(JSON.parse(line))).toMatchObject({ id: 'branch', reference_answer: '3' });
  });
});

const action = (step: number, usage: object, inherited = false, subCalls?: unknown[]): Event =>
  ({
    type: 'action',
    id: `step-${String(step).padStart(4, '0')}-action-g0`,
    timestamp: '2026-12-02T00:00:00Z',
    content: { action: 'left_click', arguments: {} },
    llm_conversation: { messages: [{ usage }] },
    ...(subCalls ? { tool_sub_calls: subCalls } : {}),
    metadata: inherited ? { inherited_from: { run_id: 's', step } } : {},
  }) as unknown as Event;

describe('branchStats', () => {
  it('counts its own steps, calls and tokens, not the inherited ones', () => {
    const events = [
      action(1, { prompt_tokens: 1000, completion_tokens: 10 }, true),
      { type: 'observation', observation_type: 'environment', screenshot_path: 'screenshot_2_post.png' } as Event,
      action(3, { prompt_tokens: 1200, completion_tokens: 20 }, false, [
        { messages: [{ usage: { prompt_tokens: 300, completion_tokens: 5 } }] },
      ]),
    ];
    expect(branchStats(events)).toEqual({
      ownSteps: 1,
      calls: 2,
      promptTokens: 1500,
      completionTokens: 25,
      costUsd: null,
      lastScreenshot: 'screenshot_2_post.png',
    });
  });
});

describe('branchesLines', () => {
  it('stars the winner and ends with the verdict', () => {
    const branches = [branch(1, { model: 'a', reasoning: 'final URL does not match' }), branch(2, { score: 1 })];
    const record: BranchesRecord = {
      id: 'p',
      source: { runId: 's', step: 2 },
      instruction: 'Order 3.',
      cancelRest: false,
      state: 'done',
      branches,
      winner: 'p-b2',
      verdict: verdictOf(branches, true),
    };
    const stats = new Map([
      [
        'p-b2',
        { ownSteps: 2, calls: 2, promptTokens: 2000, completionTokens: 40, costUsd: 0.0123, lastScreenshot: null },
      ],
    ]);
    const lines = branchesLines(record, stats);
    expect(lines[0]).toBe('best of 2: forks of s at step 2: Order 3.');
    expect(lines.find((l) => l.startsWith('*'))).toMatch(
      /^\* {2}2 {2}p-b2 +done +complete +5 +2 {2}1 +2,040 \(2 calls\) \$0\.012/,
    );
    expect(lines).toContain('      model a');
    expect(lines.at(-1)).toBe('winner: branch 2 (p-b2) passes its checks in 5 steps');
  });
});
