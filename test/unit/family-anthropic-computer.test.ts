// Specification of the anthropic-computer family: its requests rebuilt from hand-built histories (a task, a step, a
// batch continued and cut short, a question and its reply, an invalid output, more steps than screenshots kept, a
// zoom), each checked with the Anthropic stand-in's request reader; its reading of the stand-in's responses for each
// action kind, batches, text-only answers and questions and the malformed kinds Anthropic sends; and the tool choice.
// The SDK call and the round trip are in family-anthropic-computer-call.test.ts.
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_COMPUTER_FAMILY } from '../../src/families/anthropic-computer/family';
import { anthropicPrice } from '../../src/families/anthropic-computer/prices';
import { OMITTED_SCREENSHOT } from '../../src/families/anthropic-computer/request';
import { chooseTool, toolForModel } from '../../src/families/anthropic-computer/tools';
import { familyOf } from '../../src/families/registry';
import { smartResize } from '../../src/image/smart-resize';
import type { HistoryEntry } from '../../src/model/context';
import type { ModelOutputError } from '../../src/model/errors';
import { InvalidActionArgumentsError, UnknownActionError } from '../../src/model/errors';
import {
  anthropicResponse,
  COMPUTER_BETA_HEADERS,
  readAnthropicRequest,
  type AnthropicComputerTool,
  type AnthropicExpectations,
  type AnthropicScriptedOutput,
  type ZoomAction,
} from '../../src/scripted/providers/anthropic-messages';
import type { ScreenAction } from '../../src/scripted/providers/output';

const SCREEN = { width: 1280, height: 800 };
/** An endpoint's settings as the worker config gives them: with the model's name beside the tool. */
const settingsOf = (tool: string) => {
  const settings = { tool, model: 'claude-test' };
  return settings;
};
const TOOLS: AnthropicComputerTool[] = ['computer_20250124', 'computer_20251124', 'computer_toolset_20260801'];
const TOOLSET: AnthropicComputerTool = 'computer_toolset_20260801';
const family = ANTHROPIC_COMPUTER_FAMILY;

const shots = new Map<string, string>();
beforeAll(async () => {
  for (const [i, ref] of ['s1', 's2', 's3', 's4', 's5', 's6'].entries()) {
    const png = await sharp({ create: { ...SCREEN, channels: 3, background: { r: 40 * i, g: 90, b: 200 } } })
      .png()
      .toBuffer();
    shots.set(ref, `data:image/png;base64,${png.toString('base64')}`);
  }
});
const loadImage = async (ref: string) => shots.get(ref) ?? '';

type Out = AnthropicScriptedOutput;
const out = (actions: Array<ScreenAction | ZoomAction>, more: Partial<Out> = {}): Out => ({
  thoughts: '',
  actions,
  ...more,
});
/** The stand-in's response to a scripted output, for a request that showed a screenshot of the screen's size. */
const respond = (o: Out, tool: AnthropicComputerTool, index = 0) =>
  anthropicResponse(o, {
    tool,
    screenshot: SCREEN,
    display: tool === TOOLSET ? null : SCREEN,
    zoom: tool !== 'computer_20250124',
    index,
    model: 'claude-test',
  });
const outputOf = (o: Out, tool: AnthropicComputerTool, index = 0) => ({ text: '', native: respond(o, tool, index) });
const readOf = (o: Out, tool: AnthropicComputerTool = TOOLSET) =>
  family.read(outputOf(o, tool), { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false });
const recorded = (o: Out, tool: AnthropicComputerTool, index = 0) => family.outputText!(outputOf(o, tool, index));

const task: HistoryEntry = { kind: 'task', text: 'Book a table for two at Tidewater.', screenshot: 's1' };
const said = (o: Out, tool: AnthropicComputerTool, index = 0): HistoryEntry => ({
  kind: 'assistant',
  text: recorded(o, tool, index),
});
const continues: HistoryEntry = { kind: 'assistant', text: '', continues: true };
const seen = (shot: string, more: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}): HistoryEntry => ({
  kind: 'observation',
  screenshot: shot,
  url: `https://tidewater.test/${shot}`,
  ...more,
});

type Body = { messages: Array<{ role: string; content: Array<Record<string, unknown>> }>; tools: unknown[] };
async function requestOf(history: HistoryEntry[], tool: AnthropicComputerTool, imagesKept?: number) {
  const request = await family.request({
    history,
    loadImage,
    screen: SCREEN,
    endpoint: settingsOf(tool),
    identity: undefined,
    imagesKept,
    tokenBudget: undefined,
  });
  return request.native as Body;
}
const headersFor = (tool: AnthropicComputerTool) => ({
  'x-api-key': 'sk-test',
  'anthropic-version': '2023-06-01',
  ...(tool === TOOLSET ? {} : { 'anthropic-beta': COMPUTER_BETA_HEADERS[tool] }),
});
const check = (body: Body, tool: AnthropicComputerTool, expect: AnthropicExpectations = {}) =>
  readAnthropicRequest(headersFor(tool), body, { tool, ...expect });
const last = (body: Body) => body.messages[body.messages.length - 1]?.content ?? [];
const results = (body: Body) => last(body).filter((b) => b.type === 'tool_result');
const kinds = (blocks: unknown) => (blocks as Array<{ type: string }> | undefined)?.map((b) => b.type) ?? [];
const texts = (blocks: unknown) =>
  (blocks as Array<{ type: string; text?: string }>).flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');

const p = { x: 100, y: 200 };
const click: ScreenAction = { kind: 'click', button: 'left', count: 1, ...p };

describe('the family', () => {
  it('is registered, speaks screenshot pixels capped at 1280x800 and the three tools', () => {
    expect(familyOf('anthropic-computer')).toBe(family);
    expect(family).toMatchObject({ coordinateSpace: 'resized-pixels', resizeFactor: 1, maxPixels: 1280 * 800 });
    expect(family.tools).toEqual(TOOLS);
    expect(family.displaySize(SCREEN)).toEqual(SCREEN);
    expect(family.identityIssue('fara-default', false)).toMatch(/Fara families/);
    return expect(family.promptFileActions('/x.md')).rejects.toMatchObject({ name: 'PromptFileError' });
  });

  it.each([
    ['claude-sonnet-4-5-20250929', 'computer_20250124'],
    ['claude-haiku-4-5', 'computer_20250124'],
    ['claude-opus-4-1', 'computer_20250124'],
    ['claude-sonnet-4-20250514', 'computer_20250124'],
    ['claude-opus-4-5', 'computer_20251124'],
    ['claude-opus-4-7', 'computer_20251124'],
    ['claude-sonnet-4-6', 'computer_20251124'],
    ['claude-opus-4-8', 'computer_toolset_20260801'],
    ['claude-sonnet-5', 'computer_toolset_20260801'],
    ['tidewater-booking', 'computer_toolset_20260801'],
  ])('picks the tool of %s by its name', (model, tool) => {
    expect(toolForModel(model)).toBe(tool);
  });

  it('sends a 1440x900 page as a 1280x800 screenshot', () => {
    expect(smartResize(900, 1440, { factor: family.resizeFactor, maxPixels: family.maxPixels })).toEqual({
      height: 800,
      width: 1280,
    });
  });

  it.each([
    ['claude-sonnet-4-5-20250929', { input: 3, output: 15, cachedInput: 0.3 }],
    ['claude-sonnet-4-20250514', { input: 3, output: 15, cachedInput: 0.3 }],
    ['claude-3-7-sonnet-20250219', { input: 3, output: 15, cachedInput: 0.3 }],
    ['claude-opus-4-1', { input: 15, output: 75, cachedInput: 1.5 }],
    ['claude-opus-4-5-20251101', { input: 5, output: 25, cachedInput: 0.5 }],
    ['claude-opus-5-5', { input: 4, output: 20 }],
    ['claude-sonnet-5', { input: 2, output: 10, cachedInput: 0.2 }],
    ['claude-haiku-4-5', { input: 1, output: 5, cachedInput: 0.1 }],
    ['claude-fable-5-1', { input: 10, output: 50, cachedInput: 0.25 }],
    ['tidewater-booking', undefined],
  ])('knows the price of %s', (model, price) => {
    expect(anthropicPrice(model)).toEqual(price);
  });

  it("prefers the endpoint's tool to the name's", () => {
    expect(chooseTool('computer_20251124', 'claude-sonnet-5')).toBe('computer_20251124');
    expect(chooseTool(undefined, 'claude-sonnet-4-5')).toBe('computer_20250124');
  });
});

describe('reading the stand-in responses', () => {
  it.each<[string, ScreenAction, unknown[]]>([
    ['left click', click, [{ action: 'left_click', coordinate: [100, 200] }]],
    ['double click', { ...click, count: 2 }, [{ action: 'double_click', coordinate: [100, 200] }]],
    ['triple click', { ...click, count: 3 }, [{ action: 'triple_click', coordinate: [100, 200] }]],
    ['right click', { ...click, button: 'right' }, [{ action: 'right_click', coordinate: [100, 200] }]],
    ['move', { kind: 'move', ...p }, [{ action: 'mouse_move', coordinate: [100, 200] }]],
    [
      'drag (two of ours)',
      { kind: 'drag', path: [p, { x: 300, y: 400 }] },
      [
        { action: 'mouse_move', coordinate: [100, 200] },
        { action: 'left_click_drag', coordinate: [300, 400] },
      ],
    ],
    ['type', { kind: 'type', text: 'hello' }, [{ action: 'type', text: 'hello' }]],
    [
      'type at a point, then Enter',
      { kind: 'type', text: 'hi', at: p, pressEnter: true },
      [
        { action: 'left_click', coordinate: [100, 200] },
        { action: 'type', text: 'hi' },
        { action: 'key', keys: ['Return'] },
      ],
    ],
    ['keys', { kind: 'keys', keys: ['Control', 'a'] }, [{ action: 'key', keys: ['ctrl', 'a'] }]],
    [
      'scroll down at a point (wheel clicks of 100 px)',
      { kind: 'scroll', dx: 0, dy: 500, ...p },
      [
        { action: 'mouse_move', coordinate: [100, 200] },
        { action: 'scroll', pixels: -500 },
      ],
    ],
    [
      'scroll right',
      { kind: 'scroll', dx: 300, dy: 0, ...p },
      [
        { action: 'mouse_move', coordinate: [100, 200] },
        { action: 'hscroll', pixels: -300 },
      ],
    ],
    ['wait', { kind: 'wait', seconds: 2 }, [{ action: 'wait', time: 2 }]],
    [
      'navigate (ctrl+l, type, Return)',
      { kind: 'navigate', url: 'https://x.test/' },
      [{ action: 'visit_url', url: 'https://x.test/' }],
    ],
    ['back', { kind: 'back' }, [{ action: 'history_back' }]],
    ['screenshot', { kind: 'screenshot' }, [{ action: 'wait', time: 0 }]],
  ])('%s, with every tool', (_name, action, ours) => {
    for (const tool of TOOLS) {
      const parsed = readOf(out([action]), tool);
      expect([parsed.action, ...(parsed.then ?? []).map((b) => b.action)], tool).toEqual(ours);
      expect(parsed.native, tool).toMatchObject({ type: 'tool_use' });
      expect(parsed.toolCallText).toBe('');
    }
  });

  it('reads a batch: the first action, the rest in `then` with the tool_use each came from, the text as thoughts', () => {
    const parsed = readOf(
      out([click, { kind: 'type', text: 'two' }, { kind: 'keys', keys: ['Enter'] }], { thoughts: 'Filling in.' }),
    );
    expect(parsed.action).toEqual({ action: 'left_click', coordinate: [100, 200], thoughts: 'Filling in.' });
    expect(parsed.thoughts).toBe('Filling in.');
    expect(parsed.then?.map((b) => b.action)).toEqual([
      { action: 'type', text: 'two' },
      { action: 'key', keys: ['Return'] },
    ]);
    expect(parsed.then?.map((b) => (b.native as { name: string }).name)).toEqual(['type', 'key']);
  });

  it('takes the thoughts from the thinking a message shows when it has no text', () => {
    const native = {
      content: [
        { type: 'thinking', thinking: 'The form is below.', signature: 'sig' },
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'left_click',
          toolset_name: 'computer',
          input: { coordinate: [5, 6] },
        },
      ],
      stop_reason: 'tool_use',
    };
    const read = { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false };
    const parsed = family.read({ text: '', native }, read);
    expect(parsed.thoughts).toBe('The form is below.');
    expect(parsed.action).toEqual({ action: 'left_click', coordinate: [5, 6], thoughts: 'The form is below.' });
  });

  it('reads a text-only answer as the end, a question (and a provider check, in plain text) as a question', () => {
    const answer = readOf(out([], { final: { kind: 'answer', text: 'Booked for Friday at 7.' } }));
    expect(answer.action).toEqual({ action: 'terminate', thoughts: '', answer: 'Booked for Friday at 7.' });
    const question = readOf(
      out([], { final: { kind: 'question', text: 'Which day suits you?' } }),
      'computer_20250124',
    );
    expect(question.action).toMatchObject({ action: 'ask_user_question', question: 'Which day suits you?' });
    expect(family.outcome(question.action)).toEqual({ kind: 'ask', text: 'Which day suits you?' });
    const check = readOf(out([click], { safetyCheck: { code: 'sensitive_domain', message: 'Shall I pay now?' } }));
    expect(check.action).toMatchObject({ action: 'ask_user_question', question: 'Shall I pay now?' });
  });

  it.each(TOOLS)('refuses an unknown action and a point off the screen (%s), with the line the model reads', (tool) => {
    const unknown = () => readOf(out([click], { malformed: 'unknown-action' }), tool);
    expect(unknown).toThrow(UnknownActionError);
    expect(unknown).toThrow(/Unknown action "click"; allowed actions: key, type/);
    const offScreen = () => readOf(out([click], { malformed: 'off-screen' }), tool);
    expect(offScreen).toThrow(InvalidActionArgumentsError);
    expect(offScreen).toThrow(/\[1320,400\] is outside the screen \(0-1280, 0-800\)/);
    try {
      offScreen();
    } catch (err) {
      const line = family.feedback(err as ModelOutputError, SCREEN);
      expect(line).not.toContain('\n');
      expect(line).toMatch(/coordinates inside the 1280x800 screenshot\.$/);
    }
  });

  it('reads xdotool keys: a repeat, several chords, symbol names', () => {
    const key = (input: Record<string, unknown>) => ({
      text: '',
      native: {
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'key', toolset_name: 'computer', input }],
        stop_reason: 'tool_use',
      },
    });
    const read = (input: Record<string, unknown>) => {
      const parsed = family.read(key(input), {
        screen: SCREEN,
        allowed: family.allowedActions,
        terminateOnParseError: false,
      });
      return [parsed.action, ...(parsed.then ?? []).map((b) => b.action)];
    };
    expect(read({ text: 'Tab', repeat: 3 })).toEqual(Array(3).fill({ action: 'key', keys: ['Tab'] }));
    expect(read({ text: 'ctrl+plus Escape' })).toEqual([
      { action: 'key', keys: ['ctrl', '+'] },
      { action: 'key', keys: ['Escape'] },
    ]);
    expect(() => read({ text: 'a', repeat: 101 })).toThrow(/repeat/);
  });

  it('refuses what our browser cannot do: ctrl+l alone, modifier clicks, a path drag, a middle click', () => {
    expect(() => readOf(out([{ ...click, button: 'middle' }]), 'computer_20250124')).toThrow(UnknownActionError);
    expect(() => readOf(out([{ kind: 'keys', keys: ['Control', 'l'] }]))).toThrow(/no address bar/);
    expect(() => readOf(out([{ ...click, keys: ['Shift'] }]))).toThrow(/modifier keys are not supported/);
    const path = { kind: 'drag' as const, path: [p, { x: 150, y: 150 }, { x: 300, y: 400 }] };
    expect(() => readOf(out([path]))).toThrow(/Unknown action "left_mouse_down"/);
  });
});

describe('the request', () => {
  it.each(TOOLS)('opens with the task and its screenshot, the tool and our system prompt (%s)', async (tool) => {
    const body = await requestOf([task], tool);
    expect(check(body, tool).problems).toEqual([]);
    expect(body.messages).toHaveLength(1);
    expect(kinds(last(body))).toEqual(['text', 'image']);
    expect((body as unknown as { system: string }).system).toMatch(/no address bar.*ctrl\+l/s);
    const entry = body.tools[0] as Record<string, unknown>;
    if (tool === TOOLSET) expect(entry).toMatchObject({ type: tool, configs: { hold_key: { enabled: false } } });
    else expect(entry).toMatchObject({ type: tool, name: 'computer', display_width_px: 1280, display_height_px: 800 });
    expect(entry.enable_zoom).toBe(tool === 'computer_20251124' ? true : undefined);
  });

  it.each(TOOLS)(
    'answers a step: the tool_result with the screenshot and URL, the turn replayed (%s)',
    async (tool) => {
      const body = await requestOf([task, said(out([click]), tool), seen('s2')], tool);
      const facts = check(body, tool, { toolUseIds: ['toolu_standin_0_0'] });
      expect(facts.problems).toEqual([]);
      expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(body.messages[1]?.content).toEqual(respond(out([click]), tool).content);
      const [result] = results(body);
      expect(kinds(result?.content)).toEqual(['image', 'text']);
      expect(texts(result?.content)).toBe('Current URL: https://tidewater.test/s2');
      expect(result?.toolset_name).toBe(tool === TOOLSET ? 'computer' : undefined);
    },
  );

  it('answers a batch carried out in three steps: one result per tool_use, the screenshot after the last', async () => {
    const batch = out([click, { kind: 'type', text: 'two' }, { kind: 'keys', keys: ['Tab'] }]);
    const history = [task, said(batch, TOOLSET), seen('s2'), continues, seen('s3'), continues, seen('s4')];
    const body = await requestOf(history, TOOLSET);
    expect(check(body, TOOLSET).problems).toEqual([]);
    const answered = results(body);
    expect(answered.map((r) => r.is_error)).toEqual([undefined, undefined, undefined]);
    expect(answered.map((r) => kinds(r.content))).toEqual([[], [], ['image', 'text']]);
    expect(answered.every((r) => r.toolset_name === 'computer')).toBe(true);
  });

  it('says which actions of a batch cut short were not carried out, and why', async () => {
    const batch = out([click, { kind: 'type', text: 'two' }, { kind: 'keys', keys: ['Tab'] }]);
    const why = 'The page changed after the click: the rest of the batch was not carried out.';
    const history = [task, said(batch, TOOLSET), seen('s2'), continues, seen('s3', { textObservation: why })];
    const body = await requestOf(history, TOOLSET);
    expect(check(body, TOOLSET).problems).toEqual([]);
    const answered = results(body);
    expect(answered.map((r) => r.is_error)).toEqual([undefined, undefined, true]);
    expect(texts(answered[1]?.content)).toContain(why);
    expect(texts(answered[2]?.content)).toBe(`Not executed: ${why}`);
  });

  it.each(TOOLS)("sends a question's reply as the next user message, its own words first (%s)", async (tool) => {
    const ask = out([], { final: { kind: 'question', text: 'Which day?' } });
    const body = await requestOf([task, said(ask, tool), seen('s2', { userReply: 'Friday' })], tool);
    const facts = check(body, tool, { reply: 'Friday' });
    expect(facts.problems).toEqual([]);
    expect(facts.reply).toContain('Friday');
    expect(last(body)[0]).toEqual({ type: 'text', text: 'Friday' });
    expect(kinds(last(body))).toEqual(['text', 'image', 'text']);
  });

  it.each([
    ['confirmed', 'Yes, pay now.'],
    ['declined', 'No, do not pay.'],
  ])('sends the reply to a check the model asked in plain text (%s) as the next user message', async (_how, reply) => {
    const asked = out([click], { safetyCheck: { code: 'sensitive_domain', message: 'Shall I pay now?' } });
    const body = await requestOf([task, said(asked, TOOLSET), seen('s2', { userReply: reply })], TOOLSET);
    expect(check(body, TOOLSET, { reply }).problems).toEqual([]);
    expect(last(body)[0]).toEqual({ type: 'text', text: reply });
  });

  it("picks the tool by the model's name when the endpoint names none", async () => {
    const settings = { tool: undefined, model: 'claude-sonnet-4-5-20250929' };
    const request = await family.request({
      history: [task],
      loadImage,
      screen: SCREEN,
      endpoint: settings,
      identity: undefined,
      imagesKept: undefined,
      tokenBudget: undefined,
    });
    const body = request.native as Body & { model: string };
    expect(body.tools[0]).toMatchObject({ type: 'computer_20250124' });
    expect(body.model).toBe('claude-sonnet-4-5-20250929');
    expect(check(body, 'computer_20250124').problems).toEqual([]);
  });

  it.each(TOOLS)('answers an invalid output with is_error results the model reads (%s)', async (tool) => {
    const bad = out([click], { malformed: 'unknown-action' });
    let line = '';
    try {
      readOf(bad, tool);
    } catch (err) {
      line = family.feedback(err as ModelOutputError, SCREEN);
    }
    const body = await requestOf([task, said(bad, tool), seen('s1', { textObservation: line })], tool);
    expect(check(body, tool, { toolUseIds: ['toolu_standin_0_0'] }).problems).toEqual([]);
    const [result] = results(body);
    expect(result).toMatchObject({ is_error: true, content: [{ type: 'text', text: line }] });
    expect(kinds(last(body))).toEqual(['tool_result', 'image', 'text']);
  });

  it('keeps the screenshots of the newest turns only; older results keep their text', async () => {
    const history: HistoryEntry[] = [task];
    ['s2', 's3', 's4', 's5'].forEach((shot, i) => history.push(said(out([click]), TOOLSET, i), seen(shot)));
    const body = await requestOf(history, TOOLSET, 2);
    expect(check(body, TOOLSET).problems).toEqual([]);
    const images = JSON.stringify(body).match(/"type":"image"/g) ?? [];
    expect(images).toHaveLength(2);
    expect(texts(body.messages[0]?.content)).toContain(OMITTED_SCREENSHOT);
    const old = body.messages[2]?.content[0] as { content: unknown };
    expect(texts(old.content)).toBe(`${OMITTED_SCREENSHOT}\nCurrent URL: https://tidewater.test/s2`);
  });

  it.each<AnthropicComputerTool>(['computer_20251124', TOOLSET])(
    'answers a zoom with the region cropped from the screenshot, enlarged to the screen (%s)',
    async (tool) => {
      const zoom: ZoomAction = { kind: 'zoom', from: { x: 0, y: 0 }, to: { x: 320, y: 200 } };
      expect(readOf(out([zoom]), tool).action).toEqual({ action: 'wait', time: 0 });
      const body = await requestOf([task, said(out([zoom]), tool), seen('s2')], tool);
      expect(check(body, tool).problems).toEqual([]);
      const [result] = results(body);
      const [cropped, screenshot] = (result?.content ?? []) as Array<{ source: { data: string } }>;
      const meta = await sharp(Buffer.from(cropped?.source.data ?? '', 'base64')).metadata();
      expect([meta.width, meta.height]).toEqual([1280, 800]);
      expect(screenshot?.source.data).toBe(shots.get('s2')?.split(',')[1]);
    },
  );
});
