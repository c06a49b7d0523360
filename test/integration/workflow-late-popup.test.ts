// A popup a click opens from a timer after its step (issue 40, item 2; seed 001 §3.2), through the real workflow
// (dev server, Chromium, scripted model), where the act takes the next step's observation itself: at 900 ms the popup
// comes while the model decides, so the next action is not carried out on the old page — the popup becomes the page
// and the model is told; at 300 ms it is the page by the next step's observation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRun } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import type { TaskResult } from '../../src/contract/task';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const LATE_POPUP_LINE = 'A new tab opened after the last screenshot (a popup from the earlier click)';

let h: Harness;
useHarness((x) => (h = x));
let site: FixtureServer;

/**
 * /offer?ms=N: the top half is a button opening /pages/target.html from a timer N ms after a click; a click on the
 * bottom half requests /hit (in the site's request log) and counts in the title.
 */
function routeOfferPage(server: FixtureServer): void {
  server.route('/offer', (_req, res, url) => {
    const ms = Number(url.searchParams.get('ms'));
    const open = `setTimeout(() => window.open('/pages/target.html?from=timer${ms}'), ${ms})`;
    const hit = "fetch('/hit'); document.title = 'hits ' + ++window.hits";
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>hits 0</title><body style="margin:0"><script>window.hits = 0</script>' +
        `<button style="display:block;width:100%;height:450px" onclick="${open}">Open the offer</button>` +
        `<div style="height:450px" onclick="${hit}">Below</div>`,
    );
  });
}

beforeAll(async () => {
  site = await startFixtureServer();
  routeOfferPage(site);
});

afterAll(async () => {
  await site?.close();
});

/** The URL of each step's pre observation, from step 1 (step 0 is the start page). */
function preUrls(events: readonly Event[]): string[] {
  return events.flatMap((e) =>
    e.type === 'observation' &&
    e.observation_type === 'environment' &&
    /^screenshot_[1-9]\d*_pre\.png$/.test(e.screenshot_path ?? '')
      ? [e.url ?? '']
      : [],
  );
}

function toolErrors(events: readonly Event[]): string[] {
  return events.flatMap((e) => (e.type === 'observation' && e.observation_type === 'tool_output' ? [e.error] : []));
}

async function runOffer(ms: number) {
  const script = `late-popup-${ms}`;
  const handle = await h.start({ script, instruction: 'Open the offer.', startUrl: site.url(`/offer?ms=${ms}`) });
  const result = (await handle.result()) as TaskResult;
  const run = await readRun(h.runDir(handle.workflowId));
  const calls = h.model.requests.filter((r) => r.script === script && !r.subcall);
  return { result, run, calls, popupUrl: site.url(`/pages/target.html?from=timer${ms}`) };
}

describe('a popup a click opens from a timer, in a whole run', () => {
  it('at 900 ms, while the model decides: the next action is not carried out, the popup is the page', async () => {
    const { result, run, calls, popupUrl } = await runOffer(900);
    expect(result).toMatchObject({ status: 'complete', steps: 3, answer: 'The offer opened in a new tab.' });
    // Step 2 was decided on the old page (the click's folded observation came before the popup)...
    expect(preUrls(run.events)).toEqual([site.url('/offer?ms=900'), site.url('/offer?ms=900'), popupUrl]);
    // ...and its click was not carried out there: the old page never saw it.
    expect(site.requests.filter((r) => r.startsWith('GET /hit'))).toEqual([]);
    const errors = toolErrors(run.events);
    expect(errors[0]).toBe('');
    expect(errors[1]).toContain(LATE_POPUP_LINE);
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(calls[2]?.lastUserText).toContain(LATE_POPUP_LINE);
  });

  it('at 300 ms: the popup is the page by the next step, or its action is refused and the popup is the page', async () => {
    const { result, run, calls, popupUrl } = await runOffer(300);
    expect(result).toMatchObject({ status: 'complete', steps: 3 });
    const urls = preUrls(run.events);
    expect(urls[2]).toBe(popupUrl);
    // Either the click itself or its folded observation took the popup over (step 2 acts on the popup), or it came
    // while the model decided step 2 on the old page, and then step 2's click was refused.
    const refused = urls[1] !== popupUrl;
    expect(toolErrors(run.events)[1]).toEqual(refused ? expect.stringContaining(LATE_POPUP_LINE) : '');
    expect(calls[2]?.lastUserText.includes(LATE_POPUP_LINE)).toBe(refused);
    // In both cases the click decided on the old page's screenshot never reached the old page.
    expect(site.requests.filter((r) => r.startsWith('GET /hit'))).toEqual([]);
  });
});
