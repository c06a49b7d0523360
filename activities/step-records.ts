// What the activities record the same way for every environment: the start page (step 0) at the first observe, a
// reply capped for the record, and a step that changes nothing (a stop, or an invalid reply) written as its tool
// output and a post screenshot that is the pre one.
import { TEXT_OBSERVATION_KEY } from '../src/agent/history';
import { MAX_REPLY_CHARS } from '../src/model/parse';
import { postObservation, startObservation, toolOutput } from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import type { Event } from '../src/trajectory/schema';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import type { DecideResult, StepRef } from './types';

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

/** The reply as recorded (and replayed into later prompts): a reply too long to read keeps only its head. */
export function forTheRecord(text: string): string {
  if (text.length <= MAX_REPLY_CHARS) return text;
  const head = 4000;
  return `${text.slice(0, head)}\n[… ${text.length - head} more characters not recorded]`;
}

/**
 * A step that changes nothing on the page (a stop action, or an invalid reply): its tool output is its text (the
 * error, fed to the model next step, for an invalid reply) and its post screenshot is the pre one.
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
