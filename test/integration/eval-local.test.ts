// The shipped local task set as one evaluation, end to end: `cua eval eval/tasks/local.jsonl --concurrency 4` through
// the command function, against a real Temporal dev server, a real worker and Chromium, the bundled sites and the
// scripted stand-in model. Scores must match what the scripts are known to do, deliberate failures included.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import type { EvalResultsFile } from '../../src/eval/results';
import { EXPECTED, verdicts } from './eval-expected';
import { readRun } from '../../src/trajectory/reader';
import { FAST_TIMING } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const TASKS = path.resolve(__dirname, '../../eval/tasks/local.jsonl');

describe('cua eval on the shipped task set', () => {
  let h: Harness;
  // Workers whose operator runs the page_js checks (browser.pageProbes; off by default).
  useHarness((x) => (h = x), { env: { CUA_PAGE_PROBES: '1' } });

  it('prints progress, writes both reports, and scores every task as its script is known to do', async () => {
    const out = path.join(h.dir, 'eval-out');
    const lines: string[] = [];
    const code = await evalCommand(
      [TASKS, '--concurrency', '4', '--out', out, '--id', 'eval-local', '--max-retries', '2'],
      {
        config: h.config,
        client: h.client,
        print: (l) => lines.push(l),
        pollMs: 300,
        taskDefaults: { timing: FAST_TIMING },
      },
    );
    expect(code).toBe(0);
    expect(lines.some((l) => /^\[eval\] \d+\/14 done · \d running/.test(l))).toBe(true);
    expect(lines).toContain('[eval] success rate 61.5% (8/13 scored) · aborted 1 · pass@1 61.5% · mean 0.615');
    expect(lines).toContain(
      '[eval] 3 task(s) have page_js checks: workers run them only with browser.pageProbes on (CUA_PAGE_PROBES=1); ' +
        'on a worker without it those checks fail as not run',
    );
    const results = JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    expect(verdicts(results)).toEqual(EXPECTED);
    const byId = new Map(results.tasks.map((t) => [t.taskId, t.trials[0]!]));
    // The flaky endpoint needed a second run; the dead one was given up after 1 + 2 retries.
    expect(byId.get('fx-flaky-endpoint')?.attempts).toEqual([
      'eval-local-fx-flaky-endpoint-t0-a1',
      'eval-local-fx-flaky-endpoint-t0-a2',
    ]);
    expect(byId.get('fx-dead-endpoint')?.attempts).toHaveLength(3);
    expect(byId.get('fx-out-of-steps')?.endReason).toBe('max_rounds');
    expect(byId.get('fx-garbage')?.endReason).toBe('invalid_replies');
    expect(byId.get('demo-no-booking')?.reasoning).toContain('GET http://127.0.0.1:');
    // Each scored run has its verdict in its run folder (Fara's verification format).
    const run = await readRun(h.runDir(byId.get('demo-booking')!.runId));
    expect(run.verification.eval_rules).toMatchObject({ result_type: 'base', score: 1, verifier_name: 'eval_rules' });
    // page_js checks read the last page as the run left it: evaluated in its browser before the release.
    const pageCheck = async (setTaskId: string) => {
      const checks = (await readRun(h.runDir(byId.get(setTaskId)!.runId))).verification.eval_rules?.metadata.checks as {
        check: string;
        passed: boolean;
        detail: string;
      }[];
      return checks.find((c) => c.check.startsWith('on the final page'));
    };
    expect(await pageCheck('fx-lisbon-price')).toMatchObject({ passed: true, detail: 'returned "€120 per night"' });
    expect(await pageCheck('fx-book-harbor')).toMatchObject({ passed: true, detail: 'returned true' });
    expect(await pageCheck('fx-wrong-page')).toMatchObject({ passed: false, detail: 'returned "€120 per night"' });
    const probed = JSON.parse(
      fs.readFileSync(path.join(h.runDir(byId.get('fx-lisbon-price')!.runId), 'final_page.json'), 'utf8'),
    ) as { url: string; probes: unknown[] };
    expect(probed.url).toMatch(/\/hotel\/1$/);
    expect(probed.probes).toHaveLength(1);
    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('Success rate <b>61.5%</b>');
    expect(html).toContain('href="http://127.0.0.1:8233/namespaces/default/workflows/eval-local-demo-booking-t0-a1"');
    expect(html).toMatch(/href="[^"]*eval-local-fx-lisbon-price-t0-a1\/report\.html"/);
    // Every task run carries the evaluation's search attribute.
    const tagged: string[] = [];
    for await (const wf of h.client.workflow.list({
      query: `CuaEvaluation = 'eval-local' AND WorkflowType = 'agentTask'`,
    })) {
      tagged.push(wf.workflowId);
    }
    expect(tagged).toHaveLength(14 + 1 + 2);
  }, 300_000);
});

describe('page_js checks on a worker that does not run page probes (the default)', () => {
  let h: Harness;
  useHarness((x) => (h = x));

  it('records them as not run, saying why, and the check fails', async () => {
    const out = path.join(h.dir, 'eval-out');
    const code = await evalCommand([TASKS, '--filter', 'fx-lisbon-price', '--out', out, '--id', 'eval-no-probes'], {
      config: h.config,
      client: h.client,
      print: () => undefined,
      pollMs: 300,
      taskDefaults: { timing: FAST_TIMING },
    });
    expect(code).toBe(0);
    const results = JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    const trial = results.tasks[0]!.trials[0]!;
    const checks = (await readRun(h.runDir(trial.runId))).verification.eval_rules?.metadata.checks as {
      check: string;
      passed: boolean;
      detail: string;
    }[];
    expect(checks.find((c) => c.check.startsWith('on the final page'))).toMatchObject({
      passed: false,
      detail: expect.stringMatching(/^the script failed: not run: this worker does not run a task's page probes/),
    });
    expect(trial.score).toBe(0);
  }, 120_000);
});
