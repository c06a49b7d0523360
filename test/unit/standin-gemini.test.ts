// Specification of the Gemini generateContent stand-in (src/scripted/providers/gemini-generate.ts): the response for
// each action in both function sets, the 0–999 grid, batching, the safety decision, the malformed kinds and usage;
// the request reader's checks; and the official `@google/genai` client parsing the stand-in's answers over HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Environment, FinishReason, GoogleGenAI } from '@google/genai';
import type { Content, Part } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  geminiFunctionSetForModel,
  geminiModelFromPath,
  geminiResponse,
  GeminiStandInError,
  imageSize,
  readGeminiRequest,
  toGeminiGrid,
} from '../../src/scripted/providers/gemini-generate';
import type { GeminiResponseContext, GeminiExpect } from '../../src/scripted/providers/gemini-generate';
import type { ScreenAction, StandInOutput } from '../../src/scripted/providers/output';

/** A PNG header (signature + IHDR) of the given size: all the reader needs. */
function pngOf(width: number, height: number): string {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'ascii');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]).toString('base64');
}

/** A JPEG header (SOI, an APP0 segment, SOF0) of the given size. */
function jpegOf(width: number, height: number): string {
  const app0 = [0xff, 0xe0, 0x00, 0x04, 0x00, 0x00];
  const sof = [0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 255, width >> 8, width & 255, 0x03, 0, 0, 0];
  return Buffer.from([0xff, 0xd8, ...app0, ...sof]).toString('base64');
}

const SHOT = pngOf(1280, 800);
const SIZE = { width: 1280, height: 800 };
const KEY = { 'x-goog-api-key': 'fake-key' };
const TOOL = { computer_use: { environment: 'ENVIRONMENT_BROWSER' } };
const output = (actions: ScreenAction[], extra: Partial<StandInOutput> = {}): StandInOutput => ({
  thoughts: '',
  actions,
  ...extra,
});
const set25: GeminiResponseContext = { screenshot: SIZE, functionSet: '2.5' };
const set3: GeminiResponseContext = { screenshot: SIZE, functionSet: '3' };

/** The functionCall parts of a response as [name, args]. */
function callsOf(body: ReturnType<typeof geminiResponse>): [string | undefined, Record<string, unknown>][] {
  const parts = body.candidates?.[0]?.content?.parts ?? [];
  return parts.flatMap((p) => (p.functionCall ? [[p.functionCall.name, p.functionCall.args ?? {}]] : []));
}

describe('the 0–999 grid', () => {
  // [pixel x, pixel y, grid x, grid y] in a 1280×800 screenshot
  it.each([
    [0, 0, 0, 0],
    [640, 400, 500, 500],
    [1279, 799, 999, 999],
    [1280, 800, 999, 999],
    [128, 80, 100, 100],
  ])('%i,%i is %i,%i on the grid', (x, y, gx, gy) => {
    expect(toGeminiGrid({ x, y }, SIZE)).toEqual({ x: gx, y: gy });
  });

  it('maps back with px = x/1000*width to within a pixel and a half', () => {
    const { x, y } = toGeminiGrid({ x: 333, y: 777 }, SIZE);
    expect(Math.abs((x / 1000) * 1280 - 333)).toBeLessThanOrEqual(1.5);
    expect(Math.abs((y / 1000) * 800 - 777)).toBeLessThanOrEqual(1.5);
  });

  it('uses the 1440×900 reference screen when the request carried no screenshot', () => {
    const body = geminiResponse(output([{ kind: 'click', button: 'left', count: 1, x: 720, y: 450 }]), {
      screenshot: null,
      functionSet: '2.5',
    });
    expect(callsOf(body)).toEqual([['click_at', { x: 500, y: 500 }]]);
  });
});

const P = { x: 640, y: 400 }; // a point in the 1280×800 screenshot, 500,500 on the grid
const G = { x: 500, y: 500 };
const Q = { x: 128, y: 80 }; // 100,100 on the grid
const D = { destination_x: 100, destination_y: 100 };
type Calls = [string, Record<string, unknown>][];
const click = (button: 'left' | 'right' | 'middle', count: 1 | 2 | 3, keys?: string[]): ScreenAction => ({
  kind: 'click',
  button,
  count,
  ...P,
  ...(keys ? { keys } : {}),
});
const scroll = (dx: number, dy: number): ScreenAction => ({ kind: 'scroll', ...P, dx, dy });
const URL_ = 'https://a.test';

describe('the 2.5 function set', () => {
  it.each<[string, ScreenAction, Calls]>([
    ['click', click('left', 1), [['click_at', G]]],
    ['move', { kind: 'move', ...P }, [['hover_at', G]]],
    ['drag', { kind: 'drag', path: [P, Q] }, [['drag_and_drop', { ...G, ...D }]]],
    [
      'type at a point',
      { kind: 'type', text: 'Lisbon', at: P, pressEnter: true },
      [['type_text_at', { ...G, text: 'Lisbon', press_enter: true }]],
    ],
    [
      'type (press_enter always sent)',
      { kind: 'type', text: 'a', at: P },
      [['type_text_at', { ...G, text: 'a', press_enter: false }]],
    ],
    ['keys', { kind: 'keys', keys: ['Control', 'a'] }, [['key_combination', { keys: 'Control+a' }]]],
    ['scroll down', scroll(0, 400), [['scroll_at', { ...G, direction: 'down', magnitude: 500 }]]],
    ['scroll left', scroll(-128, 0), [['scroll_at', { ...G, direction: 'left', magnitude: 100 }]]],
    ['wait', { kind: 'wait', seconds: 2 }, [['wait_5_seconds', {}]]],
    ['navigate', { kind: 'navigate', url: URL_ }, [['navigate', { url: URL_ }]]],
    ['back', { kind: 'back' }, [['go_back', {}]]],
  ])('%s', (_name, action, calls) => {
    const body = geminiResponse(output([action]), set25);
    expect(callsOf(body)).toEqual(calls);
    expect(body.candidates?.[0]?.finishReason).toBe('STOP');
    expect(body.candidates?.[0]?.content?.role).toBe('model');
  });

  it.each<[string, ScreenAction]>([
    ['a right click', click('right', 1)],
    ['a double click', click('left', 2)],
    ['a click with held keys', click('left', 1, ['Shift'])],
    ['typing without a point', { kind: 'type', text: 'x' }],
    ['a screenshot', { kind: 'screenshot' }],
    ['a three-point drag', { kind: 'drag', path: [P, P, P] }],
  ])('cannot say %s: a GeminiStandInError', (_name, action) => {
    expect(() => geminiResponse(output([action]), set25)).toThrow(GeminiStandInError);
  });
});

describe('the 3.x function set', () => {
  it.each<[string, ScreenAction, Calls]>([
    ['click', click('left', 1), [['click', G]]],
    ['double click', click('left', 2), [['double_click', G]]],
    ['triple click', click('left', 3), [['triple_click', G]]],
    ['right click', click('right', 1), [['right_click', G]]],
    ['middle click', click('middle', 1), [['middle_click', G]]],
    [
      'click with held keys',
      click('left', 1, ['Control', 'Shift']),
      [
        ['key_down', { key: 'Control' }],
        ['key_down', { key: 'Shift' }],
        ['click', G],
        ['key_up', { key: 'Shift' }],
        ['key_up', { key: 'Control' }],
      ],
    ],
    ['move', { kind: 'move', ...P }, [['move', G]]],
    [
      'drag (docs spelling)',
      { kind: 'drag', path: [P, Q] },
      [['drag_and_drop', { start_x: 500, start_y: 500, end_x: 100, end_y: 100 }]],
    ],
    [
      'drag along three points',
      { kind: 'drag', path: [P, Q, { x: 0, y: 0 }] },
      [
        ['mouse_down', G],
        ['move', { x: 100, y: 100 }],
        ['mouse_up', { x: 0, y: 0 }],
      ],
    ],
    ['type', { kind: 'type', text: 'Lisbon', pressEnter: true }, [['type', { text: 'Lisbon', press_enter: true }]]],
    [
      'type at a point: a click first',
      { kind: 'type', text: 'a', at: P },
      [
        ['click', G],
        ['type', { text: 'a', press_enter: false }],
      ],
    ],
    ['one key', { kind: 'keys', keys: ['Enter'] }, [['press_key', { key: 'Enter' }]]],
    ['a hotkey', { kind: 'keys', keys: ['Control', 'c'] }, [['hotkey', { keys: ['Control', 'c'] }]]],
    ['scroll (docs spelling)', scroll(0, -300), [['scroll', { ...G, direction: 'up', magnitude_in_pixels: 300 }]]],
    ['wait', { kind: 'wait', seconds: 3 }, [['wait', { seconds: 3 }]]],
    ['navigate', { kind: 'navigate', url: URL_ }, [['navigate', { url: URL_ }]]],
    ['back', { kind: 'back' }, [['go_back', {}]]],
    ['screenshot', { kind: 'screenshot' }, [['take_screenshot', {}]]],
  ])('%s', (_name, action, calls) => {
    const body = geminiResponse(output([action], { thoughts: 'Doing it.' }), set3);
    expect(callsOf(body)).toEqual(calls.map(([name, args]) => [name, { ...args, intent: 'Doing it.' }]));
  });

  it('the reference spelling: scroll magnitude on the grid, drag_and_drop with destination_x/y', () => {
    const ctx: GeminiResponseContext = { ...set3, spelling: 'reference' };
    const body = geminiResponse(output([scroll(0, 400), { kind: 'drag', path: [P, Q] }]), ctx);
    expect(callsOf(body)).toEqual([
      ['scroll', { ...G, direction: 'down', magnitude: 500, intent: 'scroll' }],
      ['drag_and_drop', { ...G, ...D, intent: 'drag and drop' }],
    ]);
  });

  it('without thoughts, the intent names the function', () => {
    expect(callsOf(geminiResponse(output([{ kind: 'back' }]), set3))).toEqual([['go_back', { intent: 'go back' }]]);
  });
});

describe('an output', () => {
  const batch: ScreenAction[] = [click('left', 1), { kind: 'type', text: 'Lisbon', at: P, pressEnter: true }];

  it('batches several actions as several functionCall parts after the thoughts’ text part', () => {
    const body = geminiResponse(output(batch, { thoughts: 'Search for Lisbon.' }), set25);
    const parts = body.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toEqual({ text: 'Search for Lisbon.' });
    expect(parts.slice(1).map((p) => p.functionCall?.name)).toEqual(['click_at', 'type_text_at']);
  });

  it('gives calls ids only when asked', () => {
    const plain = geminiResponse(output(batch), set25);
    expect(plain.candidates?.[0]?.content?.parts?.some((p) => p.functionCall?.id)).toBe(false);
    const withIds = geminiResponse(output(batch), { ...set25, callIds: true, responseId: 'r7' });
    expect(withIds.candidates?.[0]?.content?.parts?.map((p) => p.functionCall?.id)).toEqual(['r7-1', 'r7-2']);
  });

  it('puts a safety check on the first call as args.safety_decision', () => {
    const check = { code: 'sensitive_domain', message: 'This submits a payment. Continue?' };
    for (const ctx of [set25, set3]) {
      const [first, second] = callsOf(geminiResponse(output(batch, { safetyCheck: check }), ctx));
      expect(first?.[1].safety_decision).toEqual({ decision: 'require_confirmation', explanation: check.message });
      expect(second?.[1]).not.toHaveProperty('safety_decision');
    }
    expect(() => geminiResponse(output([], { safetyCheck: check }), set25)).toThrow(GeminiStandInError);
  });

  it('is one text part with finishReason STOP when it has no actions', () => {
    const body = geminiResponse(output([], { thoughts: 'Done.', final: { kind: 'answer', text: 'Booked.' } }), set3);
    expect(body.candidates?.[0]?.content?.parts).toEqual([{ text: 'Done.' }, { text: 'Booked.' }]);
    expect(body.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
  });

  it('malformed-function-call: finishReason MALFORMED_FUNCTION_CALL and no function call', () => {
    const body = geminiResponse(output(batch, { malformed: 'malformed-function-call' }), set25);
    expect(body.candidates?.[0]?.finishReason).toBe('MALFORMED_FUNCTION_CALL');
    expect(body.candidates?.[0]?.finishMessage).toMatch(/Malformed function call/);
    expect(callsOf(body)).toEqual([]);
  });

  it('unknown-action: a function name outside the set, first', () => {
    expect(callsOf(geminiResponse(output(batch, { malformed: 'unknown-action' }), set25))[0]?.[0]).toBe(
      'double_click_at',
    );
    expect(callsOf(geminiResponse(output(batch, { malformed: 'unknown-action' }), set3))[0]?.[0]).toBe('tap');
  });

  it.each(['missing-coordinate', 'off-screen'] as const)('%s is not a kind Gemini sends: an error', (malformed) => {
    expect(() => geminiResponse(output(batch, { malformed }), set25)).toThrow(/does not send/);
  });

  it('reports usage as usageMetadata', () => {
    const body = geminiResponse(output(batch, { usage: { input: 1200, output: 40, cachedInput: 1000 } }), set25);
    expect(body.usageMetadata).toEqual({
      promptTokenCount: 1200,
      candidatesTokenCount: 40,
      totalTokenCount: 1240,
      cachedContentTokenCount: 1000,
    });
  });

  it('refuses a function the request excluded', () => {
    const ctx = { ...set25, excludedFunctions: ['drag_and_drop'] };
    expect(() => geminiResponse(output([{ kind: 'drag', path: [P, P] }]), ctx)).toThrow(/excluded drag_and_drop/);
  });

  it('picks the function set from the model name', () => {
    expect(geminiFunctionSetForModel('gemini-2.5-computer-use-preview-10-2025')).toBe('2.5');
    expect(geminiFunctionSetForModel('models/gemini-2.5-flash')).toBe('2.5');
    expect(geminiFunctionSetForModel('gemini-3.5-flash')).toBe('3');
    expect(geminiModelFromPath('/v1beta/models/gemini-3.5-flash:generateContent')).toBe('gemini-3.5-flash');
    expect(geminiModelFromPath('/v1/messages')).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------------

const image = (data = SHOT) => ({ inlineData: { mimeType: 'image/png', data } });
const firstUser: Content = { role: 'user', parts: [{ text: 'Book a room in Lisbon.' }, image()] };
const SAFETY = { safety_decision: { decision: 'require_confirmation', explanation: 'ok?' } };
const modelContent = (safety = false, name = 'click_at'): Content => ({
  role: 'model',
  parts: [{ functionCall: { name, args: { x: 1, y: 2, ...(safety ? SAFETY : {}) } } }],
});
const answer = (response: Record<string, unknown> = { url: URL_ }, parts: Part[] = [image()], name = 'click_at') => ({
  role: 'user',
  parts: [{ functionResponse: { name, response, parts } }],
});
const body = (contents: unknown[], tools: unknown[] = [TOOL]) => ({ contents, tools });

describe('the request reader', () => {
  it('passes a well-formed first request and a follow-up, and reads the newest screenshot', () => {
    expect(readGeminiRequest(KEY, body([firstUser]))).toMatchObject({ problems: [], screenshot: SIZE });
    const next = answer({ url: 'https://a.test' }, [image(pngOf(1440, 900))]);
    const facts = readGeminiRequest(KEY, body([firstUser, modelContent(), next]));
    expect(facts).toMatchObject({ problems: [], screenshot: { width: 1440, height: 900 }, acknowledged: [] });
    expect(facts.environment).toBe('ENVIRONMENT_BROWSER');
  });

  it('accepts both casings (computer_use / computerUse, function_response, inline_data, mime_type)', () => {
    const snake = {
      role: 'user',
      parts: [
        {
          function_response: {
            name: 'click_at',
            response: { url: 'u', safety_acknowledgement: 'true' },
            parts: [{ inline_data: { mime_type: 'image/png', data: SHOT } }],
          },
        },
      ],
    };
    const tools = [{ computerUse: { environment: 'ENVIRONMENT_DESKTOP', excludedPredefinedFunctions: ['search'] } }];
    const facts = readGeminiRequest(KEY, body([firstUser, modelContent(true), snake], tools), {
      safetyAcknowledgement: true,
    });
    expect(facts).toMatchObject({ problems: [], acknowledged: ['click_at'], excludedFunctions: ['search'] });
  });

  it.each([true, 'true'])('reads safety_acknowledgement %o as acknowledged', (ack) => {
    const facts = readGeminiRequest(
      KEY,
      body([firstUser, modelContent(true), answer({ safety_acknowledgement: ack })]),
      {
        safetyAcknowledgement: true,
      },
    );
    expect(facts).toMatchObject({ problems: [], acknowledged: ['click_at'] });
  });

  it('reads a JPEG screenshot’s size', () => {
    expect(imageSize(jpegOf(1024, 768))).toEqual({ width: 1024, height: 768 });
    const jpegUser = { role: 'user', parts: [{ inlineData: { mimeType: 'image/jpeg', data: jpegOf(1024, 768) } }] };
    expect(readGeminiRequest(KEY, body([jpegUser])).screenshot).toEqual({ width: 1024, height: 768 });
  });

  const ack: GeminiExpect = { safetyAcknowledgement: true };
  const after = (user: unknown, model = modelContent()) => body([firstUser, model, user]);
  const responseOnly = (fr: Record<string, unknown>) => ({ role: 'user', parts: [{ functionResponse: fr }] });
  const jpegPart = { inlineData: { mimeType: 'image/jpeg', data: jpegOf(9, 9) } };
  // [case, request body, the problem line's start, what is expected, headers (default: the key)]
  it.each<[string, unknown, string, GeminiExpect?, Record<string, string | undefined>?]>([
    ['no key', body([firstUser]), 'x-goog-api-key header missing', {}, {}],
    ['an empty key', body([firstUser]), 'x-goog-api-key header missing', {}, { 'x-goog-api-key': '' }],
    ['not an object', [1], 'the body is not a JSON object'],
    ['no tool', body([firstUser], []), 'no computer_use tool in tools[]'],
    ['a function tool only', body([firstUser], [{ functionDeclarations: [] }]), 'no computer_use tool in tools[]'],
    ['no environment', body([firstUser], [{ computer_use: {} }]), 'the computer_use tool has no environment'],
    ['a wrong environment', body([firstUser], [{ computer_use: { environment: 'browser' } }]), 'computer_use env'],
    ['no contents', body([]), 'no contents'],
    ['a wrong role', body([{ ...firstUser, role: 'assistant' }]), 'contents[0] has role assistant'],
    ['the model last', body([firstUser, modelContent()]), 'the last content is the model’s'],
    ['no screenshot', body([{ role: 'user', parts: [{ text: 'hi' }] }]), 'the request carries no screenshot'],
    ['no image', body([{ role: 'user', parts: [image('aGVsbG8=')] }]), 'the newest screenshot (image/png) is neither'],
    ['a call unanswered', after({ role: 'user', parts: [{ text: 'go' }] }), '1 function call(s) answered by 0'],
    [
      'a response under another name',
      after(responseOnly({ name: 'type_text_at', response: {}, parts: [image()] })),
      'functionResponse 1 is named type_text_at, the call was click_at',
    ],
    [
      'no response object',
      after(responseOnly({ name: 'click_at', parts: [image()] })),
      'functionResponse for click_at has no response object',
    ],
    [
      'no screenshot in the function response',
      after(answer({ url: 'u' }, [])),
      'functionResponse for click_at carries no screenshot (parts[].inlineData image/png)',
    ],
    ['a JPEG in it', after(answer({ url: 'u' }, [jpegPart])), 'functionResponse for click_at carries no screenshot'],
    ['no ack when expected', after(answer(), modelContent(true)), 'pending safety decision on click_at not ack', ack],
    [
      'an ack that is neither true nor "true"',
      after(answer({ safety_acknowledgement: 'yes' }), modelContent(true)),
      'safety_acknowledgement for click_at is "yes", not true or "true"',
    ],
    [
      'an ack nobody asked for',
      after(answer({ safety_acknowledgement: true })),
      'safety_acknowledgement sent for click_at, whose call asked no confirmation',
    ],
    ['an expected ack with no call echoed', body([firstUser]), 'a safety acknowledgement was expected', ack],
  ])('%s', (_name, request, problem, expectation = {}, headers = KEY) => {
    const { problems } = readGeminiRequest(headers, request, expectation);
    expect(problems.some((p) => p.startsWith(problem))).toBe(true);
  });

  it('checks a call id when the model gave one', () => {
    const withId: Content = { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'click_at', args: {} } }] };
    const { problems } = readGeminiRequest(KEY, body([firstUser, withId, answer()]));
    expect(problems).toEqual(["functionResponse for click_at does not echo the call's id c1"]);
  });
});

// ---------------------------------------------------------------------------------------------------------------

interface Seen {
  url: string;
  key: string | undefined;
  body: unknown;
  problems: string[];
}

describe('the official @google/genai client against the stand-in', () => {
  let server: http.Server;
  let baseUrl = '';
  const seen: Seen[] = [];
  /** What the next request answers: an output, the function set and the expectation the reader checks. */
  let script: { out: StandInOutput; functionSet: '2.5' | '3'; expect?: GeminiExpect } = {
    out: output([]),
    functionSet: '2.5',
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const body: unknown = JSON.parse(raw);
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]),
        );
        const facts = readGeminiRequest(headers, body, script.expect);
        seen.push({ url: req.url ?? '', key: headers['x-goog-api-key'], body, problems: facts.problems });
        const reply = geminiResponse(script.out, { screenshot: facts.screenshot, functionSet: script.functionSet });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const config = { tools: [{ computerUse: { environment: Environment.ENVIRONMENT_BROWSER } }] };
  const client = () => new GoogleGenAI({ apiKey: 'fake-key', httpOptions: { baseUrl } });

  it('2.5: sends the key in x-goog-api-key to /v1beta/models/{model}:generateContent and parses a batch', async () => {
    const check = { code: 'sensitive_domain', message: 'Submit the booking?' };
    script = {
      functionSet: '2.5',
      out: output([click('left', 1), { kind: 'type', text: 'Lisbon', at: P, pressEnter: true }], {
        thoughts: 'Search.',
        safetyCheck: check,
        usage: { input: 900, output: 30 },
      }),
    };
    const model = 'gemini-2.5-computer-use-preview-10-2025';
    const response = await client().models.generateContent({ model, contents: [firstUser], config });
    const request = seen.at(-1);
    expect(request?.url).toBe(`/v1beta/models/${model}:generateContent`);
    expect(request?.key).toBe('fake-key');
    expect(request?.problems).toEqual([]);
    expect(request?.body).toMatchObject({ tools: [{ computerUse: { environment: 'ENVIRONMENT_BROWSER' } }] });
    expect(response.functionCalls?.map((c) => c.name)).toEqual(['click_at', 'type_text_at']);
    expect(response.functionCalls?.[0]?.args).toEqual({
      x: 500,
      y: 500,
      safety_decision: { decision: 'require_confirmation', explanation: 'Submit the booking?' },
    });
    expect(response.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(response.usageMetadata?.promptTokenCount).toBe(900);
  });

  it('3.x: the acknowledged follow-up passes the reader; a text-only output parses as text', async () => {
    script = {
      functionSet: '3',
      out: output([], { final: { kind: 'answer', text: 'Booked.' } }),
      expect: { safetyAcknowledgement: true },
    };
    const result = answer({ url: URL_, safety_acknowledgement: 'true' }, [image(pngOf(1440, 900))], 'click');
    const response = await client().models.generateContent({
      model: 'gemini-3.5-flash',
      contents: [firstUser, modelContent(true, 'click'), result],
      config,
    });
    expect(seen.at(-1)?.problems).toEqual([]);
    expect(response.text).toBe('Booked.');
    expect(response.functionCalls).toBeUndefined();
  });

  it('parses MALFORMED_FUNCTION_CALL with no function calls', async () => {
    script = { functionSet: '3', out: output([{ kind: 'back' }], { malformed: 'malformed-function-call' }) };
    const response = await client().models.generateContent({
      model: 'gemini-3.5-flash',
      contents: [firstUser],
      config,
    });
    expect(response.candidates?.[0]?.finishReason).toBe(FinishReason.MALFORMED_FUNCTION_CALL);
    expect(response.functionCalls).toBeUndefined();
  });
});
