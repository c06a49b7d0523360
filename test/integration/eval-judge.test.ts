// The LLM judge inside an evaluation, end to end: the shipped judged set (eval/tasks/judged.jsonl: tasks with no rule
// checks, judged by the scripted model playing the judge from eval/scripts/judge-*.json) through `cua eval`, a real
// Temporal dev server, a worker and Chromium. A pass, a fail, a rubric whose 503s are retried, a verdict the judge
// cannot read and a refused judge request (both recorded as errors, unscored, the evaluation not crashed), a
// rule-checked task with the judge beside its rules, and a run that never finished (not judged). The pass has a
// reference answer: the judge's key-points and verdict calls are shown it, and its verdict records it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import type { EvalResultsFile } from '../../src/eval/results';
import { startScriptedModelServer } from '../../src/scripted/server';
import { readRun } from '../../src/trajectory/reader';
import { usageTotals } from '../../src/trajectory/usage';
import { FAST_TIMING } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const TASKS = path.resolve(__dirname, '../../eval/tasks/judged.jsonl');
const SCRIPTS = path.resolve(__dirname, '../../eval/scripts');

describe('cua eval with the LLM judge', () => {
  let h: Harness;
  useHarness((x) => (h = x));

  it('scores unchecked tasks by the verdict, records every verdict and error, and shows the reasons', async () => {
    const out = path.join(h.dir, 'eval-judge');
    const lines: string[] = [];
    // The scripted model (agent and judge) served here rather than by the command, to see what the judge was sent.
    const model = await startScriptedModelServer({ scriptsDir: SCRIPTS });
    const args = [TASKS, '--concurrency', '4', '--out', out, '--id', 'eval-judge', '--site', `scripted=${model.url}`];
    const code = await evalCommand(args, {
      config: h.config,
      client: h.client,
      print: (l) => lines.push(l),
      pollMs: 300,
      taskDefaults: { timing: FAST_TIMING },
    }).finally(() => model.close());
    expect(code).toBe(0);
    const reference = 'Reference answer (recorded when the task was written): Harbor View Lisbon, €120 per night';
    const shownTo = (script: string) =>
      model.requests.filter((r) => r.script === script && r.allText.includes(reference)).map((r) => r.call);
    expect(shownTo('judge-lisbon-pass')).toEqual(['key_points', 'verdict']);
    expect(model.requests.filter((r) => r.allText.includes('Reference answer'))).toHaveLength(2);
    expect(lines).toContain('[eval] success rate 60.0% (3/5 scored) · aborted 0 · pass@1 60.0% · mean 0.560');
    expect(lines).toContain(
      '[eval] judge: 6 run(s) judged · 3 pass · 2 without a verdict · agrees with the rules on 1/1',
    );
    const results = JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    const byId = new Map(results.tasks.map((t) => [t.taskId, t.trials[0]!]));
    const got = Object.fromEntries(
      [...byId].map(([id, r]) => [id, [r.score, r.scoredBy ?? null, r.judge?.score ?? null, r.judge?.error ?? null]]),
    );
    expect(got).toEqual({
      'judged-lisbon-price': [1, 'judge', 1, null],
      'judged-wrong-price': [0, 'judge', 0, null],
      'judged-unreadable': [null, null, null, 'unreadable_verdict'],
      'judged-rubric': [0.8, 'judge', 0.8, null],
      'judged-refused': [null, null, null, 'endpoint_refused'],
      'judged-with-rules': [1, 'rules', 1, null],
      'judged-out-of-steps': [0, 'rules', null, null],
    });
    expect(byId.get('judged-wrong-price')?.reasoning).toMatch(/^webjudge: the detail page of the first Lisbon hotel/);
    expect(byId.get('judged-out-of-steps')?.judge).toBeUndefined();

    // Each verdict is in its run folder, as Fara's verification format with the judge's own result type.
    const verification = async (id: string) => (await readRun(h.runDir(byId.get(id)!.runId))).verification;
    const pass = (await verification('judged-lisbon-price')).webjudge;
    expect(pass).toMatchObject({ result_type: 'web_judge', score: 1, verifier_name: 'webjudge' });
    expect(pass?.metadata).toMatchObject({
      task_id: 'judged-lisbon-price',
      judge_model: 'judge-lisbon-pass',
      reference_answer: 'Harbor View Lisbon, €120 per night',
    });
    expect((await verification('judged-wrong-price')).webjudge?.metadata).not.toHaveProperty('reference_answer');
    // The judge's calls count in the run's usage (issue 30): recorded with the verdict, one per request it sent.
    const passRun = await readRun(h.runDir(byId.get('judged-lisbon-price')!.runId));
    const judgeCalls = (passRun.verification.webjudge?.metadata as { model_calls: { stage: string }[] }).model_calls;
    const sent = model.requests.filter((r) => r.script === 'judge-lisbon-pass').map((r) => r.call);
    expect(judgeCalls.map((c) => c.stage).sort()).toEqual([...sent].sort());
    expect(judgeCalls).toMatchObject(
      sent.map(() => ({ model: 'judge-lisbon-pass', usage: { prompt_tokens: expect.any(Number) } })),
    );
    const agentCalls = usageTotals(passRun.events).calls;
    expect(agentCalls).toBeGreaterThan(0);
    expect(usageTotals(passRun.events, passRun.verification).calls).toBe(agentCalls + sent.length);
    expect((pass?.metadata as { screenshots: unknown[] }).screenshots.length).toBeGreaterThanOrEqual(3);
    expect((await verification('judged-rubric')).rubric_judge).toMatchObject({ result_type: 'mm_rubric', score: 0.8 });
    const unreadable = (await verification('judged-unreadable')).webjudge;
    expect(unreadable).toMatchObject({ score: null, metadata: { error: 'unreadable_verdict' } });
    expect(unreadable?.reasoning).toMatch(/^judge error: the verdict output has no "Verdict/);
    const refused = (await verification('judged-refused')).webjudge;
    expect(refused).toMatchObject({ score: null, metadata: { error: 'endpoint_refused' } });
    expect(refused?.reasoning).toContain('(400)');
    const both = await verification('judged-with-rules');
    expect(both.eval_rules?.score).toBe(1);
    expect(both.webjudge?.score).toBe(1);

    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('<h2>LLM judge</h2>');
    expect(html).toContain(
      'but the agent answered €95, a price that appears nowhere on that page. Key point 3 is not met.',
    );
    expect(html).toContain('no verdict (unreadable_verdict)');
  }, 300_000);
});
