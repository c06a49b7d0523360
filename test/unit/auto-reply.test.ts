// Specification of answering questions without a person: autoReply in the task input (a text, or true for the
// standing approval), `cua run --auto-reply [TEXT]`, and `auto_reply` in our task sets.
import { describe, expect, it } from 'vitest';

import { bareAutoReply } from '../../cli/commands/run';
import { autoReplyText, STANDING_APPROVAL } from '../../src/agent/reply';
import { parseTaskSet } from '../../src/eval/task-set';
import { TaskInputSchema } from '../../src/contract/task';

describe('the standing approval', () => {
  it('says go on and make nothing up, in our words (not the seed sentence)', () => {
    expect(STANDING_APPROVAL).toMatch(/continue/);
    expect(STANDING_APPROVAL).toMatch(/approve/);
    expect(STANDING_APPROVAL).toMatch(/made up/);
    expect(STANDING_APPROVAL).not.toMatch(/keep going so far as/i);
  });

  it.each<[string, string | boolean | undefined, string | undefined]>([
    ['true: the standing approval', true, STANDING_APPROVAL],
    ['a text: that text, as before', 'Lisbon', 'Lisbon'],
    ['false: questions wait', false, undefined],
    ['absent: questions wait', undefined, undefined],
  ])('autoReplyText, %s', (_name, value, text) => {
    expect(autoReplyText(value)).toBe(text);
  });
});

describe('the task input', () => {
  const parse = (autoReply: unknown) => TaskInputSchema.safeParse({ runId: 'r', instruction: 'x', autoReply });
  it.each([true, false, 'Yes, go ahead.'])('accepts autoReply %j', (value) => {
    expect(parse(value)).toMatchObject({ success: true, data: { autoReply: value } });
  });
  it.each(['', 3, null])('refuses autoReply %j', (value) => {
    expect(parse(value).success).toBe(false);
  });
});

describe('cua run --auto-reply', () => {
  it.each<[string, string[], string[], boolean]>([
    ['last, with no text', ['x', '--auto-reply'], ['x'], true],
    ['before another flag', ['x', '--auto-reply', '--json'], ['x', '--json'], true],
    ['with a text: left to the parser', ['x', '--auto-reply', 'Lisbon'], ['x', '--auto-reply', 'Lisbon'], false],
    ['with an = text', ['x', '--auto-reply=-1'], ['x', '--auto-reply=-1'], false],
    ["after '--' it is the instruction's", ['--', 'x', '--auto-reply'], ['--', 'x', '--auto-reply'], false],
    ['absent', ['x', '--json'], ['x', '--json'], false],
  ])('%s', (_name, argv, rest, bare) => {
    expect(bareAutoReply(argv)).toEqual({ argv: rest, bare });
  });
});

describe('auto_reply in a task set', () => {
  const set = (autoReply: unknown) =>
    parseTaskSet({
      name: 'set.jsonl',
      where: 'set.jsonl',
      text: JSON.stringify({ id: 't1', instruction: 'x', auto_reply: autoReply }),
    });
  it.each<[unknown, string | true]>([
    [true, true],
    ['Lisbon', 'Lisbon'],
  ])('auto_reply %j', (value, expected) => {
    expect(set(value)[0]?.autoReply).toBe(expected);
  });
  it('refuses auto_reply false (leave it out) in one line naming the field', () => {
    expect(() => set(false)).toThrow(/set\.jsonl:1: .*auto_reply/);
  });
});
