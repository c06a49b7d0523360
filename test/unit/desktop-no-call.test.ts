// Specification of noCallOutcome: a desktop output in which no tool call was read ends the task with its words as the
// answer (desktop.endOnNoCall, the default), unless it is empty or looks like a call that could not be read; with
// endOnNoCall off every such output is invalid, as before.
import { describe, expect, it } from 'vitest';

import {
  EMPTY_OUTPUT_ERROR,
  NO_TOOL_CALL_ERROR,
  finalWords,
  noCallOutcome,
  readToolCalls,
} from '../../src/desktop/agent';

describe('noCallOutcome: plain words are the final answer', () => {
  it.each([
    ['prose', 'The file holds 42 lines.', 'The file holds 42 lines.'],
    [
      'prose with space around it',
      '\n  Done: the report is in ~/report.txt.  \n',
      'Done: the report is in ~/report.txt.',
    ],
    ['words after reasoning', '<think>ls showed three files</think>\nThere are three files.', 'There are three files.'],
    ['JSON that is no call', 'The record is {"name": "Ada", "age": 36}.', 'The record is {"name": "Ada", "age": 36}.'],
    ['code that calls no tool', 'Run print(len(xs)) to see it.', 'Run print(len(xs)) to see it.'],
    ['a tool named in prose', 'I will not stop here; the click worked.', 'I will not stop here; the click worked.'],
  ])('%s', (_case, text, answer) => {
    expect(readToolCalls({ text }).calls).toEqual([]);
    expect(noCallOutcome(text, true)).toEqual({ kind: 'final', answer });
  });
});

describe('noCallOutcome: invalid outputs', () => {
  it.each([
    ['nothing', ''],
    ['only white space', ' \n\t '],
    ['only reasoning', '<think>I should check the file first.</think>'],
    ['reasoning cut short', '<think>I should check the'],
  ])('%s is an empty output, with either setting', (_case, text) => {
    for (const endOnNoCall of [true, false]) {
      expect(noCallOutcome(text, endOnNoCall)).toEqual({
        kind: 'invalid',
        error: EMPTY_OUTPUT_ERROR,
        errorType: 'EmptyReply',
      });
    }
  });

  it.each([
    ['a broken JSON call', '{"name": "click", "arguments": {"x": 10, "y": }}', 'a call of click'],
    ['a call in function syntax', 'run_command(command="ls -l")', 'run_command(…)'],
    ['a wrapped call in function syntax', 'computer.click(x=1, y=2)', 'computer.click(…)'],
    ['a stray closing tag', 'stop with 42</tool_call>', '</tool_call'],
    ['another model family’s call token', '[TOOL_CALLS] click', '[TOOL_CALLS]'],
    ['the memory format imitated', 'ACTION: click the OK button', 'ACTION:'],
    ['an arguments field', "{'arguments': {'query': 'OK'}}", 'an "arguments" field'],
  ])('%s is an unreadable call, with either setting', (_case, text, seen) => {
    expect(readToolCalls({ text }).calls).toEqual([]);
    for (const endOnNoCall of [true, false]) {
      const outcome = noCallOutcome(text, endOnNoCall);
      expect(outcome).toMatchObject({ kind: 'invalid', errorType: 'UnreadableToolCall' });
      expect(outcome.kind === 'invalid' && outcome.error).toContain(`looks like a tool call (${seen})`);
    }
  });

  it('plain words are an invalid output when every step must call a tool (endOnNoCall false)', () => {
    expect(noCallOutcome('The file holds 42 lines.', false)).toEqual({
      kind: 'invalid',
      error: NO_TOOL_CALL_ERROR,
      errorType: 'NoToolCall',
    });
  });

  it('the errors are one line and tell the model to call stop', () => {
    const unreadable = noCallOutcome('click(1, 2)', true);
    for (const error of [EMPTY_OUTPUT_ERROR, unreadable.kind === 'invalid' ? unreadable.error : '']) {
      expect(error).not.toContain('\n');
      expect(error).toContain('call stop with the final answer');
    }
  });
});

describe('finalWords', () => {
  it.each([
    ['plain', 'plain'],
    ['<think>a</think> b <think>c</think> d', 'd'],
    ['answer <think>left open', 'answer'],
    ['<THINK >x</THINK > y', 'y'],
  ])('%j → %j', (text, words) => {
    expect(finalWords(text)).toBe(words);
  });
});
