// Specification of the OpenAI Responses API stand-in (src/scripted/providers/openai-responses.ts): the response body
// for each action kind, both computer tools, a batch, a safety check, reasoning, the malformed kinds OpenAI sends and
// usage; the request reader's one-line problems; and the official `openai` client (responses.create) against a
// node:http server on 127.0.0.1 that answers with the builder and checks with the reader.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import type {
  Response,
  ResponseComputerToolCall,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  expandForOpenAi,
  imageSizeOf,
  openAiResponse,
  readOpenAiRequest,
  splitForPreview,
} from '../../src/scripted/providers/openai-responses';
import type {
  OpenAiRequestExpectations,
  OpenAiRequestFacts,
  OpenAiResponseContext,
} from '../../src/scripted/providers/openai-responses';
import type { ScreenAction, StandInOutput } from '../../src/scripted/providers/output';

/** A base64 PNG data URL whose header says w×h (the reader reads only the IHDR chunk). */
function png(w: number, h: number): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return `data:image/png;base64,${b.toString('base64')}`;
}

/** A base64 JPEG data URL: SOI, an APP0 segment, then SOF0 with h and w. */
function jpeg(w: number, h: number): string {
  const app0 = [0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0];
  const sof = [0xff, 0xc0, 0x00, 0x11, 8, h >> 8, h & 0xff, w >> 8, w & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
  return `data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, ...app0, ...sof, 0xff, 0xd9]).toString('base64')}`;
}

const GA: OpenAiResponseContext = { tool: 'computer', screenshot: { width: 1440, height: 900 }, sequence: 3 };
const PREVIEW: OpenAiResponseContext = {
  tool: 'computer_use_preview',
  screenshot: { width: 2048, height: 1536 },
  display: { width: 1024, height: 768 },
  sequence: 4,
};
const act = (actions: ScreenAction[], more: Partial<StandInOutput> = {}): StandInOutput => ({
  thoughts: '',
  actions,
  ...more,
});
const body = (t: StandInOutput, ctx: OpenAiResponseContext = GA): Response => openAiResponse(t, ctx) as Response;
const callOf = (r: Response): ResponseComputerToolCall => {
  const call = r.output.find((o) => o.type === 'computer_call');
  if (!call || call.type !== 'computer_call') throw new Error('no computer_call');
  return call;
};

describe('openAiResponse: actions in the GA computer tool', () => {
  const cases: Array<[string, ScreenAction, unknown[]]> = [
    [
      'left click',
      { kind: 'click', button: 'left', count: 1, x: 10.4, y: 20.6 },
      [{ type: 'click', button: 'left', x: 10, y: 21 }],
    ],
    [
      'right click with a modifier (keys: SDK 6.33)',
      { kind: 'click', button: 'right', count: 1, x: 5, y: 6, keys: ['Control'] },
      [{ type: 'click', button: 'right', x: 5, y: 6, keys: ['CTRL'] }],
    ],
    [
      'middle click is the wheel button',
      { kind: 'click', button: 'middle', count: 1, x: 1, y: 2 },
      [{ type: 'click', button: 'wheel', x: 1, y: 2 }],
    ],
    ['double click', { kind: 'click', button: 'left', count: 2, x: 7, y: 8 }, [{ type: 'double_click', x: 7, y: 8 }]],
    ['move', { kind: 'move', x: 3, y: 4 }, [{ type: 'move', x: 3, y: 4 }]],
    [
      'drag',
      {
        kind: 'drag',
        path: [
          { x: 1, y: 2 },
          { x: 30, y: 40 },
        ],
      },
      [
        {
          type: 'drag',
          path: [
            { x: 1, y: 2 },
            { x: 30, y: 40 },
          ],
        },
      ],
    ],
    ['type', { kind: 'type', text: 'hello' }, [{ type: 'type', text: 'hello' }]],
    [
      'type at a point, then Enter',
      { kind: 'type', text: 'Lisbon', at: { x: 50, y: 60 }, pressEnter: true },
      [
        { type: 'click', button: 'left', x: 50, y: 60 },
        { type: 'type', text: 'Lisbon' },
        { type: 'keypress', keys: ['ENTER'] },
      ],
    ],
    [
      'keys in OpenAI names',
      { kind: 'keys', keys: ['Control', 'Shift', 'a'] },
      [{ type: 'keypress', keys: ['CTRL', 'SHIFT', 'A'] }],
    ],
    [
      'escape and arrows',
      { kind: 'keys', keys: ['Escape', 'ArrowLeft'] },
      [{ type: 'keypress', keys: ['ESC', 'ARROWLEFT'] }],
    ],
    [
      'scroll',
      { kind: 'scroll', x: 100, y: 200, dx: 0, dy: 300 },
      [{ type: 'scroll', x: 100, y: 200, scroll_x: 0, scroll_y: 300 }],
    ],
    ['wait (no duration on the wire)', { kind: 'wait', seconds: 2 }, [{ type: 'wait' }]],
    ['screenshot', { kind: 'screenshot' }, [{ type: 'screenshot' }]],
    [
      'navigate is CTRL+L, the URL, ENTER',
      { kind: 'navigate', url: 'https://example.com' },
      [
        { type: 'keypress', keys: ['CTRL', 'L'] },
        { type: 'type', text: 'https://example.com' },
        { type: 'keypress', keys: ['ENTER'] },
      ],
    ],
    ['back is ALT+ARROWLEFT', { kind: 'back' }, [{ type: 'keypress', keys: ['ALT', 'ARROWLEFT'] }]],
  ];
  it.each(cases)('%s', (_name, action, expected) => {
    expect(callOf(body(act([action]))).actions).toEqual(expected);
  });

  it('refuses a triple click, which OpenAI has no action for', () => {
    expect(() => body(act([{ kind: 'click', button: 'left', count: 3, x: 1, y: 1 }]))).toThrow(/triple click/);
  });

  it('batches a turn in one computer_call with ids, an empty pending_safety_checks and no action field', () => {
    const r = body(
      act([
        { kind: 'click', button: 'left', count: 1, x: 1, y: 2 },
        { kind: 'type', text: 'x' },
        { kind: 'screenshot' },
      ]),
    );
    expect(r.output).toEqual([
      {
        id: 'cu_0003',
        call_id: 'call_0003',
        type: 'computer_call',
        status: 'completed',
        pending_safety_checks: [],
        actions: [{ type: 'click', button: 'left', x: 1, y: 2 }, { type: 'type', text: 'x' }, { type: 'screenshot' }],
      },
    ]);
    expect(r).toMatchObject({
      id: 'resp_0003',
      object: 'response',
      status: 'completed',
      tools: [{ type: 'computer' }],
    });
    expect(r).not.toHaveProperty('output_text'); // the SDK computes it on the client
  });

  it('keeps screenshot pixels as they are (GA: the coordinates of the screenshot sent)', () => {
    const r = body(act([{ kind: 'move', x: 1439, y: 899 }]), { ...GA, screenshot: { width: 2880, height: 1800 } });
    expect(callOf(r).actions).toEqual([{ type: 'move', x: 1439, y: 899 }]);
  });
});

describe('openAiResponse: the preview computer_use_preview tool', () => {
  it('sends one action per computer_call, in the display_width×display_height space, with truncation auto', () => {
    const r = body(act([{ kind: 'scroll', x: 1000, y: 501, dx: 0, dy: 400 }]), PREVIEW);
    expect(callOf(r)).toEqual({
      id: 'cu_0004',
      call_id: 'call_0004',
      type: 'computer_call',
      status: 'completed',
      pending_safety_checks: [],
      action: { type: 'scroll', x: 500, y: 251, scroll_x: 0, scroll_y: 200 },
    });
    expect(r).toMatchObject({
      truncation: 'auto',
      model: 'computer-use-preview',
      tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }],
    });
  });

  it('refuses a batch, and splitForPreview makes one turn per native action', () => {
    const batch = act([{ kind: 'type', text: 'Lisbon', at: { x: 10, y: 10 } }, { kind: 'screenshot' }], {
      thoughts: 'Search.',
      safetyCheck: { code: 'sensitive_domain', message: 'Sure?' },
      usage: { input: 5, output: 1 },
    });
    expect(() => body(batch, PREVIEW)).toThrow(/one action per computer_call, not 3/);
    const parts = splitForPreview(batch);
    expect(parts.map((p) => p.actions.map((a) => a.kind))).toEqual([['click'], ['type'], ['screenshot']]);
    expect(parts.map((p) => [p.thoughts, p.safetyCheck?.code, p.usage?.input])).toEqual([
      ['Search.', 'sensitive_domain', undefined],
      ['', undefined, undefined],
      ['', undefined, 5],
    ]);
    expect(parts.map((p) => callOf(body(p, PREVIEW)).action?.type)).toEqual(['click', 'type', 'screenshot']);
    expect(expandForOpenAi([{ kind: 'back' }])).toEqual([{ kind: 'keys', keys: ['Alt', 'ArrowLeft'] }]);
  });
});

describe('openAiResponse: safety check, reasoning, text, malformed, usage', () => {
  it('puts a safety check on the computer_call as a pending check', () => {
    const safetyCheck = { code: 'malicious_instructions', message: 'The page asks you to ignore the user.' };
    const r = body(act([{ kind: 'screenshot' }], { safetyCheck }));
    expect(callOf(r).pending_safety_checks).toEqual([{ id: 'cs_0003', ...safetyCheck }]);
    expect(() => body(act([], { safetyCheck, final: { kind: 'answer', text: 'x' } }))).toThrow(/computer_call/);
  });

  it('sends the thoughts as a reasoning item with a summary before the call (encrypted when asked)', () => {
    const r = body(act([{ kind: 'screenshot' }], { thoughts: 'Look first.' }), { ...GA, encryptedReasoning: true });
    expect(r.output[0]).toEqual({
      id: 'rs_0003',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Look first.' }],
      encrypted_content: `standin:${Buffer.from('Look first.').toString('base64')}`,
    });
    expect(r.output[1]?.type).toBe('computer_call');
  });

  it('sends a text-only turn as a message with output_text', () => {
    const r = body(act([], { thoughts: 'All done.', final: { kind: 'answer', text: 'Booked for 8pm.' } }));
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(r.output[1]).toEqual({
      id: 'msg_0003',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Booked for 8pm.', annotations: [] }],
    });
    const question = body(act([], { final: { kind: 'question', text: 'Which date?' } }));
    expect(question.output.map((o) => o.type)).toEqual(['message']);
  });

  it('sends an unknown action type in place of the first action', () => {
    const scripted = act(
      [
        { kind: 'click', button: 'left', count: 1, x: 9, y: 8 },
        { kind: 'type', text: 'a' },
      ],
      {
        malformed: 'unknown-action',
      },
    );
    const wire = openAiResponse(scripted, GA) as { output: Array<{ actions: unknown[] }> };
    expect(wire.output[0]?.actions).toEqual([
      { type: 'triple_click', x: 9, y: 8 },
      { type: 'type', text: 'a' },
    ]);
  });

  it('drops the y of the first pointer action for a missing coordinate (GA and preview)', () => {
    const actions: ScreenAction[] = [
      { kind: 'keys', keys: ['Tab'] },
      { kind: 'click', button: 'left', count: 1, x: 9, y: 8 },
    ];
    const wire = openAiResponse(act(actions, { malformed: 'missing-coordinate' }), GA) as {
      output: Array<{ actions: unknown[] }>;
    };
    expect(wire.output[0]?.actions).toEqual([
      { type: 'keypress', keys: ['TAB'] },
      { type: 'click', button: 'left', x: 9 },
    ]);
    const single = act([{ kind: 'move', x: 4, y: 4 }], { malformed: 'missing-coordinate' });
    expect((openAiResponse(single, PREVIEW) as { output: Array<{ action: unknown }> }).output[0]?.action).toEqual({
      type: 'move',
      x: 2,
    });
    expect(() => openAiResponse(act([{ kind: 'screenshot' }], { malformed: 'missing-coordinate' }), GA)).toThrow(
      /pointer/,
    );
  });

  it('refuses the malformed kinds OpenAI does not send', () => {
    for (const malformed of ['off-screen', 'malformed-function-call'] as const) {
      expect(() => openAiResponse(act([{ kind: 'screenshot' }], { malformed }), GA)).toThrow(/does not send/);
    }
  });

  it('reports usage in the Responses API fields, and none when the turn gives none', () => {
    expect(
      body(act([{ kind: 'wait', seconds: 1 }], { usage: { input: 1200, output: 80, cachedInput: 1000 } })).usage,
    ).toEqual({
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1000 },
      output_tokens: 80,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1280,
    });
    expect(body(act([{ kind: 'wait', seconds: 1 }]))).not.toHaveProperty('usage');
  });
});

/** A well-formed second request of a GA conversation: the first response's items replayed, the check acknowledged. */
function secondRequest(): {
  headers: Record<string, string>;
  body: Record<string, unknown>;
  expect: OpenAiRequestExpectations;
} {
  const first = openAiResponse(
    act([{ kind: 'click', button: 'left', count: 1, x: 1, y: 2 }], {
      thoughts: 'Click it.',
      safetyCheck: { code: 'sensitive_domain', message: 'A bank.' },
    }),
    { ...GA, sequence: 1 },
  ) as Response;
  const call = callOf(first);
  return {
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: {
      model: 'gpt-5.4',
      tools: [{ type: 'computer' }],
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Pay the bill.' },
            { type: 'input_image', image_url: png(1440, 900), detail: 'original' },
          ],
        },
        ...structuredClone(first.output),
        {
          type: 'computer_call_output',
          call_id: call.call_id,
          acknowledged_safety_checks: call.pending_safety_checks,
          output: { type: 'computer_screenshot', image_url: png(1280, 800), detail: 'original' },
        },
      ],
    },
    expect: { acknowledge: ['cs_0001'], replayed: first.output },
  };
}

type Mutation = (r: ReturnType<typeof secondRequest>) => void;
const input = (r: ReturnType<typeof secondRequest>): Array<Record<string, unknown>> =>
  r.body.input as Array<Record<string, unknown>>;
const output = (r: ReturnType<typeof secondRequest>): Record<string, unknown> => input(r)[3] as Record<string, unknown>;

describe('readOpenAiRequest', () => {
  it('passes a well-formed GA request and reads the newest screenshot, the key and the acknowledgement', () => {
    const r = secondRequest();
    expect(readOpenAiRequest(r.headers, r.body, r.expect)).toEqual<OpenAiRequestFacts>({
      apiKey: 'sk-test',
      tool: 'computer',
      display: null,
      screenshot: { width: 1280, height: 800 },
      acknowledged: ['cs_0001'],
      encryptedReasoning: false,
      problems: [],
    });
  });

  it('passes a well-formed preview request and accepts input_image as the output type (UNVERIFIED form)', () => {
    const r = secondRequest();
    Object.assign(r.body, {
      model: 'computer-use-preview',
      truncation: 'auto',
      tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }],
      include: ['reasoning.encrypted_content'],
    });
    output(r).output = { type: 'input_image', image_url: jpeg(1024, 768), current_url: 'https://example.com' };
    const facts = readOpenAiRequest(r.headers, r.body, r.expect);
    expect(facts).toMatchObject({ tool: 'computer_use_preview', display: { width: 1024, height: 768 }, problems: [] });
    expect(facts).toMatchObject({ screenshot: { width: 1024, height: 768 }, encryptedReasoning: true });
  });

  const preview: Mutation = (r) => {
    r.body.tools = [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }];
    r.body.truncation = 'auto';
  };
  const cases: Array<[Mutation, string]> = [
    [(r) => delete r.headers.authorization, 'Authorization header missing'],
    [(r) => (r.headers.authorization = 'Basic abc'), 'Authorization is not "Bearer <key>"'],
    [(r) => delete r.body.model, 'no model'],
    [(r) => (r.body.tools = [{ type: 'function', name: 'f' }]), 'no computer tool'],
    [
      (r) => (r.body.tools = [{ type: 'computer', display_width: 1 }]),
      'the computer tool takes no fields besides type (got display_width)',
    ],
    [(r) => (r.body.tools = [{ type: 'computer' }, { type: 'computer' }]), 'more than one computer tool'],
    [
      (r) => (r.body.tools = [{ type: 'computer' }, { type: 'computer_use' }]),
      'tool type computer_use is not a tool type (computer)',
    ],
    [(r) => (preview(r), delete r.body.truncation), 'computer_use_preview needs truncation "auto"'],
    [
      (r) => (preview(r), delete (r.body.tools as Array<Record<string, unknown>>)[0]?.display_height),
      'computer_use_preview needs a positive integer display_height',
    ],
    [
      (r) => (preview(r), ((r.body.tools as Array<Record<string, unknown>>)[0]!.environment = 'android')),
      'computer_use_preview needs environment windows|mac|linux|ubuntu|browser',
    ],
    [
      (r) => (r.body.previous_response_id = 'resp_0001'),
      'previous_response_id is set: the stand-in stores no response (replay the output items)',
    ],
    [(r) => (output(r).output = { type: 'computer_screenshot' }), 'computer_call_output call_0001 carries no image'],
    [
      (r) => (output(r).output = { type: 'image', image_url: png(1, 1) }),
      'computer_call_output call_0001: output type is not computer_screenshot',
    ],
    [
      (r) => (output(r).output = { type: 'computer_screenshot', image_url: 'https://example.com/s.png' }),
      'the newest screenshot is not a base64 PNG or JPEG data URL',
    ],
    [
      (r) => (output(r).output = { type: 'computer_screenshot', file_id: 'file_1' }),
      'the newest screenshot is a file_id: the stand-in reads only base64 data URLs',
    ],
    [(r) => (input(r).pop(), delete r.expect.acknowledge), 'computer_call call_0001 has no computer_call_output'],
    [
      (r) => input(r).splice(3, 0, { ...output(r), call_id: 'call_9', acknowledged_safety_checks: [] }),
      'computer_call_output call_9 answers no earlier computer_call in the input',
    ],
    [(r) => delete output(r).acknowledged_safety_checks, 'pending safety check cs_0001 not acknowledged'],
    [
      (r) => (output(r).acknowledged_safety_checks = [{ id: 'cs_0001' }, { id: 'cs_9' }]),
      'computer_call_output call_0001 acknowledges cs_9, which was not pending',
    ],
    [(r) => input(r).splice(1, 1), 'reasoning rs_0001 of an earlier response is not replayed'],
    [
      (r) => input(r).splice(2, 0, { role: 'user', content: 'hi' }),
      'reasoning rs_0001 is not followed by cu_0001 as in its response',
    ],
    [(r) => (input(r)[1] = { ...input(r)[1], summary: [] }), "reasoning rs_0001's summary changed"],
    [
      (r) => (input(r)[2] = { ...input(r)[2], actions: [{ type: 'wait' }] }),
      'computer_call cu_0001 is replayed with another call_id or actions',
    ],
    [(r) => (r.body.store = false), 'reasoning rs_0001 replayed with store:false carries no encrypted_content'],
    [
      (r) => ((r.expect.replayed as Array<Record<string, unknown>>)[0]!.encrypted_content = 'e'),
      'reasoning rs_0001 lost its encrypted_content',
    ],
  ];
  it.each(cases)('%#: %s', (mutate, problem) => {
    const r = secondRequest();
    mutate(r);
    expect(readOpenAiRequest(r.headers, r.body, r.expect).problems).toEqual([problem]);
  });

  it('finds replayed items out of order, and a body that is no object', () => {
    const r = secondRequest();
    const first = openAiResponse(act([{ kind: 'screenshot' }], { thoughts: 'Again.' }), {
      ...GA,
      sequence: 2,
    }) as Response;
    r.expect.replayed = [...first.output, ...(r.expect.replayed ?? [])];
    input(r).push(...(first.output as unknown as Array<Record<string, unknown>>));
    expect(readOpenAiRequest(r.headers, r.body, r.expect).problems).toContain(
      'reasoning rs_0001 is replayed out of order',
    );
    expect(readOpenAiRequest(r.headers, [], {}).problems).toEqual(['the body is not a JSON object']);
  });

  it('reads PNG and JPEG sizes from data URLs', () => {
    expect(imageSizeOf(png(1440, 900))).toEqual({ width: 1440, height: 900 });
    expect(imageSizeOf(jpeg(1600, 900))).toEqual({ width: 1600, height: 900 });
    expect(imageSizeOf('data:image/png;base64,AAAA')).toBeNull();
  });
});

describe('the official openai client (responses.create) against the stand-in', () => {
  let server: http.Server;
  let client: OpenAI;
  const seen: Array<{ method?: string; url?: string; facts: OpenAiRequestFacts }> = [];
  const script: StandInOutput[] = [];
  const expectations: OpenAiRequestExpectations[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
        );
        const n = seen.length;
        const facts = readOpenAiRequest(headers, JSON.parse(Buffer.concat(chunks).toString('utf8')), expectations[n]);
        seen.push({ method: req.method, url: req.url, facts });
        const ctx = {
          tool: facts.tool ?? 'computer',
          screenshot: facts.screenshot,
          display: facts.display,
          sequence: n + 1,
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(openAiResponse(script[n] as StandInOutput, ctx)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new OpenAI({ apiKey: 'sk-standin-test', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('parses a GA batch with a safety check, then a final message after the acknowledgement', async () => {
    script.push(
      act(
        [
          { kind: 'click', button: 'left', count: 1, x: 700, y: 450 },
          { kind: 'type', text: '4 guests' },
        ],
        {
          thoughts: 'Open the booking form.',
          safetyCheck: { code: 'irrelevant_domain', message: 'This site is not the task’s.' },
          usage: { input: 1500, output: 40 },
        },
      ),
      act([], { final: { kind: 'answer', text: 'Booked.' } }),
    );
    const start: ResponseInputItem[] = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Book a table.' },
          { type: 'input_image', image_url: png(1440, 900), detail: 'original' },
        ],
      },
    ];
    const params: ResponseCreateParamsNonStreaming = {
      model: 'gpt-5.4',
      tools: [{ type: 'computer' }],
      reasoning: { summary: 'concise' },
      input: start,
    };
    const first = await client.responses.create(params);
    const call = callOf(first);
    expect(first.output[0]?.type).toBe('reasoning');
    expect(call.actions).toEqual([
      { type: 'click', button: 'left', x: 700, y: 450 },
      { type: 'type', text: '4 guests' },
    ]);
    expect(call.pending_safety_checks.map((c) => c.code)).toEqual(['irrelevant_domain']);
    expect(first.usage?.total_tokens).toBe(1540);

    expectations[1] = { acknowledge: call.pending_safety_checks.map((c) => c.id), replayed: first.output };
    const replay = first.output.filter((o) => o.type === 'reasoning' || o.type === 'computer_call');
    const ack: ResponseInputItem = {
      type: 'computer_call_output',
      call_id: call.call_id,
      acknowledged_safety_checks: call.pending_safety_checks,
      output: { type: 'computer_screenshot', image_url: png(1440, 900) },
    };
    const second = await client.responses.create({ ...params, input: [...start, ...replay, ack] });
    expect(second.output_text).toBe('Booked.');
    expect(seen.map((s) => [s.method, s.url, s.facts.apiKey, s.facts.problems])).toEqual([
      ['POST', '/v1/responses', 'sk-standin-test', []],
      ['POST', '/v1/responses', 'sk-standin-test', []],
    ]);
    expect(seen[1]?.facts).toMatchObject({
      acknowledged: [call.pending_safety_checks[0]?.id],
      screenshot: { width: 1440, height: 900 },
    });
  });

  it('parses a preview computer_call in the display space', async () => {
    script.push(act([{ kind: 'click', button: 'left', count: 1, x: 1000, y: 500 }]));
    const r = await client.responses.create({
      model: 'computer-use-preview',
      tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }],
      truncation: 'auto',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Go.' },
            { type: 'input_image', image_url: png(2048, 1536), detail: 'auto' },
          ],
        },
      ],
    });
    expect(callOf(r).action).toEqual({ type: 'click', button: 'left', x: 500, y: 250 });
    expect(seen[2]?.facts).toMatchObject({ tool: 'computer_use_preview', problems: [] });
  });
});
