// A replay's step in the browser (`cua replay`, issue 28), on the worker that holds the live page: the recording's
// decision for this step, checked against the page the step was just observed on, and recorded as this step's
// action when it matches (no model call), or the reason it does not (the model decides the step). The checks:
// - the page's URL is the recorded one (the recording's origin mapped to the replay's, for `--url`);
// - the element: a pointer action whose act recorded the element it hit is run where that element is now: at the
//   recorded point when it is still there (replayed), at its new place when it moved (healed), not at all when it
//   is gone (diverged);
// - typing with no point needs the focused field to be the recorded one;
// - an action that hit no recorded element (keys, scrolls, a final answer) needs the screenshot's distance to the
//   recorded one within `maxDistance`.
// A retried activity answers from the action it recorded. The recorded run is only read.
import type { BrowserEnvironment } from '../../src/browser/environment';
import type { ReplayStepInput, ReplayStepResult } from '../../src/contract/activities';
import type { TaskInput } from '../../src/contract/task';
import { DEFAULT_MAX_DISTANCE, screenDistance } from '../../src/image/distance';
import { field, mapOrigin, recordedSteps, samePage } from '../../src/replay/recording';
import type { RecordedStep } from '../../src/replay/recording';
import { readRunFromStore } from '../../src/trajectory/reader';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import { recordDecision, recordedAction } from '../step-records';
import { replayHowOf } from '../../src/replay/summary';
import { screenOf, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import { decisionFromRecord } from './browser-decide';
import { fitRecordedAction, reusedEvent } from './replay-element';

/** The recordings read lately (a replay reads its recording at every step): task id → steps. */
const recordings = new Map<string, Promise<RecordedStep[]>>();
const RECORDINGS_KEPT = 16;

function recordingOf(files: RunFiles, taskId: string): Promise<RecordedStep[]> {
  let hit = recordings.get(taskId);
  if (!hit) {
    hit = readRunFromStore(files.store, taskId).then((run) => recordedSteps(run.events));
    hit.catch(() => recordings.delete(taskId));
    recordings.set(taskId, hit);
    if (recordings.size > RECORDINGS_KEPT) recordings.delete(recordings.keys().next().value as string);
  }
  return hit;
}

export async function replayBrowserStep(
  deps: ActivityDeps,
  files: RunFiles,
  env: () => BrowserEnvironment,
  req: ReplayStepInput,
  input: TaskInput,
): Promise<ReplayStepResult> {
  const replay = input.replayOf;
  if (!replay) return { kind: 'diverged', reason: 'this task is no replay' };
  const recordedReplies = replay.answers === 'recorded'; // `answers`: a wire name
  const w = await files.writer(req.runId);
  const { family } = screenOf(input);
  const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const events = await w.events();
  const done = await recordedAction(w, events, actionId);
  const recording = await recordingOf(files, replay.runId);
  const rec = recording[req.step - 1];
  if (done) {
    const how = replayHowOf(done);
    return {
      kind: how === 'healed' ? 'healed' : 'replayed',
      decision: decisionFromRecord(done, family),
      ...(rec?.reply !== null && rec?.reply !== undefined && recordedReplies ? { reply: rec.reply } : {}),
      distance: null,
    };
  }
  if (!rec) return { kind: 'diverged', reason: `the recording has no step ${req.step} (it has ${recording.length})` };
  return withHeartbeat(async () => {
    const pre = events.find((e) => e.id === eventId({ step: req.step, kind: 'pre', generation: req.generation }));
    const url = field(pre, 'url') ?? '';
    const recordedUrl = rec.preUrl === null ? null : mapOrigin(rec.preUrl, replay.origin);
    if (recordedUrl !== null && !samePage(url, recordedUrl)) {
      return { kind: 'diverged', reason: `the page is ${url}, the recording's step ${rec.step} was on ${recordedUrl}` };
    }
    const distance = await distanceTo(files, req.runId, pre, replay.runId, rec);
    const max = replay.maxDistance ?? DEFAULT_MAX_DISTANCE;
    const fit = await fitRecordedAction(env(), rec.action, rec.element, input);
    if (fit.kind === 'gone') return { kind: 'diverged', reason: `the recording's step ${rec.step}: ${fit.why}` };
    if (fit.kind === 'unchecked' && (distance === null || distance > max)) {
      const shown =
        distance === null ? 'no recorded screenshot to compare' : `distance ${distance.toFixed(3)} > ${max}`;
      return { kind: 'diverged', reason: `the page does not look as recorded at step ${rec.step} (${shown})` };
    }
    const { action, how, note } =
      fit.kind === 'fits' ? fit : { action: rec.action, how: 'replayed' as const, note: {} };
    const event = reusedEvent(req, action, {
      how,
      of: { run_id: replay.runId, step: rec.step },
      distance: distance === null ? null : Math.round(distance * 1000) / 1000,
      ...note,
    });
    await recordDecision(w, event);
    deps.log?.(`replay ${req.runId} step ${req.step}: ${how} (recorded step ${rec.step})`);
    return {
      kind: how,
      decision: decisionFromRecord(event, family),
      ...(rec.reply !== null && recordedReplies ? { reply: rec.reply } : {}),
      distance,
    };
  });
}

/** The distance between this step's pre screenshot and the recorded one, or null when either is missing. */
async function distanceTo(
  files: RunFiles,
  taskId: string,
  pre: Event | undefined,
  recordedRun: string,
  rec: RecordedStep,
): Promise<number | null> {
  const own = field(pre, 'screenshot_path');
  if (!own || !rec.preScreenshot) return null;
  const [a, b] = await Promise.all([files.readBytes(taskId, own), files.readBytes(recordedRun, rec.preScreenshot)]);
  return a && b ? screenDistance(a, b) : null;
}
