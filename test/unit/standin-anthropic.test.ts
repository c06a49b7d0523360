// The Anthropic Messages API stand-in: the response for each scripted action in each computer tool's wire format
// and coordinate space, batches, the plain-text question and provider check, the malformed kinds Anthropic sends,
// usage; the request check, one documented requirement broken at a time; and the official SDK client
// (@anthropic-ai/sdk) against the stand-in on 127.0.0.1, beta tools and the GA toolset.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import type { BetaMessage, BetaToolUnion } from '@anthropic-ai/sdk/resources/beta/messages';
import type { Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, describe, expect, it } from 'vitest';
import {
  anthropicContext,
  anthropicResponse,
  readAnthropicRequest,
  type AnthropicComputerTool,
  type AnthropicExpectations,
  type AnthropicRequestFacts,
  type AnthropicResponseContext,
  type AnthropicScriptedOutput,
  type ZoomAction,
} from '../../src/scripted/providers/anthropic-messages';
import { imageSize } from '../../src/scripted/providers/anthropic-messages-request';
import type { ScreenAction } from '../../src/scripted/providers/output';

/** A PNG's signature and IHDR chunk: all the stand-in reads of a screenshot. */
function png(width: number, height: number): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'ascii');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b.writeUInt8(8, 24);
  b.writeUInt8(2, 25);
  return b.toString('base64');
}

/** A JPEG's SOI, an APP0 segment and a SOF0 frame header. */
function jpeg(width: number, height: number): string {
  const app0 = [0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0];
  const sof = [0xff, 0xc0, 0x00, 0x11, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3];
  return Buffer.from([0xff, 0xd8, ...app0, ...sof, ...new Array<number>(9).fill(0)]).toString('base64');
}

const image = (data: string, mediaType = 'image/png') => ({
  type: 'image',
  source: { type: 'base64', media_type: mediaType, data },
});
const out = (actions: Array<ScreenAction | ZoomAction>, more: Partial<AnthropicScriptedOutput> = {}) => ({
  thoughts: '',
  actions,
  ...more,
});
const toolsetCtx: AnthropicResponseContext = {
  tool: 'computer_toolset_20260801',
  screenshot: { width: 1280, height: 800 },
  index: 3,
  model: 'claude-sonnet-5',
};
const betaCtx: AnthropicResponseContext = {
  tool: 'computer_20250124',
  screenshot: { width: 2560, height: 1600 },
  display: { width: 1280, height: 800 },
  index: 1,
  model: 'claude-sonnet-4-5',
};
const asGa = (m: Message | BetaMessage): Message => m as Message;
/** The tool_use blocks of a response as [name, input] pairs. */
const calls = (m: Message | BetaMessage) =>
  m.content.flatMap((b) => (b.type === 'tool_use' ? [[b.name, b.input]] : []));

describe('the response for each action (toolset: one tool_use per action, named after it)', () => {
  const p = { x: 100, y: 200 };
  it.each<[string, ScreenAction | ZoomAction, Array<[string, unknown]>]>([
    ['left click', { kind: 'click', button: 'left', count: 1, ...p }, [['left_click', { coordinate: [100, 200] }]]],
    ['double click', { kind: 'click', button: 'left', count: 2, ...p }, [['double_click', { coordinate: [100, 200] }]]],
    ['triple click', { kind: 'click', button: 'left', count: 3, ...p }, [['triple_click', { coordinate: [100, 200] }]]],
    ['right click', { kind: 'click', button: 'right', count: 1, ...p }, [['right_click', { coordinate: [100, 200] }]]],
    [
      'middle click',
      { kind: 'click', button: 'middle', count: 1, ...p },
      [['middle_click', { coordinate: [100, 200] }]],
    ],
    [
      'click with modifiers (text, xdotool names)',
      { kind: 'click', button: 'left', count: 1, keys: ['Control', 'Shift'], ...p },
      [['left_click', { coordinate: [100, 200], text: 'ctrl+shift' }]],
    ],
    ['move', { kind: 'move', ...p }, [['mouse_move', { coordinate: [100, 200] }]]],
    [
      'drag of two points',
      { kind: 'drag', path: [p, { x: 300, y: 400 }] },
      [['left_click_drag', { start_coordinate: [100, 200], coordinate: [300, 400] }]],
    ],
    [
      'drag along a path',
      { kind: 'drag', path: [p, { x: 200, y: 200 }, { x: 300, y: 400 }] },
      [
        ['mouse_move', { coordinate: [100, 200] }],
        ['left_mouse_down', {}],
        ['mouse_move', { coordinate: [200, 200] }],
        ['mouse_move', { coordinate: [300, 400] }],
        ['left_mouse_up', {}],
      ],
    ],
    ['type', { kind: 'type', text: 'hello' }, [['type', { text: 'hello' }]]],
    [
      'type at a point, then Enter',
      { kind: 'type', text: 'hi', at: p, pressEnter: true },
      [
        ['left_click', { coordinate: [100, 200] }],
        ['type', { text: 'hi' }],
        ['key', { text: 'Return' }],
      ],
    ],
    ['keys', { kind: 'keys', keys: ['Control', 'a'] }, [['key', { text: 'ctrl+a' }]]],
    [
      'scroll down (pixels → wheel clicks)',
      { kind: 'scroll', dx: 0, dy: 500, ...p },
      [['scroll', { coordinate: [100, 200], scroll_direction: 'down', scroll_amount: 5 }]],
    ],
    [
      'scroll up and left',
      { kind: 'scroll', dx: -40, dy: -300, ...p },
      [
        ['scroll', { coordinate: [100, 200], scroll_direction: 'up', scroll_amount: 3 }],
        ['scroll', { coordinate: [100, 200], scroll_direction: 'left', scroll_amount: 1 }],
      ],
    ],
    ['wait', { kind: 'wait', seconds: 2 }, [['wait', { duration: 2 }]]],
    [
      'navigate (through the address bar)',
      { kind: 'navigate', url: 'https://example.com' },
      [
        ['key', { text: 'ctrl+l' }],
        ['type', { text: 'https://example.com' }],
        ['key', { text: 'Return' }],
      ],
    ],
    ['back', { kind: 'back' }, [['key', { text: 'alt+Left' }]]],
    ['screenshot', { kind: 'screenshot' }, [['screenshot', {}]]],
    ['zoom', { kind: 'zoom', from: p, to: { x: 500, y: 600 } }, [['zoom', { region: [100, 200, 500, 600] }]]],
  ])('%s', (_, action, expected) => {
    const m = asGa(anthropicResponse(out([action]), toolsetCtx));
    expect(calls(m)).toEqual(expected);
    for (const b of m.content) if (b.type === 'tool_use') expect(b.toolset_name).toBe('computer');
    expect(m.stop_reason).toBe('tool_use');
  });

  it('the beta tools: one tool named computer, the action in input.action', () => {
    const m = anthropicResponse(out([{ kind: 'click', button: 'left', count: 1, x: 200, y: 100 }]), betaCtx);
    expect(m.content).toEqual([
      {
        type: 'tool_use',
        id: 'toolu_standin_1_0',
        caller: { type: 'direct' },
        name: 'computer',
        input: { action: 'left_click', coordinate: [100, 50] },
      },
    ]);
  });
});

describe('coordinates', () => {
  it.each<[string, AnthropicResponseContext, number[]]>([
    ['beta: screenshot pixels → display_*_px (half size)', betaCtx, [500, 250]],
    ['beta: display = screenshot, no scaling', { ...betaCtx, screenshot: { width: 1280, height: 800 } }, [1000, 500]],
    ['beta: no screenshot seen: the display is the space', { ...betaCtx, screenshot: null }, [1000, 500]],
    ['toolset: screenshot pixels', toolsetCtx, [1000, 500]],
  ])('%s', (_, ctx, coordinate) => {
    const m = anthropicResponse(out([{ kind: 'move', x: 1000, y: 500 }]), ctx);
    expect(calls(m)[0]?.[1]).toMatchObject({ coordinate });
  });

  it('zoom on computer_20251124 scales its region; zoom is refused where it is not offered', () => {
    const zoom: ZoomAction = { kind: 'zoom', from: { x: 0, y: 0 }, to: { x: 2560, y: 1600 } };
    const ctx = { ...betaCtx, tool: 'computer_20251124' as const, zoom: true };
    expect(calls(anthropicResponse(out([zoom]), ctx))).toEqual([
      ['computer', { action: 'zoom', region: [0, 0, 1280, 800] }],
    ]);
    expect(() => anthropicResponse(out([zoom]), betaCtx)).toThrow(/zoom/);
    expect(() => anthropicResponse(out([zoom]), { ...ctx, zoom: false })).toThrow(/zoom/);
  });
});

describe('batches, questions, checks, malformed outputs, usage', () => {
  it('a batch is several tool_use blocks in one message, after the thoughts', () => {
    const m = asGa(
      anthropicResponse(
        out(
          [
            { kind: 'click', button: 'left', count: 1, x: 10, y: 20 },
            { kind: 'type', text: 'Ada' },
          ],
          { thoughts: 'I will fill the name.' },
        ),
        toolsetCtx,
      ),
    );
    expect(m.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))).toEqual([
      'toolu_standin_3_0',
      'toolu_standin_3_1',
    ]);
    expect(m).toMatchObject({ id: 'msg_standin_3', type: 'message', role: 'assistant', model: 'claude-sonnet-5' });
  });

  it.each<[string, Partial<AnthropicScriptedOutput>, string]>([
    ['a question', { final: { kind: 'question', text: 'Which date?' } }, 'Thinking.\n\nWhich date?'],
    ['an answer', { final: { kind: 'answer', text: 'Booked.' } }, 'Thinking.\n\nBooked.'],
    [
      'a provider check (no field on Anthropic: asked in text, actions withheld)',
      { safetyCheck: { code: 'sensitive_domain', message: 'Shall I pay?' }, actions: [{ kind: 'screenshot' }] },
      'Thinking.\n\nShall I pay?',
    ],
  ])('%s is a text-only message, end_turn', (_, more, text) => {
    const m = anthropicResponse(out([], { thoughts: 'Thinking.', ...more }), betaCtx);
    expect(m.content).toEqual([{ type: 'text', text, citations: null }]);
    expect(m.stop_reason).toBe('end_turn');
  });

  it('unknown action: beta input.action, toolset name (toolset_name kept)', () => {
    const click: ScreenAction = { kind: 'click', button: 'left', count: 1, x: 10, y: 10 };
    expect(calls(anthropicResponse(out([click], { malformed: 'unknown-action' }), betaCtx))[0]).toEqual([
      'computer',
      { action: 'click', coordinate: [5, 5] },
    ]);
    const ga = asGa(anthropicResponse(out([click], { malformed: 'unknown-action' }), toolsetCtx));
    expect(ga.content[0]).toMatchObject({ name: 'click', toolset_name: 'computer', input: { coordinate: [10, 10] } });
  });

  it('off screen: the first point lands past the right edge of the model space', () => {
    const click: ScreenAction = { kind: 'click', button: 'left', count: 1, x: 10, y: 10 };
    const beta = calls(
      anthropicResponse(out([{ kind: 'keys', keys: ['Tab'] }, click], { malformed: 'off-screen' }), betaCtx),
    );
    expect(beta[1]).toEqual(['computer', { action: 'left_click', coordinate: [1320, 400] }]);
    const ga = calls(anthropicResponse(out([{ kind: 'type', text: 'x' }], { malformed: 'off-screen' }), toolsetCtx));
    expect(ga).toEqual([
      ['left_click', { coordinate: [1320, 400] }],
      ['type', { text: 'x' }],
    ]);
  });

  it('the kinds Anthropic does not send are refused', () => {
    expect(() => anthropicResponse(out([], { malformed: 'missing-coordinate' }), betaCtx)).toThrow(/not a kind/);
    expect(() => anthropicResponse(out([], { malformed: 'malformed-function-call' }), betaCtx)).toThrow(/not a kind/);
  });

  it('usage: input_tokens leaves out the tokens read from the cache', () => {
    const m = anthropicResponse(out([], { usage: { input: 1000, output: 50, cachedInput: 400 } }), betaCtx);
    expect(m.usage).toMatchObject({
      input_tokens: 600,
      output_tokens: 50,
      cache_read_input_tokens: 400,
      cache_creation_input_tokens: 0,
    });
  });
});

const KEYS = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const BETA_TOOL = { type: 'computer_20250124', name: 'computer', display_width_px: 1280, display_height_px: 800 };
/** A well-formed beta request two model calls in: the task, a click, its screenshot. */
function betaRequest(): { headers: Record<string, string>; body: Record<string, unknown> } {
  return {
    headers: { ...KEYS, 'anthropic-beta': 'computer-use-2025-01-24' },
    body: {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      tools: [BETA_TOOL],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Book a table' }, image(png(1280, 800))] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Clicking.' },
            { type: 'tool_use', id: 'toolu_a', name: 'computer', input: { action: 'left_click', coordinate: [1, 2] } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [image(jpeg(1024, 768), 'image/jpeg')] }],
        },
      ],
    },
  };
}
/** A well-formed toolset request: a batch of two, both answered with toolset_name echoed. */
function toolsetRequest(): { headers: Record<string, string>; body: Record<string, unknown> } {
  const use = (id: string, name: string, input: unknown) => ({
    type: 'tool_use',
    id,
    name,
    toolset_name: 'computer',
    input,
  });
  const result = (id: string, content: unknown[]) => ({
    type: 'tool_result',
    tool_use_id: id,
    toolset_name: 'computer',
    content,
  });
  return {
    headers: { ...KEYS },
    body: {
      model: 'claude-sonnet-5',
      max_tokens: 1024,
      tools: [{ type: 'computer_toolset_20260801', configs: { zoom: { enabled: false } } }],
      messages: [
        { role: 'user', content: 'Book a table' },
        {
          role: 'assistant',
          content: [use('toolu_1', 'left_click', { coordinate: [5, 5] }), use('toolu_2', 'type', { text: 'x' })],
        },
        {
          role: 'user',
          content: [result('toolu_1', [{ type: 'text', text: 'done' }]), result('toolu_2', [image(png(1280, 800))])],
        },
      ],
    },
  };
}
type Req = ReturnType<typeof betaRequest>;
const messagesOf = (r: Req) => r.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
const lastContent = (r: Req) => messagesOf(r)[messagesOf(r).length - 1]!.content;
const check = (r: Req, expectations?: AnthropicExpectations) => readAnthropicRequest(r.headers, r.body, expectations);

describe('the request check', () => {
  it('a well-formed beta request passes and its newest screenshot (a JPEG) is read', () => {
    const f = check(betaRequest());
    expect(f.problems).toEqual([]);
    expect(f).toMatchObject({
      tool: 'computer_20250124',
      display: { width: 1280, height: 800 },
      screenshot: { width: 1024, height: 768 },
    });
    expect(f).toMatchObject({
      apiKey: 'sk-ant-test',
      betas: ['computer-use-2025-01-24'],
      acknowledged: [],
      zoom: false,
    });
  });

  it('the key may come as Authorization: Bearer (how the SDK 1.17.0 sends apiKey), not as another scheme', () => {
    const bearer = {
      'anthropic-version': '2026-10-21',
      'anthropic-beta': 'computer-use-2025-01-24',
      authorization: 'Bearer k1',
    };
    expect(readAnthropicRequest(bearer, betaRequest().body)).toMatchObject({
      problems: [],
      apiKey: 'k1',
      keyHeader: 'authorization',
    });
    const basic = { ...bearer, authorization: 'Basic k1' };
    expect(readAnthropicRequest(basic, betaRequest().body).problems).toEqual([
      'x-api-key header missing (nor Authorization: Bearer, as the SDK sends the key)',
    ]);
  });

  it('a well-formed toolset request passes, with no beta header', () => {
    const f = check(toolsetRequest(), { tool: 'computer_toolset_20260801', toolUseIds: ['toolu_1', 'toolu_2'] });
    expect(f.problems).toEqual([]);
    expect(f).toMatchObject({
      tool: 'computer_toolset_20260801',
      display: null,
      zoom: false,
      screenshot: { width: 1280, height: 800 },
    });
  });

  it.each<[string, () => Req, string[], AnthropicExpectations?]>([
    [
      'no x-api-key',
      () => ({ ...betaRequest(), headers: { 'anthropic-version': '1', 'anthropic-beta': 'computer-use-2025-01-24' } }),
      ['x-api-key header missing (nor Authorization: Bearer, as the SDK sends the key)'],
    ],
    [
      'no anthropic-version',
      () => ({ ...betaRequest(), headers: { 'x-api-key': 'k', 'anthropic-beta': 'computer-use-2025-01-24' } }),
      ['anthropic-version header missing'],
    ],
    [
      'no beta header',
      () => ({ ...betaRequest(), headers: KEYS }),
      ['anthropic-beta header computer-use-2025-01-24 missing for computer_20250124'],
    ],
    [
      'computer_20251124 with the older beta header',
      () => {
        const r = betaRequest();
        r.body.tools = [{ ...BETA_TOOL, type: 'computer_20251124', enable_zoom: true }];
        return r;
      },
      ['anthropic-beta header computer-use-2025-11-24 missing for computer_20251124'],
    ],
    [
      'no computer tool',
      () => ({ ...betaRequest(), body: { ...betaRequest().body, tools: [] } }),
      ['no computer tool'],
    ],
    [
      'a beta tool misnamed, without its display size, with zoom it lacks',
      () => ({
        ...betaRequest(),
        body: {
          ...betaRequest().body,
          tools: [{ type: 'computer_20250124', name: 'screen', display_height_px: 800, enable_zoom: true }],
        },
      }),
      [
        'computer_20250124 is named "screen", not "computer"',
        'computer_20250124 display_width_px missing or not a positive integer',
        'enable_zoom is not a field of computer_20250124',
      ],
    ],
    [
      'the toolset with single-tool fields and an unknown config',
      () => {
        const r = toolsetRequest();
        r.body.tools = [
          {
            type: 'computer_toolset_20260801',
            name: 'computer',
            display_width_px: 1280,
            enable_zoom: true,
            configs: { navigate: {} },
          },
        ];
        return r;
      },
      [
        'computer_toolset_20260801 does not take name (invalid_request_error)',
        'computer_toolset_20260801 does not take display_width_px (invalid_request_error)',
        'computer_toolset_20260801 does not take enable_zoom (invalid_request_error)',
        'configs.navigate is not a member of computer_toolset_20260801',
      ],
    ],
    [
      'no max_tokens, no model',
      () => ({ ...betaRequest(), body: { ...betaRequest().body, max_tokens: undefined, model: '' } }),
      ['model missing', 'max_tokens missing'],
    ],
    [
      'a tool_use without its tool_result',
      () => {
        const r = toolsetRequest();
        lastContent(r).splice(0, 1);
        return r;
      },
      ['tool_use toolu_1 has no tool_result in the next user message'],
    ],
    [
      'a toolset tool_result that does not echo toolset_name',
      () => {
        const r = toolsetRequest();
        delete lastContent(r)[1]!.toolset_name;
        return r;
      },
      ['tool_result for toolu_2 does not echo toolset_name "computer"'],
    ],
    [
      'a toolset tool_use that lost its toolset_name in the history',
      () => {
        const r = toolsetRequest();
        delete messagesOf(r)[1]!.content[0]!.toolset_name;
        return r;
      },
      ['tool_use toolu_1 lost its toolset_name "computer"'],
    ],
    [
      'a toolset tool_result with a document in it',
      () => {
        const r = toolsetRequest();
        lastContent(r)[0]!.content = [{ type: 'document', source: { type: 'text', data: 'x' } }];
        return r;
      },
      ['tool_result for toolu_1 carries a document block (the toolset takes text and image only)'],
    ],
    [
      'the last tool_result without an image',
      () => {
        const r = betaRequest();
        lastContent(r)[0]!.content = [{ type: 'text', text: 'clicked' }];
        return r;
      },
      ['the last tool_result (toolu_a) carries no image'],
    ],
    [
      'text before the tool_results',
      () => {
        const r = betaRequest();
        lastContent(r).unshift({ type: 'text', text: 'here' });
        return r;
      },
      ['a text block comes before a tool_result in message 2'],
    ],
    [
      'a tool_result that answers nothing',
      () => {
        const r = betaRequest();
        lastContent(r).push({ type: 'tool_result', tool_use_id: 'toolu_z', content: 'x' });
        return r;
      },
      [
        'tool_result toolu_z answers no tool_use of the message before it',
        'the last tool_result (toolu_z) carries no image',
      ],
    ],
    [
      'an image whose media_type is not its bytes, and one that is no image',
      () => {
        const r = betaRequest();
        messagesOf(r)[0]!.content[1] = image(png(800, 600), 'image/jpeg');
        lastContent(r)[0]!.content = [image(Buffer.from('hello').toString('base64'))];
        return r;
      },
      [
        'the image in message 0 says image/jpeg but its bytes are image/png',
        'the image in the tool_result for toolu_a is neither PNG nor JPEG',
      ],
    ],
    [
      'a screenshot over the toolset models’ limit',
      () => {
        const r = toolsetRequest();
        lastContent(r)[1]!.content = [image(png(3000, 1000))];
        return r;
      },
      ["the image in the tool_result for toolu_2 is 3000×1000, over the toolset models' limit (rejected, not resized)"],
    ],
    [
      'another tool than the script’s',
      betaRequest,
      ['the script is for computer_20251124, the request offers computer_20250124'],
      { tool: 'computer_20251124' },
    ],
    [
      'the last response not echoed',
      betaRequest,
      ["tool_use toolu_b of the last response is not in the request's last assistant message"],
      { toolUseIds: ['toolu_b'] },
    ],
    [
      'a reply expected after tool_use',
      betaRequest,
      ['the person\'s reply "yes" is not the text of the next user message'],
      { reply: 'yes' },
    ],
  ])('%s', (_, build, problems, expectations) => {
    expect(check(build(), expectations).problems).toEqual(problems);
  });

  it.each([
    ['text (the docs)', { text: 'shift' }],
    ['key (the quickstart 20250124 handler)', { key: 'shift' }],
  ])('a click modifier echoed in the history as %s passes', (_, modifier) => {
    const r = betaRequest();
    messagesOf(r)[1]!.content[1]!.input = { action: 'left_click', coordinate: [1, 2], ...modifier };
    expect(check(r).problems).toEqual([]);
  });

  it('a failed last action (is_error) may come back without an image', () => {
    const r = betaRequest();
    lastContent(r)[0] = { type: 'tool_result', tool_use_id: 'toolu_a', is_error: true, content: 'unknown action' };
    expect(check(r).problems).toEqual([]);
    expect(check(r).screenshot).toEqual({ width: 1280, height: 800 });
  });

  it('the person’s reply to a question is the next user message’s text', () => {
    const r = toolsetRequest();
    messagesOf(r).push(
      { role: 'assistant', content: [{ type: 'text', text: 'Which date?' }] },
      { role: 'user', content: [{ type: 'text', text: 'Friday' }] },
    );
    expect(check(r, { reply: 'Friday' })).toMatchObject({ reply: 'Friday', problems: [] });
    expect(check(r, { reply: 'Saturday' }).problems).toEqual([
      'the person\'s reply "Saturday" is not the text of the next user message',
    ]);
  });

  it('reads PNG and JPEG sizes from their headers', () => {
    expect(imageSize(Buffer.from(png(1366, 768), 'base64'))).toEqual({
      mediaType: 'image/png',
      width: 1366,
      height: 768,
    });
    expect(imageSize(Buffer.from(jpeg(1024, 768), 'base64'))).toEqual({
      mediaType: 'image/jpeg',
      width: 1024,
      height: 768,
    });
    expect(imageSize(Buffer.from('GIF89a......'))).toBeNull();
  });
});

interface Seen {
  path: string;
  headers: Record<string, string | undefined>;
  facts: AnthropicRequestFacts;
}

/** The stand-in on 127.0.0.1: checks each request with the reader, answers the script's next output. */
async function standIn(script: AnthropicScriptedOutput[], expectations: AnthropicExpectations[] = []) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const index = seen.length;
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(',') : v;
      const facts = readAnthropicRequest(
        headers,
        JSON.parse(Buffer.concat(chunks).toString('utf8')),
        expectations[index],
      );
      seen.push({ path: req.url ?? '', headers, facts });
      const next = script[index];
      if (!next) {
        res.writeHead(500).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_standin_${index}` });
      res.end(JSON.stringify(anthropicResponse(next, anthropicContext(facts, index))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { seen, client: new Anthropic({ apiKey: 'sk-ant-standin', baseURL: url, maxRetries: 0 }) };
}
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const task = (shot: string): MessageParam => ({
  role: 'user',
  content: [
    { type: 'text', text: 'Book a table for two at Tidewater.' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: shot } },
  ],
});

describe('the official SDK against the stand-in', () => {
  it.each<[AnthropicComputerTool, string, string]>([
    ['computer_20250124', 'computer-use-2025-01-24', 'claude-sonnet-4-5'],
    ['computer_20251124', 'computer-use-2025-11-24', 'claude-opus-4-6'],
  ])(
    '%s through client.beta.messages.create: display-space coordinates, a zoom where offered',
    async (tool, beta, model) => {
      const zoom: Array<ScreenAction | ZoomAction> =
        tool === 'computer_20251124' ? [{ kind: 'zoom', from: { x: 0, y: 0 }, to: { x: 1280, y: 800 } }] : [];
      const { seen, client } = await standIn([
        out([{ kind: 'click', button: 'left', count: 1, x: 1280, y: 800 }, ...zoom], { thoughts: 'The form.' }),
      ]);
      const size = { name: 'computer', display_width_px: 1280, display_height_px: 800 } as const;
      const computer: BetaToolUnion =
        tool === 'computer_20251124'
          ? { type: 'computer_20251124', ...size, enable_zoom: true }
          : { type: 'computer_20250124', ...size };
      const msg = await client.beta.messages.create({
        model,
        max_tokens: 1024,
        betas: [beta],
        tools: [computer],
        messages: [task(png(2560, 1600))],
      });
      expect(seen[0]?.facts.problems).toEqual([]);
      expect(seen[0]?.path).toBe('/v1/messages');
      expect(seen[0]?.headers).toMatchObject({ authorization: 'Bearer sk-ant-standin', 'anthropic-beta': beta });
      expect(seen[0]?.facts).toMatchObject({ apiKey: 'sk-ant-standin', keyHeader: 'authorization' });
      expect(seen[0]?.facts.screenshot).toEqual({ width: 2560, height: 1600 });
      expect(msg.stop_reason).toBe('tool_use');
      const [text, click, zoomed] = msg.content;
      expect(text?.type === 'text' && text.text).toBe('The form.');
      expect(click?.type === 'tool_use' && click.input).toEqual({ action: 'left_click', coordinate: [640, 400] });
      if (zoom.length > 0)
        expect(zoomed?.type === 'tool_use' && zoomed.input).toEqual({ action: 'zoom', region: [0, 0, 640, 400] });
    },
  );

  it('computer_toolset_20260801 through client.messages.create: a batch, toolset_name echoed, a question and its reply', async () => {
    const { seen, client } = await standIn(
      [
        out([
          { kind: 'click', button: 'left', count: 1, x: 400, y: 300 },
          { kind: 'type', text: 'Ada' },
        ]),
        out([], { thoughts: 'Two dates are open.', final: { kind: 'question', text: 'Friday or Saturday?' } }),
        out([], { final: { kind: 'answer', text: 'Booked for Friday.' }, usage: { input: 900, output: 20 } }),
      ],
      [{}, { toolUseIds: ['toolu_standin_0_0', 'toolu_standin_0_1'] }, { reply: 'Friday' }],
    );
    const tools = [{ type: 'computer_toolset_20260801' as const }];
    const base = { model: 'claude-sonnet-5', max_tokens: 1024, tools };
    const first = await client.messages.create({ ...base, messages: [task(png(1280, 800))] });
    const uses = first.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    expect(uses.map((u) => [u.name, u.toolset_name, u.input])).toEqual([
      ['left_click', 'computer', { coordinate: [400, 300] }],
      ['type', 'computer', { text: 'Ada' }],
    ]);
    const history: MessageParam[] = [
      task(png(1280, 800)),
      {
        role: 'assistant',
        content: uses.map((u) => ({
          type: 'tool_use',
          id: u.id,
          name: u.name,
          input: u.input,
          toolset_name: u.toolset_name,
        })),
      },
      {
        role: 'user',
        content: uses.map((u, k) => ({
          type: 'tool_result' as const,
          tool_use_id: u.id,
          toolset_name: 'computer',
          content:
            k === uses.length - 1
              ? [
                  {
                    type: 'image' as const,
                    source: { type: 'base64' as const, media_type: 'image/png' as const, data: png(1280, 800) },
                  },
                ]
              : [{ type: 'text' as const, text: 'done' }],
        })),
      },
    ];
    const second = await client.messages.create({ ...base, messages: history });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([
      { type: 'text', text: 'Two dates are open.\n\nFriday or Saturday?', citations: null },
    ]);
    const third = await client.messages.create({
      ...base,
      messages: [
        ...history,
        {
          role: 'assistant',
          content: second.content.flatMap((b) => (b.type === 'text' ? [{ type: 'text' as const, text: b.text }] : [])),
        },
        { role: 'user', content: 'Friday' },
      ],
    });
    expect(third.usage).toMatchObject({ input_tokens: 900, output_tokens: 20 });
    expect(seen.map((s) => s.facts.problems)).toEqual([[], [], []]);
    expect(
      seen.map((s) => [s.facts.apiKey, s.headers['anthropic-beta'], Boolean(s.headers['anthropic-version'])]),
    ).toEqual(new Array(3).fill(['sk-ant-standin', undefined, true]));
    expect(seen[2]?.facts.reply).toBe('Friday');
    expect(seen.map((s) => s.path)).toEqual(new Array(3).fill('/v1/messages'));
  });
});
