// Specification of the rendered Fara output format, and of its round trip through the parser for every action.
import { describe, expect, it } from 'vitest';
import { exampleActions } from '../../src/actions/examples';
import { FARA_NAMES } from '../../src/actions/fara';
import { faraSpace } from '../../src/families/fara-common/spaces';
import type { AgentAction } from '../../src/actions/schemas';
import { parseModelOutput } from '../../src/model/parse';
import { formatJson, renderToolCall, renderToolCallJson } from '../../src/model/toolcall';

describe('renderToolCall', () => {
  it('writes thoughts, newline, <tool_call>, newline, the JSON, newline, </tool_call>', () => {
    expect(renderToolCall('The search box is in the middle.', { action: 'left_click', coordinate: [500, 340] })).toBe(
      'The search box is in the middle.\n<tool_call>\n' +
        '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 340]}}\n</tool_call>',
    );
  });

  it('does not repeat the thoughts inside the arguments', () => {
    const text = renderToolCall('why', { action: 'history_back', thoughts: 'stale thoughts' });
    expect(text).toBe(
      'why\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "history_back"}}\n</tool_call>',
    );
  });

  it('puts `action` first whatever the key order of the object', () => {
    const action = { text: 'hi', press_enter: true, action: 'type' } as const;
    expect(renderToolCallJson(action)).toBe(
      '{"name": "computer_use", "arguments": {"action": "type", "text": "hi", "press_enter": true}}',
    );
  });

  it('starts with the tag when there are no thoughts', () => {
    expect(renderToolCall('', { action: 'wait', time: 1 })).toBe(
      '<tool_call>\n{"name": "computer_use", "arguments": {"action": "wait", "time": 1}}\n</tool_call>',
    );
  });
});

describe('formatJson', () => {
  it.each<[unknown, string]>([
    [{ a: 1, b: [1, 2] }, '{"a": 1, "b": [1, 2]}'],
    [{ nested: { x: true, y: null } }, '{"nested": {"x": true, "y": null}}'],
    [{ skip: undefined, keep: 'k' }, '{"keep": "k"}'],
    [[], '[]'],
    [{}, '{}'],
    ['quote " and \\ and \n', '"quote \\" and \\\\ and \\n"'],
    ['€ é', '"€ é"'],
    [-0.5, '-0.5'],
  ])('%j -> %s', (value, expected) => {
    expect(formatJson(value)).toBe(expected);
    expect(JSON.parse(formatJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });
});

const TRICKY_THOUGHTS = ['Short.', 'Line one.\nLine two, with "quotes" and {braces}.', ''];

describe.each(FARA_NAMES)('round trip renderToolCall -> parseModelOutput (%s)', (name) => {
  const profile = faraSpace(name);
  const cases: [string, AgentAction, string][] = exampleActions(name).flatMap((action) =>
    TRICKY_THOUGHTS.map((thoughts): [string, AgentAction, string] => [action.action, action, thoughts]),
  );

  it.each(cases)('%s with thoughts %j', (_name, action, thoughts) => {
    const parsed = parseModelOutput(renderToolCall(thoughts, action), profile);
    expect(parsed.thoughts).toBe(thoughts);
    expect(parsed.action).toEqual({ ...action, thoughts });
    expect(parsed.recoveredBy).toBeUndefined();
    expect(parsed.toolCallText).toBe(renderToolCallJson(action));
  });

  it('survives text that contains the closing tag and JSON-looking content', () => {
    const action: AgentAction =
      name === 'fara-1.5'
        ? { action: 'terminate', answer: 'Use </tool_call> and {"a": [1]} literally' }
        : { action: 'type', text: "it's </tool_call> {x}" };
    const parsed = parseModelOutput(renderToolCall('t', action), profile);
    expect(parsed.action).toEqual({ ...action, thoughts: 't' });
  });

  it('renders a parsed action back to the same text', () => {
    for (const action of exampleActions(name)) {
      const text = renderToolCall('thinking', action);
      const parsed = parseModelOutput(text, profile);
      expect(renderToolCall(parsed.thoughts, parsed.action)).toBe(text);
    }
  });
});
