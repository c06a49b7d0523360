// Session activities: open/release on the shared queue (opening returns this worker's own queue), and observe/act on
// that queue, in the session this worker process owns. A router: each goes to its environment's driver
// (environments/), chosen by the task's environment when opening and by the session id after (environments/table.ts).
import { isPoolFullType, OPEN_ATTEMPTS } from '../src/agent/failure-types';
import { actUsage } from './step-usage';
import type {
  ActInput,
  ActResult,
  HoldSessionInput,
  HoldSessionResult,
  ObserveInput,
  ObserveResult,
  OpenSessionInput,
  OpenSessionResult,
  ReclaimSessionResult,
  ReleaseInput,
  ReplayStepInput,
  ReplayStepResult,
  StepRef,
  StartTakeoverResult,
  EndTakeoverResult,
  TakeoverRef,
} from '../src/contract/activities';
import { TakeoverError } from '../src/browser/errors';
import type { Environments } from './environments/table';
import { flushDeferred } from './step-records';
import { rememberCachedStep } from './environments/browser-cache';
import { activityAttempt, activityWaitedMs, nonRetryable, withoutStoreWait } from './support';
import { recordSessionQueueWait } from '../src/common/metrics';
import type { ActivityDeps, RunFiles } from './support';

export function createSessionActivities(deps: ActivityDeps, files: RunFiles, environments: Environments) {
  /** Closes the session: what its environment keeps (a pause) or records at the end (a task that ended) first. */
  const release = async (req: ReleaseInput): Promise<void> => environments.forSession(req.sessionId).release(req);
  return {
    /**
     * Opens a session of the task's environment in this worker (a browser: in its pool, under the worker's URL policy
     * narrowed by the task's); returns the queue its observe/act must go to.
     */
    async openSession(req: OpenSessionInput): Promise<OpenSessionResult> {
      // A decision whose act never recorded it (its tool calls a model; see step-records.ts) is kept, cut off.
      if (req.reason === 'worker_lost') await flushDeferred(await files.writer(req.runId));
      // Waiting for a slot: in the open queue (polled while the pool has a free slot) and through full-pool retries.
      const waitedMs = activityWaitedMs();
      try {
        const input = await files.input(req.runId);
        const opened = await environments.forTask(input.environment).open(req, input);
        recordSessionQueueWait(input.environment, waitedMs);
        // How long this worker waits for an unusable run store: the workflow sizes its activities' timeouts by it.
        return { ...opened, storeWaitMinutes: deps.config.store.faultWaitMinutes };
      } catch (err) {
        // A full pool is retried for as long as it takes (the retry policy has no attempt limit); anything else
        // becomes final after OPEN_ATTEMPTS, so a browser that cannot start fails the task instead of hanging it.
        const name = err instanceof Error ? err.name : '';
        // A browser provider has already tried its attempts, each from scratch.
        if (name === 'BrowserProviderError') nonRetryable(err);
        if (!isPoolFullType(name) && activityAttempt() >= OPEN_ATTEMPTS) nonRetryable(err);
        throw err;
      }
    },

    /**
     * Saves what the session keeps (when asked) and closes it. With `writesOnce` (a task the run store ended, or a
     * cancelled one) its writes are tried once, and the session is closed whether they went through or not.
     */
    async releaseSession(req: ReleaseInput): Promise<void> {
      if (req.writesOnce) {
        return withoutStoreWait(() => release(req)).catch((err: unknown) => {
          deps.log?.(`released the session of ${req.runId} without its last records: ${String(err)}`);
        });
      }
      return release(req);
    },

    /**
     * A question: the session's page saved and the session kept alive for a quick reply, where its driver can hold
     * it; otherwise saved and released as before (`held: false`: the reply opens a new one).
     */
    async holdSession(req: HoldSessionInput): Promise<HoldSessionResult> {
      const driver = environments.forSession(req.sessionId);
      if (driver.hold) return driver.hold(req);
      await release({ ...req, save: true });
      return { held: false };
    },

    /** The reply came: whether the held session is still alive in this worker (then it is the task's again). */
    async reclaimSession(req: HoldSessionInput): Promise<ReclaimSessionResult> {
      const driver = environments.forSession(req.sessionId);
      return driver.reclaim ? driver.reclaim(req) : { alive: false };
    },

    /** Pre screenshot, URL and page context of a step (after the captcha gate); step 1's is the start page too. */
    async observe(req: ObserveInput): Promise<ObserveResult> {
      return environments.forSession(req.sessionId).observe(req);
    },

    /** Carries out the decided action in this worker's session; records tool output and the post screenshot. */
    async act(req: ActInput): Promise<ActResult> {
      const acted = await environments.forSession(req.sessionId).act(req);
      const usage = await actUsage(files, req);
      return usage ? { ...acted, usage } : acted;
    },

    /** A replay's step: the recorded action checked against the live page and recorded, or why it does not match. */
    async replayStep(req: ReplayStepInput): Promise<ReplayStepResult> {
      const driver = environments.forSession(req.sessionId);
      if (!driver.replayStep)
        return { kind: 'diverged', reason: "this environment's sessions cannot replay a recording" };
      return driver.replayStep(req, await files.input(req.runId));
    },

    /** A cached task's step: the decision cached for a page like this one, checked and recorded, or why not. */
    async cacheStep(req: ReplayStepInput): Promise<ReplayStepResult> {
      const driver = environments.forSession(req.sessionId);
      if (!driver.cacheStep) return { kind: 'diverged', reason: "this environment's sessions keep no action cache" };
      return driver.cacheStep(req, await files.input(req.runId));
    },

    /** Keeps a cached task's decided step in its cache (after the act; shared queue). */
    async cacheRemember(req: StepRef): Promise<void> {
      await rememberCachedStep(files, req, await files.input(req.runId));
    },

    /** A person takes the session over: a lease on this worker's takeover endpoint (its URL and token). */
    async startTakeover(req: TakeoverRef): Promise<StartTakeoverResult> {
      const driver = environments.forSession(req.sessionId);
      if (!driver.takeover) nonRetryable(new TakeoverError(`This environment's sessions cannot be taken over.`));
      return driver.takeover(req);
    },

    /** The person hands the session back: the lease ends; what they did, for the model's next observation. */
    async endTakeover(req: TakeoverRef): Promise<EndTakeoverResult> {
      const driver = environments.forSession(req.sessionId);
      if (!driver.endTakeover) nonRetryable(new TakeoverError(`This environment's sessions cannot be taken over.`));
      return driver.endTakeover(req);
    },
  };
}
