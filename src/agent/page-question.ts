// The model sub-call of read_page_answer_question: the page's text and the question, no screenshot. The text is cut
// at a limit (the original cuts at 20,000 characters; config `browser.readPageMaxChars`), so a long page costs a
// bounded prompt. The call is recorded on its action as a `tool_sub_calls` entry (model, prompt size, output,
// duration), as the original records calls made inside a tool. Pure.
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../model/client';
import type { ToolSubCallInput } from '../trajectory/schema';
import { subCallRecord } from './sub-calls';
import type { ModelSubCall } from './sub-calls';

/** Actions whose tool calls a model: their action event is recorded with the call (`tool_sub_calls`), by act. */
export const ACTIONS_WITH_SUB_CALLS: readonly string[] = ['read_page_answer_question'];

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

export interface PageSubCall extends ModelSubCall {
  /** Characters of the page's text before the cut. */
  pageChars: number;
  /** The page text asked about (its hash is recorded, for a replay to tell the same page). */
  pageText?: string;
}

/** The `tool_sub_calls` entry of a page question (ToolSubCallSchema). */
export function pageSubCallRecord(call: PageSubCall): ToolSubCallInput {
  return {
    ...subCallRecord('read_page_answer_question', call),
    page_chars: call.pageChars,
    ...(call.pageText !== undefined ? { page_sha256: pageTextHash(call.pageText) } : {}),
  };
}

/** The hash a sub-call records of the page text it was asked about (a replay reuses its output on the same text). */
export function pageTextHash(pageText: string): string {
  return createHash('sha256').update(pageText).digest('hex');
}
