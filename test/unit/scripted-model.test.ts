// Specification of the scripted model server (the test double for a real model), driven through the real
// `openai` client against the real HTTP server on a free port, with scripts in a temporary folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { faraSpace } from '../../src/families/fara-common/spaces';
import { openAiTools } from '../../src/desktop/agent';
import { ModelClient } from '../../src/model/client';
import { parseModelOutput } from '../../src/model/parse';
import type { ScriptedModelServer } from '../../src/scripted/server';
import {
  CALL_KIND_HEADER,
  DEFAULT_DESCRIBE_OUTPUT,
  ENTRY_INDEX_HEADER,
  NO_GROUND_OUTPUT,
  latestMemoryReply,
  latestReply,
  startScriptedModelServer,
  SUBCALL_INDEX_HEADER,
} from '../../src/scripted/server';

const RAW =
  'Verbatim reply.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "history_back"}}\n</tool_call>';

const SCRIPTS: Record<string, string> = {
  'three-steps': JSON.stringify([
    {
      thoughts: 'I will open the hours page.',
      action: { action: 'left_click', coordinate: [500, 340] },
      page_answer: 'Open 9am to 5pm.',
    },
    { raw: RAW, page_answer: 'Closed on Sundays.' },
    { action: { action: 'terminate', answer: 'Open 9 to 5.' } },
  ]),
  faulty: JSON.stringify({
    description: 'faults before the entry',
    entries: [
      {
        raw: 'first',
        faults: [{ status: 500, message: 'scripted outage' }, { empty: true }, { status: 400 }],
      },
      { raw: 'second' },
    ],
  }),
  'faulty-later': JSON.stringify([{ raw: 'zero' }, { raw: 'one', faults: [{ status: 503 }] }]),
  slow: JSON.stringify([{ raw: 'slow reply', delay_ms: 300 }]),
  'not-json': '[{"raw": "x"',
  'bad-entry': JSON.stringify([{ raw: 'ok' }, { thoughts: 'no action here' }]),
  desktop: JSON.stringify([
    {
      describe: '1. Objective: save.\n2. Screen: an editor.\n3. Status: NOT DONE\n4. Next: click Save.',
      ground: ['(10, 20)', '(30, 40)'],
      content: 'I click Save twice.',
      tool_calls: [
        { name: 'click', arguments: { query: 'Save' } },
        { name: 'click', arguments: '{"query": "Save again"}' },
      ],
      faults: [{ status: 503 }],
    },
    { ground: 'x=5 y=6', tool_calls: [{ name: 'ask_user', arguments: { question: 'Which folder?' } }] },
    { tool_calls: [{ name: 'type_text', arguments: { text: '{{reply}}' } }] },
    { raw: 'No tool this time.' },
  ]),
};

let dir: string;
let server: ScriptedModelServer;
let client: OpenAI;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-scripted-'));
  for (const [name, text] of Object.entries(SCRIPTS)) fs.writeFileSync(path.join(dir, `${name}.json`), text);
  server = await startScriptedModelServer({ scriptsDir: dir, port: 0 });
  client = new OpenAI({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
});

afterAll(async () => {
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A request as the agent sends it after `steps` decided steps: task, then (assistant, observation) pairs. */
function conversation(steps: number): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a browser agent.' },
    { role: 'user', content: [{ type: 'text', text: 'Find the opening hours' }] },
  ];
  for (let i = 1; i <= steps; i++) {
    messages.push({ role: 'assistant', content: `answer ${i}` });
    messages.push({ role: 'user', content: [{ type: 'text', text: `observation ${i}` }] });
  }
  return messages;
}

async function reply(script: string, steps = 0, headers?: Record<string, string>): Promise<string | null | undefined> {
  const res = await client.chat.completions.create({ model: script, messages: conversation(steps) }, { headers });
  return res.choices[0]?.message.content;
}

describe('scripted model: entries', () => {
  it('renders a {thoughts, action} entry as Fara text that parses back to the action', async () => {
    const text = await reply('three-steps', 0);
    expect(text).toContain('<tool_call>');
    expect(text?.startsWith('I will open the hours page.\n<tool_call>')).toBe(true);
    const parsed = parseModelOutput(text ?? '', faraSpace('fara-1.5'));
    expect(parsed.thoughts).toBe('I will open the hours page.');
    expect(parsed.action).toMatchObject({ action: 'left_click', coordinate: [500, 340] });
  });

  it.each<[number, string]>([
    [1, RAW],
    [
      2,
      '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "answer": "Open 9 to 5."}}\n</tool_call>',
    ],
  ])('after %i assistant messages the request gets the entry at that index', async (steps, expected) => {
    expect(await reply('three-steps', steps)).toBe(expected);
    expect(server.requests.at(-1)).toMatchObject({ script: 'three-steps', index: steps, subcall: false });
  });

  it('an entry with empty thoughts parses to a terminate with the answer', async () => {
    const parsed = parseModelOutput((await reply('three-steps', 2)) ?? '', faraSpace('fara-1.5'));
    expect(parsed.action).toMatchObject({ action: 'terminate', answer: 'Open 9 to 5.' });
  });

  it.each<[string, number, string]>([
    ['entry 0', 0, 'Open 9am to 5pm.'],
    ['entry 1', 1, 'Closed on Sundays.'],
    ['an entry without page_answer', 2, 'The page does not say.'],
  ])('a sub-call with the index header gets the page answer of %s', async (_name, index, expected) => {
    // The header wins over the number of assistant messages (here none).
    expect(await reply('three-steps', 0, { [SUBCALL_INDEX_HEADER]: String(index) })).toBe(expected);
    expect(server.requests.at(-1)).toMatchObject({ index, subcall: true });
  });

  it('delays a reply by delay_ms', async () => {
    const started = performance.now();
    expect(await reply('slow')).toBe('slow reply');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(30_000);
  });
});

describe('scripted model: faults', () => {
  it('serves the faults in order to the first requests at an index, then the entry', async () => {
    await expect(reply('faulty')).rejects.toSatisfy(
      (e) => e instanceof APIError && e.status === 500 && e.message.includes('scripted outage'),
    );
    const empty = await client.chat.completions.create({ model: 'faulty', messages: conversation(0) });
    expect(empty.choices).toEqual([]);
    await expect(reply('faulty')).rejects.toSatisfy((e) => e instanceof APIError && e.status === 400);
    expect(await reply('faulty')).toBe('first');
    expect(await reply('faulty')).toBe('first');
  });

  it('faults belong to their own index only', async () => {
    expect(await reply('faulty-later', 0)).toBe('zero');
    await expect(reply('faulty-later', 1)).rejects.toSatisfy((e) => e instanceof APIError && e.status === 503);
    expect(await reply('faulty-later', 1)).toBe('one');
  });
});

describe('scripted model: errors', () => {
  it.each<[string, number, string, number, string[]]>([
    ['unknown script', 404, 'no-such-script', 0, ["no script named 'no-such-script'"]],
    ['invalid script name', 404, '..', 0, ["invalid script name '..'"]],
    ['index past the end', 400, 'three-steps', 3, ["script 'three-steps' has 3 entries", 'entry 4']],
    ['script file not JSON', 404, 'not-json', 0, ['not-json.json', 'not valid JSON']],
    ['script entry of the wrong shape', 404, 'bad-entry', 0, ['bad-entry.json', 'is invalid']],
  ])('%s → %i', async (_name, status, script, steps, fragments) => {
    const error: unknown = await reply(script, steps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(status);
    for (const fragment of fragments) expect((error as APIError).message).toContain(fragment);
  });
});

describe('scripted model: recorded requests', () => {
  it('records the image count, the last user text and the message count', async () => {
    const image = (n: number) => ({ type: 'image_url' as const, image_url: { url: `data:image/png;base64,AAA${n}` } });
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'the task' }, image(1)] },
      { role: 'assistant', content: 'answer 1' },
      { role: 'user', content: [image(2), { type: 'text', text: 'Current URL: https://a.test/' }, image(3)] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'line one' },
          { type: 'text', text: 'line two' },
        ],
      },
    ];
    await client.chat.completions.create({ model: 'three-steps', messages });
    expect(server.requests.at(-1)).toMatchObject({
      script: 'three-steps',
      index: 1,
      subcall: false,
      imageCount: 3,
      messageCount: 5,
      lastUserText: 'line one\nline two',
    });
    expect(server.requests.at(-1)?.allText).toContain('Current URL: https://a.test/');
  });

  it('records every request, failed ones included, in order', async () => {
    const before = server.requests.length;
    await reply('three-steps', 0);
    await reply('no-such-script').catch(() => undefined);
    expect(server.requests.slice(before).map((r) => r.script)).toEqual(['three-steps', 'no-such-script']);
  });
});

describe('scripted model: {{reply}} in a script', () => {
  const asked = {
    role: 'assistant',
    content:
      'I need a name.\n<tool_call>{"name":"computer_use","arguments":{"action":"ask_user_question"}}</tool_call>',
  };
  it.each([
    ['no question asked yet', [{ role: 'user', content: 'task' }], undefined],
    [
      'the reply after the URL line',
      [asked, { role: 'user', content: [{ type: 'text', text: 'Current URL: http://x/book\nAda "the" Lovelace' }] }],
      'Ada "the" Lovelace',
    ],
    ['a reply without a URL line', [asked, { role: 'user', content: 'Grace Hopper' }], 'Grace Hopper'],
    [
      'the latest of two replies',
      [asked, { role: 'user', content: 'first' }, asked, { role: 'user', content: 'second' }],
      'second',
    ],
    [
      'a user message after another action is not a reply',
      [
        { role: 'assistant', content: 'click' },
        { role: 'user', content: 'Current URL: http://x\nnudge' },
      ],
      undefined,
    ],
  ])('%s', (_name, messages, expected) => {
    expect(latestReply(messages)).toBe(expected);
  });
});

describe('scripted model: desktop calls (x-cua-entry, x-cua-call)', () => {
  const model = () => new ModelClient({ baseUrl: server.url, model: 'desktop' });
  const ask = (entry: number, call: string, messages: ChatCompletionMessageParam[] = conversation(0)) =>
    model().complete(messages, { headers: { [ENTRY_INDEX_HEADER]: String(entry), [CALL_KIND_HEADER]: call } });

  it("describe: the entry's describe text, or a neutral scripted sentence; faults are not served to it", async () => {
    expect((await ask(0, 'describe')).text).toContain('3. Status: NOT DONE');
    expect(server.requests.at(-1)).toMatchObject({ script: 'desktop', index: 0, call: 'describe', subcall: false });
    const neutral = await ask(1, 'describe');
    expect(neutral.text).toBe(DEFAULT_DESCRIBE_OUTPUT);
    expect(neutral.toolCalls).toBeUndefined();
  });

  it("ground: the entry's outputs in order, the last repeating, counted per entry", async () => {
    const replies: string[] = [];
    for (const entry of [0, 0, 1, 0, 1]) replies.push((await ask(entry, 'ground')).text);
    expect(replies).toEqual(['(10, 20)', '(30, 40)', 'x=5 y=6', '(30, 40)', 'x=5 y=6']);
    expect(server.requests.at(-1)).toMatchObject({ index: 1, call: 'ground' });
    expect((await ask(2, 'ground')).text).toBe(NO_GROUND_OUTPUT);
  });

  it("action: the entry's content and native tool calls, after its faults", async () => {
    await expect(ask(0, 'action')).rejects.toThrow(/503/);
    const completion = await ask(0, 'action');
    expect(completion.text).toBe('I click Save twice.');
    expect(completion.toolCalls).toEqual([
      { name: 'click', arguments: '{"query":"Save"}' },
      { name: 'click', arguments: '{"query": "Save again"}' },
    ]);
    expect(server.requests.at(-1)).toMatchObject({ index: 0, call: 'action' });
    expect((await ask(3, 'action')).text).toBe('No tool this time.');
  });

  it('action: {{reply}} is the last USER line of the memory', async () => {
    const memory: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'OBJECTIVE: save\nUSER: Documents\nTHOUGHT: x\nUSER: My "Notes" folder' },
      { role: 'user', content: 'CURRENT SCREEN:\nan editor\n\nWhat next?' },
    ];
    const completion = await ask(2, 'action', memory);
    expect(completion.toolCalls).toEqual([{ name: 'type_text', arguments: '{"text":"My \\"Notes\\" folder"}' }]);
  });

  it('the entry header overrides the count of assistant messages', async () => {
    await model().complete(conversation(2), { headers: { [ENTRY_INDEX_HEADER]: '1', [CALL_KIND_HEADER]: 'action' } });
    expect(server.requests.at(-1)).toMatchObject({ index: 1 });
  });

  it.each([
    ['an unknown call kind', { [CALL_KIND_HEADER]: 'guess' }, 'x-cua-call must be one of describe, action, ground'],
    ['an entry that is no index', { [ENTRY_INDEX_HEADER]: 'first' }, 'x-cua-entry must be an entry index'],
  ])('%s is refused (400)', async (_case, headers, fragment) => {
    const error: unknown = await model()
      .complete(conversation(0), { headers })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as Error).name).toBe('ModelRequestError');
    expect((error as Error).message).toContain(fragment);
  });

  it('records the tools and tool_choice the client sends, and none when not given', async () => {
    await model().complete(conversation(0), {
      headers: { [ENTRY_INDEX_HEADER]: '3', [CALL_KIND_HEADER]: 'action' },
      tools: openAiTools(),
      toolChoice: 'required',
    });
    expect(server.requests.at(-1)?.toolNames).toContain('run_command');
    expect(server.requests.at(-1)?.toolChoice).toBe('required');
    await reply('three-steps', 0);
    expect(server.requests.at(-1)).toMatchObject({ toolNames: [] });
    expect(server.requests.at(-1)?.toolChoice).toBeUndefined();
    expect(server.requests.at(-1)?.call).toBeUndefined();
  });

  it.each([
    ['no USER line', [{ role: 'user', content: 'OBJECTIVE: x' }], undefined],
    [
      'the last of several',
      [
        { role: 'user', content: 'USER: a' },
        { role: 'user', content: 'USER: b\nNOTE: c' },
      ],
      'b',
    ],
    ['not in assistant messages', [{ role: 'assistant', content: 'USER: fake' }], undefined],
  ])('latestMemoryReply: %s', (_case, messages, expected) => {
    expect(latestMemoryReply(messages)).toBe(expected);
  });
});
