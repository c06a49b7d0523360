// Specification of what the agent accepts from a real model: outputs shaped the way Fara, Qwen and OpenAI-compatible
// servers really write them, and the action each becomes, or the error observation the model is shown instead.
// Accepted outputs must be exactly one action; refused ones must name the problem in one line the model can act on.
import { describe, expect, it } from 'vitest';
import { faraSpace } from '../../src/families/fara-common/spaces';
import type { FaraSpace } from '../../src/actions/fara';
import type { ModelOutputError } from '../../src/model/errors';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  MissingToolCallError,
  ToolCallJsonError,
  UnknownActionError,
} from '../../src/model/errors';
import { invalidOutputFeedback } from '../../src/model/feedback';
import { parseModelOutput } from '../../src/model/parse';
import type { ModelOutput } from '../../src/model/parse';

const FARA15 = faraSpace('fara-1.5');
const FARA7B = faraSpace('fara-7b');
/** The screenshot sizes the runtime computes for a 1440×900 viewport (smart_resize with factor 32 / 28). */
const SCREEN: Record<string, { width: number; height: number }> = {
  'fara-1.5': { width: 1440, height: 896 },
  'fara-7b': { width: 1428, height: 896 },
};

const call = (args: string) => `<tool_call>\n{"name": "computer_use", "arguments": ${args}}\n</tool_call>`;
const native = (text: string, ...calls: [string, string][]): ModelOutput => ({
  text,
  toolCalls: calls.map(([name, args]) => ({ name, arguments: args })),
});

interface Accepted {
  name: string;
  output: string | ModelOutput;
  profile?: FaraSpace;
  action: Record<string, unknown>;
  thoughts?: string;
  /** Arguments that must be reported as ignored. */
  ignored?: string[];
  extraCalls?: number;
}

const accepted: Accepted[] = [
  {
    name: 'canonical Fara-1.5 output',
    output: `The search box is at the top. I'll click it.\n${call('{"action": "left_click", "coordinate": [500, 120]}')}`,
    action: { action: 'left_click', coordinate: [500, 120] },
    thoughts: "The search box is at the top. I'll click it.",
  },
  {
    name: 'a code fence inside the tags',
    output:
      'Click.\n<tool_call>\n```json\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [10, 20]}}\n```\n</tool_call>',
    action: { action: 'left_click', coordinate: [10, 20] },
  },
  {
    name: 'a fenced call with no tags at all',
    output: 'I will go back.\n```json\n{"name": "computer_use", "arguments": {"action": "history_back"}}\n```',
    action: { action: 'history_back' },
    thoughts: 'I will go back.',
  },
  {
    name: 'a bare call object with no tags',
    output: 'Scrolling down to see more.\n{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -500}}',
    action: { action: 'scroll', pixels: -500 },
  },
  {
    name: 'two tool calls (the first is the action)',
    output: `Type and search.\n${call('{"action": "type", "text": "Lisbon"}')}\n${call('{"action": "key", "keys": ["Enter"]}')}`,
    action: { action: 'type', text: 'Lisbon' },
    extraCalls: 1,
  },
  {
    name: 'text after the closing tag',
    output: `Back.\n${call('{"action": "history_back"}')}\nI hope this works!`,
    action: { action: 'history_back' },
  },
  {
    name: 'the closing tag missing',
    output: 'Wait for the page.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "wait", "time": 2}}',
    action: { action: 'wait', time: 2 },
  },
  {
    name: 'the closing braces missing at the end of the output',
    output: 'Click.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [3, 4]',
    action: { action: 'left_click', coordinate: [3, 4] },
  },
  {
    name: 'single quotes (a Python dict)',
    output:
      "Search.\n<tool_call>\n{'name': 'computer_use', 'arguments': {'action': 'web_search', 'query': 'hotels in Lisbon'}}\n</tool_call>",
    action: { action: 'web_search', query: 'hotels in Lisbon' },
  },
  {
    name: 'True and None (Python words)',
    output:
      "Type.\n<tool_call>\n{'name': 'computer_use', 'arguments': {'action': 'type', 'text': 'Ada', 'press_enter': True, 'delete_existing_text': None}}\n</tool_call>",
    action: { action: 'type', text: 'Ada', press_enter: true },
  },
  {
    name: 'trailing commas',
    output: call('{"action": "left_click", "coordinate": [1, 2,],}'),
    action: { action: 'left_click', coordinate: [1, 2] },
  },
  {
    name: 'comments in the JSON',
    output: call('{\n  "action": "left_click", // the search box\n  "coordinate": [5, 6] /* centre */\n}'),
    action: { action: 'left_click', coordinate: [5, 6] },
  },
  {
    name: 'unquoted keys',
    output: '<tool_call>\n{name: "computer_use", arguments: {action: "history_back"}}\n</tool_call>',
    action: { action: 'history_back' },
  },
  {
    name: 'Fara-7B type with a coordinate, to Fara-1.5 (click there, then type)',
    output: call('{"action": "type", "text": "3", "coordinate": [361, 378]}'),
    action: { action: 'type', text: '3', coordinate: [361, 378] },
  },
  {
    name: 'Fara-7B type with a coordinate, to Fara-7B',
    output: call('{"action": "type", "text": "Lisbon", "coordinate": [712, 448], "press_enter": true}'),
    profile: FARA7B,
    action: { action: 'type', text: 'Lisbon', coordinate: [712, 448], press_enter: true },
  },
  {
    name: 'a stray argument (ignored, reported)',
    output: call('{"action": "left_click", "coordinate": [7, 8], "button": "left", "clicks": 1}'),
    action: { action: 'left_click', coordinate: [7, 8] },
    ignored: ['button', 'clicks'],
  },
  {
    name: 'a coordinate on an action without one (ignored)',
    output: call('{"action": "history_back", "coordinate": [1, 1]}'),
    action: { action: 'history_back' },
    ignored: ['coordinate'],
  },
  {
    name: 'a number written as a string',
    output: call('{"action": "scroll", "pixels": "-1445"}'),
    action: { action: 'scroll', pixels: -1445 },
  },
  {
    name: 'coordinate numbers written as strings',
    output: call('{"action": "left_click", "coordinate": ["500", "300"]}'),
    action: { action: 'left_click', coordinate: [500, 300] },
  },
  {
    name: 'a coordinate written as a string',
    output: call('{"action": "left_click", "coordinate": "[500, 300]"}'),
    action: { action: 'left_click', coordinate: [500, 300] },
  },
  {
    name: 'a coordinate written as a tuple string',
    output: call('{"action": "double_click", "coordinate": "(250, 750)"}'),
    action: { action: 'double_click', coordinate: [250, 750] },
  },
  {
    name: 'a coordinate written as {x, y}',
    output: call('{"action": "mouse_move", "coordinate": {"x": 500, "y": 300}}'),
    action: { action: 'mouse_move', coordinate: [500, 300] },
  },
  {
    name: 'x and y as separate arguments',
    output: call('{"action": "right_click", "x": 400, "y": 200}'),
    action: { action: 'right_click', coordinate: [400, 200] },
  },
  {
    name: 'keys as one chord string',
    output: call('{"action": "key", "keys": "Control+a"}'),
    action: { action: 'key', keys: ['Control', 'a'] },
  },
  {
    name: '`key` instead of `keys`',
    output: call('{"action": "key", "key": "Enter"}'),
    action: { action: 'key', keys: ['Enter'] },
  },
  {
    name: 'the text_value alias',
    output: call('{"action": "type", "text_value": "Ada Lovelace"}'),
    action: { action: 'type', text: 'Ada Lovelace' },
  },
  {
    name: 'the duration alias of wait',
    output: call('{"action": "wait", "duration": 3}'),
    action: { action: 'wait', time: 3 },
  },
  {
    name: 'wait time as a string',
    output: call('{"action": "wait", "time": "2.5"}'),
    action: { action: 'wait', time: 2.5 },
  },
  {
    name: 'a boolean written as a string',
    output: call('{"action": "type", "text": "x", "press_enter": "True"}'),
    action: { action: 'type', text: 'x', press_enter: true },
  },
  {
    name: 'typed text given as a number',
    output: call('{"action": "type", "text": 2}'),
    action: { action: 'type', text: '2' },
  },
  {
    name: 'a flat body without the name/arguments wrapper',
    output: '<tool_call>\n{"action": "left_click", "coordinate": [11, 12]}\n</tool_call>',
    action: { action: 'left_click', coordinate: [11, 12] },
  },
  {
    name: 'a flat body that keeps the tool name',
    output: '<tool_call>{"name": "computer_use", "action": "history_back"}</tool_call>',
    action: { action: 'history_back' },
  },
  {
    name: 'arguments as a JSON string',
    output:
      '<tool_call>{"name": "computer_use", "arguments": "{\\"action\\": \\"scroll\\", \\"pixels\\": 300}"}</tool_call>',
    action: { action: 'scroll', pixels: 300 },
  },
  {
    name: 'an OpenAI-style function object in the text',
    output:
      '<tool_call>{"type": "function", "function": {"name": "computer_use", "arguments": "{\\"action\\": \\"history_back\\"}"}}</tool_call>',
    action: { action: 'history_back' },
  },
  {
    name: 'an action name in another case',
    output: call('{"action": "Left_Click", "coordinate": [1, 2]}'),
    action: { action: 'left_click', coordinate: [1, 2] },
  },
  {
    name: 'thoughts inside the arguments, nothing before the tag',
    output: call('{"action": "history_back", "thoughts": "The page was wrong."}'),
    action: { action: 'history_back' },
    thoughts: 'The page was wrong.',
  },
  {
    name: 'Fara-7B terminate with the status in capitals',
    output: call('{"action": "terminate", "status": "SUCCESS"}'),
    profile: FARA7B,
    action: { action: 'terminate', status: 'success' },
  },
  {
    name: 'Fara-7B pixel coordinates with decimals',
    output: call('{"action": "left_click", "coordinate": [712.5, 448.25]}'),
    profile: FARA7B,
    action: { action: 'left_click', coordinate: [712.5, 448.25] },
  },
  {
    name: 'a reasoning block before the call (Qwen3 style)',
    output: `<think>\nThe user wants Lisbon. The field is at the top.\n</think>\nI will search.\n${call('{"action": "web_search", "query": "Lisbon hotels"}')}`,
    action: { action: 'web_search', query: 'Lisbon hotels' },
  },
  {
    name: 'a call drafted inside the reasoning, then the real one after it',
    output: `<think>\nMaybe ${call('{"action": "history_back"}')}? No, scroll instead.\n</think>\n${call('{"action": "scroll", "pixels": -300}')}`,
    action: { action: 'scroll', pixels: -300 },
  },
  {
    name: 'a native tool_calls output (content = thoughts)',
    output: native('I will scroll down.', ['computer_use', '{"action": "scroll", "pixels": -500}']),
    action: { action: 'scroll', pixels: -500 },
    thoughts: 'I will scroll down.',
  },
  {
    name: 'a native tool call with empty content',
    output: native('', ['computer_use', '{"action": "left_click", "coordinate": [500, 500]}']),
    action: { action: 'left_click', coordinate: [500, 500] },
    thoughts: '',
  },
  {
    name: 'a native tool call named after the action',
    output: native('Go back.', ['history_back', '{}']),
    action: { action: 'history_back' },
  },
  {
    name: 'two native tool calls (the first is the action)',
    output: native(
      'Type it.',
      ['computer_use', '{"action": "type", "text": "a"}'],
      ['computer_use', '{"action": "key", "keys": ["Enter"]}'],
    ),
    action: { action: 'type', text: 'a' },
    extraCalls: 1,
  },
  {
    name: 'a native tool call whose arguments are a Python dict',
    output: native('Search.', ['computer_use', "{'action': 'web_search', 'query': 'Lisbon'}"]),
    action: { action: 'web_search', query: 'Lisbon' },
  },
];

describe('accepted outputs', () => {
  it.each(accepted)('$name', ({ output, profile = FARA15, action, thoughts, ignored, extraCalls }) => {
    const parsed = parseModelOutput(output, profile, { screen: SCREEN[profile.name] });
    const { thoughts: gotThoughts, ...got } = parsed.action as Record<string, unknown>;
    expect(got).toEqual(action);
    expect(gotThoughts).toBe(parsed.thoughts);
    if (thoughts !== undefined) expect(parsed.thoughts).toBe(thoughts);
    expect(parsed.notes?.ignoredArguments ?? []).toEqual(ignored ?? []);
    expect(parsed.notes?.extraToolCalls ?? 0).toBe(extraCalls ?? 0);
    // What was accepted is a valid action of the profile, as `act` re-validates it.
    expect(profile.actionSchema.safeParse(parsed.action).success).toBe(true);
  });
});

interface Refused {
  name: string;
  output: string | ModelOutput;
  profile?: FaraSpace;
  error: new (...args: never[]) => ModelOutputError;
  /** What the one-line observation for the model must say. */
  says: RegExp[];
}

const refused: Refused[] = [
  {
    name: 'a hallucinated action name',
    output: `Click the button.\n${call('{"action": "click", "coordinate": [1, 2]}')}`,
    error: UnknownActionError,
    says: [/"click" is not an available action/, /left_click/, /terminate/],
  },
  {
    name: 'a made-up scroll action',
    output: call('{"action": "scroll_down"}'),
    error: UnknownActionError,
    says: [/"scroll_down"/, /\bscroll\b/],
  },
  {
    name: 'a Fara-1.5 action sent to Fara-7B',
    output: call('{"action": "ask_user_question", "question": "Which city?"}'),
    profile: FARA7B,
    error: UnknownActionError,
    says: [/"ask_user_question"/, /history_back/],
  },
  {
    name: 'a click without its coordinate',
    output: call('{"action": "left_click"}'),
    error: InvalidActionArgumentsError,
    says: [/"coordinate" argument of left_click is missing/, /coordinate \(\[x, y\], required\)/],
  },
  {
    name: 'a coordinate outside the 1000×1000 space',
    output: call('{"action": "left_click", "coordinate": [1500, 200]}'),
    error: InvalidActionArgumentsError,
    says: [/outside the screen/, /0 to 1000/],
  },
  {
    name: 'a negative coordinate',
    output: call('{"action": "left_click", "coordinate": [-5, 200]}'),
    error: InvalidActionArgumentsError,
    says: [/outside the screen/],
  },
  {
    name: 'a Fara-7B coordinate beyond the resized screenshot',
    output: call('{"action": "left_click", "coordinate": [1430, 100]}'),
    profile: FARA7B,
    error: InvalidActionArgumentsError,
    says: [/0 to 1428/],
  },
  {
    name: 'a point that is no point',
    output: call('{"action": "left_click", "coordinate": "the search box"}'),
    error: InvalidActionArgumentsError,
    says: [/"coordinate" argument of left_click is "the search box"/],
  },
  {
    name: 'scroll pixels that are no number',
    output: call('{"action": "scroll", "pixels": "a lot"}'),
    error: InvalidActionArgumentsError,
    says: [/"pixels" argument of scroll/, /pixels \(required\)/],
  },
  {
    name: 'a Fara-1.5 terminate without its answer',
    output: call('{"action": "terminate", "status": "success"}'),
    error: InvalidActionArgumentsError,
    says: [/"answer" argument of terminate is missing/],
  },
  { name: 'an empty output', output: '', error: EmptyOutputError, says: [/empty/, /<tool_call>/] },
  { name: 'whitespace only', output: '  \n ', error: EmptyOutputError, says: [/empty/] },
  {
    name: 'prose only',
    output: 'The page shows a list of hotels. The cheapest one is Harbor View.',
    error: MissingToolCallError,
    says: [/no tool call/, /<tool_call>/],
  },
  {
    name: 'unparseable JSON',
    output: '<tool_call>\n{"name": computer use, arguments: action = left_click}\n</tool_call>',
    error: ToolCallJsonError,
    says: [/could not be read/, /<tool_call>/],
  },
  { name: 'empty tool-call tags', output: 'x<tool_call></tool_call>', error: ToolCallJsonError, says: [/empty/] },
  {
    name: 'a call with no action',
    output: call('{"coordinate": [1, 2]}'),
    error: ToolCallJsonError,
    says: [/no string "action"/],
  },
  {
    name: 'a native tool call with broken arguments',
    output: native('Hmm.', ['computer_use', '{"action": left click on the map']),
    error: ToolCallJsonError,
    says: [/not valid JSON/],
  },
];

describe('refused outputs become an error observation', () => {
  it.each(refused)('$name', ({ output, profile = FARA15, error, says }) => {
    let thrown: unknown;
    try {
      parseModelOutput(output, profile, { screen: SCREEN[profile.name] });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(error);
    const feedback = invalidOutputFeedback(thrown as ModelOutputError, profile, SCREEN[profile.name]);
    expect(feedback).not.toContain('\n');
    expect(feedback).toMatch(/No action was taken\./);
    for (const pattern of says) expect(feedback).toMatch(pattern);
  });

  it('keeps what the model wrote on the error, for the record', () => {
    try {
      parseModelOutput(`I click.\n${call('{"action": "click", "coordinate": [1, 2]}')}`, FARA15);
    } catch (err) {
      expect(err).toBeInstanceOf(UnknownActionError);
      expect((err as ModelOutputError).thoughts).toBe('I click.');
      expect((err as ModelOutputError).written).toEqual({ action: 'click', coordinate: [1, 2] });
      return;
    }
    throw new Error('expected a throw');
  });

  it('has at least 40 realistic outputs in all', () => {
    expect(accepted.length + refused.length).toBeGreaterThanOrEqual(40);
  });
});
