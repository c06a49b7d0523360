// Specification of the qwen-vl family (src/families/qwen-vl/): the generation and grid an endpoint's settings pick,
// the request (our system prompt with the generation's `computer_use` function, the chat with the newest
// screenshots), and the reading of an output, as `<tool_call>` text or native tool calls, into our actions in the
// 'norm1000' space: every Qwen action of both generations, both Qwen3-VL grids, the ends, a question to the person,
// and the malformed outputs fed back.
import { describe, expect, it } from 'vitest';

import { QWEN_VL_FAMILY, qwenFeedback } from '../../src/families/qwen-vl/family';
import { pythonJson } from '../../src/families/qwen-vl/prompt';
import { generationForModel, generationOf, gridOf } from '../../src/families/qwen-vl/settings';
import { familyOf } from '../../src/families/registry';
import type { EndpointPromptSettings, ReadInput } from '../../src/families/family';
import type { HistoryEntry } from '../../src/model/context';
import { ModelOutputError } from '../../src/model/errors';
import type { ModelOutput, ParsedOutput } from '../../src/model/parse';
import { EndpointSchema } from '../../src/runtime/config-models';

const family = QWEN_VL_FAMILY;
/** The 1440x900 viewport's screenshot after smart_resize with factor 28. */
const SCREEN = { width: 1428, height: 896 };
const QWEN25: EndpointPromptSettings = { tool: '2.5' };
const QWEN3: EndpointPromptSettings = { tool: '3' };
const QWEN3_1000: EndpointPromptSettings = { tool: '3', grid: 1000 };

const loadImage = (ref: string) => Promise.resolve(`data:image/png;base64,${ref}`);
const NO_SETTINGS = { identity: undefined, imagesKept: undefined, tokenBudget: undefined };

async function requestFor(endpoint: EndpointPromptSettings | undefined, history: HistoryEntry[] = [task()]) {
  return family.request({ history, loadImage, screen: SCREEN, endpoint, ...NO_SETTINGS });
}

async function systemPromptFor(endpoint: EndpointPromptSettings | undefined): Promise<string> {
  const first = (await requestFor(endpoint)).messages[0];
  return first?.role === 'system' && typeof first.content === 'string' ? first.content : '';
}

interface Shown {
  name: string;
  description: string;
  parameters: {
    properties: { action: { enum: string[] }; text: { description: string } };
    required: string[];
  };
}

/** The function shown in the system prompt's `<tools>` block, parsed. */
function shownFunction(prompt: string): Shown {
  const json = /<tools>\n(.*)\n<\/tools>/.exec(prompt)?.[1] ?? '';
  return (JSON.parse(json) as { function: Shown }).function;
}

const task = (): HistoryEntry => ({ kind: 'task', text: 'Book a room in Lisbon.', screenshot: 's1' });
const seen = (ref: string): HistoryEntry => ({ kind: 'observation', screenshot: ref, url: 'https://x.test/' });
const said = (text: string): HistoryEntry => ({ kind: 'assistant', text });

const call = (args: Record<string, unknown>, before = 'I will act.') =>
  `${before}\n<tool_call>\n${JSON.stringify({ name: 'computer_use', arguments: args })}\n</tool_call>`;

function readWith(endpoint: EndpointPromptSettings | undefined, output: string | ModelOutput): ParsedOutput {
  const generation = generationOf(endpoint);
  const allowed =
    generation === '2.5'
      ? ['key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'double_click', 'scroll'].concat([
          'wait',
          'ask_user_question',
          'terminate',
        ])
      : family.allowedActions;
  const input: ReadInput = { screen: SCREEN, allowed, terminateOnParseError: false, endpoint };
  return family.read(typeof output === 'string' ? { text: output } : output, input);
}

function readError(endpoint: EndpointPromptSettings | undefined, output: string | ModelOutput): ModelOutputError {
  try {
    readWith(endpoint, output);
  } catch (err) {
    if (err instanceof ModelOutputError) return err;
    throw err;
  }
  throw new Error('the output was read');
}

describe('qwen-vl: the generation and the grid', () => {
  it.each([
    ['Qwen/Qwen2.5-VL-7B-Instruct', '2.5'],
    ['qwen2.5-vl-72b-instruct', '2.5'],
    ['Qwen/Qwen3-VL-8B-Instruct', '3'],
    ['qwen3-vl-235b-a22b', '3'],
    ['my-finetune', '3'],
  ])('model %s is generation %s', (model, generation) => {
    expect(generationForModel(model)).toBe(generation);
    expect(generationOf({ model })).toBe(generation);
  });

  it("takes the endpoint's tool over the model name, and 3 with neither; the grid is 999 unless set", () => {
    expect(generationOf({ tool: '3', model: 'Qwen/Qwen2.5-VL-7B-Instruct' })).toBe('3');
    expect(generationOf(undefined)).toBe('3');
    expect(gridOf(undefined)).toBe(999);
    expect(gridOf({ grid: 1000 })).toBe(1000);
  });

  it('is registered, and its settings are checked in the worker config (models.<name>.tool, .grid)', () => {
    expect(familyOf('qwen-vl')).toBe(family);
    const base = { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-VL-8B-Instruct' };
    expect(EndpointSchema.safeParse({ ...base, family: 'qwen-vl', tool: '2.5' }).success).toBe(true);
    expect(EndpointSchema.safeParse({ ...base, family: 'qwen-vl', tool: '3', grid: 1000 }).success).toBe(true);
    const tool = EndpointSchema.safeParse({ ...base, family: 'qwen-vl', tool: '4' });
    expect(tool.error?.issues[0]?.message).toBe('is 4; family qwen-vl speaks 2.5, 3');
    const other = EndpointSchema.safeParse({ ...base, family: 'gemini-computer', grid: 1000 });
    expect(other.error?.issues[0]?.message).toMatch(/^is for a family with relative coordinates .*gemini-computer/);
    expect(EndpointSchema.safeParse({ ...base, grid: 999 }).success).toBe(false);
    expect(EndpointSchema.safeParse({ ...base, family: 'qwen-vl', grid: 500 }).success).toBe(false);
  });
});

describe('qwen-vl: the request', () => {
  it('shows Qwen2.5-VL the computer_use function with its actions and the resized screenshot size', async () => {
    const prompt = await systemPromptFor(QWEN25);
    const fn = shownFunction(prompt);
    expect(fn.name).toBe('computer_use');
    expect(fn.description).toContain("The screen's resolution is 1428x896.");
    expect(fn.parameters.properties.action.enum).toEqual(
      ['key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'double_click', 'scroll'].concat([
        'wait',
        'terminate',
      ]),
    );
    expect(fn.parameters.required).toEqual(['action']);
    expect(prompt).toContain('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>');
    expect((await requestFor(QWEN25)).allowed).not.toContain('hscroll');
  });

  it.each([
    [QWEN3, '999x999'],
    [QWEN3_1000, '1000x1000'],
    [undefined, '999x999'],
  ])('shows Qwen3-VL its grid (%o: %s) and its wider set, without middle_click', async (endpoint, size) => {
    const fn = shownFunction(await systemPromptFor(endpoint));
    expect(fn.description).toContain(`The screen's resolution is ${size}.`);
    expect(fn.parameters.properties.action.enum).toEqual(expect.arrayContaining(['triple_click', 'hscroll', 'answer']));
    expect(fn.parameters.properties.action.enum).not.toContain('middle_click');
    expect(fn.parameters.properties.text.description).toBe('Required only by `action=type` and `action=answer`.');
  });

  it("picks the generation from the model's name when the endpoint names no tool", async () => {
    const fn = shownFunction(await systemPromptFor({ model: 'Qwen/Qwen2.5-VL-72B-Instruct' }));
    expect(fn.description).toContain('1428x896');
  });

  it('writes the tools as json.dumps does', () => {
    expect(pythonJson({ a: [1, 'é'], b: { c: null } })).toBe('{"a": [1, "\\u00e9"], "b": {"c": null}}');
  });

  it('sends the task, the recorded outputs and the newest three steps with their screenshots, with no native tools', async () => {
    const history = [task(), said(call({ action: 'wait', time: 1 })), seen('s2'), said('x'), seen('s3')].concat([
      said('y'),
      seen('s4'),
      said('z'),
      seen('s5'),
    ]);
    const request = await requestFor({ ...QWEN3, stepPrompt: 'Next.' }, history);
    expect(request.tools).toBeUndefined();
    expect(request.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    const images = request.messages.flatMap((m) =>
      Array.isArray(m.content) ? m.content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : [])) : [],
    );
    expect(images).toEqual(['s3', 's4', 's5'].map((r) => `data:image/png;base64,${r}`));
    expect(request.messages[2]).toEqual({ role: 'assistant', content: call({ action: 'wait', time: 1 }) });
    expect(JSON.stringify(request.messages.at(-1))).toContain('Next.');
  });
});

describe('qwen-vl: reading an output', () => {
  it('reads Qwen2.5-VL pixels of the resized screenshot as thousandths', () => {
    const parsed = readWith(QWEN25, call({ action: 'left_click', coordinate: [714, 224] }, 'The search box.'));
    expect(parsed.action).toEqual({ action: 'left_click', thoughts: 'The search box.', coordinate: [500, 250] });
    expect(parsed.thoughts).toBe('The search box.');
    expect(parsed.notes?.source).toBe('tool_call_tag');
  });

  it.each([
    [QWEN3, [999, 499.5], [1000, 500]],
    [QWEN3, [0, 333], [0, 333.3]],
    [QWEN3_1000, [500, 250], [500, 250]],
    [QWEN3_1000, [1000, 1000], [1000, 1000]],
  ])('reads a Qwen3-VL point on the grid (%o) %o as %o', (endpoint, point, ours) => {
    expect(readWith(endpoint, call({ action: 'left_click', coordinate: point })).action).toMatchObject({
      coordinate: ours,
    });
  });

  it('reads native tool calls (vLLM with a tool parser) and records them as <tool_call> blocks', () => {
    const output: ModelOutput = {
      text: 'Clicking.',
      toolCalls: [{ name: 'computer_use', arguments: '{"action": "double_click", "coordinate": [100, 200]}' }],
    };
    const parsed = readWith(QWEN3_1000, output);
    expect(parsed.action).toEqual({ action: 'double_click', thoughts: 'Clicking.', coordinate: [100, 200] });
    expect(parsed.notes?.source).toBe('native_tool_call');
    expect(family.outputText?.(output)).toBe(
      'Clicking.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "double_click", "coordinate": [100, 200]}}\n</tool_call>',
    );
  });

  it.each<[string, EndpointPromptSettings, Record<string, unknown>, Record<string, unknown>]>([
    ['key', QWEN3, { action: 'key', keys: ['ctrl', 'a'] }, { action: 'key', keys: ['ctrl', 'a'] }],
    ['type', QWEN25, { action: 'type', text: 'Lisbon' }, { action: 'type', text: 'Lisbon' }],
    ['mouse_move', QWEN25, { action: 'mouse_move', coordinate: [0, 896] }, { coordinate: [0, 1000] }],
    ['left_click_drag', QWEN3_1000, { action: 'left_click_drag', coordinate: [10, 20] }, { coordinate: [10, 20] }],
    ['right_click', QWEN3_1000, { action: 'right_click', coordinate: [10, 20] }, { action: 'right_click' }],
    ['triple_click', QWEN3_1000, { action: 'triple_click', coordinate: [10, 20] }, { action: 'triple_click' }],
    ['scroll (2.5: screenshot pixels)', QWEN25, { action: 'scroll', pixels: -448 }, { action: 'scroll', pixels: -500 }],
    ['scroll (3: grid units)', QWEN3_1000, { action: 'scroll', pixels: 300 }, { action: 'scroll', pixels: 300 }],
    ['hscroll', QWEN3, { action: 'hscroll', pixels: -999 }, { action: 'hscroll', pixels: -1000 }],
    ['wait', QWEN3, { action: 'wait', time: 2 }, { action: 'wait', time: 2 }],
    ['terminate', QWEN25, { action: 'terminate', status: 'failure' }, { action: 'terminate', status: 'failure' }],
    ['answer', QWEN3, { action: 'answer', text: '42 rooms' }, { action: 'terminate', answer: '42 rooms' }],
  ])('reads %s', (_name, endpoint, args, ours) => {
    const { action } = readWith(endpoint, call(args));
    expect(action).toMatchObject(ours);
    expect(family.actionSchema.safeParse(action).success).toBe(true);
  });

  it('reads a small scroll amount as wheel notches, and says so', () => {
    const parsed = readWith(QWEN3_1000, call({ action: 'scroll', pixels: -5 }));
    expect(parsed.action).toMatchObject({ action: 'scroll', pixels: -500 });
    expect(parsed.notes?.coerced).toEqual(['pixels: -5 notches → -500']);
    expect(readWith(QWEN25, call({ action: 'scroll', pixels: 3 })).action).toMatchObject({ pixels: 335 });
  });

  it('ends the task with an answer, or with its status, and a terminate without status succeeds', () => {
    expect(family.outcome(readWith(QWEN3, call({ action: 'answer', text: 'Done: 3 rooms' })).action)).toEqual({
      kind: 'terminate',
      text: 'Done: 3 rooms',
    });
    const ended = readWith(QWEN3, call({ action: 'terminate' }));
    expect(ended.action).toMatchObject({ action: 'terminate', status: 'success' });
    expect(family.outcome(ended.action)).toEqual({ kind: 'terminate', text: 'Task ended: success' });
  });

  it('asks the person when the text has no call and ends with a question', () => {
    const parsed = readWith(QWEN3, 'Which dates should I book?');
    expect(parsed.action).toEqual({
      action: 'ask_user_question',
      thoughts: '',
      question: 'Which dates should I book?',
    });
    expect(family.outcome(parsed.action)).toEqual({ kind: 'ask', text: 'Which dates should I book?' });
    const reasoned = readWith(QWEN3, '<think>The dates are missing.</think>\nWhich dates should I book?');
    expect(reasoned.action).toMatchObject({ question: 'Which dates should I book?' });
  });

  it('reads the call after a reasoning block, and a bare call with no tags', () => {
    const thought = '<think>maybe <tool_call>{"name": "computer_use"}</tool_call></think>\n';
    expect(readWith(QWEN3_1000, thought + call({ action: 'wait', time: 1 }, '')).action).toMatchObject({ time: 1 });
    const bare = readWith(QWEN3_1000, '{"name": "computer_use", "arguments": {"action": "wait", "time": 3}}');
    expect(bare.action).toMatchObject({ action: 'wait', time: 3 });
    expect(bare.notes?.source).toBe('bare_json');
  });

  it('reads the generation from the offered actions when the read is not given the endpoint', () => {
    const input: ReadInput = { screen: SCREEN, allowed: ['left_click', 'terminate'], terminateOnParseError: false };
    const parsed = family.read({ text: call({ action: 'left_click', coordinate: [714, 448] }) }, input);
    expect(parsed.action).toMatchObject({ coordinate: [500, 500] });
  });
});

describe('qwen-vl: malformed outputs are fed back', () => {
  it.each<[string, EndpointPromptSettings, string | ModelOutput, string, RegExp]>([
    [
      'a <tool_call> with broken JSON',
      QWEN3,
      'Click.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click" "coordinate": [1, 2]}}\n</tool_call>',
      'ToolCallJsonError',
      /not valid JSON/,
    ],
    [
      'native tool call arguments with broken JSON',
      QWEN3,
      { text: '', toolCalls: [{ name: 'computer_use', arguments: '{"action": "left_click" "coordinate": [1, 2]}' }] },
      'ToolCallJsonError',
      /arguments string of the "computer_use" call is not valid JSON/,
    ],
    ['middle_click', QWEN3, call({ action: 'middle_click', coordinate: [1, 2] }), 'UnknownActionError', /middle_click/],
    ['a Qwen3 action asked of 2.5', QWEN25, call({ action: 'answer', text: 'x' }), 'UnknownActionError', /answer/],
    [
      'a point off the screenshot',
      QWEN25,
      call({ action: 'left_click', coordinate: [1500, 10] }),
      'Invalid',
      /outside/,
    ],
    ['a point off the grid', QWEN3, call({ action: 'left_click', coordinate: [1000, 10] }), 'Invalid', /0-999/],
    ['a type with no text', QWEN3, call({ action: 'type' }), 'Invalid', /"text": missing/],
    ['a text with no call', QWEN3, 'I have clicked the button.', 'MissingToolCallError', /no <tool_call>/],
    ['an empty output', QWEN3, '  ', 'EmptyOutputError', /empty/],
  ])('%s', (_name, endpoint, output, type, message) => {
    const error = readError(endpoint, output);
    expect(error.name.startsWith(type)).toBe(true);
    expect(error.message).toMatch(message);
    const feedback = qwenFeedback(error);
    expect(feedback).toContain('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click"');
    expect(feedback).not.toContain('\n\n');
  });

  it('keeps the thoughts and what the model wrote on the error', () => {
    const error = readError(QWEN3, call({ action: 'left_click', coordinate: [5000, 1] }, 'Aiming.'));
    expect(error.thoughts).toBe('Aiming.');
    expect(error.written).toEqual({ action: 'left_click', coordinate: [5000, 1] });
  });

  it('refuses identities and prompt files in one line', async () => {
    expect(family.identityIssue('fara_qwen35', false)).toMatch(/qwen-vl has its own system prompt/);
    await expect(family.promptFileActions('/tmp/p.md')).rejects.toMatchObject({ name: 'PromptFileError' });
  });
});

describe('a text with no call', () => {
  it("is Qwen2.5-VL's answer (it has no answer action), and a missed call for Qwen3-VL", () => {
    const text = 'Booked a Standard double at Harbor View Lisbon.';
    expect(readWith({ tool: '2.5' }, text).action).toMatchObject({ action: 'terminate', answer: text });
    expect(readError({ tool: '3' }, text).name).toBe('MissingToolCallError');
    expect(readWith({ tool: '3' }, 'Whose name should I book under?').action).toMatchObject({
      action: 'ask_user_question',
    });
  });
});
