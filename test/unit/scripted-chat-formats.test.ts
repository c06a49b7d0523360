// Specification of the scripted model server's chat formats: the same script answered in the format the request
// speaks (UI-TARS-1.5, Qwen2.5-VL, Qwen3-VL on its 999 or 1000 grid, `<tool_call>` text or native tool_calls), driven
// with the `openai` SDK against the real server on 127.0.0.1: each format's turns and coordinates, batches, the
// malformed turn, {{reply}}, the request checks, a fault, and Fara's answers unchanged.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { faraSpace } from '../../src/families/fara-common/spaces';
import { decodeFirstObject } from '../../src/model/lenient-json';
import { buildSystemPrompt } from '../../src/model/prompt';
import { detectChatFormat } from '../../src/scripted/chat-detect';
import type { ChatRequest } from '../../src/scripted/chat-wire';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';

/** A PNG header (signature + IHDR) of the given size: all the stand-in reads. */
function pngOf(width: number, height: number): string {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'ascii');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]).toString('base64');
}
/** 1280×800, which smart_resize (factor 28) makes 1288×812. */
const SHOT = `data:image/png;base64,${pngOf(1280, 800)}`;

const SCRIPT = [
  { thoughts: 'Open the form.', action: { action: 'left_click', coordinate: [500, 500] } },
  {
    thoughts: 'Fill the name.',
    action: { action: 'left_click', coordinate: [250, 250] },
    then: [
      { action: 'type', text: "Ana's" },
      { action: 'key', keys: ['Enter'] },
    ],
  },
  { thoughts: 'Close.', action: { action: 'left_click', coordinate: [900, 900] }, malformed: true },
  { thoughts: 'Ask.', action: { action: 'ask_user_question', question: 'Whose name?' } },
  { thoughts: 'Type it.', action: { action: 'type', text: '{{reply}}', coordinate: [500, 100], press_enter: true } },
  { thoughts: 'Read.', action: { action: 'read_page_answer_question', question: 'What does it say?' } },
  { thoughts: 'Done.', action: { action: 'terminate', answer: 'Booked for {{reply}}.' } },
];
const CHECKED = [
  {
    thoughts: 'Pay.',
    action: { action: 'left_click', coordinate: [500, 500] },
    safety_check: { message: 'Pay 236 EUR?' },
  },
  { thoughts: 'Aim.', action: { action: 'left_click', coordinate: [100, 200] }, malformed: 'off-screen' },
];
const FAULTY = [{ action: { action: 'wait', time: 2 }, faults: [{ status: 503, message: 'busy' }] }];

let server: ScriptedModelServer;
let client: OpenAI;
const logs: string[] = [];

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scripted-chat-formats-'));
  fs.writeFileSync(path.join(dir, 'small.json'), JSON.stringify(SCRIPT));
  fs.writeFileSync(path.join(dir, 'faulty.json'), JSON.stringify(FAULTY));
  fs.writeFileSync(path.join(dir, 'checked.json'), JSON.stringify(CHECKED));
  fs.copyFileSync(path.join(__dirname, '../../demo/scripts/tidewater-booking.json'), path.join(dir, 'tidewater.json'));
  server = await startScriptedModelServer({ scriptsDir: dir, log: (l) => logs.push(l) });
  client = new OpenAI({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
});
afterAll(async () => server?.close());

const lastRequest = () => server.requests[server.requests.length - 1];

// ---- the prompts, written from docs/provider-formats.md ----

const UI_TARS_PROMPT = [
  'You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.',
  '',
  '## Output Format',
  '```',
  'Thought: ...',
  'Action: ...',
  '```',
  '',
  '## Action Space',
  "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  'finished()',
  'call_user()',
  '',
  '## User Instruction',
  'Book a room.',
].join('\n');

const QWEN25_ACTIONS = ['key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'middle_click'];
/** Qwen2.5-VL's whole enum (docs/provider-formats.md). */
const QWEN25_ALL = [...QWEN25_ACTIONS, 'double_click', 'scroll', 'wait', 'terminate'];
const QWEN3_ACTIONS = [
  ...QWEN25_ACTIONS,
  'double_click',
  'triple_click',
  'scroll',
  'hscroll',
  'wait',
  'terminate',
  'answer',
];

function qwenFunction(actions: string[], resolution: string) {
  return {
    type: 'function' as const,
    function: {
      name: 'computer_use',
      description: `Use a mouse and keyboard to interact with a computer.\n* The screen's resolution is ${resolution}.`,
      parameters: {
        type: 'object',
        properties: { action: { type: 'string', enum: actions }, coordinate: { type: 'array' } },
        required: ['action'],
      },
    },
  };
}

const qwenPrompt = (fn: object): string =>
  [
    '# Tools',
    '',
    'You may call one or more functions to assist with the user query.',
    '',
    'You are provided with function signatures within <tools></tools> XML tags:',
    '<tools>',
    JSON.stringify(fn),
    '</tools>',
    '',
    'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
    '<tool_call>',
    '{"name": <function-name>, "arguments": <args-json-object>}',
    '</tool_call>',
  ].join('\n');

/** A conversation: the prompt, then per turn the model's output (as the format sends it back) and a screenshot. */
class Chat {
  readonly messages: ChatCompletionMessageParam[];
  constructor(
    system: string | null,
    readonly tools?: ChatCompletionTool[],
    readonly rewrap = false,
    readonly model = 'small',
  ) {
    const shot = { type: 'image_url' as const, image_url: { url: SHOT } };
    this.messages = system
      ? [
          { role: 'system', content: system },
          { role: 'user', content: [{ type: 'text', text: 'Book a room.' }, shot] },
        ]
      : [{ role: 'user', content: [{ type: 'text', text: UI_TARS_PROMPT }, shot] }];
  }
  async call(): Promise<ChatCompletion['choices'][number]['message']> {
    const res = await client.chat.completions.create({
      model: this.model,
      messages: this.messages,
      ...(this.tools ? { tools: this.tools } : {}),
    });
    const message = res.choices[0]?.message;
    if (!message) throw new Error('no message');
    return message;
  }
  /** Sends the output back (UI-TARS: boxes re-wrapped in box tokens) and the next screenshot, with a text if any. */
  answer(message: ChatCompletion['choices'][number]['message'], text?: string): void {
    const content = this.rewrap
      ? (message.content ?? '').replace(/(start_box|end_box)='([^']*)'/g, "$1='<|box_start|>$2<|box_end|>'")
      : message.content;
    this.messages.push({
      role: 'assistant',
      content,
      ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
    });
    const shot = { type: 'image_url' as const, image_url: { url: SHOT } };
    this.messages.push({ role: 'user', content: [...(text ? [{ type: 'text' as const, text }] : []), shot] });
  }
  /** Plays `n` turns, answering a question with `reply`; returns each turn's content (or native arguments). */
  async play(n: number, reply = 'Bea'): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const m = await this.call();
      const calls = (m.tool_calls ?? []).map((c) => (c.type === 'function' ? `[native] ${c.function.arguments}` : ''));
      out.push([m.content ?? '', ...calls].filter(Boolean).join('\n'));
      const text = m.content ?? '';
      const asked = this.rewrap ? text.includes('call_user()') : !m.tool_calls && !text.includes('<tool_call>');
      this.answer(m, asked ? reply : undefined);
    }
    return out;
  }
}

const status = async (p: Promise<unknown>): Promise<{ status: number; message: string }> => {
  try {
    await p;
    return { status: 200, message: '' };
  } catch (err) {
    if (err instanceof APIError) return { status: err.status ?? 0, message: err.message };
    throw err;
  }
};

describe('UI-TARS-1.5', () => {
  it("plays the script in UI-TARS's output, in pixels of the 28-factor smart_resize, with a batch and a malformed turn", async () => {
    const chat = new Chat(null, undefined, true);
    const outputs = await chat.play(7);
    expect(outputs).toEqual([
      "Thought: Open the form.\nAction: click(start_box='(644,406)')",
      "Thought: Fill the name.\nAction: click(start_box='(322,203)')\n\ntype(content='Ana\\'s')\n\nhotkey(key='enter')",
      "Thought: Close.\nAction: click(start_box='(1159,",
      "Thought: Close.\nAction: click(start_box='(1159,731)')",
      'Thought: Whose name?\nAction: call_user()',
      "Thought: Type it.\nAction: click(start_box='(644,81)')\n\ntype(content='Bea\\n')",
      "Thought: Done.\nAction: finished(content='Booked for Bea.')",
    ]);
    expect(lastRequest()).toMatchObject({ format: 'ui-tars-1.5', turn: 6, index: 6, problems: [] });
    expect(logs.join('\n')).toContain(
      'ui-tars-1.5 small: no ui-tars-1.5 equivalent, dropped: entry 6 read_page_answer_question',
    );
    const after = await status(chat.call());
    expect(after).toMatchObject({ status: 400 });
    expect(after.message).toContain("script 'small' plays 7 ui-tars-1.5 turns; this request asks for turn 8");
  });

  it('is detected from a system prompt too, and refuses history boxes not re-wrapped and a last message without a screenshot', async () => {
    const chat = new Chat(UI_TARS_PROMPT);
    chat.answer(await chat.call());
    const refused = await status(chat.call());
    expect(refused.status).toBe(400);
    expect(refused.message).toContain(
      "message 3 (assistant): start_box='(644,406)' is not re-wrapped as '<|box_start|>(644,406)<|box_end|>'",
    );
    const bare = await status(
      client.chat.completions.create({
        model: 'small',
        messages: [
          { role: 'system', content: UI_TARS_PROMPT },
          { role: 'user', content: 'Book a room.' },
        ],
      }),
    );
    expect(bare.message).toContain('the last user message carries no screenshot (image_url)');
    expect(lastRequest()).toMatchObject({
      format: 'ui-tars-1.5',
      problems: [expect.stringContaining('no screenshot')],
    });
  });
});

describe('Qwen-VL', () => {
  it('Qwen3 on the 999 grid, <tool_call> text: one call per turn, broken JSON, a text question, {{reply}}, answer', async () => {
    const chat = new Chat(qwenPrompt(qwenFunction(QWEN3_ACTIONS, '999x999')));
    const outputs = await chat.play(11);
    const call = (args: string) => `<tool_call>\n{"name": "computer_use", "arguments": ${args}}\n</tool_call>`;
    expect(outputs).toEqual([
      `Open the form.\n${call('{"action": "left_click", "coordinate": [500, 500]}')}`,
      `Fill the name.\n${call('{"action": "left_click", "coordinate": [250, 250]}')}`,
      call('{"action": "type", "text": "Ana\'s"}'),
      call('{"action": "key", "keys": ["enter"]}'),
      `Close.\n${call('{"action": "left_click, "coordinate": [899, 899]}')}`,
      `Close.\n${call('{"action": "left_click", "coordinate": [899, 899]}')}`,
      'Whose name?',
      `Type it.\n${call('{"action": "left_click", "coordinate": [500, 100]}')}`,
      call('{"action": "type", "text": "Bea"}'),
      call('{"action": "key", "keys": ["enter"]}'),
      `Done.\n${call('{"action": "answer", "text": "Booked for Bea."}')}`,
    ]);
    // The malformed call is beyond mending, even by a lenient reader.
    expect(() => decodeFirstObject(outputs[4] ?? '')).toThrow();
    expect(lastRequest()).toMatchObject({ format: 'qwen3-vl', turn: 10, index: 6, problems: [] });
  });

  it('Qwen3 on the 1000 grid with request tools: native tool_calls, the malformed one left in the content', async () => {
    const fn = qwenFunction(QWEN3_ACTIONS, '1000x1000');
    const chat = new Chat('You are a helpful assistant.', [fn]);
    const outputs = await chat.play(6);
    expect(outputs[0]).toBe('Open the form.\n[native] {"action": "left_click", "coordinate": [500, 500]}');
    expect(outputs[4]).toBe(
      'Close.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click, "coordinate": [900, 900]}}\n</tool_call>',
    );
    expect(outputs[5]).toBe('Close.\n[native] {"action": "left_click", "coordinate": [900, 900]}');
    expect(lastRequest()).toMatchObject({ format: 'qwen3-vl', toolNames: ['computer_use'] });
  });

  it('Qwen2.5: pixels of the resized screenshot, the answer as text (no `answer` in its enum)', async () => {
    const chat = new Chat(qwenPrompt(qwenFunction(QWEN25_ALL, '1288x812')));
    const outputs = await chat.play(11);
    expect(outputs[0]).toContain('{"action": "left_click", "coordinate": [644, 406]}');
    expect(outputs[6]).toBe('Whose name?');
    expect(outputs[8]).toContain('{"action": "type", "text": "Bea"}');
    expect(outputs[10]).toBe('Booked for Bea.');
    expect(lastRequest()).toMatchObject({ format: 'qwen2.5-vl', index: 6 });
  });

  it('refuses a resolution sentence that is not the resized screenshot, and a function without its action enum', async () => {
    const wrong = await status(new Chat(qwenPrompt(qwenFunction([...QWEN25_ACTIONS, 'terminate'], '1280x800'))).call());
    expect(wrong).toMatchObject({ status: 400 });
    expect(wrong.message).toContain(
      'the resolution sentence says 1280x800, but the screenshot resized (factor 28) is 1288x812',
    );
    const noEnum = await status(new Chat(qwenPrompt(qwenFunction([], '999x999'))).call());
    expect(noEnum.message).toContain('the computer_use function has no action enum');
  });

  it("serves an entry's faults on its first turn, counted per format", async () => {
    const faulty = new Chat(qwenPrompt(qwenFunction(QWEN3_ACTIONS, '999x999')));
    const call = () => client.chat.completions.create({ model: 'faulty', messages: faulty.messages });
    expect(await status(call())).toMatchObject({ status: 503, message: expect.stringContaining('busy') });
    const again = await call();
    expect(again.choices[0]?.message.content).toContain('{"action": "wait", "time": 2}');
  });
});

describe('a safety check and another malformed kind', () => {
  it('asks the check as a question first (UI-TARS call_user, Qwen text), then acts; off-screen lands past the edge', async () => {
    const uiTars = await new Chat(null, undefined, true, 'checked').play(4);
    expect(uiTars).toEqual([
      'Thought: Pay 236 EUR?\nAction: call_user()',
      "Action: click(start_box='(644,406)')",
      "Thought: Aim.\nAction: click(start_box='(1328,852)')",
      "Thought: Aim.\nAction: click(start_box='(129,162)')",
    ]);
    const qwen = await new Chat(qwenPrompt(qwenFunction(QWEN3_ACTIONS, '999x999')), undefined, false, 'checked').play(
      4,
    );
    expect(qwen[0]).toBe('Pay 236 EUR?');
    expect(qwen[1]).toContain('{"action": "left_click", "coordinate": [500, 500]}');
    expect(qwen[2]).toContain('{"action": "left_click", "coordinate": [1039, 1039]}');
    expect(qwen[3]).toContain('{"action": "left_click", "coordinate": [100, 200]}');
  });
});

describe('the demo booking', () => {
  const formats: Array<[string, () => Chat]> = [
    ['ui-tars-1.5', () => new Chat(null, undefined, true, 'tidewater')],
    ['qwen3-vl', () => new Chat(qwenPrompt(qwenFunction(QWEN3_ACTIONS, '999x999')), undefined, false, 'tidewater')],
    ['qwen2.5-vl', () => new Chat(qwenPrompt(qwenFunction(QWEN25_ALL, '1288x812')), undefined, false, 'tidewater')],
  ];
  it.each(formats)('plays to its end in %s, the question answered and the reply typed', async (format, make) => {
    const chat = make();
    const outputs: string[] = [];
    while (!outputs.some((o) => o.includes('TW-787459')) && outputs.length < 30) {
      outputs.push(...(await chat.play(1, 'Ana Lima')));
    }
    const last = outputs[outputs.length - 1] ?? '';
    expect(last).toContain('Harbor View Lisbon for Ana Lima');
    expect(outputs.some((o) => o.includes('Ana Lima') && o !== last)).toBe(true);
    expect(outputs.filter((o) => o.includes('Whose name should I put on the booking?'))).toHaveLength(1);
    expect(lastRequest()).toMatchObject({ format, index: 13, problems: [] });
  });
});

describe('Fara, unchanged', () => {
  it("answers a Fara request with Fara's <tool_call> text, byte for byte as before", async () => {
    for (const family of ['fara-1.5', 'fara-7b'] as const) {
      const space = faraSpace(family);
      const system = buildSystemPrompt({ family: space, screen: { width: 1288, height: 812 } });
      const chat = new Chat(system);
      const m = await chat.call();
      expect(m.content).toBe(
        'Open the form.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 500]}}\n</tool_call>',
      );
      expect(lastRequest()).toMatchObject({ format: 'fara', index: 0 });
      expect(lastRequest()?.turn).toBeUndefined();
      const native = new Chat(system, [space.toolSchemaFor({ width: 1288, height: 812 }) as ChatCompletionTool]);
      expect((await native.call()).content).toBe(m.content);
      expect(lastRequest()).toMatchObject({ format: 'fara' });
    }
  });
});

describe('detection', () => {
  const user = { role: 'user', content: [{ type: 'image_url', image_url: { url: SHOT } }] };
  const table: Array<[string, ChatRequest, string]> = [
    ['no system prompt', { messages: [user] }, 'fara'],
    ['a UI-TARS system prompt', { messages: [{ role: 'system', content: UI_TARS_PROMPT }, user] }, 'ui-tars-1.5'],
    [
      'Qwen-Agent enum, 999x999',
      { messages: [{ role: 'system', content: qwenPrompt(qwenFunction(QWEN3_ACTIONS, '999x999')) }, user] },
      'qwen3-vl',
    ],
    [
      'Qwen-Agent enum, pixels',
      { messages: [{ role: 'system', content: qwenPrompt(qwenFunction(QWEN3_ACTIONS, '1288x812')) }, user] },
      'qwen2.5-vl',
    ],
    [
      'no sentence, Qwen3 additions',
      {
        messages: [user],
        tools: [
          {
            type: 'function',
            function: { name: 'computer_use', parameters: { properties: { action: { enum: QWEN3_ACTIONS } } } },
          },
        ],
      },
      'qwen3-vl',
    ],
    [
      'no sentence, Qwen2.5 enum',
      {
        messages: [user],
        tools: [
          {
            type: 'function',
            function: { name: 'computer_use', parameters: { properties: { action: { enum: QWEN25_ACTIONS } } } },
          },
        ],
      },
      'qwen2.5-vl',
    ],
    [
      'a computer_use with a Fara action',
      {
        messages: [
          { role: 'system', content: qwenPrompt(qwenFunction([...QWEN25_ACTIONS, 'visit_url'], '999x999')) },
          user,
        ],
      },
      'fara',
    ],
  ];
  it.each(table)('%s', (_name, request, format) => {
    expect(detectChatFormat(request).format).toBe(format);
  });
});
