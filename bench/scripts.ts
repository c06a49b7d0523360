// Scripts for the scripted model (a test double answering from JSON files), generated into the benchmark's temp
// dir: long runs of clicks and scrolls on the static hotel home page, and a task that asks the user a question.
import fs from 'node:fs';
import path from 'node:path';

export type Entry = { thoughts: string; action: Record<string, unknown>; delay_ms?: number };

/** Clicks and scrolls that never leave the hotel home page (1440×900; model points in 1000×1000 space). */
const CYCLE: Entry[] = [
  { thoughts: 'Click the search box.', action: { action: 'left_click', coordinate: [500, 200] } },
  { thoughts: 'Scroll down.', action: { action: 'scroll', pixels: -300 } },
  { thoughts: 'Scroll back up.', action: { action: 'scroll', pixels: 300 } },
  { thoughts: 'Click an empty part of the page.', action: { action: 'left_click', coordinate: [150, 700] } },
];

/**
 * The step section's steps: two clicks for each scroll, the clicks on the unscrolled page. A click's step is about
 * 50 ms longer than a scroll's; with as many of each, the p50 fell in the gap between the two and swung with the
 * samples at its edges (±0.1 in the ratio between runs of the same code). Here it falls among the clicks.
 */
const STEP_CYCLE: Entry[] = [
  CYCLE[0] as Entry,
  CYCLE[3] as Entry,
  CYCLE[0] as Entry,
  CYCLE[3] as Entry,
  CYCLE[1] as Entry,
  CYCLE[2] as Entry,
];

const TERMINATE: Entry = {
  thoughts: 'Done.',
  action: { action: 'terminate', answer: 'Benchmark run finished.' },
};

/** `steps` steps: steps − 1 actions from the cycle, then terminate. */
export function staticEntries(steps: number): Entry[] {
  const entries = Array.from({ length: steps - 1 }, (_, i) => CYCLE[i % CYCLE.length] as Entry);
  return [...entries, TERMINATE];
}

/** `steps` steps for the step section: steps − 1 from its cycle (two clicks a scroll), then terminate. */
export function stepEntries(steps: number): Entry[] {
  const entries = Array.from({ length: steps - 1 }, (_, i) => STEP_CYCLE[i % STEP_CYCLE.length] as Entry);
  return [...entries, TERMINATE];
}

/** Step 1 asks which city; after the reply: click, scroll, terminate. */
export function askEntries(): Entry[] {
  return [
    {
      thoughts: 'The task does not say which city.',
      action: { action: 'ask_user_question', question: 'Which city should I search in?' },
    },
    ...staticEntries(3),
  ];
}

export function writeScript(dir: string, name: string, entries: Entry[]): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify({ description: `bench: ${name}`, entries }));
  return name;
}

/**
 * A short run on the hotel site to record and replay: click the search box, type a city and search, open the first
 * result, scroll down and back up, answer. `delayMs` on every entry emulates a real model's latency.
 */
export function replayEntries(delayMs = 0): Entry[] {
  const entries: Entry[] = [
    { thoughts: 'Click the search box.', action: { action: 'left_click', coordinate: [500, 200] } },
    { thoughts: 'Type the city and search.', action: { action: 'type', text: 'Lisbon', press_enter: true } },
    { thoughts: 'Open the first result.', action: { action: 'left_click', coordinate: [500, 256] } },
    { thoughts: 'Scroll down.', action: { action: 'scroll', pixels: -300 } },
    { thoughts: 'Scroll back up.', action: { action: 'scroll', pixels: 300 } },
    { thoughts: 'Done.', action: { action: 'terminate', answer: 'Harbor View Lisbon.' } },
  ];
  return delayMs > 0 ? entries.map((e) => ({ ...e, delay_ms: delayMs })) : entries;
}
