// The Gemini conversation of one step, rebuilt entirely from the run's history (no provider-side state, so a retried
// or resumed step on another worker sends the same request): the task with the first screenshot, then per model call
// its recorded turn replayed as Gemini sent it (thought signatures included) and exactly one user turn answering it.
// A turn with function calls is answered with one functionResponse per call (the call's id echoed when it had one),
// each with the page URL and the screenshot after that call's last action; calls a batch never reached (cut short by
// a failure, an output we could not read, a declined confirmation) say why they were not carried out. A confirmed
// safety decision is acknowledged with `safety_acknowledgement: "true"` on its call's response; a declined one sends
// the person's reply as text after the results. A turn with text only (a question) is answered by the person's reply,
// then the screenshot and URL. Screenshots go in the newest `imagesKept` user turns only.
import type { Content, FunctionCall, Part } from '@google/genai';
import type { ScreenSize } from '../../actions/tool-schema';
import { DEFAULT_MAX_IMAGES, truncateObservation } from '../../model/context';
import type { HistoryEntry, ImageLoader } from '../../model/context';
import { confirmationOf } from './functions';
import { actionCounts, callsOf, MALFORMED_FUNCTION_CALL, parseRecordedCandidate } from './read';

/** What the model saw after an action: the screenshot, the URL, and the texts it is told. */
interface Seen {
  screenshot?: string | undefined;
  url?: string | undefined;
  textObservation?: string | undefined;
  userReply?: string | undefined;
}

/** One model call and its answer: the recorded turn, how many later steps continued it, the observations after. */
interface Exchange {
  text: string;
  continues: number;
  seen: Seen[];
}

/** The history split into the task, then one Exchange per model call (continuing steps folded into their call). */
function exchangesOf(history: readonly HistoryEntry[]): { task: Seen & { text: string }; exchanges: Exchange[] } {
  const task: Seen & { text: string } = { text: '' };
  const exchanges: Exchange[] = [];
  let replies: string[] = [];
  for (const entry of history) {
    const exchange = exchanges[exchanges.length - 1];
    if (entry.kind === 'task') Object.assign(task, { text: entry.text, screenshot: entry.screenshot });
    else if (entry.kind === 'user_reply') replies.push(entry.text);
    else if (entry.kind === 'assistant' && entry.continues && exchange) exchange.continues += 1;
    else if (entry.kind === 'assistant') exchanges.push({ text: entry.text, continues: 0, seen: [] });
    else if (entry.kind === 'observation') {
      const userReply = [...replies, entry.userReply].filter(Boolean).join('\n\n') || undefined;
      replies = [];
      const seen: Seen = { ...entry, userReply };
      if (exchange) exchange.seen.push(seen);
      else Object.assign(task, { screenshot: seen.screenshot ?? task.screenshot, url: seen.url });
    }
  }
  return { task, exchanges };
}

/** The replayed model turn: the recorded content as Gemini sent it; a turn with no content gets one text part. */
function modelContent(exchange: Exchange): Content {
  const recorded = parseRecordedCandidate(exchange.text);
  if (!recorded) return { role: 'model', parts: [{ text: exchange.text || '(no output)' }] };
  const parts = recorded.content?.parts ?? [];
  if (parts.length > 0) return { ...recorded.content, role: 'model', parts };
  // A MALFORMED_FUNCTION_CALL candidate may come without content; the turn still needs a model part between the two
  // user turns (the API wants them alternating), so it says what happened.
  const said =
    recorded.finishReason === MALFORMED_FUNCTION_CALL
      ? `(${recorded.finishMessage ?? 'the function call was malformed'})`
      : `(no output: ${recorded.finishReason ?? 'empty'})`;
  return { role: 'model', parts: [{ text: said }] };
}

const urlText = (url: string | undefined): string | undefined => (url ? `Current URL: ${url}` : undefined);
const observed = (text: string | undefined): string | undefined => (text ? truncateObservation(text) : undefined);

/**
 * A turn's screenshot as Gemini's inlineData (a data URL split into its type and base64 bytes); none for a turn older
 * than the screenshots kept (a null loader).
 */
async function imagePart(ref: string | undefined, loadImage: ImageLoader | null): Promise<Part | undefined> {
  if (!ref || !loadImage) return undefined;
  const url = await loadImage(ref);
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { inlineData: { mimeType: match[1], data: match[2] } } : undefined;
}

/** Text parts, one per non-empty text. */
const texts = (...values: (string | undefined)[]): Part[] =>
  values.filter((v): v is string => !!v).map((text) => ({ text }));

/** The user turn after a model turn with no call (a question, an answer, a malformed call): texts, screenshot, URL. */
async function textAnswer(seen: Seen | undefined, loadImage: ImageLoader | null): Promise<Content> {
  const image = await imagePart(seen?.screenshot, loadImage);
  const parts = [
    ...texts(seen?.userReply, observed(seen?.textObservation)),
    ...(image ? [image] : []),
    ...texts(urlText(seen?.url)),
  ];
  return { role: 'user', parts: parts.length > 0 ? parts : [{ text: '(nothing new)' }] };
}

/** Where each call's actions sit in the turn's sequence of our actions: [first, last], 1-based. */
function ranges(counts: readonly number[]): [number, number][] {
  let at = 0;
  return counts.map((n) => {
    const range: [number, number] = [at + 1, at + n];
    at += n;
    return range;
  });
}

/** The functionResponse part answering one call. */
function responsePart(call: FunctionCall, response: Record<string, unknown>, image: Part | undefined): Part {
  return {
    functionResponse: {
      ...(call.id ? { id: call.id } : {}),
      name: call.name ?? '',
      response,
      ...(image?.inlineData ? { parts: [{ inlineData: image.inlineData }] } : {}),
    },
  };
}

/** The user turn answering a model turn's function calls (see the module comment). */
async function callsAnswer(
  exchange: Exchange,
  calls: FunctionCall[],
  screen: ScreenSize,
  loadImage: ImageLoader | null,
): Promise<Content> {
  const counts = actionCounts(calls, screen);
  const asking = calls.findIndex((call) => confirmationOf(call));
  // With a confirmation, the turn's first step asked the person; the calls' actions follow from the next step on.
  const offset = asking >= 0 ? 1 : 0;
  const confirmed = asking >= 0 && exchange.continues > 0;
  const carried = counts === null ? 0 : Math.max(0, exchange.continues + 1 - offset);
  const last = exchange.seen[exchange.seen.length - 1];
  const after = (n: number): Seen | undefined => exchange.seen[offset + n - 1];
  const why =
    asking >= 0 && !confirmed
      ? 'the user declined to confirm it'
      : counts === null
        ? (last?.textObservation ?? 'the output could not be read')
        : `the batch stopped before it${last?.textObservation ? `: ${last.textObservation}` : ''}`;
  const parts: Part[] = [];
  for (const [i, call] of calls.entries()) {
    const [first, end] = counts ? (ranges(counts)[i] ?? [0, 0]) : [0, 0];
    const done = counts !== null && end <= carried;
    const seen = done ? after(end) : last;
    const notes = done ? exchange.seen.slice(offset + first - 1, offset + end).map((s) => s.textObservation) : [];
    const output = notes.filter(Boolean).join('\n');
    const response: Record<string, unknown> = {
      ...(seen?.url ? { url: seen.url } : {}),
      ...(done && output ? { output: observed(output) } : {}),
      ...(done ? {} : { error: `Not carried out: ${observed(why)}` }),
      ...(confirmed && i === asking ? { safety_acknowledgement: 'true' } : {}),
    };
    parts.push(responsePart(call, response, await imagePart(seen?.screenshot, loadImage)));
  }
  // The person's words said during the turn: the reply to a confirmation only when it declined (a yes is the
  // acknowledgement), any other reply as it was given.
  const replies = exchange.seen.map((seen, i) => {
    if (!seen.userReply) return undefined;
    if (asking >= 0 && i === 0) return confirmed ? undefined : `The user declined: ${seen.userReply}`;
    return seen.userReply;
  });
  return { role: 'user', parts: [...parts, ...texts(...replies)] };
}

/** The user turn answering one model turn. */
async function answerOf(exchange: Exchange, screen: ScreenSize, loadImage: ImageLoader | null): Promise<Content> {
  const calls = callsOf(parseRecordedCandidate(exchange.text)?.content);
  return calls.length > 0
    ? callsAnswer(exchange, calls, screen, loadImage)
    : textAnswer(exchange.seen.at(-1), loadImage);
}

/**
 * The request's contents for a history (see the module comment). Screenshots go in the newest `imagesKept` user
 * turns only (at least the current one): an older function response keeps its `response` (URL and texts) without
 * `parts`, which the format allows and Google's reference implementation does too; an older image part is left out.
 */
export async function geminiContents(
  history: readonly HistoryEntry[],
  screen: ScreenSize,
  loadImage: ImageLoader,
  imagesKept: number | undefined,
): Promise<Content[]> {
  const { task, exchanges } = exchangesOf(history);
  const keepFrom = exchanges.length + 1 - Math.max(1, imagesKept ?? DEFAULT_MAX_IMAGES);
  const loaderAt = (answer: number): ImageLoader | null => (answer >= keepFrom ? loadImage : null);
  const first = await imagePart(task.screenshot, loaderAt(0));
  const contents: Content[] = [
    {
      role: 'user',
      parts: [...texts(task.text || '(no task text)'), ...(first ? [first] : []), ...texts(urlText(task.url))],
    },
  ];
  for (const [i, exchange] of exchanges.entries()) {
    contents.push(modelContent(exchange));
    contents.push(await answerOf(exchange, screen, loaderAt(i + 1)));
  }
  return contents;
}
