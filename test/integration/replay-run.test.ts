// `cua replay` (issue 28) on the real dev server and Chromium: a recorded run (click the shop's quantity field, type
// 3, click Buy, answer) is replayed on the unchanged shop without a model call to the same final URL; on a shop whose
// Buy button moved, the button is found by its element record and clicked where it is now (healed), still without the
// model (the report and `cua show` mark it healed); on one without the button, that step goes to the model, which
// finishes the task (the report marks it decided); with --strict the replay ends there with the reason. A run folder
// given by path is copied into the run store and replayed from there.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { replayTask } from '../../client/replay';
import { main } from '../../cli/cli';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { writeTrajectoryReport } from '../../src/viewer/report';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { startHarness, untilWaiting } from './harness';
import { replyToTask } from '../../client/tasks';
import type { Harness } from './harness';

let h: Harness;
let shop: FixtureServer;
let layout: 'as recorded' | 'moved' | 'removed' | 'covered' = 'as recorded';
const bought: string[] = [];
let recording: string;

beforeAll(async () => {
  h = await startHarness();
  shop = await startFixtureServer();
  // The quantity field over the Buy button (the script clicks (500, 111) and (500, 333) of the 1000×1000 space);
  // `moved` puts 150 px between them, `removed` has no button (Enter still submits the form).
  shop.route('/shop', (_req, res) => {
    const gap = layout === 'moved' ? '<div style="height:150px"></div>' : '';
    // `covered`: looks the same, but a transparent layer over the button takes its clicks (a page that changed under
    // the same look), and the button lost its id.
    const button =
      layout === 'removed'
        ? ''
        : layout === 'covered'
          ? '<div style="position:relative"><button style="display:block;width:100%;height:200px">Buy</button>' +
            '<div style="position:absolute;inset:0"></div></div>'
          : '<button id="buy" style="display:block;width:100%;height:200px">Buy</button>';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Shop</title><body style="margin:0"><form action="/bought" method="get">' +
        '<input id="qty" name="qty" aria-label="Quantity" style="display:block;box-sizing:border-box;width:100%;height:200px;font-size:48px">' +
        `${gap}${button}</form>`,
    );
  });
  shop.route('/bought', (req, res) => {
    bought.push(new URL(req.url ?? '/', 'http://x').searchParams.get('qty') ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Bought</title><p>Thank you.</p>');
  });
  const source = await h.start({ script: 'replay-source', instruction: 'Buy 3.', startUrl: shop.url('/shop') });
  expect((await source.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'bought 3' });
  recording = source.workflowId;
}, 180_000);

afterAll(async () => {
  await shop?.close();
  await h?.close();
});

/** Replays the recording on the shop as it is now; the model for steps that do not match is `replay-fallback`. */
async function replay(opts: { strict?: boolean } = {}) {
  const before = h.model.requests.filter((r) => r.script === 'replay-fallback').length;
  const started = await replayTask(h.client, h.config.taskQueue, recording, { model: 'replay-fallback', ...opts });
  const result = await h.client.workflow
    .getHandle(started.id)
    .result()
    .then(
      (r) => r as TaskResult,
      () => undefined,
    );
  const run = await readRun(h.runDir(started.id));
  const actions = run.events.filter((e) => e.type === 'action');
  const how = actions.map((a) => ((a.metadata ?? {}) as { replay?: { how?: string } }).replay?.how ?? 'decided');
  const modelCalls = h.model.requests.filter((r) => r.script === 'replay-fallback').length - before;
  return { id: started.id, result, run, how, modelCalls, actions };
}

const finalUrl = (run: Awaited<ReturnType<typeof readRun>>) =>
  run.events.filter((e) => e.type === 'observation' && e.observation_type === 'environment').at(-1) as
    { url?: string } | undefined;

/** The replay badges of a report's steps, in order. */
const badgesIn = (html: string) =>
  [...html.matchAll(/<span class="badge replay \w+"[^>]*>([^<]*)<\/span>/g)].map((m) => m[1]);

describe('cua replay', () => {
  it('replays a recorded run on the unchanged site with no model call, to the same final URL', async () => {
    layout = 'as recorded';
    const placed = bought.length;
    const r = await replay();
    expect(r.result).toMatchObject({ status: 'complete', answer: 'bought 3', steps: 4 });
    expect(r.how).toEqual(['replayed', 'replayed', 'replayed', 'replayed']);
    expect(r.modelCalls).toBe(0);
    expect(finalUrl(r.run)?.url).toBe(finalUrl(await readRun(h.runDir(recording)))?.url);
    expect(finalUrl(r.run)?.url).toBe(shop.url('/bought?qty=3'));
    expect(bought.slice(placed)).toEqual(['3']);
    expect(r.run.task.metadata).toMatchObject({ replay_of: { run_id: recording } });
    // The replayed action says where it came from; no model usage is counted for it.
    expect(r.actions[2]?.metadata).toMatchObject({ replay: { how: 'replayed', of: { run_id: recording, step: 3 } } });
  }, 180_000);

  it('finds a moved button by its element record without the model (healed)', async () => {
    layout = 'moved';
    const placed = bought.length;
    const r = await replay();
    expect(r.result).toMatchObject({ status: 'complete', answer: 'bought 3' });
    expect(r.how).toEqual(['replayed', 'replayed', 'healed', 'replayed']);
    expect(r.modelCalls).toBe(0);
    expect(bought.slice(placed)).toEqual(['3']);
    const healed = (r.actions[2]?.metadata as { replay: Record<string, unknown> }).replay;
    expect(healed).toMatchObject({ how: 'healed', healed_from: [500, 333], found_by: 'selector' });
    // Clicked where the button is now: 150 px lower (of 900), in the 1000×1000 space.
    const [x, y] = (r.actions[2]?.content.arguments as { coordinate: [number, number] }).coordinate;
    expect(x).toBe(500);
    expect(y).toBeGreaterThan(450);
    // The report and `cua show` say so.
    const { file } = await writeTrajectoryReport(h.runDir(r.id));
    const html = fs.readFileSync(file, 'utf8');
    expect(html).toContain(`replay of ${recording}: 3 replayed, 1 healed, 0 decided</p>`);
    expect(badgesIn(html)).toEqual(['replayed', 'replayed', 'healed (moved from [500, 333])', 'replayed']);
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    try {
      expect(await main(['show', h.runDir(r.id)])).toBe(0);
    } finally {
      log.mockRestore();
    }
    expect(lines).toContain(`replay of ${recording}: 3 replayed, 1 healed, 0 decided`);
  }, 180_000);

  it('a removed button sends that step to the model, which finishes the task; --strict stops there instead', async () => {
    layout = 'removed';
    const placed = bought.length;
    const r = await replay();
    expect(r.result).toMatchObject({ status: 'complete', answer: 'bought 3 with Enter' });
    expect(r.how).toEqual(['replayed', 'replayed', 'decided', 'decided']);
    expect(r.modelCalls).toBe(2);
    expect(bought.slice(placed)).toEqual(['3']);
    const html = fs.readFileSync((await writeTrajectoryReport(h.runDir(r.id))).file, 'utf8');
    expect(badgesIn(html)).toEqual(['replayed', 'replayed', 'decided by the model', 'decided by the model']);

    const strict = await replay({ strict: true });
    expect(strict.result).toBeUndefined();
    expect(strict.modelCalls).toBe(0);
    const status = JSON.parse(fs.readFileSync(path.join(h.runDir(strict.id), 'solver_log/status.json'), 'utf8'));
    expect(status.end_reason).toBe('replay_diverged');
    expect(status.end_detail).toMatch(
      /^the replay diverged at step 3: the recording's step 3: the element it hit is gone \(button "Buy": not at its recorded point/,
    );
  }, 240_000);

  it('replays a run folder given by path: copied into the run store, the source untouched; prints what it saved', async () => {
    layout = 'as recorded';
    const folder = path.join(h.dir, 'a-recorded-run');
    fs.cpSync(h.runDir(recording), folder, { recursive: true });
    const before = fs.readFileSync(path.join(folder, 'solver_log/events.jsonl'), 'utf8');
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    const env = {
      TEMPORAL_ADDRESS: h.server.address,
      CUA_RUNS_DIR: h.config.runsDir,
      CUA_TASK_QUEUE: h.config.taskQueue,
    };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    let code: number;
    try {
      code = await main(['replay', folder, '--model', 'replay-fallback']);
    } finally {
      log.mockRestore();
      process.env = saved;
    }
    const out = lines.join('\n');
    expect(code, out).toBe(0);
    expect(out).toMatch(/^\[replay\] (\S+) replays recorded-a-recorded-run-[0-9a-f]{6}$/m);
    expect(out).toContain('[replay] steps: 4 replayed, 0 healed, 0 decided by the model');
    expect(out).toContain('[replay] model calls: 0 (the recording made 4; 4 saved)');
    expect(out).toMatch(/\[replay\] time: [\d.]+ s \(the recording took [\d.]+ s\)/);
    expect(fs.readFileSync(path.join(folder, 'solver_log/events.jsonl'), 'utf8')).toBe(before);
    const imported = /replays (recorded-a-recorded-run-[0-9a-f]{6})/.exec(out)?.[1] as string;
    expect((await readRun(h.runDir(imported))).task.metadata).toMatchObject({ imported_from: { folder } });
  }, 180_000);

  it('--cache: a second run takes every step from the cache; a step whose element is gone is decided again', async () => {
    layout = 'as recorded';
    const run = async () => {
      const before = h.model.requests.filter((r) => r.script === 'replay-source').length;
      const handle = await h.start({
        script: 'replay-source',
        instruction: 'Buy 3 (cached).',
        startUrl: shop.url('/shop'),
        cache: { name: 'shop' },
      });
      const result = (await handle.result()) as TaskResult;
      const calls = h.model.requests.filter((r) => r.script === 'replay-source').length - before;
      const run = await readRun(h.runDir(handle.workflowId));
      const how = run.events
        .filter((e) => e.type === 'action')
        .map((a) => ((a.metadata ?? {}) as { replay?: { how?: string } }).replay?.how ?? 'decided');
      return { id: handle.workflowId, result, calls, how };
    };
    const first = await run();
    expect(first).toMatchObject({ calls: 4, how: ['decided', 'decided', 'decided', 'decided'] });
    const placed = bought.length;
    const second = await run();
    expect(second.result).toMatchObject({ status: 'complete', answer: 'bought 3' });
    expect(second).toMatchObject({ calls: 0, how: ['replayed', 'replayed', 'replayed', 'replayed'] });
    expect(bought.slice(placed)).toEqual(['3']);
    // The page looks the same, but the button cannot be clicked where it was: the entry is marked invalid and the
    // model decides that step (and the next: its page is another one now).
    layout = 'covered';
    const third = await run();
    expect(third.how).toEqual(['replayed', 'replayed', 'decided', 'decided']);
    expect(third.calls).toBe(2);
    const entries = fs
      .readdirSync(path.join(h.config.runsDir, '_cache/shop'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.json'));
    expect(entries).toHaveLength(5); // 4 steps of the first run, and the step the covered page led to
    // The invalidated entry was replaced by the model's new decision (kept once acted), as was the next step's.
    const kept = entries.map(
      (f) =>
        JSON.parse(fs.readFileSync(path.join(h.config.runsDir, '_cache/shop', f), 'utf8')) as {
          invalid?: boolean;
          from?: { run_id: string; step: number };
        },
    );
    expect(kept.filter((e) => e.invalid)).toEqual([]);
    expect(kept.filter((e) => e.from?.run_id === third.id).map((e) => e.from?.step)).toEqual(
      expect.arrayContaining([3, 4]),
    );
  }, 240_000);

  it("reuses read_page's recorded answer on the same page text, and a recorded reply with replies: 'recorded'", async () => {
    const before = h.model.requests.filter((r) => r.script === 'replay-fallback').length;
    const read = await h.start({ script: 'book-lisbon' });
    expect((await read.result()) as TaskResult).toMatchObject({ status: 'complete' });
    const replayed = await replayTask(h.client, h.config.taskQueue, read.workflowId, { model: 'replay-fallback' });
    expect((await h.client.workflow.getHandle(replayed.id).result()) as TaskResult).toMatchObject({
      status: 'complete',
      answer: 'Harbor View Lisbon costs €120 per night.',
    });
    const run = await readRun(h.runDir(replayed.id));
    const readPage = run.events.find((e) => e.type === 'action' && e.action_name === 'read_page_answer_question');
    expect(readPage?.type === 'action' && readPage.tool_sub_calls?.[0]).toMatchObject({
      reply: 'The price is €120 per night.',
      reused_from: { run_id: read.workflowId, step: 4 },
    });

    const asked = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    await untilWaiting(asked, 60_000);
    await replyToTask(h.client, asked.workflowId, 'Lisbon');
    await asked.result();
    const again = await replayTask(h.client, h.config.taskQueue, asked.workflowId, {
      model: 'replay-fallback',
      replies: 'recorded',
    });
    // Not asked again: the recorded reply answers the recorded question.
    expect((await h.client.workflow.getHandle(again.id).result()) as TaskResult).toMatchObject({
      status: 'complete',
      answer: 'Searched Lisbon as you asked.',
    });
    const reply = (await readRun(h.runDir(again.id))).events.find((e) => e.id === 'user-0001-reply-g0');
    expect(reply).toMatchObject({ message_type: 'critical_point_response', content: 'Lisbon' });
    // Neither replay asked the model anything (decisions, or read_page's question).
    expect(h.model.requests.filter((r) => r.script === 'replay-fallback').length - before).toBe(0);
  }, 240_000);
});
