// `cua eval --cache NAME` (issue 28): the same evaluation twice with one action cache. The first run decides every
// step with the model and fills the cache; the second takes the steps whose pages look the same from it, making fewer
// model calls with the same scores. Both print their model calls, the second with what they would have been without.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import type { EvalResultsFile } from '../../src/eval/results';
import { FAST_TIMING } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const TASKS = path.resolve(__dirname, '../../eval/tasks/local.jsonl');
const SCRIPTS = path.resolve(__dirname, '../../eval/scripts');

describe('cua eval --cache', () => {
  let h: Harness;
  useHarness((x) => (h = x), { env: { CUA_PAGE_PROBES: '1' } });

  /** The evaluations' scripted model, served here so both see the same endpoint (the cache is kept per endpoint). */
  let model: ScriptedModelServer;
  beforeAll(async () => void (model = await startScriptedModelServer({ scriptsDir: SCRIPTS })));
  afterAll(async () => model?.close());

  async function evaluate(id: string): Promise<{ lines: string[]; results: EvalResultsFile }> {
    const out = path.join(h.dir, id);
    const lines: string[] = [];
    const filter = '^(fx-lisbon-price|fx-book-harbor|fx-wrong-price)$';
    const code = await evalCommand(
      // The same sites both times (the cache is kept per start URL and model endpoint).
      [TASKS, '--filter', filter, '--concurrency', '3', '--out', out, '--id', id, '--cache', 'evals'].concat([
        '--site',
        `scripted=${model.url}`,
        '--site',
        `fixture=${h.site.url}`,
      ]),
      {
        config: h.config,
        client: h.client,
        print: (l) => lines.push(l),
        pollMs: 300,
        taskDefaults: { timing: FAST_TIMING },
      },
    );
    expect(code, lines.join('\n')).toBe(0);
    return {
      lines,
      results: JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile,
    };
  }

  const scores = (r: EvalResultsFile) => Object.fromEntries(r.tasks.map((t) => [t.taskId, t.trials[0]?.score]));

  it('a cached evaluation makes fewer model calls, with the same scores', async () => {
    const first = await evaluate('eval-cache-1');
    const second = await evaluate('eval-cache-2');
    expect(scores(first.results)).toEqual({ 'fx-lisbon-price': 1, 'fx-book-harbor': 1, 'fx-wrong-price': 0 });
    expect(scores(second.results)).toEqual(scores(first.results));
    const made = first.results.modelCalls;
    expect(made).toMatchObject({ fromCache: 0, saved: 0, cache: 'evals' });
    expect(made!.made).toBeGreaterThan(6);
    const reused = second.results.modelCalls!;
    expect(reused.fromCache).toBeGreaterThan(0);
    expect(reused.made).toBeLessThan(made!.made);
    // Without the cache the second run would have made as many calls as the first (its steps, and the page answers
    // reused with them).
    expect(reused.made + reused.saved!).toBe(made!.made);
    expect(second.lines).toContain(
      `[eval] model calls: ${reused.made} · ${reused.fromCache} step(s) from the cache evals (without the cache: ${made!.made})`,
    );
  }, 300_000);
});
