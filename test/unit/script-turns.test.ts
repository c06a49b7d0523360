// Specification of script-turns.ts: the same scripted entries (Fara action space, 0–1000 grid) as each provider's
// sequence of model turns, in the pixels of the request's screenshot.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { ScriptEntrySchema } from '../../src/scripted/script';
import type { ScriptEntry } from '../../src/scripted/script';
import { scriptTurns } from '../../src/scripted/script-turns';
import type { ProviderTurn, StandInProvider } from '../../src/scripted/script-turns';

const SCREEN = { width: 1280, height: 800 };
const entries = (raw: unknown[]): ScriptEntry[] => raw.map((e) => ScriptEntrySchema.parse(e));
const one = (action: object) => entries([{ thoughts: 't', action }]);
const actionsOf = (action: object, provider: StandInProvider = 'openai') =>
  scriptTurns(one(action), { provider, screen: SCREEN }).turns[0]?.output.actions;
const shape = (turns: ProviderTurn[]) => turns.map((t) => `${t.entry}:${t.kind}${t.first ? '*' : ''}`);

describe('one Fara action in screenshot pixels', () => {
  it.each([
    [{ action: 'left_click', coordinate: [500, 250] }, [{ kind: 'click', button: 'left', count: 1, x: 640, y: 200 }]],
    [{ action: 'right_click', coordinate: [0, 1000] }, [{ kind: 'click', button: 'right', count: 1, x: 0, y: 800 }]],
    [{ action: 'double_click', coordinate: [100, 100] }, [{ kind: 'click', button: 'left', count: 2, x: 128, y: 80 }]],
    [{ action: 'triple_click', coordinate: [100, 100] }, [{ kind: 'click', button: 'left', count: 3, x: 128, y: 80 }]],
    [{ action: 'mouse_move', coordinate: [250, 500] }, [{ kind: 'move', x: 320, y: 400 }]],
    [
      { action: 'type', text: 'Lisbon', coordinate: [500, 500], press_enter: true },
      [{ kind: 'type', text: 'Lisbon', at: { x: 640, y: 400 }, pressEnter: true }],
    ],
    [{ action: 'type', text: 'x' }, [{ kind: 'type', text: 'x' }]],
    [{ action: 'key', keys: ['Control', 'a'] }, [{ kind: 'keys', keys: ['Control', 'a'] }]],
    // Fara's positive pixels scroll up; thousandths of the screen's height (hscroll: width).
    [{ action: 'scroll', pixels: -500 }, [{ kind: 'scroll', x: 640, y: 400, dx: 0, dy: 400 }]],
    [{ action: 'hscroll', pixels: 250 }, [{ kind: 'scroll', x: 640, y: 400, dx: -320, dy: 0 }]],
    [{ action: 'visit_url', url: 'https://example.com' }, [{ kind: 'navigate', url: 'https://example.com' }]],
    [{ action: 'history_back' }, [{ kind: 'back' }]],
    [{ action: 'wait', time: 2 }, [{ kind: 'wait', seconds: 2 }]],
  ])('%j', (action, expected) => {
    expect(actionsOf(action)).toEqual(expected);
  });

  it('drags from where the pointer last went to the coordinate', () => {
    const list = entries([
      { action: { action: 'mouse_move', coordinate: [100, 100] } },
      { action: { action: 'left_click_drag', coordinate: [200, 500] } },
    ]);
    const { turns } = scriptTurns(list, { provider: 'anthropic', screen: SCREEN });
    expect(turns[1]?.output.actions).toEqual([
      {
        kind: 'drag',
        path: [
          { x: 128, y: 80 },
          { x: 256, y: 400 },
        ],
      },
    ]);
  });

  it('types where the pointer last went when the provider needs a point for typing (Gemini 2.5)', () => {
    const list = entries([
      { action: { action: 'left_click', coordinate: [250, 500] } },
      { action: { action: 'type', text: 'Lisbon' } },
    ]);
    const { turns } = scriptTurns(list, { provider: 'gemini', screen: SCREEN, typeAtPointer: true });
    expect(turns[1]?.output.actions).toEqual([{ kind: 'type', text: 'Lisbon', at: { x: 320, y: 400 } }]);
  });

  it('asks and answers in text only, with {{reply}} filled in', () => {
    const list = entries([
      { thoughts: 'ask', action: { action: 'ask_user_question', question: 'Whose name?' } },
      { thoughts: 'done for {{reply}}', action: { action: 'terminate', answer: 'Booked for {{reply}}.' } },
    ]);
    const { turns } = scriptTurns(list, { provider: 'gemini', screen: SCREEN, reply: 'Ana' });
    expect(turns.map((t) => t.output)).toEqual([
      { thoughts: 'ask', actions: [], final: { kind: 'question', text: 'Whose name?' } },
      { thoughts: 'done for Ana', actions: [], final: { kind: 'answer', text: 'Booked for Ana.' } },
    ]);
  });

  it('refuses an action that is not in the Fara action space, naming the entry', () => {
    expect(() => scriptTurns(one({ action: 'fly', to: 'moon' }), { provider: 'openai', screen: SCREEN })).toThrow(
      /entry 1: .* is no Fara action/,
    );
  });
});

describe('entries as turns, per provider', () => {
  const batch = entries([
    {
      thoughts: 'fill',
      action: { action: 'left_click', coordinate: [500, 500] },
      then: [
        { action: 'type', text: 'Ana' },
        { action: 'key', keys: ['Enter'] },
      ],
    },
  ]);

  it('a batch is one turn where the provider batches, one turn per native action for OpenAI preview', () => {
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      const { turns } = scriptTurns(batch, { provider, screen: SCREEN });
      expect(turns).toHaveLength(1);
      expect(turns[0]?.output.actions.map((a) => a.kind)).toEqual(['click', 'type', 'keys']);
    }
    const preview = scriptTurns(batch, { provider: 'openai', screen: SCREEN, oneActionPerTurn: true }).turns;
    expect(shape(preview)).toEqual(['0:action*', '0:action', '0:action']);
    expect(preview.map((t) => t.output.thoughts)).toEqual(['fill', '', '']);
  });

  const checked = entries([
    { thoughts: 'pay', action: { action: 'left_click', coordinate: [500, 500] }, safety_check: { message: 'Pay?' } },
  ]);

  it('a safety check rides on the action (OpenAI, Gemini) or is asked first in text (Anthropic)', () => {
    const openai = scriptTurns(checked, { provider: 'openai', screen: SCREEN }).turns;
    expect(shape(openai)).toEqual(['0:check*']);
    expect(openai[0]?.output.safetyCheck).toEqual({ code: 'malicious_instructions', message: 'Pay?' });
    const anthropic = scriptTurns(checked, { provider: 'anthropic', screen: SCREEN }).turns;
    expect(shape(anthropic)).toEqual(['0:check*', '0:action']);
    expect(anthropic[0]?.output).toEqual({
      thoughts: 'pay',
      actions: [],
      final: { kind: 'question', text: 'Pay?' },
    });
    expect(anthropic[1]?.output.actions).toHaveLength(1);
  });

  it('a malformed entry plays one malformed turn of the provider’s kind first, then the entry', () => {
    const list = entries([{ action: { action: 'left_click', coordinate: [1, 2] }, malformed: true }]);
    const kinds = (provider: StandInProvider) =>
      scriptTurns(list, { provider, screen: SCREEN }).turns.map((t) => `${t.kind}:${t.output.malformed ?? '-'}`);
    expect(kinds('openai')).toEqual(['malformed:unknown-action', 'action:-']);
    expect(kinds('anthropic')).toEqual(['malformed:unknown-action', 'action:-']);
    expect(kinds('gemini')).toEqual(['malformed:malformed-function-call', 'action:-']);
    const named = entries([{ action: { action: 'left_click', coordinate: [1, 2] }, malformed: 'off-screen' }]);
    expect(scriptTurns(named, { provider: 'anthropic', screen: SCREEN }).turns[0]?.output.malformed).toBe('off-screen');
  });

  it('refuses a safety check without an action and a batch after a question', () => {
    const noAction = entries([{ action: { action: 'terminate', answer: 'x' }, safety_check: { message: 'm' } }]);
    expect(() => scriptTurns(noAction, { provider: 'openai', screen: SCREEN })).toThrow(/rides on an action/);
    const asked = entries([
      { action: { action: 'ask_user_question', question: 'q' }, then: [{ action: 'wait', time: 1 }] },
    ]);
    expect(() => scriptTurns(asked, { provider: 'openai', screen: SCREEN })).toThrow(/take no `then`/);
  });
});

describe('the Tidewater demo script per provider', () => {
  const file = path.join(__dirname, '../../demo/scripts/tidewater-booking.json');
  const demo = (JSON.parse(fs.readFileSync(file, 'utf8')) as { entries: unknown[] }).entries;
  const list = entries(demo);

  it.each(['openai', 'anthropic', 'gemini'] as const)(
    '%s: 12 turns, the page question and the memorized fact dropped',
    (p) => {
      const { turns, dropped } = scriptTurns(list, { provider: p, screen: SCREEN, reply: 'Ana Silva' });
      expect(dropped).toEqual([
        { entry: 3, action: 'read_page_answer_question' },
        { entry: 6, action: 'pause_and_memorize_fact' },
      ]);
      expect(turns.map((t) => t.entry)).toEqual([0, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 13]);
      expect(turns.map((t) => t.kind)).toEqual([
        ...Array<string>(7).fill('action'),
        'text',
        'action',
        'action',
        'action',
        'text',
      ]);
      expect(turns[9]?.output.actions).toEqual([{ kind: 'type', text: 'Ana Silva' }]);
      expect(turns[11]?.output.final?.text).toContain('for Ana Silva:');
    },
  );

  it('OpenAI preview splits typing with Enter and nothing else', () => {
    const { turns } = scriptTurns(list, { provider: 'openai', screen: SCREEN, oneActionPerTurn: true });
    expect(turns.map((t) => t.entry)).toEqual([0, 1, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 13]);
  });
});
