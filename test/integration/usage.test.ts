// Tokens and cost of model calls (issue 30, first slice): the usage an endpoint reports (cached and reasoning tokens
// included) is recorded with its cost from the endpoint's price; an endpoint that sends no usage gets an estimate,
// marked as one (not a free call). A real HTTP endpoint (the scripted model) and, for a whole task, the dev server
// and Chromium: its run folder records the estimate and `cua show` totals it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ModelClient } from '../../src/model/client';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { readRun } from '../../src/trajectory/reader';
import { usageLine, usageTotals } from '../../src/trajectory/usage';
import { renderTrajectoryReport } from '../../src/viewer/report';
import { main } from '../../cli/cli';
import { FAST_TIMING, startHarness } from './harness';
import { startTask, validateTaskInput } from '../../client/tasks';
import type { Harness } from './harness';

const SCRIPTS = path.resolve(__dirname, '../fixtures/scripts');
const ask = [{ role: 'user' as const, content: 'Where next? '.repeat(100) }];

describe('model call usage', () => {
  let model: ScriptedModelServer;
  beforeAll(async () => void (model = await startScriptedModelServer({ scriptsDir: SCRIPTS })));
  afterAll(async () => model?.close());

  it('records what the endpoint reports, and its cost from the price', async () => {
    const price = { input: 2, output: 8, cachedInput: 0.5 };
    const client = new ModelClient({ baseUrl: model.url, model: 'usage-fixed', price });
    const { usage } = await client.complete(ask);
    // 600 uncached prompt tokens at $2/M, 400 cached at $0.50/M, 50 completion tokens at $8/M.
    expect(usage).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 50,
      reasoning_tokens: 10,
      cached_tokens: 400,
      cost_usd: 0.0018,
    });
    const unpriced = await new ModelClient({ baseUrl: model.url, model: 'usage-fixed' }).complete(ask);
    expect(unpriced.usage).not.toHaveProperty('cost_usd');
  });

  it('estimates the usage an endpoint does not send, and marks it so', async () => {
    const { usage } = await new ModelClient({ baseUrl: model.url, model: 'usage-none' }).complete(ask);
    expect(usage.estimated).toBe(true);
    expect(usage.prompt_tokens).toBeGreaterThan(250); // 1,200 characters of prompt
    expect(usage.completion_tokens).toBeGreaterThan(0);
  });
});

describe('a task whose endpoint sends no usage', () => {
  let h: Harness;
  beforeAll(async () => void (h = await startHarness()), 120_000);
  afterAll(async () => h?.close());

  it('records estimates in its run folder, and cua show totals them', async () => {
    const task = await h.start({ script: 'usage-none', instruction: 'Click the search box.' });
    await task.result();
    const run = await readRun(h.runDir(task.workflowId));
    const totals = usageTotals(run.events);
    expect(totals).toMatchObject({ calls: 2, estimatedCalls: 2, unpricedCalls: 2 });
    expect(totals.promptTokens).toBeGreaterThan(1000); // a screenshot counts as image tokens
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    try {
      expect(await main(['show', h.runDir(task.workflowId)])).toBe(0);
    } finally {
      log.mockRestore();
    }
    expect(lines).toContain(`usage: ${usageLine(totals)}`);
    expect(usageLine(totals)).toMatch(
      /^2 model calls · [\d,]+ prompt \+ [\d,]+ completion tokens · cost unknown \(no price for its endpoint: models\.<name>\.price\) · 2 call\(s\) estimated \(the endpoint sent no usage\)$/,
    );
  }, 120_000);
});

describe('a task on a priced endpoint', () => {
  let h: Harness;
  let model: ScriptedModelServer;
  beforeAll(async () => {
    // The worker's default endpoint is this scripted model, with a price (the task names no other base URL).
    model = await startScriptedModelServer({ scriptsDir: SCRIPTS });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-priced-'));
    const config = path.join(dir, 'cua.config.json');
    const price = { input: 2, output: 8, cachedInput: 0.5 };
    fs.writeFileSync(
      config,
      JSON.stringify({ models: { default: { baseUrl: model.url, model: 'usage-fixed', price } } }),
    );
    h = await startHarness({ env: { CUA_CONFIG: config } });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await model?.close();
  });

  it('costs what the price table says: per call, and in total', async () => {
    const input = validateTaskInput({
      runId: `priced-${Date.now().toString(36)}`,
      instruction: 'Say ok.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default' },
    });
    const handle = await startTask(h.client, h.config.taskQueue, input);
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'ok' });
    const run = await readRun(h.runDir(input.runId));
    const totals = usageTotals(run.events);
    expect(totals).toMatchObject({ calls: 1, promptTokens: 1000, cachedTokens: 400, completionTokens: 50 });
    expect(totals.costUsd).toBeCloseTo(0.0018, 10);
    expect(usageLine(totals)).toBe('1 model call · 1,000 prompt (400 cached) + 50 completion tokens · $0.0018');
    // The report: the run's totals in its header, each step's figures beside its URL.
    const { html } = await renderTrajectoryReport(h.runDir(input.runId));
    expect(html).toContain(`<dt>Model usage</dt><dd>${usageLine(totals)}</dd>`);
    expect(html).toContain(`<span class="usage" title="this step's model calls">1,000 + 50 tokens · $0.0018</span>`);
  }, 120_000);
});
