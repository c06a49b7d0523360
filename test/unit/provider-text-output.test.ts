// An output with text and no action, read the same way by the three provider families: a question for the person when
// its last line asks one, else the task's answer; an empty one, or one the provider cut off at its token limit, is
// fed back to the model instead of ending the task with half an answer.
import { describe, expect, it } from 'vitest';

import { ANTHROPIC_COMPUTER_FAMILY } from '../../src/families/anthropic-computer/family';
import { GEMINI_COMPUTER_FAMILY } from '../../src/families/gemini-computer/family';
import { asksPerson, CutOffOutputError, textOnlyAction } from '../../src/families/native/text-output';
import { OPENAI_COMPUTER_FAMILY } from '../../src/families/openai-computer/family';
import type { ModelFamily } from '../../src/families/family';
import { EmptyOutputError } from '../../src/model/errors';

const screen = { width: 1440, height: 900 };

describe('a text-only output', () => {
  it('asks the person when its last line ends with a question mark', () => {
    expect(asksPerson('The form needs a name.\nWhose name should I use?')).toBe(true);
    expect(asksPerson('Which one? I picked the first.')).toBe(false);
    expect(asksPerson('Shall I book it?"')).toBe(true);
    expect(textOnlyAction('Booked: TW-1.')).toMatchObject({ action: 'terminate', answer: 'Booked: TW-1.' });
    expect(textOnlyAction('Whose name?')).toMatchObject({ action: 'ask_user_question', question: 'Whose name?' });
  });

  it('is fed back when empty or cut off', () => {
    expect(() => textOnlyAction('  ')).toThrow(EmptyOutputError);
    expect(() => textOnlyAction('The booking is', '', 'max_tokens')).toThrow(CutOffOutputError);
    expect(() => textOnlyAction('The booking is', '', 'max_tokens')).toThrow(/cut off at the max_tokens limit/);
  });
});

const TRUNCATED = 'I have filled in the form and the total is';
const cases: [string, ModelFamily, unknown, unknown][] = [
  [
    'anthropic-computer (stop_reason max_tokens)',
    ANTHROPIC_COMPUTER_FAMILY,
    { content: [{ type: 'text', text: TRUNCATED }], stop_reason: 'max_tokens' },
    { content: [{ type: 'text', text: 'Booked.' }], stop_reason: 'end_turn' },
  ],
  [
    'openai-computer (status incomplete)',
    OPENAI_COMPUTER_FAMILY,
    { status: 'incomplete', output: [message(TRUNCATED)] },
    { status: 'completed', output: [message('Booked.')] },
  ],
  [
    'gemini-computer (finishReason MAX_TOKENS)',
    GEMINI_COMPUTER_FAMILY,
    { candidates: [{ content: { role: 'model', parts: [{ text: TRUNCATED }] }, finishReason: 'MAX_TOKENS' }] },
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Booked.' }] }, finishReason: 'STOP' }] },
  ],
];

function message(text: string) {
  return {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

describe.each(cases)('%s', (_name, family, cut, whole) => {
  const read = (native: unknown) =>
    family.read({ text: '', native }, { screen, allowed: family.allowedActions, terminateOnParseError: false });

  it('feeds a cut-off text back, and ends the task with a whole one', () => {
    expect(() => read(cut)).toThrow(CutOffOutputError);
    expect(read(whole).action).toMatchObject({ action: 'terminate', answer: 'Booked.' });
  });
});
