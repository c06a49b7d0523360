// Specification of the scripted model server's answers to the desktop agent's calls on Anthropic's Messages API and
// Gemini's generateContent (`x-cua-call`, `x-cua-entry`), driven with the official SDKs (`@anthropic-ai/sdk`,
// `@google/genai`) against the real server on 127.0.0.1: describe, an action's tool_use blocks and functionCall parts,
// a ground list, `{{reply}}` from the memory's USER line, a malformed entry on each route (chat completions too), a
// fault, a missing key, an undeclared tool, and each request check, one request per problem.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { FinishReason, GoogleGenAI } from '@google/genai';
import type { Content, GenerateContentParameters, Tool as GeminiTool } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';

/** A PNG header of 64×48 (base64): an image block that passes the checks. */
const SHOT = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from('IHDR', 'ascii'),
  Buffer.from([0, 0, 0, 64, 0, 0, 0, 48, 8, 2, 0, 0, 0]),
]).toString('base64');

const DESK = [
  {
    describe: 'I see an xterm.',
    content: 'Open the editor.',
    tool_calls: [
      { name: 'run_command', arguments: { command: 'mousepad' } },
      { name: 'type_text', arguments: '{"text": "hi"}' },
    ],
    ground: ['(10, 20)', '(30, 40)'],
  },
  { content: 'Click it.', tool_calls: [{ name: 'click', arguments: { query: 'the Save button' } }], malformed: true },
  { content: 'Adding {{reply}}.', tool_calls: [{ name: 'run_command', arguments: { command: "echo '{{reply}}'" } }] },
  { tool_calls: [{ name: 'stop', arguments: { answer: 'done' } }], faults: [{ status: 503, message: 'busy' }] },
  { thoughts: 'A browser step.', action: { action: 'wait', time: 1 } },
  { raw: 'Nothing to do yet.' },
  { content: 'Reading the page.', tool_calls: [{ name: 'read_page', arguments: {} }] },
];
const NAMES = ['run_command', 'type_text', 'click', 'stop', 'ask_user'];

let server: ScriptedModelServer;
let root = '';

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scripted-desktop-'));
  fs.writeFileSync(path.join(dir, 'desk.json'), JSON.stringify(DESK));
  server = await startScriptedModelServer({ scriptsDir: dir });
  root = server.root;
});
afterAll(async () => server?.close());

const headers = (call: string, entry: number) => ({ 'x-cua-call': call, 'x-cua-entry': String(entry) });
const lastRequest = () => server.requests[server.requests.length - 1];
/** A raw POST to the server (for what the SDKs would not send), answered status and body. */
async function post(route: string, extra: Record<string, string>, body: unknown, call = 'action', entry = 0) {
  const res = await fetch(`${root}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers(call, entry), ...extra },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}
const MEMORY = 'OBJECTIVE: write a list\nUSER: an old reply\nTHOUGHT: asked\nUSER: bread';

describe('Anthropic Messages API, custom tool use', () => {
  const anthropic = () => new Anthropic({ apiKey: 'sk-ant-test', baseURL: root, maxRetries: 0 });
  const tools: Tool[] = NAMES.map((name) => ({
    name,
    description: `The ${name} tool.`,
    input_schema: { type: 'object' },
  }));
  const screen: MessageParam = {
    role: 'user',
    content: [
      { type: 'text', text: 'The current screen:' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: SHOT } },
    ],
  };
  const params = (over: Partial<MessageCreateParamsNonStreaming> = {}): MessageCreateParamsNonStreaming => ({
    model: 'desk',
    max_tokens: 1024,
    system: 'You describe screens.',
    messages: [screen],
    ...over,
  });
  const action = (over: Partial<MessageCreateParamsNonStreaming> = {}) =>
    params({ system: 'You act.', messages: [{ role: 'user', content: MEMORY }, screen], tools, ...over });

  it('describe: one text block from the entry, end_turn, usage estimated; the default without `describe`', async () => {
    const res = await anthropic().messages.create(params(), { headers: headers('describe', 0) });
    expect(res.content).toEqual([{ type: 'text', text: 'I see an xterm.', citations: null }]);
    expect(res.stop_reason).toBe('end_turn');
    expect(res.usage.input_tokens).toBeGreaterThan(258);
    expect(lastRequest()).toMatchObject({ provider: 'anthropic', call: 'describe', index: 0, imageCount: 1 });
    const neutral = await anthropic().messages.create(params(), { headers: headers('describe', 3) });
    expect(neutral.content[0]).toMatchObject({ text: expect.stringMatching(/scripted test model/) });
  });

  it('action: the content as a text block, then one tool_use per call with object inputs, stop_reason tool_use', async () => {
    const res = await anthropic().messages.create(action(), { headers: headers('action', 0) });
    expect(res.stop_reason).toBe('tool_use');
    expect(res.content).toMatchObject([
      { type: 'text', text: 'Open the editor.' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'run_command', input: { command: 'mousepad' } },
      { type: 'tool_use', name: 'type_text', input: { text: 'hi' } },
    ]);
    expect(lastRequest()).toMatchObject({ call: 'action', toolNames: NAMES, lastUserText: 'The current screen:' });
    expect(lastRequest()?.allText).toContain('USER: bread');
  });

  it('ground: the entry list by count of ground calls, the last one repeating', async () => {
    const texts: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await anthropic().messages.create(params(), { headers: headers('ground', 0) });
      texts.push(res.content[0]?.type === 'text' ? res.content[0].text : undefined);
    }
    expect(texts).toEqual(['(10, 20)', '(30, 40)', '(30, 40)']);
  });

  it('takes a history of tool_use blocks answered by tool_result blocks', async () => {
    const history: MessageParam[] = [
      { role: 'user', content: 'Start.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'stop', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
          { type: 'text', text: MEMORY },
        ],
      },
    ];
    const res = await anthropic().messages.create(action({ messages: [...history, screen] }), {
      headers: headers('action', 2),
    });
    expect(res.content[0]).toMatchObject({ type: 'text', text: 'Adding bread.' });
  });

  it('{{reply}} is the last USER: line of the user messages', async () => {
    const res = await anthropic().messages.create(action(), { headers: headers('action', 2) });
    expect(res.content).toMatchObject([
      { type: 'text', text: 'Adding bread.' },
      { type: 'tool_use', input: { command: "echo 'bread'" } },
    ]);
  });

  it('malformed: the first call as a tool_use whose input is empty; a raw entry answers text only', async () => {
    const res = await anthropic().messages.create(action(), { headers: headers('action', 1) });
    expect(res.content).toMatchObject([{ type: 'text' }, { type: 'tool_use', name: 'click', input: {} }]);
    expect(res.content).toHaveLength(2);
    const raw = await anthropic().messages.create(action(), { headers: headers('action', 5) });
    expect(raw).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Nothing to do yet.' }] });
  });

  it('a fault on the action call, counted per entry; then the answer', async () => {
    await expect(anthropic().messages.create(action(), { headers: headers('action', 3) })).rejects.toMatchObject({
      status: 503,
    });
    const res = await anthropic().messages.create(action(), { headers: headers('action', 3) });
    expect(res.content).toMatchObject([{ type: 'tool_use', name: 'stop', input: { answer: 'done' } }]);
  });

  it('401 without a key; 400 for an undeclared tool, a tool choice that forbids it, a Fara entry', async () => {
    // The SDK refuses to send without a key, so this request goes by fetch.
    const keyless = await post('/v1/messages', { 'anthropic-version': '2023-06-01' }, params(), 'describe');
    expect(keyless.status).toBe(401);
    expect(keyless.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const fewer = tools.filter((t) => t.name !== 'type_text');
    await expect(
      anthropic().messages.create(action({ tools: fewer }), { headers: headers('action', 0) }),
    ).rejects.toThrow(/does not declare tool type_text/);
    await expect(
      anthropic().messages.create(action({ tool_choice: { type: 'tool', name: 'stop' } }), {
        headers: headers('action', 0),
      }),
    ).rejects.toThrow(/tool choice \(tool:stop\) does not let the model call run_command/);
    await expect(anthropic().messages.create(action(), { headers: headers('action', 4) })).rejects.toThrow(
      /Fara action, not a desktop entry/,
    );
    await expect(anthropic().messages.create(action(), { headers: headers('action', 6) })).rejects.toThrow(
      /does not declare tool read_page/,
    );
  });
});

describe('Gemini generateContent, function calling', () => {
  const gemini = () =>
    new GoogleGenAI({ apiKey: 'g-test', apiVersion: 'v1beta', httpOptions: { baseUrl: root } }).models;
  const tools: GeminiTool[] = [
    {
      functionDeclarations: NAMES.map((name) => ({
        name,
        description: `The ${name} tool.`,
        parametersJsonSchema: { type: 'object', properties: {} },
      })),
    },
  ];
  const screen: Content = {
    role: 'user',
    parts: [{ text: 'The current screen:' }, { inlineData: { mimeType: 'image/png', data: SHOT } }],
  };
  const ask = (
    call: string,
    entry: number,
    over: Partial<GenerateContentParameters['config']> = {},
    contents = [screen],
  ) =>
    gemini().generateContent({
      model: 'desk',
      contents,
      config: { systemInstruction: 'You act.', ...over, httpOptions: { headers: headers(call, entry) } },
    });
  const act = (entry: number, over: Partial<GenerateContentParameters['config']> = {}) =>
    ask('action', entry, { tools, ...over }, [{ role: 'user', parts: [{ text: MEMORY }] }, screen]);

  it('describe and ground: one text part, finishReason STOP, usage estimated', async () => {
    const res = await ask('describe', 0);
    expect(res.candidates?.[0]).toMatchObject({
      content: { role: 'model', parts: [{ text: 'I see an xterm.' }] },
      finishReason: FinishReason.STOP,
    });
    expect(res.usageMetadata?.promptTokenCount).toBeGreaterThan(258);
    expect(lastRequest()).toMatchObject({ provider: 'gemini', call: 'describe', index: 0, imageCount: 1 });
    const grounds = [];
    for (let i = 0; i < 3; i++) grounds.push((await ask('ground', 0)).text);
    expect(grounds).toEqual(['(10, 20)', '(30, 40)', '(30, 40)']);
    expect((await ask('ground', 3)).text).toMatch(/no grounding output/);
  });

  it('action: a text part, then one functionCall part per call with object args', async () => {
    const res = await act(0);
    expect(res.candidates?.[0]).toMatchObject({
      content: {
        role: 'model',
        parts: [
          { text: 'Open the editor.' },
          { functionCall: { name: 'run_command', args: { command: 'mousepad' } } },
          { functionCall: { name: 'type_text', args: { text: 'hi' } } },
        ],
      },
      finishReason: FinishReason.STOP,
    });
    expect(res.functionCalls?.map((c) => c.name)).toEqual(['run_command', 'type_text']);
    expect(lastRequest()).toMatchObject({ call: 'action', toolNames: NAMES, lastUserText: 'The current screen:' });
  });

  it('{{reply}} from the user parts; malformed: MALFORMED_FUNCTION_CALL, a finishMessage, no content', async () => {
    expect((await act(2)).functionCalls).toEqual([{ name: 'run_command', args: { command: "echo 'bread'" } }]);
    const res = await act(1);
    expect(res.candidates?.[0]?.finishReason).toBe(FinishReason.MALFORMED_FUNCTION_CALL);
    expect(res.candidates?.[0]?.content).toBeUndefined();
    // The SDK's response reader drops finishMessage: read it from the raw body.
    const raw = await post(
      '/v1beta/models/desk:generateContent',
      { 'x-goog-api-key': 'k' },
      { contents: [screen], tools },
      'action',
      1,
    );
    expect(raw.body).toMatchObject({
      candidates: [
        {
          finishReason: 'MALFORMED_FUNCTION_CALL',
          finishMessage: expect.stringMatching(/^Malformed function call: click\(/),
        },
      ],
    });
  });

  it('a fault, 401 without a key, an undeclared tool, a mode that forbids calls', async () => {
    await expect(act(3)).rejects.toMatchObject({ status: 503 });
    expect((await act(3)).functionCalls).toEqual([{ name: 'stop', args: { answer: 'done' } }]);
    const keyless = await post('/v1beta/models/desk:generateContent', {}, { contents: [screen] }, 'describe');
    expect(keyless.status).toBe(401);
    expect(keyless.body).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    await expect(act(6)).rejects.toThrow(/does not declare tool read_page.*INVALID_ARGUMENT/s);
    await expect(act(0, { toolConfig: { functionCallingConfig: { mode: 'NONE' as never } } })).rejects.toThrow(
      /tool choice \(NONE\) does not let the model call run_command/,
    );
  });
});

describe('chat completions: a malformed desktop entry', () => {
  it('sends the first call as <tool_call> text of broken JSON, with no native tool_calls', async () => {
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers('action', 1) },
      body: JSON.stringify({ model: 'desk', messages: [{ role: 'user', content: MEMORY }] }),
    });
    const message = ((await res.json()) as { choices: { message: { content: string; tool_calls?: unknown } }[] })
      .choices[0]?.message;
    expect(message?.tool_calls).toBeUndefined();
    const inner = /<tool_call>\n(.*)\n<\/tool_call>/s.exec(message?.content ?? '')?.[1] ?? '';
    expect(inner).toContain('"name": "click"');
    expect(() => JSON.parse(inner)).toThrow();
  });
});

describe('request checks: one request per problem, each a 400 naming it in the provider shape', () => {
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: SHOT } };
  const tool = (name: string, schema: unknown = { type: 'object' }) => ({ name, input_schema: schema });
  const anthropicBody = {
    model: 'desk',
    max_tokens: 100,
    system: 'You act.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Go.' }, image] }],
    tools: NAMES.map((n) => tool(n)),
  };
  const anthropicKey = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
  const one = (content: unknown[]) => [{ role: 'user', content }];

  it.each<[string, Record<string, unknown>, RegExp, string?]>([
    ['model missing', { model: undefined }, /model missing/],
    ['max_tokens not positive', { max_tokens: 0 }, /max_tokens is not a positive integer/],
    ['messages empty', { messages: [] }, /messages missing or empty/],
    ['a system-role message', { messages: [...one([image]), { role: 'system', content: 'x' }] }, /role system/],
    ['starting with assistant', { messages: [{ role: 'assistant', content: 'x' }] }, /first message is not a user/],
    ['an unknown role', { messages: [...one([image]), { role: 'tool', content: 'x' }] }, /role "tool"/],
    [
      'a tool_use without its tool_result',
      {
        messages: [
          ...one([image]),
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'stop', input: {} }] },
          ...one([{ type: 'text', text: 'x' }]),
        ],
      },
      /tool_use t1 of the message before has no tool_result/,
    ],
    [
      'a tool_result answering nothing',
      { messages: one([image, { type: 'tool_result', tool_use_id: 't9', content: 'ok' }]) },
      /tool_result t9 answers no tool_use/,
    ],
    [
      'an image media type',
      { messages: one([{ ...image, source: { ...image.source, media_type: 'image/bmp' } }]) },
      /media_type "image\/bmp"/,
    ],
    [
      'image data not base64',
      { messages: one([{ ...image, source: { ...image.source, data: 'not base64!' } }]) },
      /not base64/,
    ],
    ['system not text blocks', { system: [{ type: 'image' }] }, /system\[0\] is not a text block/],
    ['a tool name', { tools: [tool('run command')] }, /name "run command" does not match/],
    ['an input_schema type', { tools: [tool('stop', { type: 'array' })] }, /input_schema.type is not "object"/],
    ['no input_schema', { tools: [{ name: 'stop' }] }, /input_schema missing/],
    ['a tool_choice type', { tool_choice: { type: 'sometimes' } }, /tool_choice type is not one of/],
    ['a tool_choice of an undeclared tool', { tool_choice: { type: 'tool', name: 'fly' } }, /tool_choice names fly/],
    ['an action without tools', { tools: undefined }, /action call declares its tools/],
    [
      'describe without an image',
      { messages: one([{ type: 'text', text: 'x' }]) },
      /exactly one image; this request has 0/,
      'describe',
    ],
    ['ground with two images', { messages: one([image, image]) }, /exactly one image; this request has 2/, 'ground'],
    ['an unknown call kind', {}, /x-cua-call 'judge' is not a desktop call/, 'judge'],
  ])('Anthropic: %s', async (_name, over, message, call = 'action') => {
    const { status, body } = await post('/v1/messages', anthropicKey, { ...anthropicBody, ...over }, call);
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message } });
    expect(lastRequest()?.problems).toHaveLength(1);
  });

  it('Anthropic: every problem in one 400', async () => {
    const { body } = await post('/v1/messages', anthropicKey, { ...anthropicBody, model: 7, max_tokens: -1 });
    expect(JSON.stringify(body)).toMatch(/model missing; max_tokens is not a positive integer/);
  });

  const part = { inlineData: { mimeType: 'image/png', data: SHOT } };
  const decls = (d: unknown[]) => [{ functionDeclarations: d }];
  const fn = (name: string, extra: object = { parametersJsonSchema: { type: 'object' } }) => ({ name, ...extra });
  const geminiBody = {
    contents: [{ role: 'user', parts: [{ text: 'Go.' }, part] }],
    systemInstruction: { parts: [{ text: 'You act.' }] },
    tools: decls(NAMES.map((n) => fn(n))),
  };
  const route = '/v1beta/models/desk:generateContent';
  const geminiKey = { 'x-goog-api-key': 'k' };

  it.each<[string, Record<string, unknown>, RegExp, string?]>([
    ['contents empty', { contents: [] }, /contents missing or empty/],
    ['a role', { contents: [{ role: 'assistant', parts: [part] }] }, /role "assistant" \(user or model\)/],
    ['parts empty', { contents: [{ role: 'user', parts: [] }, { parts: [part] }] }, /contents\[0\]: parts missing/],
    ['inlineData without mimeType', { contents: [{ parts: [{ inlineData: { data: SHOT } }] }] }, /mimeType missing/],
    [
      'an image mimeType',
      { contents: [{ parts: [{ inlineData: { mimeType: 'image/bmp', data: SHOT } }] }] },
      /image mimeType image\/bmp/,
    ],
    ['a part with two data fields', { contents: [{ parts: [{ text: 'x', ...part }] }] }, /exactly one of/],
    ['systemInstruction not a Content', { systemInstruction: { parts: [] } }, /systemInstruction: parts missing/],
    ['a function name', { tools: decls([fn('1st')]) }, /name "1st" does not match/],
    [
      'both parameter forms',
      { tools: decls([fn('stop', { parameters: { type: 'OBJECT' }, parametersJsonSchema: { type: 'object' } })]) },
      /both parameters and parametersJsonSchema/,
    ],
    [
      'parameters not an object schema',
      { tools: decls([fn('stop', { parameters: { type: 'STRING' } })]) },
      /parameters is not a schema of type OBJECT/,
    ],
    ['a mode', { toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, /mode SOMETIMES is unknown/],
    ['an action without functions', { tools: undefined }, /action call declares its tools/],
    [
      'describe without an image',
      { contents: [{ parts: [{ text: 'x' }] }] },
      /exactly one image; this request has 0/,
      'describe',
    ],
  ])('Gemini: %s', async (_name, over, message, call = 'action') => {
    const { status, body } = await post(route, geminiKey, { ...geminiBody, ...over }, call);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message } });
    expect(lastRequest()?.problems).toHaveLength(1);
  });

  it('snake_case bodies are read as the camelCase ones', async () => {
    const snake = {
      contents: [{ role: 'user', parts: [{ inline_data: { mime_type: 'image/png', data: SHOT } }] }],
      system_instruction: { parts: [{ text: 'You describe.' }] },
    };
    const { status, body } = await post(route, geminiKey, snake, 'describe');
    expect(status).toBe(200);
    expect(body).toMatchObject({ candidates: [{ content: { parts: [{ text: 'I see an xterm.' }] } }] });
  });
});
