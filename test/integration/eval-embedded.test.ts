// `cua eval` with nothing running: the command function, given a configuration whose (local) Temporal address nobody
// listens on, starts a dev server and a worker in this process, runs two shipped tasks twice each (`--trials 2`),
// reports pass@2 and the mean, and stops what it started.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import { canConnect, freePort } from '../../src/infra/devserver';
import type { EvalResultsFile } from '../../src/eval/results';
import { loadConfig } from '../../src/runtime/config';
import { FAST_TIMING, workflowBundle } from './harness';

const TASKS = path.resolve(__dirname, '../../eval/tasks/local.jsonl');

describe('cua eval without a running server', () => {
  it('starts a dev server and a worker for the evaluation, runs K trials, and stops them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-embedded-'));
    const port = await freePort();
    const config = loadConfig({
      env: {
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        CUA_RUNS_DIR: path.join(dir, 'runs'),
        CUA_TASK_QUEUE: `eval-embedded-${process.pid}`,
      },
    });
    const out = path.join(dir, 'out');
    const lines: string[] = [];
    const code = await evalCommand(
      [TASKS, '--first', '3', '--filter', 'fx-(lisbon|wrong)-price', '--trials', '2', '--out', out, '--id', 'eval-emb'],
      {
        config,
        print: (l) => lines.push(l),
        pollMs: 300,
        taskDefaults: { timing: FAST_TIMING },
        dataDir: dir,
        uiPort: null,
        workflowBundle: await workflowBundle(config),
      },
    );
    expect(code).toBe(0);
    expect(lines).toContain(
      `[eval] no Temporal server at 127.0.0.1:${port}: starting one in this process (SQLite ${path.join(dir, 'temporal.sqlite')})`,
    );
    expect(lines.some((l) => l.startsWith('[eval] starting a worker in this process for the evaluation'))).toBe(true);
    expect(lines).toContain('[eval] evaluation eval-emb started: 2 task(s) × 2 trial(s), concurrency 4');
    expect(lines).toContain('[eval] success rate 50.0% (2/4 scored) · aborted 0 · pass@2 50.0% · mean 0.500');
    expect(lines.at(-1)).toBe(
      `[eval] stopping a Temporal dev server and a worker started for the evaluation (the history stays in ` +
        `${path.join(dir, 'temporal.sqlite')}; \`npx cua server\` serves it again)`,
    );
    const results = JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    expect(results.summary).toMatchObject({ runs: 4, trials: 2, tasks: 2, passAtK: 0.5, meanScore: 0.5 });
    expect(
      results.tasks.map((t) => [t.taskId, t.passAtK, t.mean, t.trials.map((r) => `${r.runId}:${r.score}`)]),
    ).toEqual([
      ['fx-lisbon-price', true, 1, ['eval-emb-fx-lisbon-price-t0-a1:1', 'eval-emb-fx-lisbon-price-t1-a1:1']],
      ['fx-wrong-price', false, 0, ['eval-emb-fx-wrong-price-t0-a1:0', 'eval-emb-fx-wrong-price-t1-a1:0']],
    ]);
    expect(fs.readFileSync(path.join(out, 'report.html'), 'utf8')).toContain('<tr><th>pass@2</th><td>50.0%</td></tr>');
    // Everything it started is gone.
    expect(await canConnect('127.0.0.1', port)).toBe(false);
  }, 300_000);
});
