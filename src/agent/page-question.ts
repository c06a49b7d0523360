// The model sub-call of read_page_answer_question: the page's text and the question, no screenshot. The text is cut
// at a limit (the original cuts at 20,000 characters; config `browser.readPageMaxChars`), so a long page costs a
// bounded prompt. Pure.
import type { ChatMessage } from '../model/client';

/** Characters of page text the sub-call sends by default (the original's cut). */
export const DEFAULT_READ_PAGE_MAX_CHARS = 20_000;

const INSTRUCTIONS =
  'You answer a question using only the text of a web page. Answer briefly; say so if the page does not contain the answer.';

/** The page text as sent: at most `limit` characters, a cut one marked as cut. */
export function pageTextForQuestion(pageText: string, limit: number = DEFAULT_READ_PAGE_MAX_CHARS): string {
  return pageText.length > limit ? `${pageText.slice(0, limit)}\n[page text cut at ${limit} characters]` : pageText;
}

/** The sub-call's messages for `question` about a page whose text is `pageText`. */
export function pageQuestionMessages(
  question: string,
  pageText: string,
  limit: number = DEFAULT_READ_PAGE_MAX_CHARS,
): ChatMessage[] {
  return [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: `Page text:\n\n${pageTextForQuestion(pageText, limit)}\n\nQuestion: ${question}` },
  ];
}
