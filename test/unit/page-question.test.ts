// Specification of read_page_answer_question's model sub-call: the page's text, cut at 20,000 characters by default
// (the original's cut) or at the configured limit, and the question.
import { describe, expect, it } from 'vitest';

import { DEFAULT_READ_PAGE_MAX_CHARS, pageQuestionMessages, pageTextForQuestion } from '../../src/agent/page-question';

describe('the page text sent', () => {
  it('is cut at 20,000 characters by default', () => {
    expect(DEFAULT_READ_PAGE_MAX_CHARS).toBe(20_000);
    const sent = pageTextForQuestion('a'.repeat(20_000) + 'b'.repeat(40_000));
    expect(sent).toBe(`${'a'.repeat(20_000)}\n[page text cut at 20000 characters]`);
  });

  it.each<[string, number, number, boolean]>([
    ['shorter than the limit: as it is', 500, 1000, false],
    ['exactly the limit: as it is', 1000, 1000, false],
    ['longer: cut and marked', 1001, 1000, true],
    ['a configured larger limit', 50_000, 60_000, false],
  ])('%s', (_name, length, limit, cut) => {
    const sent = pageTextForQuestion('x'.repeat(length), limit);
    expect(sent.startsWith('x'.repeat(Math.min(length, limit)))).toBe(true);
    expect(sent.endsWith(`[page text cut at ${limit} characters]`)).toBe(cut);
    expect(sent.replace(/\n\[page text cut at \d+ characters\]$/, '').length).toBe(Math.min(length, limit));
  });

  it('goes with the question in one user message, after the instructions', () => {
    const [system, user] = pageQuestionMessages('What is the price?', 'Price: €120', 1000);
    expect(system?.role).toBe('system');
    expect(user).toEqual({ role: 'user', content: 'Page text:\n\nPrice: €120\n\nQuestion: What is the price?' });
  });
});
