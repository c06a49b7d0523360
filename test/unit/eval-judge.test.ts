// The LLM judge (src/eval/judge.ts): its reply readers, which tasks it judges, the prompts (a task's reference answer
// shown as a hint), and whole judgements against the scripted model playing the judge from the shipped judge scripts
// (eval/scripts/judge-*.json): a pass, a fail, a rubric, a verdict it cannot read (an error result, never a pass), and
// one with a reference answer. Plus the report's judge column.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  judgeKindFor,
  judgeRun,
  JudgeOutputError,
  parseKeyPoints,
  parseRelevance,
  parseRubric,
  parseVerdict,
} from '../../src/eval/judge';
import type { JudgeAsk, JudgedRun, TaskJudge } from '../../src/eval/judge';
import { keyPointsMessages, relevanceMessages, rubricMessages, verdictMessages } from '../../src/eval/judge-prompts';
import type { ChatMessage } from '../../src/model/client';
import { renderEvalReport } from '../../src/eval/report-html';
import { summarize, summarizeTasks } from '../../src/eval/results';
import { loadTaskSet, sitePlaceholders } from '../../src/eval/task-set';
import { ModelClient } from '../../src/model/client';
import { configFromObject } from '../../src/runtime/config';
import { judgeEndpoint, judgedRun } from '../../activities/eval';
import type { Event } from '../../src/trajectory/schema';
import {
  CALL_KIND_HEADER,
  ENTRY_INDEX_HEADER,
  JUDGE_ITEM_HEADER,
  startScriptedModelServer,
} from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import type { EvalRecord } from '../../src/eval/records';

const SCRIPTS = path.resolve(__dirname, '../../eval/scripts');
const JUDGED = path.resolve(__dirname, '../../eval/tasks/judged.jsonl');

describe('judge replies', () => {
  it('reads key points from numbered or bulleted lines, and refuses a reply without a list', () => {
    expect(parseKeyPoints('Key points:\n1. Search Lisbon\n2) Open the first hotel\n- **Report its price**')).toEqual([
      'Search Lisbon',
      'Open the first hotel',
      'Report its price',
    ]);
    expect(() => parseKeyPoints('The task is about prices.')).toThrow(JudgeOutputError);
  });

  it.each([
    ['The detail page.\nScore: 5', 5, 'The detail page.'],
    ['Reasoning: a list of hotels. **Score:** 3/5', 3, 'a list of hotels.'],
    ['score 2 at first; on reflection Score: 4', 4, 'score 2 at first; on reflection'],
    ['No idea.', null, 'No idea.'],
  ])('reads the relevance of %j', (reply, score, note) => {
    expect(parseRelevance(reply)).toEqual({ score, note });
  });

  it.each([
    ['Reasons: all met.\nVerdict: success', true, 'all met.'],
    ['The price is wrong.\n**Verdict:** FAILURE', false, 'The price is wrong.'],
    ['Thoughts…\nStatus: "success"', true, 'Thoughts…'],
  ])('reads the verdict of %j', (reply, success, reasons) => {
    expect(parseVerdict(reply)).toEqual({ success, reasons });
  });

  it('refuses a verdict output without a verdict line', () => {
    expect(() => parseVerdict('Looks fine to me, probably a success overall.')).toThrow(/no "Verdict/);
  });

  it('reads a rubric (overall given, or the mean of the criteria) and refuses one without scores', () => {
    const criteria = ['searched', 'opened', 'answered'];
    const r = parseRubric(
      'Here: {"criteria": [{"criterion": 1, "score": 1, "reason": "ok"}, {"criterion": 3, "score": 1.4}], "overall": 0.7}',
      criteria,
    );
    expect(r.overall).toBe(0.7);
    expect(r.criteria).toEqual([
      { criterion: 'searched', score: 1, reason: 'ok' },
      { criterion: 'answered', score: 1, reason: '' },
    ]);
    expect(parseRubric('{"criteria": [{"score": 1}, {"score": 0}]}', criteria).overall).toBe(0.5);
    expect(() => parseRubric('{"verdict": "good"}', criteria)).toThrow(/no scores/);
    expect(() => parseRubric('no json here', criteria)).toThrow(JudgeOutputError);
  });
});

describe("the judge's prompts with a reference answer", () => {
  const REF = 'Harbor View Lisbon, €120 per night';
  const shots = [{ label: 'screenshot 1 of 1', url: 'data:image/png;base64,AA==', note: 'the detail page' }];
  /** All text the model is sent, system and user, joined. */
  const textOf = (messages: ChatMessage[]) =>
    messages
      .flatMap((m) =>
        typeof m.content === 'string'
          ? [m.content]
          : (m.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])),
      )
      .join('\n');
  const calls: [string, (reference: string | null) => ChatMessage[]][] = [
    ['key points', (r) => keyPointsMessages('Find the price', r)],
    ['verdict', (r) => verdictMessages('Find the price', ['Report the price'], ['Click'], '€120', shots, r)],
    ['rubric', (r) => rubricMessages('Find the price', ['Report the price'], ['Click'], '€120', shots, r)],
  ];

  it.each(calls)('%s: given as a hint that need not match word for word, and absent without one', (_, build) => {
    const withRef = textOf(build(REF));
    expect(withRef).toContain(`Reference answer (recorded when the task was written): ${REF}`);
    expect(withRef).toContain('The site is live and may have changed since');
    expect(withRef).toContain('need not match it word for word');
    expect(textOf(build(null))).not.toContain('Reference answer');
    expect(textOf(build('  '))).not.toContain('Reference answer');
  });

  it('keeps the reference out of the key points themselves, and tells the verdict to trust the screenshots', () => {
    expect(textOf(keyPointsMessages('Find the price', REF))).toContain(
      'do not make its wording or its values a key point',
    );
    expect(textOf(verdictMessages('t', ['p'], [], 'x', shots, REF))).toContain(
      'an answer that differs from the reference but is supported by them is acceptable',
    );
  });

  it('never shows it to the per-screenshot relevance call (which takes no reference)', () => {
    expect(textOf(relevanceMessages('Find the price', ['Report the price'], 'screenshot 1', 'data:,'))).not.toContain(
      'Reference',
    );
  });
});

describe('which tasks are judged', () => {
  const own = (kind: TaskJudge['kind']): TaskJudge => ({ kind, model: null, rubric: [] });
  it.each([
    ['no checks, auto, no judge endpoint', [], null, undefined, false, null],
    ['no checks, auto, models.judge configured', [], null, undefined, true, 'webjudge'],
    ['no checks, auto, --judge-model given', [], null, { model: 'gpt' }, false, 'webjudge'],
    ['checks, auto, judge configured: the rules alone', [1], null, undefined, true, null],
    ['checks, --judge rubric: added', [1], null, { kind: 'rubric' }, false, 'rubric'],
    ['the task names its judge', [1], own('webjudge'), undefined, false, 'webjudge'],
    ['the task says none', [], own('none'), { kind: 'webjudge' }, true, null],
    ['--judge none wins over the task', [], own('rubric'), { kind: 'none' }, true, null],
  ] as const)('%s', (_, checks, judge, settings, configured, expected) => {
    expect(judgeKindFor({ checks, judge }, settings, configured)).toBe(expected);
  });

  it('reads the shipped judged set: task judges, rubric criteria and the judge model placeholder', () => {
    const tasks = loadTaskSet(JUDGED);
    const rubric = tasks.find((t) => t.id === 'judged-rubric');
    expect(rubric?.judge).toMatchObject({
      kind: 'rubric',
      model: { baseUrl: '{{scripted}}', model: 'judge-porto-rubric' },
    });
    expect(rubric?.judge?.rubric).toHaveLength(3);
    expect(sitePlaceholders(tasks)).toEqual(['demo', 'fixture', 'scripted']);
  });
});

describe("the judge's endpoint", () => {
  const config = configFromObject({
    models: {
      default: { baseUrl: 'http://agent:8000/v1', model: 'fara', apiKey: 'agent-key' },
      judge: { baseUrl: 'https://judge.example/v1', model: 'gpt-judge', apiKey: 'judge-key' },
    },
    modelKeys: { 'https://other.example/v1': 'other-key' },
  });
  const ref = { path: 'x.jsonl', sites: { scripted: 'http://127.0.0.1:9/v1' } };
  it.each([
    ['models.judge, as configured', null, undefined, 'https://judge.example/v1', 'gpt-judge', 'judge-key'],
    [
      '--judge-model only: the judge endpoint with its key',
      null,
      { model: 'gpt-big' },
      'https://judge.example/v1',
      'gpt-big',
      'judge-key',
    ],
    [
      '--judge-base-url elsewhere: no key',
      null,
      { baseUrl: 'http://mine:1/v1', model: 'm' },
      'http://mine:1/v1',
      'm',
      undefined,
    ],
    [
      'a URL with a modelKeys entry: that key',
      null,
      { baseUrl: 'https://other.example/v1' },
      'https://other.example/v1',
      'gpt-judge',
      'other-key',
    ],
    [
      '--judge-endpoint default: the agent endpoint and its key',
      null,
      { endpoint: 'default' },
      'http://agent:8000/v1',
      'fara',
      'agent-key',
    ],
    [
      "the task's own judge model, placeholder filled",
      { baseUrl: '{{scripted}}', model: 'judge-x' },
      { model: 'ignored' },
      'http://127.0.0.1:9/v1',
      'judge-x',
      undefined,
    ],
  ] as const)('%s', (_, own, settings, baseUrl, model, apiKey) => {
    const endpoint = judgeEndpoint(config, own, settings, ref, 't');
    expect({ baseUrl: endpoint.baseUrl, model: endpoint.model, apiKey: endpoint.apiKey }).toEqual({
      baseUrl,
      model,
      apiKey,
    });
  });
});

describe('what the judge sees of a run', () => {
  it('one line per action and each screenshot once, labelled by its step', async () => {
    const obs = (id: string, shot: string) =>
      ({ type: 'observation', observation_type: 'environment', id, screenshot_path: shot }) as unknown as Event;
    const act = (id: string, description: string) =>
      ({
        type: 'action',
        id,
        action_name: 'left_click',
        content: { action: 'left_click', arguments: { thoughts: 't', coordinate: [1, 2] } },
        action_nl_description: description,
      }) as unknown as Event;
    const events = [
      obs('o0', 'screenshot_0_pre.png'),
      act('a1', 'I will click the search box.\nClick at (500, 200)'),
      obs('o1', 'screenshot_1_post.png'),
      obs('o2', 'screenshot_1_post.png'),
      act('a2', ''),
    ];
    const run = judgedRun('task', 'answer', events, async () => undefined);
    expect(run.actions).toEqual([
      'I will click the search box. → Click at (500, 200)',
      'left_click {"coordinate":[1,2]}',
    ]);
    expect(run.screenshots.map((s) => s.label)).toEqual([
      'screenshot 1 of 2 (before step 0)',
      'screenshot 2 of 2 (after step 1)',
    ]);
    await expect(run.screenshots[0]?.load()).rejects.toThrow(/missing from the run folder/);
  });
});

describe('a judgement against the scripted judge', () => {
  let model: ScriptedModelServer;
  beforeAll(async () => {
    model = await startScriptedModelServer({ scriptsDir: SCRIPTS });
  });
  afterAll(async () => {
    await model.close();
  });

  /** The judge's calls as the activity makes them (same headers), to a script of eval/scripts. */
  const askFor =
    (script: string): JudgeAsk =>
    async (stage, messages, item) => {
      const client = new ModelClient({ baseUrl: model.url, model: script });
      const headers = {
        [CALL_KIND_HEADER]: stage,
        [ENTRY_INDEX_HEADER]: '0',
        ...(item !== undefined ? { [JUDGE_ITEM_HEADER]: String(item) } : {}),
      };
      return (await client.complete(messages, { headers })).text;
    };
  const PIXEL =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
  const run = (answer: string): JudgedRun => ({
    task: 'Find the nightly price of the first hotel in Lisbon.',
    answer,
    actions: ['Click the search box', 'Type "Lisbon" and press Enter', 'Click the first result', `Answer: ${answer}`],
    screenshots: [0, 1, 2, 3].map((i) => ({
      path: `screenshot_${i}_${i ? 'post' : 'pre'}.png`,
      label: `screenshot ${i + 1} of 4`,
      load: async () => PIXEL,
    })),
  });
  const requestsOf = (script: string) => model.requests.filter((r) => r.script === script);

  it('passes a run: key points, one relevance call per screenshot, the best screenshots with the verdict', async () => {
    const outcome = await judgeRun('webjudge', run('Harbor View Lisbon: €120 per night.'), askFor('judge-lisbon-pass'));
    expect(outcome).toMatchObject({ verifier: 'webjudge', resultType: 'web_judge', score: 1, error: null });
    expect(outcome.reasoning).toMatch(/^the run searched Lisbon, opened the first result/);
    expect(outcome.metadata.key_points).toHaveLength(3);
    // Relevance 1, 3, 5, 5 (the last reply repeats): three at or above 3 kept.
    expect(outcome.metadata.screenshots).toEqual([
      { path: 'screenshot_0_pre.png', relevance: 1, kept: false },
      { path: 'screenshot_1_post.png', relevance: 3, kept: true },
      { path: 'screenshot_2_post.png', relevance: 5, kept: true },
      { path: 'screenshot_3_post.png', relevance: 5, kept: true },
    ]);
    const calls = requestsOf('judge-lisbon-pass');
    expect(calls.map((r) => r.call)).toEqual([
      'key_points',
      'relevance',
      'relevance',
      'relevance',
      'relevance',
      'verdict',
    ]);
    const verdict = calls.at(-1);
    expect(verdict?.imageCount).toBe(3);
    expect(verdict?.allText).toContain("The agent's final answer: Harbor View Lisbon: €120 per night.");
    expect(verdict?.allText).toContain('1. Search for hotels in Lisbon');
    expect(verdict?.allText).not.toContain('Reference answer');
    expect(outcome.metadata).not.toHaveProperty('reference_answer');
  });

  it("gives the task's reference answer to the key points and the verdict, and records that it did", async () => {
    const before = model.requests.length;
    const reference = 'Harbor View Lisbon, €120 per night';
    const outcome = await judgeRun(
      'webjudge',
      { ...run('Harbor View Lisbon: €120 per night.'), reference },
      askFor('judge-alfama-pass'),
    );
    expect(outcome).toMatchObject({ score: 1, error: null, metadata: { reference_answer: reference } });
    const calls = model.requests.slice(before);
    const withRef = calls.filter((r) =>
      r.allText.includes(`Reference answer (recorded when the task was written): ${reference}`),
    );
    expect(withRef.map((r) => r.call)).toEqual(['key_points', 'verdict']);
    expect(calls.filter((r) => r.call === 'relevance')).toHaveLength(4);
  });

  it('takes a blank reference for none', async () => {
    const before = model.requests.length;
    const outcome = await judgeRun('webjudge', { ...run('€120'), reference: ' ' }, askFor('judge-alfama-pass'));
    expect(outcome.metadata).not.toHaveProperty('reference_answer');
    expect(model.requests.slice(before).some((r) => r.allText.includes('Reference answer'))).toBe(false);
  });

  it('fails a run whose answer the screenshots do not support', async () => {
    const outcome = await judgeRun(
      'webjudge',
      run('Harbor View Lisbon costs €95 per night.'),
      askFor('judge-wrong-price-fail'),
    );
    expect(outcome).toMatchObject({ score: 0, error: null, metadata: { verdict: 'failure' } });
    expect(outcome.reasoning).toContain('a price that appears nowhere on that page');
  });

  it('records a verdict it cannot read as an error with no score (never a pass)', async () => {
    const outcome = await judgeRun('webjudge', run('Tidewater Travel'), askFor('judge-unreadable'));
    expect(outcome.score).toBeNull();
    expect(outcome.error).toBe('unreadable_verdict');
    expect(outcome.reasoning).toMatch(/^judge error: the verdict output has no "Verdict: success\|failure" line/);
    expect(outcome.metadata.reply).toContain('Looks fine to me');
  });

  it("scores a rubric of the task set's criteria (no key-points call) 0–1, after its 503s are retried", async () => {
    const criteria = ['searched Porto', 'opened the first hotel', 'gave its price'];
    const ask = askFor('judge-porto-rubric');
    // The script fails each kind of call once (503): the first attempts throw, as the activity would be retried.
    await expect(judgeRun('rubric', run('€88'), ask, { rubric: criteria })).rejects.toThrow(/503/);
    await expect(judgeRun('rubric', run('€88'), ask, { rubric: criteria })).rejects.toThrow(/503/);
    const outcome = await judgeRun('rubric', run('€88'), ask, { rubric: criteria });
    expect(outcome).toMatchObject({ verifier: 'rubric_judge', resultType: 'mm_rubric', score: 0.8, error: null });
    expect(outcome.metadata.criteria_scores).toEqual([
      { criterion: 'searched Porto', score: 1, reason: 'the run searched Porto' },
      { criterion: 'opened the first hotel', score: 1, reason: 'the first result was opened' },
      { criterion: 'gave its price', score: 0.5, reason: "the price is given, without the currency's context" },
    ]);
    expect(outcome.reasoning).toContain('gave its price: 0.5');
    expect(requestsOf('judge-porto-rubric').some((r) => r.call === 'key_points')).toBe(false);
  });

  it('answers an agent call on a judge entry with a 400 naming the header', async () => {
    const client = new ModelClient({ baseUrl: model.url, model: 'judge-lisbon-pass' });
    await expect(client.complete([{ role: 'user', content: 'hi' }])).rejects.toThrow(/answers judge calls only/);
  });
});

describe('the report with the judge', () => {
  it("shows the judge figures and each judged run's verdict and reasons", () => {
    const base = { index: 0, trial: 0, outcome: 'scored' as const, endReason: 'complete', steps: 4, answer: '€95' };
    const records: EvalRecord[] = [
      {
        ...base,
        taskId: 'a',
        score: 0,
        reasoning: 'webjudge: the page shows €120, not €95',
        runId: 'e-a-t0-a1',
        attempts: ['e-a-t0-a1'],
        site: null,
        level: null,
        tags: [],
        judge: { verifier: 'webjudge', score: 0, reasoning: 'the page shows €120, not €95', error: null },
        scoredBy: 'judge',
      },
      {
        ...base,
        index: 1,
        taskId: 'b',
        score: 1,
        reasoning: 'all 1 check(s) passed',
        runId: 'e-b-t0-a1',
        attempts: ['e-b-t0-a1'],
        site: null,
        level: null,
        tags: [],
        judge: { verifier: 'webjudge', score: 1, reasoning: 'matches', error: null },
        scoredBy: 'rules',
      },
    ];
    const summary = summarize(records);
    expect(summary.judge).toEqual({ judged: 2, passed: 1, errors: 0, withRules: 1, agreeWithRules: 1 });
    const html = renderEvalReport(
      { evalId: 'e', createdAt: '', taskSet: 't', options: {}, summary, tasks: summarizeTasks(records) },
      { trajectory: () => null, temporal: () => null },
    );
    expect(html).toContain('<h2>LLM judge</h2>');
    expect(html).toContain('<b>webjudge</b>: <span class="no">fail</span> 0<br>the page shows €120, not €95');
    expect(html).toContain('<tr><th>agrees with the rules</th><td>1 of 1</td></tr>');
  });
});
