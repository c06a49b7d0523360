// Session activities: open/release on the shared queue (opening returns this worker's own queue), and observe/act on
// that queue, in the session this worker process owns. Browser sessions are handled here; a desktop task's go to
// the desktop room (desktop-session.ts), chosen by the task's environment when opening and by the session id after.
import path from 'node:path';
import { dispatchAction } from '../src/agent/dispatch';
import { lastUrl, TEXT_OBSERVATION_KEY } from '../src/agent/history';
import { PolicyBlockedError } from '../src/browser/errors';
import type { BrowserEnvironment, StorageState } from '../src/browser/environment';
import { NORM1000, resizedPixelsSpace } from '../src/coords/viewport';
import { ACTIONS_WITH_SUB_CALLS } from '../src/agent/page-question';
import { postObservation, preObservation, sessionRestored, toolOutput } from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import { describeUrlPolicy } from '../src/policy/url-policy';
import { createDesktopRoom, DESKTOP_SESSION_PREFIX } from './desktop-session';
import { createCustomRoom } from './custom-room';
import type { StepTarget } from './custom-room';
import { IN_LINE_DETAIL, isPoolFullType, OPEN_ATTEMPTS } from '../src/agent/failure-types';
import {
  activityAttempt,
  activityDeadlineSignal,
  heartbeatDetails,
  nonRetryable,
  recordedPre,
  screenOf,
  secretResolver,
  taskUrlPolicy,
  withHeartbeat,
  withoutStoreWait,
} from './support';
import { copyDownloads } from './local-files';
import { pageQuestioner } from './page-subcall';
import { flushDeferred, recordDeferred, recordStartPage } from './step-records';
import type { Seen } from './step-records';
import { FINAL_PAGE_FILE, probesNotRun, runProbes } from '../src/agent/final-page';
import type { FinalPageRecord } from '../src/agent/final-page';
import { knownSecretValues, redactSecrets } from '../src/agent/secrets';
import type { ActivityDeps, RunFiles } from './support';
import type {
  ActInput,
  ActResult,
  ObserveResult,
  OpenSessionInput,
  OpenSessionResult,
  ReleaseInput,
  StepRef,
} from '../src/contract/activities';

const STORAGE_STATE_FILE = 'browser_state.json';
/**
 * How long an open waits in line in a full pool before giving the place back to Temporal's retry (which may find
 * room on another worker). Waiting here hands a freed browser on at once; a retry would find it up to 5 s later.
 */
const POOL_WAIT_MS = 30_000;
/** An open stops this long before its activity's timeout, so a browser it was still trying to get is released. */
const OPEN_CLEANUP_MS = 10_000;

export function createSessionActivities(deps: ActivityDeps, files: RunFiles) {
  const { pool } = deps;
  const desktop = createDesktopRoom(deps, files);
  const onDesktop = (sessionId: string) => sessionId.startsWith(DESKTOP_SESSION_PREFIX);
  const custom = createCustomRoom(deps, files);
  /** The session observe/act work in: a browser of the pool, or a session of an application's own environment. */
  const targetOf = (sessionId: string): StepTarget | BrowserEnvironment =>
    custom.owns(sessionId) ? custom.get(sessionId) : pool.get(sessionId);
  /** Opens a browser session (or, for a desktop task, a desktop) for a run. */
  const open = async (req: OpenSessionInput): Promise<OpenSessionResult> => {
    const input = await files.input(req.runId);
    if (input.environment === 'desktop') return desktop.open(req, input);
    if (input.environment !== 'browser') return custom.open(req, input);
    const w = await files.writer(req.runId);
    let url = input.startUrl;
    let storageState: StorageState | undefined;
    if (req.restore) {
      // From the run store, so a session saved on one worker restores on another (another machine, with S3).
      const saved = await files.store.readText(`${req.runId}/${STORAGE_STATE_FILE}`);
      storageState = saved === undefined ? undefined : (JSON.parse(saved) as StorageState);
      const state = await w.readRunState();
      url = (state.url as string | undefined) ?? lastUrl(await w.events()) ?? input.startUrl;
    }
    const urlPolicy = taskUrlPolicy(deps.config, input);
    const session = await pool
      .openSession(
        {
          viewport: input.viewport,
          downloadsDir: path.join(files.dir(req.runId), 'downloads'),
          ...(storageState ? { storageState } : {}),
          ...(url ? { url } : {}),
          urlPolicy,
          owner: req.runId,
          // A provider's session is tried again when a captcha solve on its first page does not end in this time.
          captchaWaitMs: input.captcha.waitSeconds * 1000,
        },
        {
          timeoutMs: POOL_WAIT_MS,
          // A provider's retries (Browserbase) stop in time to release their session before the open times out.
          signal: activityDeadlineSignal(OPEN_CLEANUP_MS),
          // Shown on the pending activity: `cua status` and the client's view say the task waits for a browser.
          onQueued: (waiting) => heartbeatDetails({ [IN_LINE_DETAIL]: waiting }),
        },
      )
      .catch((err: unknown) => {
        if (err instanceof PolicyBlockedError) nonRetryable(err, 'NavigationError');
        throw err;
      });
    // The lost worker may have finished the step's last act (its post observation is recorded): then the step is
    // done and the restored session starts the next one, instead of the step being decided again.
    const stepDone =
      req.lostActGeneration !== undefined &&
      (await w.hasEvent(eventId({ step: req.step, kind: 'post', generation: req.lostActGeneration })));
    if (req.reason === 'worker_lost') {
      await w.appendEvent(
        sessionRestored(
          stepDone ? req.step + 1 : req.step,
          `The browser session was lost and restored at ${url ?? 'a blank page'}.`,
          {
            generation: req.generation,
            metadata: { note: 'session_restored', restored_url: url ?? null },
          },
        ),
      );
    }
    deps.log?.(
      `session ${session.sessionId} opened for ${req.runId} (${req.reason}, generation ${req.generation}; ` +
        `URL policy: ${describeUrlPolicy(urlPolicy)})`,
    );
    return {
      sessionId: session.sessionId,
      taskQueue: deps.sessionQueue,
      url: session.env.url(),
      ...(req.lostActGeneration !== undefined ? { stepDone } : {}),
    };
  };
  /** Closes the session: the final page probed (a task that ended) or its state saved (a pause) first. */
  const release = async (req: ReleaseInput): Promise<void> => {
    if (onDesktop(req.sessionId)) return desktop.release(req);
    if (custom.owns(req.sessionId)) return custom.release(req);
    if (!pool.has(req.sessionId)) return;
    try {
      if (!req.save) await probeFinalPage(req); // the task ended: the last page's state, before the browser goes
      if (req.save) {
        const env = pool.get(req.sessionId);
        // Cookies and localStorage, into the run store (owner-only in a folder store, like the rest of the run).
        const state = await env.saveStorageState();
        await files.store.writeAtomic(`${req.runId}/${STORAGE_STATE_FILE}`, JSON.stringify(state));
        const w = await files.writer(req.runId);
        await w.writeRunState({ ...(await w.readRunState()), url: env.url() });
      }
    } catch (err) {
      if (!req.writesOnce) throw err;
      await pool.close(req.sessionId);
      throw err;
    }
    await pool.close(req.sessionId);
  };
  /**
   * The task's final-page probes (TaskInput.finalPageProbes), evaluated on the page as the task left it and recorded
   * in the run (src/agent/final-page.ts). Once per run: a retried release finds them recorded. A page that cannot be
   * probed is each probe's error, never the release's (a store that cannot be reached is retried with the release).
   */
  const probeFinalPage = async (req: ReleaseInput): Promise<void> => {
    const scripts = (await files.input(req.runId)).finalPageProbes ?? [];
    const key = `${req.runId}/${FINAL_PAGE_FILE}`;
    if (scripts.length === 0 || (await files.store.exists(key))) return;
    const env = pool.get(req.sessionId);
    const secrets = knownSecretValues(deps.config.secrets ?? {}, process.env);
    const redact = (text: string) => redactSecrets(text, secrets);
    // Task-given script in a page that may hold a session signed in with the operator's secrets: only where the
    // operator trusts the task starters (redaction cannot stop a script that encodes what it reads).
    const probes = deps.config.browser.pageProbes
      ? await withHeartbeat(() => runProbes((e) => env.evaluate(e), scripts, { redact }))
      : probesNotRun(scripts);
    const record: FinalPageRecord = { url: redact(env.url()), recorded_at: new Date().toISOString(), probes };
    await files.store.writeAtomic(key, JSON.stringify(record, null, 2));
  };

  return {
    /**
     * Opens a browser session in this worker's pool, under the worker's URL policy narrowed by the task's; returns
     * the queue its observe/act must go to. A start URL the policy refuses fails at once (NavigationError, not retried).
     */
    async openSession(req: OpenSessionInput): Promise<OpenSessionResult> {
      // A decision whose act never recorded it (its tool calls a model; see step-records.ts) is kept, cut off.
      if (req.reason === 'worker_lost') await flushDeferred(await files.writer(req.runId));
      try {
        // How long this worker waits for an unusable run store: the workflow sizes its activities' timeouts by it.
        return { ...(await open(req)), storeWaitMinutes: deps.config.store.faultWaitMinutes };
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
     * Saves storage state + URL (when asked) and closes the session. With `writesOnce` (a task the run store ended, or
     * a cancelled one) its writes are tried once, and the session is closed whether they went through or not.
     */
    async releaseSession(req: ReleaseInput): Promise<void> {
      if (req.writesOnce) {
        return withoutStoreWait(() => release(req)).catch((err: unknown) => {
          deps.log?.(`released the session of ${req.runId} without its last records: ${String(err)}`);
        });
      }
      return release(req);
    },

    /** Pre screenshot, URL and page context of a step (after the captcha gate); step 1's is the start page too. */
    async observe(req: StepRef & { sessionId: string; captchaWaitMs?: number }): Promise<ObserveResult> {
      if (onDesktop(req.sessionId)) return desktop.observe(req);
      const w = await files.writer(req.runId);
      const env = targetOf(req.sessionId);
      return withHeartbeat(async () => {
        const recorded = await recordedPre(w, req);
        if (recorded) return recorded;
        await deps.checkpoint?.('observe', req);
        // The captcha gate: open at once unless a remote browser announced a solve in progress.
        const captchaTimedOut = req.captchaWaitMs ? !(await env.waitForCaptcha(req.captchaWaitMs)) : false;
        const seen = { png: await env.screenshot(), url: env.url(), pageInfo: await env.pageContext() };
        if (req.step === 1) await recordStartPage(w, seen);
        const pre = await recordPre(w, req, seen);
        return { ...pre, captchaTimedOut };
      });
    },

    /** Carries out the decided action in this worker's browser; records tool output and the post screenshot. */
    async act(req: ActInput): Promise<ActResult> {
      if (onDesktop(req.sessionId)) return desktop.act(req);
      const w = await files.writer(req.runId);
      const input = await files.input(req.runId);
      const { profile, resized } = screenOf(input);
      const parsed = profile.actionSchema.safeParse(req.action);
      if (!parsed.success) {
        nonRetryable(new Error(`act got an invalid ${String(req.action.action)} action`), 'InvalidAction');
      }
      const action = parsed.data;
      const ids = (kind: 'action' | 'tool' | 'post') => eventId({ step: req.step, kind, generation: req.generation });
      if (await w.hasEvent(ids('post'))) {
        // A retry after the step was recorded: report what was recorded, do not act again.
        const events = await w.events();
        const tool = events.find((e) => e.id === ids('tool'));
        const post = events.find((e) => e.id === ids('post'));
        const text = (tool?.metadata as Record<string, unknown> | undefined)?.[TEXT_OBSERVATION_KEY];
        return {
          url: post?.type === 'observation' && post.observation_type === 'environment' ? (post.url ?? '') : '',
          textObservation: typeof text === 'string' ? text : null,
          error: tool?.type === 'observation' && tool.observation_type === 'tool_output' ? tool.error || null : null,
        };
      }
      const env = targetOf(req.sessionId);
      const subCalls = ACTIONS_WITH_SUB_CALLS.includes(action.action)
        ? await pageQuestioner(deps, input, w, { ...req, actionId: ids('action') })
        : undefined;
      const result = await withHeartbeat(() =>
        dispatchAction(action, {
          target: env,
          space: profile.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height),
          viewport: input.viewport,
          resolveSecrets: secretResolver(deps.config, env),
          answerFromPage: subCalls?.answerFromPage ?? (async () => ''),
        }),
      );
      await withHeartbeat(async () => deps.checkpoint?.('act', req));
      // The action decide left for act (its tool called a model) goes into the stream with that call.
      if (subCalls) await recordDeferred(w, ids('action'), subCalls.calls);
      await withHeartbeat(() => copyDownloads(files, req.runId)); // into a shared store (S3), before the step counts
      await w.appendEvent(
        toolOutput(
          req.step,
          ids('action'),
          { output: result.output, error: result.error ?? '' },
          {
            generation: req.generation,
            metadata: result.textObservation ? { [TEXT_OBSERVATION_KEY]: result.textObservation } : {},
          },
        ),
      );
      return withHeartbeat(async () => {
        // When the capture began: a change after that may be missing from the post screenshot (observeNext).
        const { png, startedAt: capturedAt } = await env.timedScreenshot();
        const shot = await w.saveScreenshot(req.step, 'post', png, req.generation);
        const url = env.url();
        const pageInfo = await env.pageContext();
        await w.appendEvent(
          postObservation(
            req.step,
            ids('action'),
            { screenshot_path: shot, url, page_info: pageInfo },
            { generation: req.generation },
          ),
        );
        const acted = { url, textObservation: result.textObservation, error: result.error };
        if (!req.next) return acted;
        const next = await observeNext(req, req.next, env, { png, capturedAt, url, pageInfo });
        return next ? { ...acted, next } : acted;
      });
    },
  };

  /**
   * The next step's pre observation, taken at the end of an act: the post screenshot, copied (not captured again)
   * unless the page changed after it was taken. Undefined while a captcha solve holds the gate (the next step's
   * observe then waits for it).
   */
  async function observeNext(
    req: ActInput,
    next: NonNullable<ActInput['next']>,
    env: StepTarget | BrowserEnvironment,
    post: { png: Buffer; capturedAt: number; url: string; pageInfo: string },
  ): Promise<ObserveResult | undefined> {
    const ref: StepRef = { runId: req.runId, step: next.step, generation: req.generation };
    await deps.checkpoint?.('observe', ref);
    if (next.captchaWaitMs > 0 && !(await env.waitForCaptcha(0))) return undefined;
    const changedAt = await env.lastChangeAt();
    const changed = changedAt === null || changedAt >= post.capturedAt;
    const png = changed ? await env.screenshot() : post.png;
    const url = changed ? env.url() : post.url;
    const pageInfo = changed ? await env.pageContext() : post.pageInfo;
    const pre = await recordPre(await files.writer(req.runId), ref, { png, url, pageInfo });
    return { ...pre, captchaTimedOut: false };
  }
}

/** A step's pre observation in the run folder: its screenshot and the event naming it, URL and page context. */
async function recordPre(w: TrajectoryWriter, ref: StepRef, seen: Seen): Promise<{ url: string; screenshot: string }> {
  const screenshot = await w.saveScreenshot(ref.step, 'pre', seen.png, ref.generation);
  await w.appendEvent(
    preObservation(
      ref.step,
      { screenshot_path: screenshot, url: seen.url, page_info: seen.pageInfo },
      { generation: ref.generation },
    ),
  );
  return { url: seen.url, screenshot };
}
