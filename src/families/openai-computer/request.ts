// The Responses API request of one step, rebuilt entirely from the run's history on every step (no
// previous_response_id and nothing stored at OpenAI: `store: false`, reasoning items sent back with their encrypted
// content), so a retried or resumed step on another worker sends the same request. The task opens the input; then per
// model call its recorded output items exactly as OpenAI sent them, and one user turn: a computer_call_output per
// call_id (with the safety checks acknowledged when the person confirmed) carrying the screenshot after the call's last
// carried-out action, and a user message with the URL and what the model must read (an error, the feedback on an
// invalid output, a batch cut short, the person's reply or refusal). A turn with text and no call is answered by the
// person's reply, in its own words, first.
import type {
  ResponseComputerToolCallOutputScreenshot,
  ResponseCreateParamsNonStreaming,
  ResponseInputContent,
  ResponseInputItem,
  Tool,
} from 'openai/resources/responses/responses';
import { DEFAULT_MAX_IMAGES } from '../../model/context';
import type { HistoryEntry } from '../../model/context';
import type { BatchedAction } from '../../model/parse';
import type { RequestInput } from '../family';
import { batchOf, checksOf } from './read';
import { callsOf, isRecord, modelOf, recordedItems } from './wire';
import type { OpenAiTool, ReplayItem } from './wire';

export type OpenAiRequestBody = ResponseCreateParamsNonStreaming;

type Observation = Extract<HistoryEntry, { kind: 'observation' }>;
type Task = Extract<HistoryEntry, { kind: 'task' }>;

/** `detail: "original"` is what the GA guide asks for; the pinned SDK does not declare it on a screenshot yet. */
type Screenshot = ResponseComputerToolCallOutputScreenshot & { detail?: 'original' };

/**
 * A computer_call_output must carry an image (image_url or file_id; the format has no text-only result), so a result
 * whose screenshot is past the history limit carries this 1x1 PNG instead, and its text says the screenshot was left
 * out.
 */
export const LEFT_OUT_PNG =
  'data:image/png;base64,' +
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export const OPENAI_SYSTEM_PROMPT = [
  'You operate a web browser to do a task for a person. The screenshots show the page only: there is no address bar,',
  'tab strip or browser window. To open a web address, press CTRL+L, type the whole address (with https://) and',
  'press ENTER; to go back, press ALT+ARROWLEFT. Each step tells you the page’s current URL. When you need something',
  'only the person can give (a choice, a missing detail, a permission), end your turn with a question and no action:',
  'their reply comes next. Never make up personal data (names, e-mail addresses, phone numbers, addresses, payment',
  'details): ask for it. When the task is done, answer in text with no action.',
].join(' ');

/** One model call of the history and what followed it until the next call. */
interface ModelCall {
  /** Its recorded output. */
  text: string;
  /** Steps that carried out its further actions with no call of their own. */
  continued: number;
  /** The observations after each of its steps; the last one's screenshot answers the call. */
  seen: Observation[];
}

/** The history's model calls in order, each with the steps that continued it and the observations after them. */
function modelCallsOf(history: readonly HistoryEntry[]): ModelCall[] {
  const modelCalls: ModelCall[] = [];
  for (const entry of history) {
    const modelCall = modelCalls[modelCalls.length - 1];
    if (entry.kind === 'assistant' && !entry.continues) modelCalls.push({ text: entry.text, continued: 0, seen: [] });
    else if (entry.kind === 'assistant' && modelCall) modelCall.continued += 1;
    else if (entry.kind === 'observation' && modelCall) modelCall.seen.push(entry);
    else if (entry.kind === 'user_reply' && modelCall)
      modelCall.seen.push({ kind: 'observation', userReply: entry.text });
  }
  return modelCalls;
}

const text = (t: string): ResponseInputContent => ({ type: 'input_text', text: t });
const image = (url: string): ResponseInputContent => ({ type: 'input_image', image_url: url, detail: 'original' });

async function taskMessage(
  task: Task | undefined,
  keepImage: boolean,
  input: RequestInput,
): Promise<ResponseInputItem> {
  const shot = keepImage && task?.screenshot ? [image(await input.loadImage(task.screenshot))] : [];
  return { role: 'user', content: [text(task?.text ?? ''), ...shot] };
}

/** The OpenAI actions (each once) of a batch's entries, for the model to read: `click`, `keypress`, … */
function nativeNames(entries: readonly BatchedAction[]): string {
  const natives = [...new Set(entries.map((b) => b.native))];
  const name = (n: unknown): string => (isRecord(n) && typeof n.type === 'string' ? n.type : 'action');
  return natives.map((n) => (Array.isArray(n) ? n.map(name).join(' + ') : name(n))).join(', ');
}

/** What a model call's results say besides the screenshot (see the module comment). */
function resultLines(
  modelCall: ModelCall,
  items: readonly ReplayItem[],
  input: RequestInput,
  keptImage: boolean,
): string[] {
  const end = modelCall.seen[modelCall.seen.length - 1];
  const checks = checksOf(items);
  const declined = checks.length > 0 && modelCall.continued === 0;
  const observed = modelCall.seen.flatMap((o) => (o.textObservation ? [o.textObservation] : []));
  const replies = modelCall.seen.flatMap((o) => (o.userReply ? [o.userReply] : []));
  const lines = end?.url ? [`Current URL: ${end.url}`] : [];
  lines.push(...observed);
  let batch: BatchedAction[] | null = null;
  try {
    batch = callsOf(items).length > 0 ? batchOf(items, input.screen) : null;
  } catch {
    batch = null; // a malformed call: nothing was carried out, and the feedback is among the observed texts
  }
  const carried = checks.length > 0 ? modelCall.continued : modelCall.continued + 1;
  if (batch && !declined && carried < batch.length) {
    const why = end?.textObservation ? 'see above' : 'the task stopped before them';
    lines.push(`These actions of your last turn were not carried out: ${nativeNames(batch.slice(carried))} (${why}).`);
  }
  if (declined) {
    lines.push('None of the actions of your last turn were carried out.');
    lines.push(`The user declined: ${replies.join('\n') || 'no'}`);
  } else if (callsOf(items).length > 0) lines.push(...replies);
  if (!keptImage) lines.push('(The screenshot of this step is left out to save context.)');
  return lines;
}

/** The user turn after a model call: its calls' outputs and a message, or (no call) the reply first, then the rest. */
async function callResults(
  modelCall: ModelCall,
  items: readonly ReplayItem[],
  keepImage: boolean,
  input: RequestInput,
): Promise<ResponseInputItem[]> {
  const shotRef = modelCall.seen[modelCall.seen.length - 1]?.screenshot;
  const shot = keepImage && shotRef ? await input.loadImage(shotRef) : null;
  const lines = resultLines(modelCall, items, input, shot !== null);
  const calls = callsOf(items);
  if (calls.length === 0) {
    const replies = modelCall.seen.flatMap((o) => (o.userReply ? [o.userReply] : []));
    const content = [
      ...replies.map(text),
      ...(shot ? [image(shot)] : []),
      ...(lines.length > 0 ? [text(lines.join('\n'))] : []),
    ];
    return content.length > 0 ? [{ role: 'user', content }] : [];
  }
  const confirmed = checksOf(items).length > 0 && modelCall.continued > 0;
  const output: Screenshot = { type: 'computer_screenshot', image_url: shot ?? LEFT_OUT_PNG, detail: 'original' };
  const results: ResponseInputItem[] = calls.map((call) => ({
    type: 'computer_call_output',
    call_id: call.call_id,
    output,
    ...(confirmed && call.pending_safety_checks.length > 0
      ? { acknowledged_safety_checks: call.pending_safety_checks }
      : {}),
  }));
  return lines.length > 0 ? [...results, { role: 'user', content: [text(lines.join('\n'))] }] : results;
}

/**
 * The items of an output as they are replayed: unchanged, less reasoning items at its end (an output cut short while
 * the model reasoned), since OpenAI refuses a reasoning item sent back without the item that followed it.
 */
function replayable(items: readonly ReplayItem[]): ReplayItem[] {
  let end = items.length;
  while (end > 0 && items[end - 1]?.type === 'reasoning') end -= 1;
  return items.slice(0, end);
}

/** One model call's items: its output replayed (a record that is no item list: as assistant text), then results. */
async function callItems(modelCall: ModelCall, keepImage: boolean, input: RequestInput): Promise<ResponseInputItem[]> {
  const items = recordedItems(modelCall.text);
  const replayed: ResponseInputItem[] = items
    ? replayable(items)
    : modelCall.text
      ? [{ role: 'assistant', content: modelCall.text }]
      : [];
  return [...replayed, ...(await callResults(modelCall, items ?? [], keepImage, input))];
}

function toolOf(tool: OpenAiTool, input: RequestInput): Tool {
  if (tool === 'computer') return { type: 'computer' };
  // The preview speaks the display size it is told: the screenshot's, so its coordinates are screenshot pixels.
  const { width, height } = input.screen;
  return { type: 'computer_use_preview', display_width: width, display_height: height, environment: 'browser' };
}

/**
 * The request body. Screenshots go with the last `imagesKept` (default 3) user turns only (the task's counts as one),
 * the newest always. The token budget is not applied: the preview tool asks OpenAI to truncate (`truncation: "auto"`),
 * and the GA models' context holds far more than a task's history with three screenshots.
 */
export async function openAiRequestBody(input: RequestInput, tool: OpenAiTool): Promise<OpenAiRequestBody> {
  const task = input.history[0]?.kind === 'task' ? input.history[0] : undefined;
  const modelCalls = modelCallsOf(input.history);
  const kept = Math.max(1, input.imagesKept ?? DEFAULT_MAX_IMAGES);
  const keeps = (at: number): boolean => at >= modelCalls.length + 1 - kept;
  const items: ResponseInputItem[] = [await taskMessage(task, keeps(0), input)];
  for (const [k, modelCall] of modelCalls.entries()) items.push(...(await callItems(modelCall, keeps(k + 1), input)));
  return {
    model: modelOf(input.endpoint) ?? '',
    instructions: OPENAI_SYSTEM_PROMPT,
    tools: [toolOf(tool, input)],
    input: items,
    reasoning: { summary: tool === 'computer' ? 'auto' : 'concise' },
    store: false,
    include: ['reasoning.encrypted_content'],
    ...(tool === 'computer_use_preview' ? { truncation: 'auto' as const } : {}),
  };
}
