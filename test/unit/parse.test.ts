// Specification of model-output parsing: where thoughts and the tool call are found, the lenient forms accepted,
// the Python-literal fallback, each typed error, and terminate-on-parse-error.
import { describe, expect, it } from 'vitest';
import { faraSpace } from '../../src/families/fara-common/spaces';
import type { AgentAction } from '../../src/actions/schemas';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  MissingToolCallError,
  ModelOutputError,
  ToolCallJsonError,
  UnknownActionError,
} from '../../src/model/errors';
import { invalidOutputFeedback } from '../../src/model/feedback';
import { parseModelOutput, pythonLiteralToJson } from '../../src/model/parse';

const FARA15 = faraSpace('fara-1.5');
const FARA7B = faraSpace('fara-7b');
const CLICK = '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 340]}}';
const CLICK_ACTION = { action: 'left_click', coordinate: [500, 340] };

describe('where the parts are', () => {
  it.each<[string, string, string]>([
    ['canonical', `I will click.\n<tool_call>\n${CLICK}\n</tool_call>`, 'I will click.'],
    ['no newlines around the JSON', `I will click.<tool_call>${CLICK}</tool_call>`, 'I will click.'],
    ['no closing tag', `I will click.\n<tool_call>\n${CLICK}`, 'I will click.'],
    ['no closing tag, trailing newline', `I will click.\n<tool_call>\n${CLICK}\n`, 'I will click.'],
    ['text after the closing tag', `x\n<tool_call>\n${CLICK}\n</tool_call>\nanything`, 'x'],
    ['text after the JSON, no closing tag', `x\n<tool_call>\n${CLICK} trailing words`, 'x'],
    ['a stray brace after the JSON', `x\n<tool_call>\n${CLICK}}\n</tool_call>`, 'x'],
    ['a fenced JSON block', `x\n<tool_call>\n\`\`\`json\n${CLICK}\n\`\`\`\n</tool_call>`, 'x'],
    ['no thoughts', `<tool_call>\n${CLICK}\n</tool_call>`, ''],
    ['surrounding whitespace', `\n\n  Multi\nline.  \n\n<tool_call>  ${CLICK}  </tool_call>\n`, 'Multi\nline.'],
    ['spaced and upper-case tags', `t\n<TOOL_CALL >\n${CLICK}\n</Tool_Call>`, 't'],
  ])('%s', (_case, text, thoughts) => {
    const parsed = parseModelOutput(text, FARA15);
    expect(parsed.thoughts).toBe(thoughts);
    expect(parsed.action).toEqual({ ...CLICK_ACTION, thoughts });
    expect(parsed.recoveredBy).toBeUndefined();
  });

  it('keeps the text between the tags as toolCallText', () => {
    expect(parseModelOutput(`t\n<tool_call>\n${CLICK}\n</tool_call>`, FARA15).toolCallText).toBe(CLICK);
  });

  it('accepts `arguments` given as a JSON string', () => {
    const text = `t<tool_call>{"name": "computer_use", "arguments": "{\\"action\\": \\"history_back\\"}"}</tool_call>`;
    expect(parseModelOutput(text, FARA15).action).toEqual({ action: 'history_back', thoughts: 't' });
  });

  it('takes thoughts from the arguments only when there is no text before the tag', () => {
    const inArgs = '{"name": "computer_use", "arguments": {"action": "history_back", "thoughts": "from args"}}';
    expect(parseModelOutput(`<tool_call>${inArgs}</tool_call>`, FARA15).thoughts).toBe('from args');
    expect(parseModelOutput(`outside<tool_call>${inArgs}</tool_call>`, FARA15).action.thoughts).toBe('outside');
  });
});

describe('Python-literal fallback', () => {
  it.each<[string, string, AgentAction]>([
    [
      'single quotes',
      "{'name': 'computer_use', 'arguments': {'action': 'left_click', 'coordinate': [500, 340]}}",
      { action: 'left_click', coordinate: [500, 340] },
    ],
    [
      'True and False',
      "{'name': 'computer_use', 'arguments': {'action': 'type', 'text': 'hi', 'press_enter': True, 'delete_existing_text': False}}",
      { action: 'type', text: 'hi', press_enter: true, delete_existing_text: false },
    ],
    [
      'a tuple coordinate and a trailing comma',
      "{'name': 'computer_use', 'arguments': {'action': 'mouse_move', 'coordinate': (1, 2),},}",
      { action: 'mouse_move', coordinate: [1, 2] },
    ],
    [
      'quotes of the other kind inside strings',
      `{'name': 'computer_use', 'arguments': {'action': 'terminate', 'answer': "It's \\"done\\"", }}`,
      { action: 'terminate', answer: 'It\'s "done"' },
    ],
    [
      'an escaped single quote and a double quote in a single-quoted string',
      `{'name': 'computer_use', 'arguments': {'action': 'web_search', 'query': 'Joe\\'s "best" pizza'}}`,
      { action: 'web_search', query: 'Joe\'s "best" pizza' },
    ],
  ])('accepts %s', (_case, body, action) => {
    const parsed = parseModelOutput(`t\n<tool_call>\n${body}\n</tool_call>`, FARA15);
    expect(parsed.action).toEqual({ ...action, thoughts: 't' });
    expect(parsed.recoveredBy).toBe('python-literal');
    expect(parsed.toolCallText).toBe(body);
  });

  it.each([
    ["{'a': None, 'b': True, 'c': False}", '{"a": null, "b": true, "c": false}'],
    ["{'s': 'None True'}", '{"s": "None True"}'],
    ["{'t': (1, 2.5e3)}", '{"t": [1, 2.5e3]}'],
    ["{'q': 'say \"hi\"'}", '{"q": "say \\"hi\\""}'],
    ['{"already": "json"}', '{"already": "json"}'],
    ['[1, 2, ]', '[1, 2 ]'],
  ])('pythonLiteralToJson(%s) = %s', (input, expected) => {
    expect(pythonLiteralToJson(input)).toBe(expected);
  });
});

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('errors', () => {
  const badJson = 't\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", </tool_call>';
  const cases: [string, string, new (...args: never[]) => ModelOutputError][] = [
    ['empty', '', EmptyOutputError],
    ['whitespace only', ' \n\t ', EmptyOutputError],
    ['no tool call', 'I think I am done.', MissingToolCallError],
    ['malformed JSON', badJson, ToolCallJsonError],
    ['empty tool call', 't<tool_call></tool_call>', ToolCallJsonError],
    ['not an object', 't<tool_call>[1, 2]</tool_call>', ToolCallJsonError],
    ['no arguments', 't<tool_call>{"name": "computer_use"}</tool_call>', ToolCallJsonError],
    ['no action', 't<tool_call>{"name": "computer_use", "arguments": {"x": 1}}</tool_call>', ToolCallJsonError],
    ['unknown action', 't<tool_call>{"arguments": {"action": "fly_to_moon"}}</tool_call>', UnknownActionError],
    ['bad arguments', 't<tool_call>{"arguments": {"action": "left_click"}}</tool_call>', InvalidActionArgumentsError],
  ];

  it.each(cases)('%s -> %s', (_case, text, ErrorClass) => {
    const error = errorOf(() => parseModelOutput(text, FARA15));
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(ModelOutputError);
    expect((error as Error).name).toBe(ErrorClass.name);
  });

  it('UnknownActionError names the action and lists the allowed ones', () => {
    const text = 't<tool_call>{"name": "computer_use", "arguments": {"action": "ask_user_question", "question": "?"}}';
    const error = errorOf(() => parseModelOutput(text, FARA7B));
    expect(error).toBeInstanceOf(UnknownActionError);
    const unknown = error as UnknownActionError;
    expect(unknown.action).toBe('ask_user_question');
    expect(unknown.allowedActions).toEqual(FARA7B.allowedActions);
    expect(unknown.message).toContain('ask_user_question');
    for (const action of FARA7B.allowedActions) expect(unknown.message).toContain(action);
  });

  it.each([
    ['a missing field', { action: 'left_click' }, 'left_click', 'coordinate'],
    ['a wrongly typed field', { action: 'scroll', pixels: 'lots' }, 'scroll', 'pixels'],
    ['a point that is no point', { action: 'mouse_move', coordinate: 'top left' }, 'mouse_move', 'coordinate'],
    ['a short coordinate', { action: 'double_click', coordinate: [1] }, 'double_click', 'coordinate'],
    ['the other profile terminate', { action: 'terminate', status: 'success' }, 'terminate', 'answer'],
  ])('InvalidActionArgumentsError names the action and the field for %s', (_case, args, action, field) => {
    const text = `t<tool_call>${JSON.stringify({ name: 'computer_use', arguments: args })}</tool_call>`;
    const error = errorOf(() => parseModelOutput(text, FARA15));
    expect(error).toBeInstanceOf(InvalidActionArgumentsError);
    const invalid = error as InvalidActionArgumentsError;
    expect(invalid.action).toBe(action);
    expect(invalid.field).toBe(field);
    expect(invalid.message).toContain(action);
    expect(invalid.message).toContain(field);
  });

  it('ToolCallJsonError keeps the text it could not read', () => {
    const error = errorOf(() => parseModelOutput(badJson, FARA15));
    expect((error as ToolCallJsonError).toolCallText).toBe(
      '{"name": "computer_use", "arguments": {"action": "left_click",',
    );
  });

  it.each(cases)(
    'with terminateOnParseError, %s becomes a terminate (fara-1.5: raw text as the answer)',
    (_case, text, ErrorClass) => {
      const parsed = parseModelOutput(text, FARA15, { terminateOnParseError: true });
      expect(parsed.action).toEqual({ action: 'terminate', answer: text.trim(), thoughts: text.trim() });
      expect(parsed.thoughts).toBe(text.trim());
      expect(parsed.recoveredBy).toBe('terminate-on-parse-error');
      expect(parsed.parseError?.name).toBe(ErrorClass.name);
      expect(FARA15.actionSchema.safeParse(parsed.action).success).toBe(true);
    },
  );

  it.each(cases)('with terminateOnParseError, %s becomes a failed terminate on fara-7b', (_case, text) => {
    const parsed = parseModelOutput(text, FARA7B, { terminateOnParseError: true });
    expect(parsed.action).toEqual({ action: 'terminate', status: 'failure', thoughts: text.trim() });
    expect(parsed.recoveredBy).toBe('terminate-on-parse-error');
    expect(FARA7B.actionSchema.safeParse(parsed.action).success).toBe(true);
  });

  it('with terminateOnParseError, keeps the tool call text when there was one', () => {
    const parsed = parseModelOutput(badJson, FARA15, { terminateOnParseError: true });
    expect(parsed.toolCallText).toBe('{"name": "computer_use", "arguments": {"action": "left_click",');
    expect(parseModelOutput('no call', FARA15, { terminateOnParseError: true }).toolCallText).toBe('');
  });

  it('with terminateOnParseError, leaves good outputs alone', () => {
    const parsed = parseModelOutput(`t<tool_call>${CLICK}</tool_call>`, FARA15, { terminateOnParseError: true });
    expect(parsed.action).toEqual({ ...CLICK_ACTION, thoughts: 't' });
    expect(parsed.recoveredBy).toBeUndefined();
  });
});

describe('profile restriction', () => {
  it.each(['double_click', 'right_click', 'triple_click', 'left_click_drag'])(
    'fara-7b rejects the Fara-1.5 action %s as unknown',
    (action) => {
      const text = `t<tool_call>{"name": "computer_use", "arguments": {"action": "${action}", "coordinate": [1, 2]}}`;
      expect(() => parseModelOutput(text, FARA7B)).toThrow(UnknownActionError);
      expect(parseModelOutput(text, FARA15).action.action).toBe(action);
    },
  );
});

describe('a narrowed action list (a prompt file that offers fewer actions)', () => {
  const allowedActions = ['scroll', 'left_click', 'terminate'];
  const call = (args: string) => `t<tool_call>{"name": "computer_use", "arguments": ${args}}</tool_call>`;

  it('accepts an action on the list', () => {
    expect(parseModelOutput(call('{"action": "scroll", "pixels": 100}'), FARA15, { allowedActions }).action).toEqual({
      action: 'scroll',
      pixels: 100,
      thoughts: 't',
    });
  });

  it.each([
    ['a profile action left off the list', call('{"action": "type", "text": "x"}')],
    ['the same as a function named after it', 't<tool_call>{"name": "type", "arguments": {"text": "x"}}</tool_call>'],
  ])('refuses %s as unknown, naming the list', (_name, text) => {
    const error = (() => {
      try {
        return parseModelOutput(text, FARA15, { allowedActions });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnknownActionError);
    expect((error as UnknownActionError).allowedActions).toEqual(allowedActions);
    expect(invalidOutputFeedback(error as UnknownActionError, FARA15)).toBe(
      '"type" is not an available action. No action was taken. Use one of: scroll, left_click, terminate.',
    );
  });
});
