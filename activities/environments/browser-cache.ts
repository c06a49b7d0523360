// The action cache in the browser (`cua run --cache NAME`, issue 28; src/replay/cache.ts): a step of a cached task
// first looks for a decision this task's earlier runs made on a page that looks the same (same URL without query,
// same perceptual hash of the pre screenshot); one whose element is still there is recorded as the step's action and
// run without a model call (healed when the element moved). One whose element is gone is marked invalid, and the
// model decides; after a decided step is acted, its decision is kept for the page it was made on.
import type { BrowserEnvironment } from '../../src/browser/environment';
import type { ReplayStepInput, ReplayStepResult, StepRef } from '../../src/contract/activities';
import type { TaskInput } from '../../src/contract/task';
import { screenHash } from '../../src/image/distance';
import { cacheable, entryKey, parseEntry, signatureUrl, taskKey } from '../../src/replay/cache';
import type { CacheEntry, PageSignature } from '../../src/replay/cache';
import { field } from '../../src/replay/recording';
import { eventId, parseEventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import { recordDecision, recordedAction } from '../step-records';
import { replayHowOf } from '../../src/replay/summary';
import { screenOf, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import { decisionFromRecord } from './browser-decide';
import { fitRecordedAction, reusedEvent } from './replay-element';

type ActionEvent = Extract<Event, { type: 'action' }>;

/** The signature of the page a step was observed on (its pre observation), or null when it has no screenshot. */
async function signatureOf(
  files: RunFiles,
  taskId: string,
  events: readonly Event[],
  step: number,
  generation: number,
) {
  const pre = events.find((e) => e.id === eventId({ step, kind: 'pre', generation }));
  const shot = field(pre, 'screenshot_path');
  const png = shot ? await files.readBytes(taskId, shot) : undefined;
  if (!png) return null;
  return { step, url: signatureUrl(field(pre, 'url') ?? ''), hash: await screenHash(png) } satisfies PageSignature;
}

export async function cachedBrowserStep(
  deps: ActivityDeps,
  files: RunFiles,
  env: () => BrowserEnvironment,
  req: ReplayStepInput,
  input: TaskInput,
): Promise<ReplayStepResult> {
  const cache = input.cache;
  if (!cache) return { kind: 'diverged', reason: 'this task keeps no cache' };
  const w = await files.writer(req.runId);
  const { family } = screenOf(input);
  const events = await w.events();
  const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const done = await recordedAction(w, events, actionId);
  if (done) {
    const how = replayHowOf(done);
    if (how === null) return { kind: 'diverged', reason: 'decided by the model' };
    return {
      kind: how === 'healed' ? 'healed' : 'replayed',
      decision: decisionFromRecord(done, family),
      distance: null,
    };
  }
  return withHeartbeat(async () => {
    const signature = await signatureOf(files, req.runId, events, req.step, req.generation);
    if (!signature) return { kind: 'diverged', reason: 'the step has no screenshot to look up' };
    const key = entryKey(cache.name, taskKey(input), signature);
    const entry = parseEntry(await files.store.readText(key));
    if (!entry) return { kind: 'diverged', reason: 'not in the cache' };
    if ('invalid' in entry) return { kind: 'diverged', reason: `its cache entry no longer fits: ${entry.reason}` };
    const fit = await fitRecordedAction(env(), entry.action, entry.element, input);
    if (fit.kind === 'gone') {
      const invalid: CacheEntry = { signature, invalid: true, reason: fit.why, at: new Date().toISOString() };
      await files.store.writeAtomic(key, JSON.stringify(invalid));
      deps.log?.(`cache ${cache.name}: ${req.runId} step ${req.step} invalidates its entry: ${fit.why}`);
      return { kind: 'diverged', reason: `the cached action no longer fits: ${fit.why}` };
    }
    const { action, how, note } =
      fit.kind === 'fits' ? fit : { action: entry.action, how: 'replayed' as const, note: {} };
    const event = reusedEvent(req, action, { how, of: { cache: cache.name, ...entry.from }, ...note });
    await recordDecision(w, event);
    return { kind: how, decision: decisionFromRecord(event, family), distance: null };
  });
}

/**
 * Keeps a decided step's action in the cache for the page it was decided on (after its act, so its element record is
 * there); a question, an invalid output or a reused action is not kept. Writing the same entry again is harmless.
 */
export async function rememberCachedStep(files: RunFiles, req: StepRef, input: TaskInput): Promise<void> {
  const cache = input.cache;
  if (!cache) return;
  const w = await files.writer(req.runId);
  const events = await w.events();
  const action = events.find(
    (e): e is ActionEvent =>
      e.type === 'action' && e.id === eventId({ step: req.step, kind: 'action', generation: req.generation }),
  );
  if (!action || !cacheable(action)) return;
  const signature = await signatureOf(files, req.runId, events, req.step, req.generation);
  if (!signature) return;
  const tool = events.find((e) => {
    const id = parseEventId(e.id);
    return id?.kind === 'tool' && id.step === req.step && id.generation === req.generation && id.call === undefined;
  });
  const element = ((tool?.metadata ?? {}) as { element?: unknown }).element;
  const entry: CacheEntry = {
    signature,
    action,
    element: element && typeof element === 'object' ? (element as Record<string, unknown>) : null,
    from: { run_id: req.runId, step: req.step },
    at: new Date().toISOString(),
  };
  await files.store.writeAtomic(entryKey(cache.name, taskKey(input), signature), JSON.stringify(entry));
}
