// Specification of the scripted model server's provider routes, driven with the official SDKs (`openai`,
// `@anthropic-ai/sdk`, `@google/genai`) against the real server on 127.0.0.1 with scripts in a temporary folder: the
// turn each request asks for, coordinates in the provider's space, a batch, a safety check and its acknowledgement,
// a malformed turn then the corrected one, `{{reply}}`, a fault, a missing key, and the demo script per provider.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, ContentBlockParam, Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { Environment, FinishReason, GoogleGenAI } from '@google/genai';
import type { Content, GenerateContentResponse, Part } from '@google/genai';
import OpenAI from 'openai';
import type { Response, ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';

/** A PNG header (signature + IHDR) of the given size: all the stand-ins read. */
function pngOf(width: number, height: number): string {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'ascii');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]).toString('base64');
}
const SHOT = pngOf(1280, 800);
const SHOT_URL = `data:image/png;base64,${SHOT}`;

/** A small script: a click, a batch, a checked click, a malformed then corrected click, a question, {{reply}}. */
const SMALL = [
  { thoughts: 'Open the form.', action: { action: 'left_click', coordinate: [500, 500] } },
  {
    thoughts: 'Fill the name.',
    action: { action: 'left_click', coordinate: [250, 250] },
    then: [
      { action: 'type', text: 'Ana' },
      { action: 'key', keys: ['Enter'] },
    ],
  },
  {
    thoughts: 'Pay.',
    action: { action: 'left_click', coordinate: [750, 750] },
    safety_check: { code: 'sensitive_domain', message: 'Confirm the payment?' },
  },
  { thoughts: 'Close.', action: { action: 'left_click', coordinate: [100, 900] }, malformed: true },
  { thoughts: 'Ask.', action: { action: 'ask_user_question', question: 'Whose name?' } },
  { thoughts: 'Type it.', action: { action: 'type', text: '{{reply}}', coordinate: [500, 100] } },
  { thoughts: 'Done.', action: { action: 'terminate', answer: 'Booked for {{reply}}.' } },
];
const COUNTED = [
  {
    action: { action: 'left_click', coordinate: [1, 1] },
    usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 30 },
    faults: [{ empty: true }],
  },
  { action: { action: 'wait', time: 1 } },
];
const HUNG = [{ action: { action: 'wait', time: 1 }, faults: [{ hang: true }], delay_ms: 50 }];
const FAULTY = [{ action: { action: 'left_click', coordinate: [1, 1] }, faults: [{ status: 503, message: 'busy' }] }];

let server: ScriptedModelServer;
let root = '';
const logs: string[] = [];

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scripted-providers-'));
  fs.writeFileSync(path.join(dir, 'small.json'), JSON.stringify(SMALL));
  fs.writeFileSync(path.join(dir, 'faulty.json'), JSON.stringify(FAULTY));
  fs.writeFileSync(path.join(dir, 'counted.json'), JSON.stringify(COUNTED));
  fs.writeFileSync(path.join(dir, 'hung.json'), JSON.stringify(HUNG));
  const demo = fs.readFileSync(path.join(__dirname, '../../demo/scripts/tidewater-booking.json'), 'utf8');
  fs.writeFileSync(path.join(dir, 'gemini-2.5-computer-use-preview-10-2025.json'), demo);
  fs.copyFileSync(path.join(__dirname, '../../demo/scripts/tidewater-booking.json'), path.join(dir, 'tidewater.json'));
  server = await startScriptedModelServer({ scriptsDir: dir, log: (l) => logs.push(l) });
  root = server.root;
});
afterAll(async () => server?.close());

const lastRequest = () => server.requests[server.requests.length - 1];

// ---- OpenAI: the Responses API with the GA computer tool ----

class OpenAiConversation {
  readonly input: ResponseInputItem[] = [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Book a room.' },
        { type: 'input_image', image_url: SHOT_URL, detail: 'auto' },
      ],
    },
  ];
  constructor(
    readonly client: OpenAI,
    readonly model: string,
    readonly tool: Tool = { type: 'computer' },
  ) {}
  call(): Promise<Response> {
    const preview = this.tool.type === 'computer_use_preview';
    return this.client.responses.create({
      model: this.model,
      tools: [this.tool],
      input: this.input,
      ...(preview ? { truncation: 'auto' as const } : {}),
    });
  }
  /** Replays the response's items and answers each computer_call with a screenshot (acknowledging its checks). */
  answer(res: Response, opts: { ack?: boolean; text?: string } = {}): void {
    for (const item of res.output) {
      this.input.push(item as ResponseInputItem);
      if (item.type !== 'computer_call') continue;
      const acks = opts.ack ? { acknowledged_safety_checks: item.pending_safety_checks } : {};
      this.input.push({
        type: 'computer_call_output',
        call_id: item.call_id,
        output: { type: 'computer_screenshot', image_url: SHOT_URL },
        ...acks,
      });
    }
    if (opts.text) this.input.push({ role: 'user', content: [{ type: 'input_text', text: opts.text }] });
  }
}

const computerCall = (res: Response) => res.output.find((o) => o.type === 'computer_call');
const messageText = (res: Response) => res.output.flatMap((o) => (o.type === 'message' ? o.content : []));

describe('POST /responses (OpenAI)', () => {
  const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: root, maxRetries: 0 });

  it('plays the script turn by turn from the server root: batch, check, malformed, question, {{reply}}', async () => {
    const c = new OpenAiConversation(client(), 'small');
    let res = await c.call();
    expect(computerCall(res)).toMatchObject({ actions: [{ type: 'click', button: 'left', x: 640, y: 400 }] });
    expect(lastRequest()).toMatchObject({ provider: 'openai', turn: 0, index: 0, tool: 'computer', problems: [] });
    c.answer(res);
    res = await c.call();
    expect(computerCall(res)?.actions).toEqual([
      { type: 'click', button: 'left', x: 320, y: 200 },
      { type: 'type', text: 'Ana' },
      { type: 'keypress', keys: ['ENTER'] },
    ]);
    c.answer(res);
    res = await c.call();
    const checked = computerCall(res);
    expect(checked?.pending_safety_checks).toEqual([
      { id: 'cs_0002', code: 'sensitive_domain', message: 'Confirm the payment?' },
    ]);
    const other = new OpenAiConversation(client(), 'small');
    other.input.splice(0, other.input.length, ...c.input);
    other.answer(res);
    await expect(other.call()).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/pending safety check cs_0002 .*neither acknowledged.*nor declined/),
    });
    other.input.push({ role: 'user', content: [{ type: 'input_text', text: 'No, do not pay.' }] });
    expect(computerCall(await other.call())?.actions).toHaveLength(1); // declined: the script goes on
    c.answer(res, { ack: true });
    res = await c.call();
    expect(lastRequest()).toMatchObject({ turn: 3, acknowledged: ['cs_0002'], problems: [] });
    expect(computerCall(res)?.actions).toEqual([{ type: 'triple_click', x: 128, y: 720 }]);
    c.answer(res);
    res = await c.call();
    expect(computerCall(res)?.actions).toEqual([{ type: 'click', button: 'left', x: 128, y: 720 }]);
    c.answer(res);
    res = await c.call();
    expect(messageText(res)).toMatchObject([{ type: 'output_text', text: 'Whose name?' }]);
    c.answer(res, { text: 'Ana Silva' });
    res = await c.call();
    expect(lastRequest()).toMatchObject({ turn: 6, index: 5, lastUserText: 'Ana Silva' });
    expect(computerCall(res)?.actions).toEqual([
      { type: 'click', button: 'left', x: 640, y: 80 },
      { type: 'type', text: 'Ana Silva' },
    ]);
    c.answer(res);
    res = await c.call();
    expect(res.output_text).toBe('Booked for Ana Silva.');
    c.answer(res, { text: 'thanks' });
    await expect(c.call()).rejects.toMatchObject({ status: 400, message: expect.stringContaining('asks for turn 9') });
  });

  it('the preview tool: one action per call in the display space, from a …/v1 base URL', async () => {
    const preview: Tool = {
      type: 'computer_use_preview',
      display_width: 640,
      display_height: 400,
      environment: 'browser',
    };
    const c = new OpenAiConversation(new OpenAI({ apiKey: 'k', baseURL: server.url, maxRetries: 0 }), 'small', preview);
    c.answer(await c.call());
    const actions: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await c.call();
      actions.push(computerCall(res)?.action);
      c.answer(res);
    }
    expect(actions).toEqual([
      { type: 'click', button: 'left', x: 160, y: 100 },
      { type: 'type', text: 'Ana' },
      { type: 'keypress', keys: ['ENTER'] },
    ]);
  });

  it('a missing key is 401, a bad request 400 naming every problem, a hang, a delay, a fault in OpenAI’s error shape', async () => {
    const raw = (body: object, headers: Record<string, string> = { authorization: 'Bearer k' }) =>
      fetch(`${root}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const noKey = await raw({ model: 'small', tools: [{ type: 'computer' }], input: [] }, {});
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
    const bad = await raw({ model: 'small', input: [], previous_response_id: 'resp_1' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(
      /no computer tool; previous_response_id is set/,
    );
    const hung = new OpenAiConversation(
      new OpenAI({ apiKey: 'k', baseURL: root, maxRetries: 0, timeout: 300 }),
      'hung',
    );
    await expect(hung.call()).rejects.toThrow(/timed out/i);
    const started = Date.now();
    expect(computerCall(await hung.call())?.actions).toEqual([{ type: 'wait' }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45); // delay_ms
    const c = new OpenAiConversation(client(), 'faulty');
    await expect(c.call()).rejects.toMatchObject({ status: 503, error: { message: 'busy', type: 'server_error' } });
    expect(computerCall(await c.call())?.actions).toEqual([{ type: 'click', button: 'left', x: 1, y: 1 }]);
  });
});

// ---- Anthropic: the Messages API with the GA computer toolset ----

class AnthropicConversation {
  readonly messages: MessageParam[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Book a room.' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: SHOT } },
      ],
    },
  ];
  constructor(
    readonly client: Anthropic,
    readonly model: string,
  ) {}
  call(): Promise<Message> {
    return this.client.messages.create({
      model: this.model,
      max_tokens: 1024,
      tools: [{ type: 'computer_toolset_20260801' }],
      messages: this.messages,
    });
  }
  /** Echoes the message and answers each tool_use with a screenshot (toolset_name echoed), or a text reply. */
  answer(m: Message, text?: string): void {
    this.messages.push({ role: 'assistant', content: m.content as ContentBlockParam[] });
    const uses = m.content.filter((b) => b.type === 'tool_use');
    const results = uses.map((u) => ({
      type: 'tool_result',
      tool_use_id: u.id,
      toolset_name: 'computer',
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: SHOT } }],
    }));
    const content = [...results, ...(text ? [{ type: 'text', text }] : [])] as ContentBlockParam[];
    if (content.length > 0) this.messages.push({ role: 'user', content });
  }
}

const toolUses = (m: Message) =>
  m.content.flatMap((b: ContentBlock) => (b.type === 'tool_use' ? [{ name: b.name, input: b.input }] : []));
const textOf = (m: Message) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');

describe('POST /messages (Anthropic)', () => {
  const client = (baseURL = root) => new Anthropic({ apiKey: 'sk-ant-test', baseURL, maxRetries: 0 });

  it('plays the script: a batch as tool_use blocks, the check asked in text, a malformed turn, {{reply}}', async () => {
    const c = new AnthropicConversation(client(), 'small');
    let m = await c.call();
    expect(toolUses(m)).toEqual([{ name: 'left_click', input: { coordinate: [640, 400] } }]);
    expect(lastRequest()).toMatchObject({ provider: 'anthropic', turn: 0, tool: 'computer_toolset_20260801' });
    c.answer(m);
    m = await c.call();
    expect(toolUses(m)).toEqual([
      { name: 'left_click', input: { coordinate: [320, 200] } },
      { name: 'type', input: { text: 'Ana' } },
      { name: 'key', input: { text: 'Return' } },
    ]);
    c.answer(m);
    m = await c.call();
    expect(m.stop_reason).toBe('end_turn');
    expect(textOf(m)).toBe('Pay.\n\nConfirm the payment?');
    c.answer(m, 'Yes, pay.');
    m = await c.call();
    expect(lastRequest()).toMatchObject({ turn: 3, index: 2, lastUserText: 'Yes, pay.' });
    expect(toolUses(m)).toEqual([{ name: 'left_click', input: { coordinate: [960, 600] } }]);
    c.answer(m);
    m = await c.call();
    expect(toolUses(m)).toEqual([{ name: 'click', input: { coordinate: [128, 720] } }]); // unknown action
    c.answer(m);
    m = await c.call();
    expect(toolUses(m)).toEqual([{ name: 'left_click', input: { coordinate: [128, 720] } }]);
    c.answer(m);
    m = await c.call();
    expect(textOf(m)).toBe('Ask.\n\nWhose name?');
    c.answer(m, 'Ana Silva');
    m = await c.call();
    expect(toolUses(m)).toEqual([
      { name: 'left_click', input: { coordinate: [640, 80] } },
      { name: 'type', input: { text: 'Ana Silva' } },
    ]);
  });

  it('refuses an echo that lost the previous tool_use (400), a missing key (401), in Anthropic’s shape', async () => {
    const c = new AnthropicConversation(client(`${root}/v1`), 'small');
    const m = await c.call();
    c.answer(m);
    // The echoed tool_use and its result under another id: the stand-in's own id is missing from the echo.
    const blocks = (i: number) => c.messages[i]?.content as Array<{ type: string; id?: string; tool_use_id?: string }>;
    for (const b of blocks(1)) if (b.type === 'tool_use') b.id = 'toolu_other';
    for (const b of blocks(2)) b.tool_use_id = 'toolu_other';
    const refused = c.call();
    await expect(refused).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error' } },
    });
    await expect(refused).rejects.toThrow(/tool_use toolu_standin_0_0 of turn 1 is not in/);
    const noKey = await fetch(`${root}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'small', max_tokens: 1, messages: [] }),
    });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('a fault in Anthropic’s error shape, then the entry', async () => {
    const c = new AnthropicConversation(client(), 'faulty');
    await expect(c.call()).rejects.toMatchObject({ status: 503, error: { error: { type: 'api_error' } } });
    expect(toolUses(await c.call())).toEqual([{ name: 'left_click', input: { coordinate: [1, 1] } }]);
  });
});

// ---- Gemini: generateContent with computer_use (the 3.x function set) ----

class GeminiConversation {
  readonly contents: Content[] = [
    { role: 'user', parts: [{ text: 'Book a room.' }, { inlineData: { mimeType: 'image/png', data: SHOT } }] },
  ];
  constructor(
    readonly client: GoogleGenAI,
    readonly model: string,
  ) {}
  call(): Promise<GenerateContentResponse> {
    return this.client.models.generateContent({
      model: this.model,
      contents: this.contents,
      config: { tools: [{ computerUse: { environment: Environment.ENVIRONMENT_BROWSER } }] },
    });
  }
  /** Echoes the model content and answers each call with a screenshot (acknowledging on `ack`), or a text. */
  answer(res: GenerateContentResponse, opts: { ack?: boolean; text?: string } = {}): void {
    const content = res.candidates?.[0]?.content;
    if (content) this.contents.push(content);
    const parts: Part[] = (content?.parts ?? []).flatMap((p) => {
      if (!p.functionCall) return [];
      const ack = opts.ack && p.functionCall.args?.safety_decision ? { safety_acknowledgement: 'true' } : {};
      const image = { inlineData: { mimeType: 'image/png', data: SHOT } };
      return [
        { functionResponse: { name: p.functionCall.name, response: { url: 'https://x', ...ack }, parts: [image] } },
      ];
    });
    if (opts.text) parts.push({ text: opts.text });
    this.contents.push({ role: 'user', parts });
  }
}

const calls = (res: GenerateContentResponse) =>
  (res.candidates?.[0]?.content?.parts ?? []).flatMap((p) => (p.functionCall ? [p.functionCall] : []));

describe('POST /models/{model}:generateContent (Gemini)', () => {
  const client = (baseUrl = root) => new GoogleGenAI({ apiKey: 'g-test', httpOptions: { baseUrl } });

  it('plays the script on the 0–999 grid: a batch, a check acknowledged, MALFORMED_FUNCTION_CALL, {{reply}}', async () => {
    const c = new GeminiConversation(client(), 'small');
    let res = await c.call();
    expect(calls(res)).toEqual([{ name: 'click', args: { x: 500, y: 500, intent: 'Open the form.' } }]);
    expect(lastRequest()).toMatchObject({ provider: 'gemini', turn: 0, tool: 'computer_use ENVIRONMENT_BROWSER' });
    c.answer(res);
    res = await c.call();
    expect(calls(res).map((f) => f.name)).toEqual(['click', 'type', 'press_key']);
    c.answer(res);
    res = await c.call();
    expect(calls(res)[0]?.args).toMatchObject({
      x: 750,
      y: 750,
      safety_decision: { decision: 'require_confirmation', explanation: 'Confirm the payment?' },
    });
    const unacknowledged = new GeminiConversation(client(), 'small');
    unacknowledged.contents.splice(0, 1, ...c.contents);
    unacknowledged.answer(res);
    await expect(unacknowledged.call()).rejects.toThrow(/neither acknowledged.*INVALID_ARGUMENT/s);
    c.answer(res, { ack: true });
    res = await c.call();
    expect(lastRequest()).toMatchObject({ turn: 3, acknowledged: ['click'] });
    expect(res.candidates?.[0]?.finishReason).toBe(FinishReason.MALFORMED_FUNCTION_CALL);
    c.answer(res, { text: 'Your function call was malformed; try again.' });
    res = await c.call();
    expect(calls(res)).toEqual([{ name: 'click', args: { x: 100, y: 900, intent: 'Close.' } }]);
    c.answer(res);
    res = await c.call();
    expect(res.text).toBe('Ask.Whose name?');
    c.answer(res, { text: 'Ana Silva' });
    res = await c.call();
    expect(calls(res).map((f) => f.args)).toEqual([
      { x: 500, y: 100, intent: 'Type it.' },
      { text: 'Ana Silva', press_enter: false, intent: 'Type it.' },
    ]);
  });

  it('takes the key from ?key=, refuses none (401) and a request without the tool (400), in Gemini’s shape', async () => {
    const post = (query: string, headers: Record<string, string>, body: object) =>
      fetch(`${root}/v1beta/models/small:generateContent${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const body = {
      contents: [{ role: 'user', parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data: SHOT } }] }],
      tools: [{ computer_use: { environment: 'ENVIRONMENT_BROWSER' } }],
    };
    expect((await post('?key=q', {}, body)).status).toBe(200);
    const noKey = await post('', {}, body);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    const noTool = await post('', { 'x-goog-api-key': 'k' }, { ...body, tools: [] });
    expect(noTool.status).toBe(400);
    expect(await noTool.json()).toMatchObject({
      error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('no computer_use tool') },
    });
  });

  it('a fault in Gemini’s error shape from a …/v1 base URL, then the entry', async () => {
    const c = new GeminiConversation(client(server.url), 'faulty');
    await expect(c.call()).rejects.toMatchObject({ status: 503 });
    expect(calls(await c.call())).toEqual([{ name: 'click', args: { x: 1, y: 1, intent: 'click' } }]);
  });
});

describe('the Tidewater demo script through each route', () => {
  it('logs the dropped entries once and plays the booking turns with {{reply}}', async () => {
    const o = new OpenAiConversation(new OpenAI({ apiKey: 'k', baseURL: root, maxRetries: 0 }), 'tidewater');
    const a = new AnthropicConversation(new Anthropic({ apiKey: 'k', baseURL: root, maxRetries: 0 }), 'tidewater');
    const g = new GeminiConversation(new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: root } }), 'tidewater');
    const finals: string[] = [];
    for (let turn = 0; turn < 12; turn++) {
      const reply = turn === 7 ? 'Ana Silva' : undefined; // turn 7 asks whose name
      const [ro, ra, rg] = await Promise.all([o.call(), a.call(), g.call()]);
      o.answer(ro, { text: reply });
      a.answer(ra, reply);
      g.answer(rg, { text: reply });
      if (turn === 11) finals.push(ro.output_text, textOf(ra), rg.text ?? '');
    }
    for (const text of finals) expect(text).toContain('Booked a Standard double at Harbor View Lisbon for Ana Silva');
    const dropped = logs.filter((l) => l.includes('tidewater: no')).sort();
    expect(dropped).toEqual(
      ['anthropic', 'gemini', 'openai'].map(
        (p) =>
          `scripted-model ${p} tidewater: no ${p} equivalent, dropped: entry 4 read_page_answer_question, ` +
          'entry 7 pause_and_memorize_fact',
      ),
    );
  });
});

describe('usage and the empty fault, in each provider’s fields', () => {
  it('the entry’s counts, else counts estimated from the request; an empty output first', async () => {
    const o = new OpenAiConversation(new OpenAI({ apiKey: 'k', baseURL: root, maxRetries: 0 }), 'counted');
    const a = new AnthropicConversation(new Anthropic({ apiKey: 'k', baseURL: root, maxRetries: 0 }), 'counted');
    const g = new GeminiConversation(new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: root } }), 'counted');
    expect((await o.call()).output).toEqual([]);
    expect((await a.call()).content).toEqual([]);
    expect((await g.call()).candidates).toEqual([]);
    const [ro, ra, rg] = await Promise.all([o.call(), a.call(), g.call()]);
    expect(ro.usage).toMatchObject({
      input_tokens: 100,
      output_tokens: 20,
      input_tokens_details: { cached_tokens: 30 },
    });
    expect(ra.usage).toMatchObject({ input_tokens: 70, cache_read_input_tokens: 30, output_tokens: 20 });
    expect(rg.usageMetadata).toMatchObject({ promptTokenCount: 100, candidatesTokenCount: 20 });
    o.answer(ro);
    a.answer(ra);
    g.answer(rg);
    const [eo, ea, eg] = await Promise.all([o.call(), a.call(), g.call()]);
    // Estimated: the texts' characters over four and 258 per image (two screenshots here).
    expect(eo.usage?.input_tokens).toBe(Math.ceil('Book a room.'.length / 4) + 2 * 258);
    expect(ea.usage.input_tokens).toBe(Math.ceil('Book a room.'.length / 4) + 2 * 258);
    expect(eg.usageMetadata?.promptTokenCount).toBe(Math.ceil('Book a room.'.length / 4) + 2 * 258);
    expect(eg.usageMetadata?.candidatesTokenCount).toBeGreaterThan(0);
  });

  it('Gemini’s 2.5 function set, chosen by the model’s name, types at the pointer (the demo’s first steps)', async () => {
    const model = 'gemini-2.5-computer-use-preview-10-2025';
    const g = new GeminiConversation(new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: root } }), model);
    const first = await g.call();
    g.answer(first);
    const second = await g.call();
    expect([...calls(first), ...calls(second)]).toEqual([
      { name: 'click_at', args: { x: 285, y: 293 } },
      { name: 'type_text_at', args: { x: 285, y: 293, text: 'Lisbon', press_enter: true } },
    ]);
  });
});
