// The chat sent for one model call, built from a neutral history (the caller maps its run-folder
// events to HistoryEntry). Behaviour follows the original agent:
// - the user text of each step is composed from the page URL (query string cut, length capped) and
//   either the user's reply, or a text observation plus the nudge, or the nudge alone;
// - only the newest `maxImages` screenshots (default 3) are sent; an older step message loses its
//   screenshot *and* its text, except the task (kept as its text) and a step that carried a user's
//   reply (kept as the reply's own words, without URL or nudge); assistant messages are always kept;
// - an optional token budget (off by default) first strips screenshots oldest-first, never the newest,
//   as the original does, and then, beyond the original, drops the oldest unprotected messages whole.
// No file I/O: screenshots are opaque refs turned into data URLs by an injected loader.
import { z } from 'zod';
import { FARA_STEP_PROMPT } from '../actions/fara';

/** An opaque key for a stored screenshot (e.g. a run-folder file name); only the loader interprets it. */
export type ImageRef = string;

/** Turns a screenshot ref into a `data:` URL (or any URL the model server accepts). */
export type ImageLoader = (ref: ImageRef) => Promise<string>;

/**
 * One entry of the history, oldest first.
 * - task: the original instruction, with the first screenshot if there was one. Never dropped.
 * - user_reply: a user's reply to ask_user_question, in their own words. Never dropped. It is folded
 *   into the next observation (the step the reply resumed), whose text then shows the reply instead of
 *   the nudge; with no observation after it, it is sent as a text message of its own.
 * - observation: one step's input: the screenshot the model saw, the page URL, and the text
 *   observation left by the previous action (e.g. read_page_answer_question's answer, a failed
 *   visit_url). `userReply` may be set directly instead of using a user_reply entry.
 * - assistant: the model's output for a step, verbatim (thoughts + `<tool_call>` block; a native family's: the
 *   provider's response as JSON), or `continues`: the step carried out the next action of an earlier output.
 * The last observation is the current step. A step message without a screenshot does not count
 * toward `maxImages` and is never dropped by it (as in the original).
 */
export const historyEntrySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('task'), text: z.string(), screenshot: z.string().optional() }),
  z.strictObject({ kind: z.literal('user_reply'), text: z.string() }),
  z.strictObject({
    kind: z.literal('observation'),
    screenshot: z.string().optional(),
    url: z.string().optional(),
    textObservation: z.string().optional(),
    userReply: z.string().optional(),
  }),
  /**
   * `continues`: an action of an earlier step's model call (a provider's batch, or actions a provider's check held
   * until the person confirmed) carried out without a call of its own; its `text` is empty.
   */
  z.strictObject({ kind: z.literal('assistant'), text: z.string(), continues: z.literal(true).optional() }),
]);
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** OpenAI chat-completions message shapes (a structural subset of the `openai` package's types). */
export type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image_url'; image_url: { url: string } };
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<TextPart | ImagePart> }
  | { role: 'assistant'; content: string };

export const DEFAULT_MAX_IMAGES = 3;
export const DEFAULT_IMAGE_TOKENS = 1500;
export const DEFAULT_MAX_URL_CHARS = 100;
export const DEFAULT_MAX_OBSERVATION_CHARS = 1000;
export const DEFAULT_URL_LABEL = 'Current URL:';
/** The sentence after each screenshot when the caller gives none: the Fara families' own. */
export const DEFAULT_NUDGE = FARA_STEP_PROMPT;

export type StepTextOptions = {
  /** Sentence asking for the next action (default {@link DEFAULT_NUDGE}). */
  nudge?: string;
  /** Label before the page URL (default {@link DEFAULT_URL_LABEL}). */
  urlLabel?: string;
  maxUrlChars?: number;
  maxObservationChars?: number;
};

export type StepInput = { url?: string; textObservation?: string; userReply?: string };

/**
 * The user text of one step, in one of three forms (each preceded by the URL line when a URL is known):
 * (a) after a user reply: the reply; (b) after a text observation: the truncated observation, then the
 * nudge; (c) otherwise: the nudge. A reply wins over a text observation, as in the original.
 */
export function composeStepText(step: StepInput, options: StepTextOptions = {}): string {
  const nudge = options.nudge ?? DEFAULT_NUDGE;
  const urlLine = step.url
    ? `${options.urlLabel ?? DEFAULT_URL_LABEL} ${trimUrlForPrompt(step.url, options.maxUrlChars)}\n`
    : '';
  if (step.userReply) return urlLine + step.userReply;
  if (step.textObservation) {
    const observation = truncateObservation(step.textObservation, options.maxObservationChars);
    return `${urlLine}${observation}\n${nudge}`;
  }
  return urlLine + nudge;
}

/** The URL as the model sees it: everything from the first `?` cut, then at most `maxChars` characters, no marker. */
export function trimUrlForPrompt(url: string, maxChars: number = DEFAULT_MAX_URL_CHARS): string {
  const withoutQuery = url.split('?', 1)[0] ?? '';
  return withoutQuery.slice(0, Math.max(0, maxChars));
}

/**
 * Shorten `text` to about `limit` characters, keeping its first and last halves (answers tend to be
 * at the start, summaries at the end) around the seed's `... [truncated N chars] ...` line, N = characters removed.
 */
export function truncateObservation(text: string, limit: number = DEFAULT_MAX_OBSERVATION_CHARS): string {
  if (text.length <= limit) return text;
  const half = Math.max(0, Math.floor(limit / 2));
  const head = text.slice(0, half);
  const tail = half > 0 ? text.slice(-half) : '';
  return `${head}\n... [truncated ${text.length - head.length - tail.length} chars] ...\n${tail}`;
}

/** Rough token count of a text: length / 4, rounded down, plus one. */
export function estimateTextTokens(text: string): number {
  return Math.floor(text.length / 4) + 1;
}

/** Anything with chat-like content: a string, or parts where `type: 'text'` is text and any other part an image. */
export type TokenCountable = { content: string | ReadonlyArray<{ type: string; text?: string }> };

/** Rough prompt size: every text part by {@link estimateTextTokens}, every image as `imageTokens`. */
export function estimateTokens(
  messages: readonly TokenCountable[],
  imageTokens: number = DEFAULT_IMAGE_TOKENS,
): number {
  let total = 0;
  for (const message of messages) {
    const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const part of parts) total += part.type === 'text' ? estimateTextTokens(part.text ?? '') : imageTokens;
  }
  return total;
}

export type BuildChatOptions = StepTextOptions & {
  /** The system message text, built by the caller for this step. */
  systemPrompt: string;
  loadImage: ImageLoader;
  /** Screenshots sent, newest first (default 3); 0 or less sends every screenshot, as the original. */
  maxImages?: number;
  /** Estimated-token cap for the whole prompt; 0 or less (the default) turns the budget trim off. */
  tokenBudget?: number;
  imageTokenEstimate?: number;
};

/** The messages for one model call: system, then the trimmed history; the last observation is the current step. */
export async function buildChatMessages(
  history: readonly HistoryEntry[],
  options: BuildChatOptions,
): Promise<ChatMessage[]> {
  let drafts = toDrafts(history, options);
  drafts = keepNewestImages(drafts, options.maxImages ?? DEFAULT_MAX_IMAGES);
  drafts = fitTokenBudget(drafts, options.tokenBudget ?? 0, options.imageTokenEstimate ?? DEFAULT_IMAGE_TOKENS);
  return render(drafts, options.loadImage);
}

// ---- internals -------------------------------------------------------------------------------

/** One message before images are loaded. `keepText` marks a protected message and the text it keeps. */
type Draft = {
  role: 'system' | 'user' | 'assistant';
  text: string;
  image?: ImageRef;
  keepText?: string;
  pinned?: boolean;
};

function toDrafts(history: readonly HistoryEntry[], options: BuildChatOptions): Draft[] {
  const drafts: Draft[] = [{ role: 'system', text: options.systemPrompt, pinned: true }];
  let pendingReplies: string[] = [];
  const flushReplies = () => {
    for (const reply of pendingReplies) drafts.push({ role: 'user', text: reply, keepText: reply });
    pendingReplies = [];
  };
  for (const entry of history) {
    if (entry.kind === 'user_reply') {
      pendingReplies.push(entry.text);
      continue;
    }
    if (entry.kind === 'observation') {
      const userReply = entry.userReply ?? (pendingReplies.length > 0 ? pendingReplies.join('\n') : undefined);
      pendingReplies = [];
      const text = composeStepText({ url: entry.url, textObservation: entry.textObservation, userReply }, options);
      drafts.push({ role: 'user', text, image: entry.screenshot, keepText: userReply || undefined });
      continue;
    }
    flushReplies();
    if (entry.kind === 'task') {
      drafts.push({ role: 'user', text: entry.text, image: entry.screenshot, keepText: entry.text });
    } else {
      drafts.push({ role: 'assistant', text: entry.text });
    }
  }
  flushReplies();
  const last = drafts[drafts.length - 1];
  if (last) last.pinned = true;
  return drafts;
}

/** Newest `max` screenshots stay; older image messages shrink to their protected text or go. */
function keepNewestImages(drafts: readonly Draft[], max: number): Draft[] {
  if (max <= 0) return [...drafts];
  const kept: Draft[] = [];
  let seen = 0;
  for (let i = drafts.length - 1; i >= 0; i--) {
    const draft = drafts[i];
    if (!draft) continue;
    if (draft.image === undefined) {
      kept.push(draft);
      continue;
    }
    if (seen < max) kept.push(draft);
    else if (draft.keepText !== undefined) kept.push({ ...draft, image: undefined, text: draft.keepText });
    seen++;
  }
  return kept.reverse();
}

function fitTokenBudget(drafts: readonly Draft[], budget: number, imageTokens: number): Draft[] {
  const out = [...drafts];
  const fits = () => budget <= 0 || estimateTokens(out.map(countable), imageTokens) <= budget;
  if (fits()) return out;
  // Phase 1 (the original's): strip screenshots oldest-first, never the newest; their text stays.
  const withImage = out.flatMap((d, i) => (d.image === undefined ? [] : [i]));
  for (const i of withImage.slice(0, -1)) {
    const draft = out[i];
    if (draft) out[i] = { ...draft, image: undefined };
    if (fits()) return out;
  }
  // Phase 2 (ours): drop whole messages oldest-first, except pinned (system, current) and protected ones.
  for (let i = 0; i < out.length && !fits();) {
    const draft = out[i];
    if (draft && !draft.pinned && draft.keepText === undefined) out.splice(i, 1);
    else i++;
  }
  return out;
}

function countable(draft: Draft): TokenCountable {
  if (draft.role !== 'user') return { content: draft.text };
  return {
    content:
      draft.image === undefined
        ? [{ type: 'text', text: draft.text }]
        : [{ type: 'image' }, { type: 'text', text: draft.text }],
  };
}

async function render(drafts: readonly Draft[], loadImage: ImageLoader): Promise<ChatMessage[]> {
  const refs = [...new Set(drafts.flatMap((d) => (d.image === undefined ? [] : [d.image])))];
  const urls = new Map(await Promise.all(refs.map(async (ref) => [ref, await loadImage(ref)] as const)));
  return drafts.map((draft): ChatMessage => {
    if (draft.role !== 'user') return { role: draft.role, content: draft.text };
    const url = draft.image === undefined ? undefined : urls.get(draft.image);
    const text: TextPart = { type: 'text', text: draft.text };
    return { role: 'user', content: url === undefined ? [text] : [{ type: 'image_url', image_url: { url } }, text] };
  });
}
