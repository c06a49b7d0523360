// Specification of `tool_sub_calls`: the record of read_page_answer_question's model call on its action (model,
// prompt size, reply, duration), read back leniently (the original writes the field with entries of its own), shown
// under the step in the HTML report and in `cua show`; run folders without it load as before.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { subCallLines } from '../../src/viewer/run-text';
import { pageQuestionMessages, pageSubCallRecord } from '../../src/agent/page-question';
import { actionEvent, postObservation, preObservation, taskMessage, toolOutput } from '../../src/trajectory/events';
import { readRun } from '../../src/trajectory/reader';
import type { Action, ToolSubCall } from '../../src/trajectory/schema';
import { stepSummaries, toolSubCallsOf } from '../../src/trajectory/steps';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { renderTrajectoryHtml } from '../../src/viewer/html';
import { escapeHtml } from '../../src/viewer/markup';
import { subCallLine } from '../../src/viewer/lines';
import { buildTrajectoryView } from '../../src/viewer/model';

const T = { timestamp: '2026-07-20T10:00:00Z' };
const COMPLETION = {
  text: ' Open 9am to 5pm. ',
  reasoning: null,
  finishReason: 'stop',
  usage: { prompt_tokens: 2048, completion_tokens: 6, reasoning_tokens: 0 },
};

describe('the record of a page question', () => {
  const messages = pageQuestionMessages('When is it open?', 'Hours: 9am to 5pm', 20_000);
  const chars = messages.reduce((n, m) => n + String(m.content).length, 0);

  it('says which model, how big the prompt was, what it returned and how long it took', () => {
    expect(
      pageSubCallRecord({ model: 'fara-7b', messages, pageChars: 17, durationMs: 812.4, completion: COMPLETION }),
    ).toEqual({
      tool: 'read_page_answer_question',
      model: 'fara-7b',
      prompt_chars: chars,
      page_chars: 17,
      duration_ms: 812,
      reply: 'Open 9am to 5pm.',
      error: '',
      messages: [
        {
          raw_response: ' Open 9am to 5pm. ',
          reasoning: '',
          finish_reason: 'stop',
          usage: { prompt_tokens: 2048, completion_tokens: 6, reasoning_tokens: 0 },
        },
      ],
    });
  });

  it('a failed call keeps its error (first line) and no output', () => {
    const failed = pageSubCallRecord({
      model: 'm',
      messages,
      pageChars: 17,
      durationMs: 30,
      error: new Error('model endpoint http://gpu/v1 failed: 503\nstack…'),
    });
    expect(failed).toMatchObject({ reply: '', error: 'model endpoint http://gpu/v1 failed: 503', messages: [] });
  });
});

function readAction(toolSubCalls?: unknown[]): Action {
  const action = actionEvent(
    1,
    {
      action_name: 'read_page_answer_question',
      content: { action: 'read_page_answer_question', arguments: { question: 'When?', thoughts: 'Read it.' } },
    },
    T,
  );
  return toolSubCalls === undefined ? action : { ...action, tool_sub_calls: toolSubCalls };
}

const OURS: ToolSubCall = {
  tool: 'read_page_answer_question',
  model: 'fara-7b',
  prompt_chars: 1204,
  page_chars: 980,
  duration_ms: 812,
  reply: 'Open <b>9am</b> to 5pm.',
  error: '',
  messages: [],
};

describe('reading tool_sub_calls back', () => {
  it.each<[string, unknown[] | undefined, unknown[]]>([
    ['an action without the field (older folders): no calls', undefined, []],
    ["the original's empty list", [], []],
    ['our entry, as written', [OURS], [{ ...OURS }]],
    [
      'an entry of another shape: its fields read with defaults',
      [{ model: 'x', prompt_chars: 'many', extra: 1 }],
      [{ tool: '', model: 'x', prompt_chars: 0, duration_ms: 0, reply: '', error: '', messages: [], extra: 1 }],
    ],
    ['an entry that is no object: left out', ['call #1', 7], []],
  ])('%s', (_name, field, calls) => {
    expect(toolSubCallsOf(readAction(field))).toEqual(calls);
  });
});

describe('a run folder with a page question', () => {
  it('keeps tool_sub_calls on the action through writer and reader; the report and cua show show it', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sub-calls-'));
    try {
      const w = await TrajectoryWriter.create(root, 'run-1', { task_id: 't', instruction: 'When is it open?' });
      await w.appendEvent(taskMessage('When is it open?', T));
      await w.appendEvent(preObservation(1, { url: 'http://shop.test/hours', screenshot_path: '' }, T));
      const action = { ...readAction(), tool_sub_calls: [OURS] };
      await w.appendEvent(action);
      await w.appendEvent(toolOutput(1, action.id, { output: 'Open 9am to 5pm.' }, T));
      await w.appendEvent(postObservation(1, action.id, { url: 'http://shop.test/hours' }, T));
      const run = await readRun(path.join(root, 'run-1'));
      const [row] = stepSummaries(run.events);
      expect(row?.sub_calls).toEqual([OURS]);

      expect(subCallLine(OURS)).toBe('fara-7b · 1,204 characters of prompt, page text 980 characters · 812 ms');
      expect(subCallLines(row!)).toEqual([
        '      model call: fara-7b · 1,204 characters of prompt, page text 980 characters · 812 ms → Open <b>9am</b> to 5pm.',
      ]);

      const html = renderTrajectoryHtml(
        buildTrajectoryView(run, () => undefined),
        new Map(),
      );
      expect(html).toContain('<li class="sub-call" data-tool="read_page_answer_question">');
      expect(html).toContain(escapeHtml(subCallLine(OURS)));
      expect(html).toContain(`<pre class="output">${escapeHtml(OURS.reply)}</pre>`);
      expect(html).not.toContain('<b>9am</b>');
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('shows the tokens the endpoint counted, when it did, and an error in place of a reply', () => {
    const withUsage = {
      ...OURS,
      error: 'model endpoint failed: 503',
      messages: [
        {
          raw_response: '',
          reasoning: '',
          finish_reason: '',
          usage: { prompt_tokens: 2048, completion_tokens: 0, reasoning_tokens: 0 },
        },
      ],
    };
    const [parsed] = toolSubCallsOf(readAction([withUsage]));
    expect(subCallLine(parsed!)).toBe(
      'fara-7b · 1,204 characters of prompt (2,048 tokens), page text 980 characters · 812 ms',
    );
    expect(subCallLines({ sub_calls: [parsed!] } as never)).toEqual([
      `      model call: ${subCallLine(parsed!)} → error: model endpoint failed: 503`,
    ]);
  });
});
