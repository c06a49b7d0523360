// Specification of the desktop tool registry: the table, the OpenAI tools, and how a call as written is read.
import { describe, expect, it } from 'vitest';

import {
  DESKTOP_TOOLS,
  DESKTOP_TOOL_NAMES,
  canonicalToolName,
  checkCall,
  openAiTools,
  summarizeCall,
} from '../../src/desktop/agent';
import type { DesktopCall } from '../../src/desktop/agent';

describe('desktop tools: the table', () => {
  it('has one row per tool name, in the same order', () => {
    expect(DESKTOP_TOOLS.map((t) => t.name)).toEqual([...DESKTOP_TOOL_NAMES]);
    expect(DESKTOP_TOOL_NAMES).toEqual([
      'stop',
      'run_command',
      'run_background_command',
      'send_key',
      'type_text',
      'click',
      'double_click',
      'right_click',
      'drag',
      'ask_user',
    ]);
  });

  it('offers every tool as an OpenAI function tool with an object schema', () => {
    const tools = openAiTools();
    expect(tools).toHaveLength(DESKTOP_TOOL_NAMES.length);
    for (const tool of tools) {
      expect(tool.type).toBe('function');
      if (tool.type !== 'function') continue;
      expect(tool.function.description?.length).toBeGreaterThan(10);
      expect(tool.function.parameters).toMatchObject({ type: 'object', properties: expect.any(Object) });
    }
    const click = tools.find((t) => t.type === 'function' && t.function.name === 'click');
    expect(click?.type === 'function' && Object.keys(click.function.parameters?.properties ?? {})).toEqual([
      'query',
      'x',
      'y',
    ]);
  });

  it('the required parameters exist among the properties', () => {
    for (const tool of DESKTOP_TOOLS) {
      const properties = Object.keys(tool.parameters.properties as object);
      for (const name of (tool.parameters.required as string[] | undefined) ?? []) expect(properties).toContain(name);
    }
  });
});

describe('desktop tools: names as written', () => {
  it.each([
    ['Click', 'click'],
    ['doubleClick', 'double_click'],
    ['DoubleClick', 'double_click'],
    ['right-click', 'right_click'],
    ['runCommand', 'run_command'],
    ['Run Command', 'run_command'],
    ['runBackgroundCommand', 'run_background_command'],
    ['key', 'send_key'],
    ['type', 'type_text'],
    ['typeText', 'type_text'],
    ['finish', 'stop'],
    ['done', 'stop'],
    ['terminate', 'stop'],
    ['ask_user_question', 'ask_user'],
    ['drag_and_drop', 'drag'],
    ['fly', 'fly'],
  ])('%s → %s', (written, canonical) => {
    expect(canonicalToolName(written)).toBe(canonical);
  });
});

describe('desktop tools: checkCall accepts', () => {
  it.each<[string, string, unknown, Record<string, unknown>]>([
    ['stop with an answer', 'stop', { answer: 'It is 42.' }, { answer: 'It is 42.' }],
    ['stop with nothing', 'finish', undefined, {}],
    ['stop with an answer alias', 'done', { final_answer: 'ok' }, { answer: 'ok' }],
    ['stop with a number answer', 'stop', { answer: 42 }, { answer: '42' }],
    ['a command', 'run_command', { command: 'ls -la' }, { command: 'ls -la' }],
    ['cmd and a timeout string', 'runCommand', { cmd: 'sleep 3', timeout: '30' }, { command: 'sleep 3', timeout: 30 }],
    ['a bare string for the first argument', 'run_command', 'pwd', { command: 'pwd' }],
    ['a background command', 'run_background_command', { cmd: 'firefox' }, { command: 'firefox' }],
    ['a key', 'send_key', { key: 'ctrl+s' }, { key: 'ctrl+s' }],
    ['keys as a list', 'key', { keys: ['ctrl', 'shift', 't'] }, { key: 'ctrl+shift+t' }],
    ['keys_to_press', 'send_key', { keys_to_press: 'Return' }, { key: 'Return' }],
    ['text', 'type_text', { text: 'hello' }, { text: 'hello' }],
    ['content for text', 'type', { content: 'hello' }, { text: 'hello' }],
    ['a click by description', 'Click', { query: 'the OK button' }, { query: 'the OK button' }],
    ['description for query', 'click', { description: 'the OK button' }, { query: 'the OK button' }],
    ['target for query', 'right_click', { target: 'the file icon' }, { query: 'the file icon' }],
    ['element for query', 'double_click', { element: 'README.md' }, { query: 'README.md' }],
    ['x and y', 'click', { x: 100, y: 200 }, { x: 100, y: 200 }],
    ['x and y as strings, rounded', 'click', { x: '100.4', y: '199.6' }, { x: 100, y: 200 }],
    ['coordinate [x, y]', 'doubleClick', { coordinate: [10, 20] }, { x: 10, y: 20 }],
    ['coordinates as a string', 'click', { coordinates: '(10, 20)' }, { x: 10, y: 20 }],
    ['point {x, y}', 'right_click', { point: { x: 5, y: 6 } }, { x: 5, y: 6 }],
    ['a computer-style wrapper', 'computer', { action: 'left_click', coordinate: [3, 4] }, { x: 3, y: 4 }],
    ['a drag', 'drag', { from_x: 1, from_y: 2, to_x: 3, to_y: 4 }, { from_x: 1, from_y: 2, to_x: 3, to_y: 4 }],
    [
      'a drag from start/end points',
      'drag',
      { start: [1, 2], end: '[3, 4]' },
      { from_x: 1, from_y: 2, to_x: 3, to_y: 4 },
    ],
    ['a question', 'ask_user', { question: 'Which file?' }, { question: 'Which file?' }],
    ['unknown arguments, dropped', 'send_key', { key: 'Return', repeat: 2 }, { key: 'Return' }],
  ])('%s', (_case, name, args, expected) => {
    const call = checkCall(name, args);
    expect(call.error).toBeUndefined();
    expect(call.known).toBe(true);
    expect(call.arguments).toEqual(expected);
  });
});

describe('desktop tools: checkCall refuses, in one line that says what was expected', () => {
  it.each<[string, string, unknown, string[]]>([
    ['a missing command', 'run_command', {}, ['run_command', '"command" is missing', 'run_command(command, timeout?)']],
    ['an empty command', 'run_command', { command: '  ' }, ['"command"']],
    ['a timeout too long', 'run_command', { command: 'x', timeout: 9999 }, ['"timeout" 9999']],
    ['a click with nothing', 'click', {}, ['give "query"', 'click(query) or click(x, y)']],
    ['a click with both', 'click', { query: 'OK', x: 1, y: 2 }, ['not both']],
    ['a click with x alone', 'click', { x: 1 }, ['"x" and "y" go together']],
    ['a negative pixel', 'click', { x: -1, y: 2 }, ['"x" -1']],
    ['a drag without its end', 'drag', { from_x: 1, from_y: 2 }, ['"to_x" is missing']],
    ['arguments that are a list', 'type_text', [1, 2], ['expected a JSON object']],
    ['an empty question', 'ask_user', { question: '' }, ['"question"']],
  ])('%s', (_case, name, args, fragments) => {
    const call = checkCall(name, args);
    expect(call.known).toBe(true);
    expect(call.error).toBeDefined();
    expect(call.error).not.toContain('\n');
    for (const fragment of fragments) expect(call.error).toContain(fragment);
  });

  it("an unknown tool is not known, and its error is the seed agent's sentence", () => {
    const call = checkCall('open_browser', { url: 'x' });
    expect(call).toMatchObject({ name: 'open_browser', known: false, arguments: { url: 'x' } });
    expect(call.error).toBe('Function not implemented.');
  });
});

describe('desktop tools: summarizeCall', () => {
  const long = 'a'.repeat(200);
  it.each<[string, DesktopCall, string]>([
    ['click by query', checkCall('click', { query: 'the OK button' }), 'click "the OK button"'],
    ['click by point', checkCall('click', { x: 1, y: 2 }), 'click (1, 2)'],
    ['double click', checkCall('double_click', { query: 'README' }), 'double_click "README"'],
    ['command', checkCall('run_command', { command: 'ls -la' }), 'run_command: ls -la'],
    [
      'command with timeout',
      checkCall('run_command', { command: 'make', timeout: 60 }),
      'run_command: make (timeout 60 s)',
    ],
    ['multi-line command', checkCall('run_command', { command: 'cd /tmp\nls' }), 'run_command: cd /tmp ls'],
    ['background', checkCall('run_background_command', { command: 'xeyes' }), 'run_background_command: xeyes'],
    ['typing', checkCall('type_text', { text: 'hello' }), 'type_text "hello"'],
    ['key', checkCall('send_key', { key: 'ctrl+s' }), 'send_key ctrl+s'],
    ['drag', checkCall('drag', { from_x: 1, from_y: 2, to_x: 3, to_y: 4 }), 'drag (1, 2) → (3, 4)'],
    ['stop', checkCall('stop', {}), 'stop'],
    ['stop with answer', checkCall('stop', { answer: 'Paris' }), 'stop: Paris'],
    ['ask', checkCall('ask_user', { question: 'Which one?' }), 'ask_user: Which one?'],
    ['unknown', checkCall('fly', { to: 'moon' }), 'fly {"to":"moon"}'],
  ])('%s', (_case, call, expected) => {
    expect(summarizeCall(call)).toBe(expected);
  });

  it('clips long text to one short line', () => {
    const line = summarizeCall(checkCall('type_text', { text: long }));
    expect(line.length).toBeLessThanOrEqual(80);
    expect(line.endsWith('…')).toBe(true);
  });
});
