// A multi-step task on the fixture site, end to end: real dev server, real Chromium, scripted model.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import type { TaskResult } from '../../src/contract/task';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

let h: Harness;
useHarness((x) => (h = x));

describe('a task that completes', () => {
  it('searches, opens a result, reads the page and answers; the run folder holds every step', async () => {
    const handle = await h.start({ script: 'book-lisbon' });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 5, answer: 'Harbor View Lisbon costs €120 per night.' });

    const dir = h.runDir(handle.workflowId);
    const run = await readRun(dir);
    expect(run.status).toBe('complete');
    expect(run.outcome?.answer).toBe(result.answer);
    const steps = stepSummaries(run.events);
    expect(steps.map((s) => s.action_name)).toEqual([
      'left_click',
      'type',
      'left_click',
      'read_page_answer_question',
      'terminate',
    ]);
    // The clicks and typing landed: step 4 looked at the first Lisbon hotel.
    expect(steps[3]?.url).toMatch(/\/hotel\/1$/);
    // Every step has its pre and post screenshot on disk.
    for (let n = 1; n <= 5; n++) {
      for (const phase of ['pre', 'post']) {
        expect(fs.existsSync(path.join(dir, `screenshot_${n}_${phase}.png`)), `screenshot_${n}_${phase}`).toBe(true);
      }
    }
    // Each pointer and typing action's tool output holds the element it acted on (taken just before it), in the
    // metadata only: the folder still reads (readRun above) and no prompt carries it.
    const elementOf = (n: number) => {
      const action = run.events.filter((e) => e.type === 'action')[n - 1];
      const tool = run.events.find(
        (e) => e.type === 'observation' && e.observation_type === 'tool_output' && e.action_id === action?.id,
      );
      return tool?.type === 'observation' ? tool.metadata['element'] : undefined;
    };
    expect(elementOf(1)).toMatchObject({
      source: 'point',
      tag: 'input',
      role: 'textbox',
      name: 'Where to?',
      selector: '#q',
      selector_unique: true,
      attributes: { id: 'q', name: 'q', placeholder: 'Where to?' },
      box: { x: 520, y: 160, width: 400, height: 40 },
    });
    expect(elementOf(2)).toMatchObject({ source: 'focus', tag: 'input', selector: '#q', text: '' });
    expect(elementOf(3)).toMatchObject({
      source: 'point',
      tag: 'a',
      role: 'link',
      text: expect.stringContaining('Harbor View Lisbon'),
      attributes: { href: '/hotel/1' },
    });
    expect(elementOf(4)).toBeUndefined(); // read_page_answer_question acts on no element
    expect(h.model.requests.some((r) => r.allText.includes('selector_unique'))).toBe(false);

    // Ids are unique; data_point.json was written at the end.
    const ids = run.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(fs.existsSync(path.join(dir, 'data_point.json'))).toBe(true);

    // The page answer was fed into the next model call; no more than 3 screenshots per call.
    const calls = h.model.requests.filter((r) => r.script === 'book-lisbon' && !r.subcall);
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
    expect(calls[4]?.lastUserText).toContain('€120 per night');
    expect(Math.max(...calls.map((c) => c.imageCount))).toBeLessThanOrEqual(3);
    expect(h.model.requests.some((r) => r.subcall && r.index === 3)).toBe(true);

    // Activity summaries name the step and the action (the Temporal UI shows them per event).
    const summaryOf = (e: { userMetadata?: { summary?: { data?: Uint8Array | null } | null } | null }) => {
      const data = e.userMetadata?.summary?.data;
      return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as string) : undefined;
    };
    const summaries = ((await handle.fetchHistory()).events ?? []).map(summaryOf).filter(Boolean);
    expect(summaries).toEqual(
      expect.arrayContaining(['step 1 · left_click (500, 200)', 'step 3 · left_click (500, 256)']),
    );

    // History stays small: the per-step growth (from the first observe to the last decision) is under 4 KB,
    // and no screenshot bytes travel through it.
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const size = (e: (typeof events)[number]) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
    const activityName = (e: (typeof events)[number]) => e.activityTaskScheduledEventAttributes?.activityType?.name;
    // A step is two round trips (decide, act): the first step observes, each act observes for the step after it.
    const scheduled = events.map(activityName).filter((n) => n === 'observe' || n === 'decide' || n === 'act');
    expect(scheduled.filter((n) => n === 'observe')).toHaveLength(1);
    expect(scheduled.filter((n) => n === 'decide')).toHaveLength(5);
    const first = events.findIndex((e) => activityName(e) === 'observe');
    const last = events.findLastIndex((e) => activityName(e) === 'finalize');
    const perStep = events.slice(first, last).reduce((n, e) => n + size(e), 0) / result.steps;
    const total = events.reduce((n, e) => n + size(e), 0);
    console.log(`history: ${events.length} events, ${total} bytes in all, ${Math.round(perStep)} bytes per step`);
    expect(perStep).toBeLessThan(4096);
    const encoded = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
    expect(encoded.includes(Buffer.from([0x89, 0x50, 0x4e, 0x47]))).toBe(false); // PNG magic
    expect(encoded.includes(Buffer.from('iVBORw0KGgo'))).toBe(false); // PNG in base64
    expect(encoded.includes(Buffer.from('selector_unique'))).toBe(false); // the element records stay in the folder
  });
});

describe('a long task', () => {
  it('continues as new and carries its state across runs', async () => {
    const handle = await h.start({ script: 'book-lisbon', continueAsNewAfterSteps: 2 });
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 5, answer: 'Harbor View Lisbon costs €120 per night.' });
    const latest = await h.client.workflow.getHandle(handle.workflowId).describe();
    expect(latest.runId).not.toBe(handle.firstExecutionRunId);
    const run = await readRun(h.runDir(handle.workflowId));
    expect(stepSummaries(run.events).map((s) => s.action_name)).toHaveLength(5);
  });
});
