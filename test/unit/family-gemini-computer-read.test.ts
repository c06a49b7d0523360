// Specification of how the gemini-computer family reads Gemini's responses (src/families/gemini-computer/read.ts,
// functions.ts): the responses are built by the Gemini stand-in (src/scripted/providers/gemini-generate.ts) from
// provider-neutral outputs, for each action kind of both function sets and both 3.x spellings, batches, the safety
// decision, text-only answers and questions, and the malformed kinds, each fed back in one line.
import { describe, expect, it } from 'vitest';

import type { AgentAction } from '../../src/actions/schemas';
import { fara15ActionSchema } from '../../src/actions/schemas';
import { GEMINI_COMPUTER_FAMILY, functionSetForModel, functionSetOf } from '../../src/families/gemini-computer/family';
import { familyOf } from '../../src/families/registry';
import type { ModelOutputError } from '../../src/model/errors';
import { InvalidActionArgumentsError, ToolCallJsonError, UnknownActionError } from '../../src/model/errors';
import type { ParsedOutput } from '../../src/model/parse';
import { EndpointSchema } from '../../src/runtime/config-models';
import { geminiResponse } from '../../src/scripted/providers/gemini-generate';
import type { GeminiResponseContext } from '../../src/scripted/providers/gemini-generate';
import type { ScreenAction, StandInOutput } from '../../src/scripted/providers/output';

const SCREEN = { width: 1440, height: 900 };
const family = GEMINI_COMPUTER_FAMILY;
const read = (native: unknown): ParsedOutput =>
  family.read({ text: '', native }, { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false });
const out = (actions: ScreenAction[], extra: Partial<StandInOutput> = {}): StandInOutput => ({
  thoughts: '',
  actions,
  ...extra,
});
const ctx = (functionSet: '2.5' | '3', spelling?: 'docs' | 'reference'): GeminiResponseContext => ({
  screenshot: SCREEN,
  functionSet,
  ...(spelling ? { spelling } : {}),
});
/** Our actions of a read, the first and the batch, without thoughts. */
const actionsOf = (parsed: ParsedOutput): Record<string, unknown>[] =>
  [parsed.action, ...(parsed.then ?? []).map((b) => b.action)].map(({ thoughts: _t, ...rest }) => rest);

const P = { x: 720, y: 450 }; // 500,500 on the grid of a 1440×900 screenshot
const Q = { x: 144, y: 90 }; // 100,100
const G: [number, number] = [500, 500];
const H: [number, number] = [100, 100];
const click = (button: 'left' | 'right', count: 1 | 2 | 3): ScreenAction => ({ kind: 'click', button, count, ...P });
const scroll = (dx: number, dy: number): ScreenAction => ({ kind: 'scroll', ...P, dx, dy });
const URL_ = 'https://tidewater.test/rooms';

describe('the family', () => {
  it('is registered, speaks norm1000 (the 0–999 grid as it is) and both function sets', () => {
    expect(familyOf('gemini-computer')).toBe(family);
    expect(family.coordinateSpace).toBe('norm1000');
    expect(family.resizeFactor).toBe(1);
    expect(family.displaySize(SCREEN)).toEqual({ width: 1000, height: 1000 });
    expect(family.tools).toEqual(['2.5', '3']);
  });

  it.each([
    ['gemini-2.5-computer-use-preview-10-2025', '2.5'],
    ['models/gemini-2.5-computer-use-preview-10-2025', '2.5'],
    ['gemini-3.5-flash', '3'],
    ['gemini-3-flash-preview', '3'],
    ['tidewater-booking', '3'], // a stand-in script name: the newest set
  ])('model %s speaks the %s set', (model, set) => {
    expect(functionSetForModel(model)).toBe(set);
    expect(functionSetOf({ model } as never)).toBe(set);
  });

  it('takes the endpoint tool over the model name, and the 3.x set with neither', () => {
    expect(functionSetOf({ tool: '2.5', model: 'gemini-3.5-flash' } as never)).toBe('2.5');
    expect(functionSetOf(undefined)).toBe('3');
  });

  it('is chosen per endpoint with its function set checked against the family (models.<name>.tool)', () => {
    const base = { baseUrl: 'https://generativelanguage.googleapis.com', model: 'gemini-3.5-flash' };
    expect(EndpointSchema.safeParse({ ...base, family: 'gemini-computer', tool: '2.5' }).success).toBe(true);
    const wrong = EndpointSchema.safeParse({ ...base, family: 'gemini-computer', tool: 'computer' });
    expect(wrong.error?.issues[0]?.message).toBe('is computer; family gemini-computer speaks 2.5, 3');
  });

  it('refuses identities and prompt files in one line', async () => {
    expect(family.identityIssue('fara_qwen35', false)).toMatch(
      /^identities are the Fara families'; gemini-computer has its own system prompt/,
    );
    await expect(family.promptFileActions('/tmp/p.md')).rejects.toMatchObject({
      name: 'PromptFileError',
      message: expect.stringContaining('a prompt file is for the Fara families; gemini-computer') as unknown,
    });
  });
});

describe('each action kind', () => {
  it.each<[string, '2.5' | '3', 'docs' | 'reference' | undefined, ScreenAction, Record<string, unknown>[]]>([
    ['2.5 click', '2.5', undefined, click('left', 1), [{ action: 'left_click', coordinate: G }]],
    ['2.5 hover', '2.5', undefined, { kind: 'move', ...P }, [{ action: 'mouse_move', coordinate: G }]],
    [
      '2.5 drag',
      '2.5',
      undefined,
      { kind: 'drag', path: [P, Q] },
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'left_click_drag', coordinate: H },
      ],
    ],
    [
      '2.5 type at a point',
      '2.5',
      undefined,
      { kind: 'type', text: 'Lisbon', at: P, pressEnter: true },
      [{ action: 'type', coordinate: G, text: 'Lisbon', press_enter: true, delete_existing_text: true }],
    ],
    [
      '2.5 keys',
      '2.5',
      undefined,
      { kind: 'keys', keys: ['Control', 'a'] },
      [{ action: 'key', keys: ['Control', 'a'] }],
    ],
    [
      '2.5 scroll down half a screen',
      '2.5',
      undefined,
      scroll(0, 450),
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'scroll', pixels: -500 },
      ],
    ],
    [
      '2.5 scroll left',
      '2.5',
      undefined,
      scroll(-144, 0),
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'hscroll', pixels: 100 },
      ],
    ],
    ['2.5 wait', '2.5', undefined, { kind: 'wait', seconds: 5 }, [{ action: 'wait', time: 5 }]],
    ['2.5 navigate', '2.5', undefined, { kind: 'navigate', url: URL_ }, [{ action: 'visit_url', url: URL_ }]],
    ['2.5 back', '2.5', undefined, { kind: 'back' }, [{ action: 'history_back' }]],
    ['3 click', '3', undefined, click('left', 1), [{ action: 'left_click', coordinate: G }]],
    ['3 double click', '3', undefined, click('left', 2), [{ action: 'double_click', coordinate: G }]],
    ['3 triple click', '3', undefined, click('left', 3), [{ action: 'triple_click', coordinate: G }]],
    ['3 right click', '3', undefined, click('right', 1), [{ action: 'right_click', coordinate: G }]],
    ['3 move', '3', undefined, { kind: 'move', ...P }, [{ action: 'mouse_move', coordinate: G }]],
    [
      '3 drag (docs spelling)',
      '3',
      'docs',
      { kind: 'drag', path: [P, Q] },
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'left_click_drag', coordinate: H },
      ],
    ],
    [
      '3 drag (reference spelling)',
      '3',
      'reference',
      { kind: 'drag', path: [P, Q] },
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'left_click_drag', coordinate: H },
      ],
    ],
    ['3 type', '3', undefined, { kind: 'type', text: 'hi' }, [{ action: 'type', text: 'hi', press_enter: false }]],
    [
      '3 type at a point (a click, then type)',
      '3',
      undefined,
      { kind: 'type', text: 'hi', at: P, pressEnter: true },
      [
        { action: 'left_click', coordinate: G },
        { action: 'type', text: 'hi', press_enter: true },
      ],
    ],
    ['3 press_key', '3', undefined, { kind: 'keys', keys: ['Enter'] }, [{ action: 'key', keys: ['Enter'] }]],
    ['3 hotkey', '3', undefined, { kind: 'keys', keys: ['Control', 'c'] }, [{ action: 'key', keys: ['Control', 'c'] }]],
    [
      '3 scroll (docs: pixels)',
      '3',
      'docs',
      scroll(0, 450),
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'scroll', pixels: -500 },
      ],
    ],
    [
      '3 scroll up (reference: grid)',
      '3',
      'reference',
      scroll(0, -90),
      [
        { action: 'mouse_move', coordinate: G },
        { action: 'scroll', pixels: 100 },
      ],
    ],
    ['3 wait', '3', undefined, { kind: 'wait', seconds: 2 }, [{ action: 'wait', time: 2 }]],
    ['3 screenshot', '3', undefined, { kind: 'screenshot' }, [{ action: 'wait', time: 0 }]],
    ['3 navigate', '3', undefined, { kind: 'navigate', url: URL_ }, [{ action: 'visit_url', url: URL_ }]],
    ['3 back', '3', undefined, { kind: 'back' }, [{ action: 'history_back' }]],
  ])('%s', (_name, set, spelling, action, expected) => {
    const parsed = read(geminiResponse(out([action], { thoughts: 'Next.' }), ctx(set, spelling)));
    expect(actionsOf(parsed)).toEqual(expected);
    for (const a of [parsed.action, ...(parsed.then ?? []).map((b) => b.action)]) {
      expect(fara15ActionSchema.safeParse(a).success).toBe(true);
      expect(family.allowedActions).toContain(a.action);
    }
    expect(parsed.toolCallText).toBe('');
    expect(parsed.native).toMatchObject({ name: expect.any(String) as unknown });
  });
});

describe('batches, checks and text', () => {
  it('reads several calls as one batch: the first action now, the rest in `then`, each with its call', () => {
    const body = geminiResponse(
      out([click('left', 1), { kind: 'type', text: 'Lisbon', at: Q }], { thoughts: 'Go.' }),
      ctx('2.5'),
    );
    const parsed = read(body);
    expect(parsed.thoughts).toBe('Go.');
    expect(parsed.action).toEqual({ action: 'left_click', thoughts: 'Go.', coordinate: G });
    expect(parsed.then?.map((b) => b.action.action)).toEqual(['type']);
    expect(parsed.then?.[0]?.native).toMatchObject({ name: 'type_text_at', args: { x: 100, y: 100 } });
    expect(parsed.check).toBeUndefined();
  });

  it('reads an output from its record alone (no response body) as from the response', () => {
    const native = geminiResponse(
      out([click('left', 1), { kind: 'wait', seconds: 5 }], { thoughts: 'Go.' }),
      ctx('2.5'),
    );
    const text = family.outputText!({ text: '', native });
    expect(read(native)).toEqual(
      family.read({ text }, { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false }),
    );
  });

  it('uses a 3.x call’s intent as its action’s thoughts', () => {
    const parsed = read(geminiResponse(out([click('left', 1)], { thoughts: 'Open the rooms.' }), ctx('3')));
    expect(parsed.action.thoughts).toBe('Open the rooms.');
  });

  it('turns require_confirmation into a question holding ALL the call’s actions', () => {
    const check = { code: 'sensitive_domain', message: 'Submit the booking?' };
    const body = geminiResponse(
      out([click('left', 1), { kind: 'wait', seconds: 5 }], { safetyCheck: check }),
      ctx('2.5'),
    );
    const parsed = read(body);
    expect(parsed.action).toMatchObject({ action: 'ask_user_question', question: 'Submit the booking?' });
    expect(family.outcome(parsed.action)).toEqual({ kind: 'ask', text: 'Submit the booking?' });
    expect(parsed.then?.map((b) => b.action.action)).toEqual(['left_click', 'wait']);
    expect(parsed.check).toEqual({
      message: 'Submit the booking?',
      native: {
        name: 'click_at',
        safety_decision: { decision: 'require_confirmation', explanation: 'Submit the booking?' },
      },
    });
  });

  it.each<[string, 'answer' | 'question', AgentAction['action']]>([
    ['The room is booked for June 3.', 'answer', 'terminate'],
    ['Which date would you like?', 'question', 'ask_user_question'],
  ])('reads the text-only %j as %s', (text, kind, action) => {
    const parsed = read(geminiResponse(out([], { final: { kind, text } }), ctx('3')));
    expect(parsed.action.action).toBe(action);
    expect(parsed.then).toBeUndefined();
    expect(family.outcome(parsed.action).text).toBe(text);
  });
});

describe('malformed outputs', () => {
  const feedback = (err: unknown) => family.feedback(err as ModelOutputError, SCREEN);
  const thrown = (native: unknown): unknown => {
    try {
      read(native);
    } catch (err) {
      return err;
    }
    throw new Error('read did not throw');
  };

  it('feeds back finishReason MALFORMED_FUNCTION_CALL', () => {
    const err = thrown(geminiResponse(out([click('left', 1)], { malformed: 'malformed-function-call' }), ctx('3')));
    expect(err).toBeInstanceOf(ToolCallJsonError);
    expect(feedback(err)).toMatch(/^Your function call was malformed .*MALFORMED_FUNCTION_CALL.*No action was taken/);
  });

  it('feeds back a function of neither set, naming the ones it may call', () => {
    const err = thrown(geminiResponse(out([click('left', 1)], { malformed: 'unknown-action' }), ctx('2.5')));
    expect(err).toBeInstanceOf(UnknownActionError);
    expect(feedback(err)).toMatch(
      /^double_click_at cannot be carried out here\. No action was taken\. Use one of: click_at/,
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a point off the grid', { name: 'click', args: { x: 1200, y: 10 } }, 'x'],
    ['a missing point', { name: 'click_at', args: { y: 10 } }, 'x'],
    ['a scroll without direction', { name: 'scroll_document', args: {} }, 'direction'],
  ])('feeds back %s', (_name, functionCall, field) => {
    const native = { candidates: [{ content: { role: 'model', parts: [{ functionCall }] }, finishReason: 'STOP' }] };
    const err = thrown(native);
    expect(err).toBeInstanceOf(InvalidActionArgumentsError);
    expect((err as InvalidActionArgumentsError).field).toBe(field);
    expect(feedback(err)).toMatch(new RegExp(`^The ${field} argument of .* No action was taken`));
  });

  it('feeds back a function we cannot carry out (middle_click)', () => {
    const native = {
      candidates: [
        { content: { role: 'model', parts: [{ functionCall: { name: 'middle_click', args: { x: 1, y: 1 } } }] } },
      ],
    };
    expect(feedback(thrown(native))).toMatch(/^middle_click cannot be carried out here/);
  });

  it('reads go_forward as the browser chord Alt+ArrowRight (no forward action of ours)', () => {
    const native = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'go_forward' } }] } }] };
    expect(read(native).action).toEqual({ action: 'key', thoughts: '', keys: ['Alt', 'ArrowRight'] });
  });

  it('feeds back an empty response', () => {
    expect(feedback(thrown({ candidates: [] }))).toMatch(/no function call and no text/);
  });
});
