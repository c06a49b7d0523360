// What the activities record the same way for every environment: the start page (step 0) at the first observe, a
// model output capped for the record, and a step that changes nothing (a stop, or an invalid output) written as its
// tool output and a post screenshot that is the pre one. And the action decide leaves for act to record: one whose tool
// calls a model (read_page_answer_question) goes into the stream with that call (`tool_sub_calls`), which only act
// knows, and the stream is append-only.
import { TEXT_OBSERVATION_KEY } from '../src/agent/history';
import { ACTIONS_WITH_SUB_CALLS } from '../src/agent/page-question';
import { MAX_OUTPUT_CHARS } from '../src/model/parse';
import { postObservation, startObservation, toolOutput } from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import { ActionSchema } from '../src/trajectory/schema';
import type { Action, Event, ToolSubCallInput } from '../src/trajectory/schema';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import type { DecideResult, StepRef } from '../src/contract/activities';

/** What an observe saw: the screenshot, and the URL and page context it was taken with. */
export interface Seen {
  png: Uint8Array;
  url: string;
  pageInfo: string;
}

/**
 * The start page (step 0), recorded by step 1's observe from the capture it took anyway: `screenshot_0_pre.png` with
 * a copy as `screenshot_0_post.png` (the original pairs every pre file with a post one) and one environment
 * observation naming the pre file. Only while the stream ends with the task message, so that it comes right after
 * it, as the original has it, and is written once: a retried observe finds it (or step 1's pre) after the task; a run
 * an older worker began gets none after the fact, and neither does one whose session was lost before its first
 * observe (the session_restored note is there first).
 */
export async function recordStartPage(w: TrajectoryWriter, seen: Seen): Promise<void> {
  const last = (await w.events()).at(-1);
  if (last?.type !== 'observation' || last.observation_type !== 'user_message' || last.message_type !== 'task') return;
  const shot = await w.saveScreenshot(0, 'pre', seen.png);
  await w.saveScreenshot(0, 'post', seen.png);
  await w.appendEvent(startObservation({ screenshot_path: shot, url: seen.url, page_info: seen.pageInfo }));
}

/** The model's output as recorded (and replayed into later prompts): one too long to read keeps only its head. */
export function forTheRecord(text: string): string {
  if (text.length <= MAX_OUTPUT_CHARS) return text;
  const head = 4000;
  return `${text.slice(0, head)}\n[… ${text.length - head} more characters not recorded]`;
}

/**
 * A step that changes nothing on the page (a stop action, or an invalid output): its tool output is its text (the
 * error, fed to the model next step, for an invalid output) and its post screenshot is the pre one.
 */
export async function recordStopStep(
  w: TrajectoryWriter,
  req: StepRef,
  decision: DecideResult,
  events: readonly Event[],
): Promise<void> {
  const id = (kind: 'action' | 'pre') => eventId({ step: req.step, kind, generation: req.generation });
  // The step's pre observation was written before decide ran, so the events decide already read hold it.
  const pre = events.find((e) => e.id === id('pre'));
  const text = decision.text ?? '';
  const invalid = decision.kind === 'invalid';
  await w.appendEvent(
    toolOutput(req.step, id('action'), invalid ? { output: '', error: text } : { output: text }, {
      generation: req.generation,
      ...(invalid ? { metadata: { [TEXT_OBSERVATION_KEY]: text } } : {}),
    }),
  );
  if (pre?.type !== 'observation' || pre.observation_type !== 'environment' || !pre.screenshot_path) return;
  const bytes = await w.store.readBytes(`${req.runId}/${pre.screenshot_path}`);
  const post = bytes ? await w.saveScreenshot(req.step, 'post', bytes, req.generation) : pre.screenshot_path;
  await w.appendEvent(
    postObservation(
      req.step,
      id('action'),
      { screenshot_path: post, url: pre.url, page_info: pre.page_info },
      { generation: req.generation },
    ),
  );
}

/**
 * Where decide keeps the action it leaves for act (one at a time: a run has one step in flight). The file outlives
 * the append; an action already in the stream is never appended again.
 */
export const DEFERRED_ACTION_FILE = 'solver_log/deferred_action.json';

/** Keeps a decided action for act to record (decide, for an action whose tool calls a model). */
export async function deferAction(w: TrajectoryWriter, action: Action): Promise<void> {
  await w.store.writeAtomic(`${w.taskId}/${DEFERRED_ACTION_FILE}`, JSON.stringify(action));
}

/** The action decide left for act, when it is the one with this id. */
export async function deferredAction(w: TrajectoryWriter, id: string): Promise<Action | undefined> {
  const text = await w.store.readText(`${w.taskId}/${DEFERRED_ACTION_FILE}`);
  const parsed = text === undefined ? undefined : ActionSchema.safeParse(JSON.parse(text));
  return parsed?.success && parsed.data.id === id ? parsed.data : undefined;
}

/** A step's decided action as recorded: in the stream (`events`), or left for act (deferAction); undefined if neither. */
export async function recordedAction(
  w: TrajectoryWriter,
  events: readonly Event[],
  id: string,
): Promise<Action | undefined> {
  return events.find((e): e is Action => e.type === 'action' && e.id === id) ?? (await deferredAction(w, id));
}

/** Records a decided action: appended, or, when its tool calls a model, left for act to record with that call. */
export async function recordDecision(w: TrajectoryWriter, action: Action): Promise<void> {
  if (ACTIONS_WITH_SUB_CALLS.includes(action.action_name)) await deferAction(w, action);
  else await w.appendEvent(action);
}

/** Appends the action decide left for act, with the model calls its tool made; nothing when it is in the stream. */
export async function recordDeferred(w: TrajectoryWriter, id: string, subCalls: ToolSubCallInput[]): Promise<void> {
  if (await w.hasEvent(id)) return;
  const action = await deferredAction(w, id);
  if (action) await w.appendEvent({ ...action, tool_sub_calls: subCalls });
}

/**
 * A session lost after decide left an action and before act recorded it: the decision goes into the stream still
 * (its effect unknown, no sub-call known), before the restore note, as any decision whose act was cut off.
 */
export async function flushDeferred(w: TrajectoryWriter): Promise<void> {
  const text = await w.store.readText(`${w.taskId}/${DEFERRED_ACTION_FILE}`);
  const parsed = text === undefined ? undefined : ActionSchema.safeParse(JSON.parse(text));
  if (!parsed?.success || (await w.hasEvent(parsed.data.id))) return;
  await w.appendEvent({ ...parsed.data, tool_sub_calls: [] });
}

/** The output a sub-call recorded on the action already gave (a retried act asks the model no second time). */
export function recordedSubCallOutput(action: Event | undefined): string | undefined {
  if (action?.type !== 'action') return undefined;
  const [first] = action.tool_sub_calls ?? [];
  const entry = first as { reply?: unknown; error?: unknown } | undefined;
  return typeof entry?.reply === 'string' && !entry.error ? entry.reply : undefined;
}
