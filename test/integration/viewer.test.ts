// The trajectory viewer end to end: a real run (workflow harness, scripted model, real Chromium) and a hand-built
// run with a drag and scrolls are written as HTML reports, opened in Chromium, and checked: every step is there,
// markers sit on the action's pixel position of the displayed screenshot, the keys move between steps, the answer
// is shown and nothing is fetched. Also `cua view` through the CLI's main().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, Page } from 'playwright';
import sharp from 'sharp';
import { NORM1000, modelToViewport } from '../../src/coords/viewport';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { chromiumPath } from '../../src/infra/paths';
import { actionEvent, postObservation, preObservation, taskMessage, toolOutput } from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import { readRun } from '../../src/trajectory/reader';
import type { Action } from '../../src/trajectory/schema';
import { stepSummaries } from '../../src/trajectory/steps';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { writeTrajectoryReport } from '../../src/viewer/report';
import type { TaskResult } from '../../src/contract/task';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

const VIEWPORT = { width: 1440, height: 900 };
const ANSWER = 'Harbor View Lisbon costs €120 per night.';

let h: Harness;
useHarness((x) => (h = x));

let browser: Browser;
let tmp: string;
let lisbonDir: string;
let handmadeDir: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-viewer-'));
  browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  const handle = await h.start({ script: 'book-lisbon' });
  const result = (await handle.result()) as TaskResult;
  expect(result.status).toBe('complete');
  lisbonDir = h.runDir(handle.workflowId);
  handmadeDir = await buildHandmadeRun(path.join(tmp, 'runs'), 'drag-and-scroll');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// ---------- a hand-built run with a move, a drag, scrolls and a click ----------

const HANDMADE: { action: string; args: Record<string, unknown> }[] = [
  { action: 'mouse_move', args: { coordinate: [200, 300] } },
  { action: 'left_click_drag', args: { coordinate: [600, 500] } },
  { action: 'scroll', args: { pixels: -400 } },
  { action: 'hscroll', args: { pixels: 250 } },
  { action: 'left_click', args: { coordinate: [900, 100] } },
  { action: 'terminate', args: { answer: 'Dragged, scrolled and clicked <b>done</b>.' } },
];

async function screenshotPng(step: number): Promise<Buffer> {
  const shade = 200 + step * 8;
  return sharp({
    create: { ...VIEWPORT, channels: 3, background: { r: shade, g: 220, b: 240 - step * 10 } },
  })
    .png()
    .toBuffer();
}

async function buildHandmadeRun(root: string, taskId: string): Promise<string> {
  const w = await TrajectoryWriter.create(root, taskId, {
    task_id: taskId,
    instruction: 'Drag the slider, scroll around, click the button.',
    environment_config: { start_url: 'http://127.0.0.1/', viewport: VIEWPORT },
    metadata: { profile: 'fara-1.5' },
  });
  await w.appendEvent(taskMessage(w.task.instruction));
  for (const [i, s] of HANDMADE.entries()) {
    const step = i + 1;
    const actionId = eventId({ step, kind: 'action' });
    const pre = await w.saveScreenshot(step, 'pre', await screenshotPng(step));
    await w.appendEvent(preObservation(step, { screenshot_path: pre, url: `http://127.0.0.1/page-${step}` }));
    await w.appendEvent(
      actionEvent(step, {
        action_name: s.action,
        content: { action: s.action, arguments: { ...s.args, thoughts: `Step ${step}: ${s.action}.` } },
      }),
    );
    await w.appendEvent(toolOutput(step, actionId, { output: `did ${s.action}` }));
    const post = await w.saveScreenshot(step, 'post', await screenshotPng(step));
    await w.appendEvent(
      postObservation(step, actionId, { screenshot_path: post, url: `http://127.0.0.1/page-${step}` }),
    );
  }
  await w.writeStatus('complete', String(HANDMADE.at(-1)?.args['answer']));
  await w.writeDataPoint();
  return w.location;
}

// ---------- page helpers ----------

interface Opened {
  page: Page;
  /** Every request the page made that was neither the report itself nor a data: URI. */
  foreign: string[];
}

async function open(file: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const url = pathToFileURL(file).href;
  const foreign: string[] = [];
  page.on('request', (r) => {
    if (r.url() !== url && !r.url().startsWith('data:')) foreign.push(r.url());
  });
  await page.goto(url);
  await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete && i.naturalWidth > 0));
  return { page, foreign };
}

async function centreOf(page: Page, selector: string): Promise<{ x: number; y: number }> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} has no box`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Where a viewport-pixel point of step `n`'s screenshot is on the page, as displayed. */
async function onImage(page: Page, n: number, p: { x: number; y: number }): Promise<{ x: number; y: number }> {
  const img = page.locator(`#step-${n} .frame img`);
  const box = await img.boundingBox();
  if (!box) throw new Error(`step ${n} image has no box`);
  const natural = await img.evaluate((el: HTMLImageElement) => ({ w: el.naturalWidth, h: el.naturalHeight }));
  expect(natural).toEqual({ w: VIEWPORT.width, h: VIEWPORT.height }); // screenshot pixels = viewport pixels
  expect(box.width).toBeLessThan(natural.w); // displayed smaller: the mapping is really exercised
  return { x: box.x + (p.x * box.width) / natural.w, y: box.y + (p.y * box.height) / natural.h };
}

function expectNear(actual: { x: number; y: number }, expected: { x: number; y: number }, what: string): void {
  expect(Math.abs(actual.x - expected.x), `${what} x: ${actual.x} vs ${expected.x}`).toBeLessThanOrEqual(2);
  expect(Math.abs(actual.y - expected.y), `${what} y: ${actual.y} vs ${expected.y}`).toBeLessThanOrEqual(2);
}

const pixelOf = (coordinate: unknown) => modelToViewport(coordinate as [number, number], NORM1000, VIEWPORT);

const currentStep = (page: Page) => page.evaluate(() => document.body.getAttribute('data-current-step'));

async function expectCurrent(page: Page, n: number): Promise<void> {
  expect(await currentStep(page)).toBe(String(n));
  expect(await page.locator('section.step.current').getAttribute('id')).toBe(`step-${n}`);
  expect(await page.locator('nav.steps a.current').getAttribute('data-step')).toBe(String(n));
  const box = await page.locator(`#step-${n}`).boundingBox();
  expect(box && box.y > -2 && box.y < 800, `step ${n} scrolled into view (top at ${box?.y})`).toBe(true);
}

// ---------- tests ----------

describe('the book-lisbon run as a report', () => {
  it('shows every step, markers on the click points, the answer; keys move between steps; no network', async () => {
    const out = path.join(tmp, 'lisbon.html');
    const report = await writeTrajectoryReport(lisbonDir, out);
    const run = await readRun(lisbonDir);
    const summaries = stepSummaries(run.events);
    expect(report).toMatchObject({ file: out, steps: summaries.length });
    const bytes = fs.statSync(out).size;
    const pngBytes = fs
      .readdirSync(lisbonDir)
      .filter((f) => /_pre\.png$/.test(f))
      .reduce((n, f) => n + fs.statSync(path.join(lisbonDir, f)).size, 0);
    console.log(`book-lisbon report: ${bytes} bytes for ${summaries.length} steps (pre PNGs: ${pngBytes} bytes)`);
    expect(bytes).toBeLessThan(2_000_000);

    const { page, foreign } = await open(out);
    try {
      expect(await page.locator('section.step').count()).toBe(summaries.length);
      expect(await page.locator('nav.steps a[data-step]').count()).toBe(summaries.length);
      const actions = run.events.filter((e): e is Action => e.type === 'action');
      for (const [i, action] of actions.entries()) {
        const n = i + 1;
        expect(await page.locator(`#step-${n}`).getAttribute('data-action')).toBe(action.action_name);
        const coordinate = action.content.arguments['coordinate'];
        const markers = page.locator(`#step-${n} .marker`);
        if (coordinate === undefined) {
          expect(await markers.count(), `step ${n} (${action.action_name}) has no marker`).toBe(0);
          continue;
        }
        expect(await markers.getAttribute('data-kind')).toBe('point');
        const expected = await onImage(page, n, pixelOf(coordinate));
        expectNear(await centreOf(page, `#step-${n} .marker-center`), expected, `step ${n} marker`);
      }
      // Thoughts, tool output (the page answer), URL, instruction and final answer are on the page.
      await expect(page.locator('#step-1 pre.thoughts').textContent()).resolves.toBe('I will click the search box.');
      await expect(page.locator('#step-4 pre.observation').textContent()).resolves.toContain('€120 per night');
      // The page question's model call, recorded on the action (tool_sub_calls), under the action.
      const subCall = page.locator('#step-4 li.sub-call[data-tool="read_page_answer_question"]');
      expect(await subCall.isVisible()).toBe(true);
      await expect(subCall.locator('p.sub-call-line').textContent()).resolves.toMatch(
        /^book-lisbon · [\d,]+ characters of prompt \([\d,]+ tokens\), page text [\d,]+ characters · \d+ ms$/,
      );
      await expect(subCall.locator('pre.output').textContent()).resolves.toContain('€120 per night');
      expect(await page.locator('li.sub-call').count()).toBe(1);
      await expect(page.locator('#step-4 p.url .value').textContent()).resolves.toMatch(/\/hotel\/1$/);
      await expect(page.locator('pre.instruction').textContent()).resolves.toBe(run.task.instruction);
      await expect(page.locator('#final-answer').textContent()).resolves.toBe(ANSWER);
      expect(await page.locator('#final-answer').isVisible()).toBe(true);
      await expect(page.locator('header .status').textContent()).resolves.toBe('complete');

      await expectCurrent(page, 1);
      await page.keyboard.press('ArrowRight');
      await expectCurrent(page, 2);
      await page.keyboard.press('j');
      await expectCurrent(page, 3);
      await page.keyboard.press('ArrowLeft');
      await expectCurrent(page, 2);
      await page.keyboard.press('k');
      await expectCurrent(page, 1);
      await page.keyboard.press('ArrowLeft'); // stays on the first
      await expectCurrent(page, 1);
      await page.keyboard.press('End');
      await expectCurrent(page, summaries.length);
      await page.keyboard.press('ArrowRight'); // stays on the last
      await expectCurrent(page, summaries.length);
      await page.keyboard.press('Home');
      await expectCurrent(page, 1);
      await page.locator('nav.steps a[data-step="4"]').click();
      await expectCurrent(page, 4);

      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('a run with a drag and scrolls', () => {
  it('draws the drag from where the pointer was, and scroll arrows in their direction at the centre', async () => {
    const out = path.join(tmp, 'handmade.html');
    const report = await writeTrajectoryReport(handmadeDir, out);
    expect(report.steps).toBe(HANDMADE.length);
    const { page, foreign } = await open(out);
    try {
      expect(await page.locator('section.step').count()).toBe(HANDMADE.length);
      const at = (i: number) => pixelOf(HANDMADE[i]?.args['coordinate']);

      // Step 2: the drag ends at its coordinate and starts where step 1's mouse_move left the pointer.
      expect(await page.locator('#step-2 .marker').getAttribute('data-kind')).toBe('drag');
      expectNear(await centreOf(page, '#step-2 .marker-center'), await onImage(page, 2, at(1)), 'drag end');
      expectNear(await centreOf(page, '#step-2 circle.start'), await onImage(page, 2, at(0)), 'drag start');
      expect(await page.locator('#step-2 polygon.head').count()).toBe(1);

      // Steps 3 and 4: arrows from the viewport's centre, down (negative scroll) and left (positive hscroll).
      const centre = { x: VIEWPORT.width / 2, y: VIEWPORT.height / 2 };
      for (const [n, direction] of [
        [3, 'down'],
        [4, 'left'],
      ] as const) {
        const marker = page.locator(`#step-${n} .marker`);
        expect(await marker.getAttribute('data-kind')).toBe('scroll');
        expect(await marker.getAttribute('data-direction')).toBe(direction);
        const anchor = await centreOf(page, `#step-${n} .marker-center`);
        expectNear(anchor, await onImage(page, n, centre), `scroll ${n} anchor`);
        const tip = await centreOf(page, `#step-${n} polygon.head`);
        if (direction === 'down') expect(tip.y - anchor.y).toBeGreaterThan(20);
        else expect(anchor.x - tip.x).toBeGreaterThan(20);
      }

      // Step 5: a click; step 6 (terminate): no marker; the answer's markup is shown as text.
      expectNear(await centreOf(page, '#step-5 .marker-center'), await onImage(page, 5, at(4)), 'click');
      expect(await page.locator('#step-6 .marker').count()).toBe(0);
      await expect(page.locator('#final-answer').textContent()).resolves.toBe(
        'Dragged, scrolled and clicked <b>done</b>.',
      );
      expect(await page.locator('#final-answer b').count()).toBe(0);
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

/** The CLI's main(), loaded on first use (it pulls in every command module). */
async function main(argv: readonly string[]): Promise<number> {
  const cli = await import('../../cli/cli');
  return cli.main(argv);
}

describe('cua view', () => {
  it('writes the report where --out says and prints its absolute path', async () => {
    const out = path.join(tmp, 'cli', 'report.html');
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await main(['view', lisbonDir, '--out', out])).toBe(0);
      expect(log.mock.calls.map((c) => String(c[0]))).toEqual([out]);
    } finally {
      log.mockRestore();
    }
    expect(fs.readFileSync(out, 'utf8')).toContain(ANSWER);
  });

  it('resolves a task id in the runs folder and writes <run-folder>/report.html by default', async () => {
    const saved = process.env.CUA_RUNS_DIR;
    process.env.CUA_RUNS_DIR = h.config.runsDir;
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await main(['view', path.basename(lisbonDir)])).toBe(0);
      expect(log.mock.calls.map((c) => String(c[0]))).toEqual([path.join(lisbonDir, 'report.html')]);
    } finally {
      log.mockRestore();
      if (saved === undefined) delete process.env.CUA_RUNS_DIR;
      else process.env.CUA_RUNS_DIR = saved;
    }
    expect(fs.existsSync(path.join(lisbonDir, 'report.html'))).toBe(true);
  });

  it.each([
    ['a missing folder', () => [path.join(tmp, 'no-such-run')], /^cua: no run folder for '.*no-such-run'/],
    ['a damaged run', () => [corruptRun()], /^cua: .*task\.json/],
    [
      'an output that cannot be written',
      () => [handmadeDir, '--out', path.join(handmadeDir, 'task.json', 'x.html')],
      /^cua: cannot write /,
    ],
  ])('%s is a one-line error and exit code 1', async (_what, args, message) => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main(['view', ...args()])).toBe(1);
      const lines = err.mock.calls.map((c) => String(c[0]));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(lines[0]).not.toContain('\n');
    } finally {
      err.mockRestore();
    }
  });
});

function corruptRun(): string {
  const dir = path.join(tmp, 'corrupt');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'task.json'), '{ not json');
  return dir;
}
