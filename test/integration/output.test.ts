// Structured output (docs/output.md) end to end: real dev server, real Chromium, the scripted model. A task with an
// output schema ends with JSON the schema validates, taken from the final page, the answer and the memorized facts;
// an invalid first extraction is corrected on the second call; both invalid leave the task complete without an
// output, saying why; a task its step budget stops still extracts, marked partial.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRun } from '../../src/trajectory/reader';
import { usageTotals } from '../../src/trajectory/usage';
import type { TaskResult } from '../../src/contract/task';
import { statusQuery } from '../../workflows/messages';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

let h: Harness;
useHarness((x) => (h = x));

const SCHEMA = {
  type: 'object',
  properties: { hotel: { type: 'string' }, price: { type: 'number' }, currency: { type: 'string' } },
  required: ['hotel', 'price'],
};

const extractions = (script: string) => h.model.requests.filter((r) => r.script === script && r.call === 'extract');

async function run(script: string, extra: Record<string, unknown> = {}) {
  const handle = await h.start({ script, startUrl: `${h.site.url}/hotel/1`, outputSchema: SCHEMA, ...extra });
  const result = (await handle.result()) as TaskResult;
  return { result, dir: h.runDir(handle.workflowId) };
}

describe('a task with an output schema', () => {
  it('returns JSON the schema validates, from the final page, the answer and the memorized facts', async () => {
    const { result, dir } = await run('output-price');
    expect(result).toMatchObject({ status: 'complete', answer: 'It costs €120 per night.' });
    expect(result.output).toEqual({
      value: { hotel: 'Harbor View Lisbon', price: 120, currency: 'EUR' },
      partial: false,
    });
    const [call] = extractions('output-price');
    expect(extractions('output-price')).toHaveLength(1);
    // The prompt held the schema, the answer, the memorized fact and the final page's text (no screenshot).
    for (const part of ['"price"', 'It costs €120 per night.', 'The first hotel is Harbor View Lisbon.', '€120']) {
      expect(call?.allText).toContain(part);
    }
    expect(call?.imageCount).toBe(0);
    // status.json and its mirror in metadata.stats; the run's `output` event counts the call in the usage.
    const status = JSON.parse(fs.readFileSync(path.join(dir, 'solver_log/status.json'), 'utf8'));
    expect(status).toMatchObject({ status: 'complete', output: result.output });
    const folder = await readRun(dir);
    expect(folder.output).toEqual(result.output);
    expect(folder.metadata.stats['output']).toEqual(result.output);
    const event = folder.events.find((e) => e.id.includes('-output-'));
    expect(event?.metadata).toMatchObject({ note: 'output', output: result.output });
    expect(usageTotals(folder.events).calls).toBe(3); // two steps, one extraction
    // The workflow's status query says it too.
    const view = await h.client.workflow.getHandle(folder.taskId).query(statusQuery);
    expect(view).toMatchObject({ output: result.output });
  });

  it('corrects an invalid first extraction on the second call, told what was wrong', async () => {
    const { result, dir } = await run('output-retry');
    expect(result.status).toBe('complete');
    expect(result.output).toEqual({ value: { hotel: 'Harbor View Lisbon', price: 120 }, partial: false });
    const calls = extractions('output-retry');
    expect(calls.map((c) => c.index)).toEqual([0, 1]);
    expect(calls[1]?.lastUserText).toContain('/price must be number');
    const event = (await readRun(dir)).events.find((e) => e.id.includes('-output-'));
    expect((event?.metadata as { tool_sub_calls?: unknown[] } | undefined)?.tool_sub_calls).toHaveLength(2);
  });

  it('completes without an output when both calls are invalid, and says why', async () => {
    const { result, dir } = await run('output-invalid');
    expect(result).toMatchObject({ status: 'complete', answer: 'It costs €120 per night.', output: null });
    expect(result.outputError).toMatch(/^no valid output after 2 calls: .*\/price must be number/);
    expect(extractions('output-invalid')).toHaveLength(2);
    expect((await readRun(dir)).outputError).toBe(result.outputError);
  });

  it('still extracts at its step budget, marked partial', async () => {
    const { result } = await run('output-budget', { maxSteps: 2 });
    expect(result).toMatchObject({ status: 'max_rounds', endReason: 'max_rounds', steps: 2 });
    expect(result.output).toEqual({ value: { hotel: 'Harbor View Lisbon', price: 120 }, partial: true });
    expect(extractions('output-budget')[0]?.allText).toContain('step or cost budget');
  });
});
