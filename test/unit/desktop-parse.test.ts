// Specification of readToolCalls: the tool calls of an action-model output, native or written in the text.
import { describe, expect, it } from 'vitest';

import { MAX_CALLS_PER_OUTPUT, NO_TOOL_CALL_ERROR, readToolCalls } from '../../src/desktop/agent';

const names = (text: string, toolCalls?: { name: string; arguments: string }[]) =>
  readToolCalls({ text, toolCalls }).calls.map((c) => c.name);

describe('readToolCalls: native tool calls', () => {
  it('reads them in order, the text is the thoughts', () => {
    const output = readToolCalls({
      text: 'I open a terminal first.',
      toolCalls: [
        { name: 'run_command', arguments: '{"command": "ls"}' },
        { name: 'Click', arguments: '{"description": "the OK button"}' },
      ],
    });
    expect(output).toEqual({
      source: 'native',
      thoughts: 'I open a terminal first.',
      calls: [
        { name: 'run_command', arguments: { command: 'ls' }, known: true },
        { name: 'click', arguments: { query: 'the OK button' }, known: true },
      ],
    });
  });

  it.each([
    ['relaxed JSON', "{'key': 'Return',}", { key: 'Return' }],
    ['an object cut short', '{"key": "Return"', { key: 'Return' }],
    ['an empty string', '', undefined],
    ['a JSON string holding the object', '"{\\"key\\": \\"Escape\\"}"', { key: 'Escape' }],
  ])('reads %s leniently', (_case, args, expected) => {
    const [call] = readToolCalls({ text: '', toolCalls: [{ name: 'send_key', arguments: args }] }).calls;
    if (expected) expect(call).toEqual({ name: 'send_key', arguments: expected, known: true });
    else expect(call?.error).toContain('"key" is missing');
  });

  it('a broken argument string gives that call an error; the others still come back', () => {
    const { calls } = readToolCalls({
      text: '',
      toolCalls: [
        { name: 'type_text', arguments: 'not json at all' },
        { name: 'send_key', arguments: '{"key": "Return"}' },
      ],
    });
    expect(calls[0]).toMatchObject({ name: 'type_text', known: true, arguments: {} });
    expect(calls[0]?.error).toContain('The arguments of the type_text call are not valid JSON');
    expect(calls[1]).toEqual({ name: 'send_key', arguments: { key: 'Return' }, known: true });
  });

  it('an unknown native tool keeps the unknown-tool error', () => {
    const [call] = readToolCalls({ text: '', toolCalls: [{ name: 'fly', arguments: '{' }] }).calls;
    expect(call).toMatchObject({ name: 'fly', known: false });
    expect(call?.error).toBe('Function not implemented.');
  });

  it('win over calls written in the text, which are left out of the thoughts', () => {
    const output = readToolCalls({
      text: 'Saving.\n<tool_call>{"name": "stop", "arguments": {}}</tool_call>',
      toolCalls: [{ name: 'send_key', arguments: '{"key": "ctrl+s"}' }],
    });
    expect(output.calls.map((c) => c.name)).toEqual(['send_key']);
    expect(output.thoughts).toBe('Saving.');
  });
});

describe('readToolCalls: calls written in the text', () => {
  it.each<[string, string, string[], string]>([
    [
      'one tool_call block',
      'I list the files.\n<tool_call>\n{"name": "run_command", "arguments": {"command": "ls"}}\n</tool_call>',
      ['run_command'],
      'I list the files.',
    ],
    [
      'several blocks, the last unclosed',
      'A\n<tool_call>{"name": "click", "arguments": {"query": "OK"}}</tool_call>\nB\n<tool_call>{"name": "type_text", "arguments": {"text": "hi"}}',
      ['click', 'type_text'],
      'A\n\nB',
    ],
    [
      'a fenced block inside the tags',
      '<tool_call>\n```json\n{"name": "send_key", "arguments": {"key": "Return"}}\n```\n</tool_call>',
      ['send_key'],
      '',
    ],
    [
      'an array in one block',
      '<tool_call>[{"name": "click", "arguments": {"x": 1, "y": 2}}, {"name": "send_key", "arguments": {"key": "a"}}]</tool_call>',
      ['click', 'send_key'],
      '',
    ],
    [
      'a fenced array of calls',
      'Plan:\n```json\n[{"name": "type_text", "arguments": {"text": "hi"}}, {"tool": "send_key", "key": "Return"}]\n```\nThen I wait.',
      ['type_text', 'send_key'],
      'Plan:\n\nThen I wait.',
    ],
    ['a bare object', 'Now: {"name": "stop", "arguments": {"answer": "42"}}', ['stop'], 'Now:'],
    ['a {"tool": …} object', '{"tool": "run_command", "args": {"cmd": "pwd"}}', ['run_command'], ''],
    [
      'a {"function": {...}} object with string arguments',
      '{"type": "function", "function": {"name": "run_command", "arguments": "{\\"command\\": \\"pwd\\"}"}}',
      ['run_command'],
      '',
    ],
    ['a flat object naming a tool as action', '{"action": "click", "query": "Save"}', ['click'], ''],
    ['relaxed JSON', "{'name': 'click', 'arguments': {'query': 'OK',}}", ['click'], ''],
    ['an object cut short at the end', 'Go {"name": "click", "arguments": {"query": "OK"', ['click'], 'Go'],
    ['the memory format imitated', 'ACTION: {"name": "send_key", "arguments": {"key": "Escape"}}', ['send_key'], ''],
    [
      'calls after </think> only',
      '<think>maybe {"name": "stop", "arguments": {}}</think>\n{"name": "click", "arguments": {"query": "OK"}}',
      ['click'],
      'maybe {"name": "stop", "arguments": {}}',
    ],
  ])('%s', (_case, text, expected, thoughts) => {
    const output = readToolCalls({ text });
    expect(output.source).toBe('text');
    expect(output.calls.map((c) => c.name)).toEqual(expected);
    expect(output.calls.every((c) => c.error === undefined)).toBe(true);
    expect(output.thoughts).toBe(thoughts);
  });

  it('reads the arguments of a text call like a native one', () => {
    expect(readToolCalls({ text: '{"name": "doubleClick", "arguments": {"coordinate": [4, 5]}}' }).calls).toEqual([
      { name: 'double_click', arguments: { x: 4, y: 5 }, known: true },
    ]);
  });

  it.each([
    ['JSON that is no call', 'The record is {"name": "Ada", "age": 36}.'],
    ['a list of numbers', 'Coordinates [1, 2] look right.'],
    ['prose only', 'The task is finished: the answer is 4.'],
    ['nothing', ''],
  ])('%s is no call: none, with the instruction for the at the next step', (_case, text) => {
    const output = readToolCalls({ text });
    expect(output).toEqual({ calls: [], thoughts: text.trim(), source: 'none', error: NO_TOOL_CALL_ERROR });
  });

  it('the no-call instruction is one line naming the tools and stop', () => {
    expect(NO_TOOL_CALL_ERROR).not.toContain('\n');
    expect(NO_TOOL_CALL_ERROR).toContain('run_command');
    expect(NO_TOOL_CALL_ERROR).toContain('call stop with the final answer');
  });

  it.each([
    [
      'unreadable JSON',
      '<tool_call>{"name": "click", "arguments": {query: OK OK}}}</tool_call>',
      'click',
      'could not be read',
    ],
    ['an empty block', '<tool_call>  </tool_call>', '', 'empty'],
    ['a block naming no tool', '<tool_call>{"arguments": {"x": 1}}</tool_call>', '', 'names no tool'],
    ['an unknown tool', '<tool_call>{"name": "fly", "arguments": {}}</tool_call>', 'fly', 'Function not implemented.'],
  ])('a tool_call block with %s becomes a call carrying the error', (_case, text, name, fragment) => {
    const output = readToolCalls({ text });
    expect(output.source).toBe('text');
    expect(output.calls).toHaveLength(1);
    expect(output.calls[0]?.name).toBe(name);
    expect(output.calls[0]?.error).toContain(fragment);
  });
});

describe('readToolCalls: the cap', () => {
  const call = (i: number) => ({ name: 'type_text', arguments: JSON.stringify({ text: `t${i}` }) });

  it.each([
    ['native', (n: number) => ({ text: '', toolCalls: Array.from({ length: n }, (_, i) => call(i)) })],
    [
      'text',
      (n: number) => ({
        text: Array.from(
          { length: n },
          (_, i) => `<tool_call>{"name": "type_text", "arguments": {"text": "t${i}"}}</tool_call>`,
        ).join('\n'),
      }),
    ],
  ])('%s: at most 10 calls run; the rest are reported as dropped', (_case, output) => {
    const exact = readToolCalls(output(MAX_CALLS_PER_OUTPUT));
    expect(exact.calls).toHaveLength(10);
    expect(exact.dropped).toBeUndefined();
    const over = readToolCalls(output(13));
    expect(over.calls.map((c) => c.arguments.text)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
    expect(over.dropped?.map((c) => c.arguments.text)).toEqual(['t10', 't11', 't12']);
  });

  it('counts names the same way for both sources', () => {
    expect(names('', [{ name: 'Click', arguments: '{"x": 1, "y": 1}' }])).toEqual(['click']);
    expect(names('{"name": "Click", "arguments": {"x": 1, "y": 1}}')).toEqual(['click']);
  });
});

describe('readToolCalls: long outputs', () => {
  it.each([
    ['many unclosed braces', '{"a": '.repeat(5000)],
    ['much code with brackets', 'function f(a) { if (a) { return [a, {b: 1}]; } }\n'.repeat(1300)],
  ])('%s are read in about linear time', (_case, text) => {
    const started = performance.now();
    const output = readToolCalls({ text: `${text}\n{"name": "stop", "arguments": {}}` });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(output.source).toBe('text');
  });
});
