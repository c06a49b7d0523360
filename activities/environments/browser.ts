// The browser's driver: opens a session in this worker's browser pool (restoring the run's saved page after a pause
// or a lost worker: storage, URL, forms, scroll, focus; browser-state.ts), observes and acts on its page
// (page-steps.ts) with a page checkpoint after every act, probes the final page or saves the page before closing it,
// and decides a step with the browser agent's model request (browser-decide.ts).
import path from 'node:path';
import { IN_LINE_DETAIL } from '../../src/agent/failure-types';
import { FINAL_PAGE_FILE, probesNotRun, runProbes } from '../../src/agent/final-page';
import type { FinalPageRecord } from '../../src/agent/final-page';
import { earlierUrls, lastUrl, PAGE_REOPENED_KEY } from '../../src/agent/history';
import { reopenedPageText } from '../../src/agent/observations';
import { knownSecretValues, redactSecrets } from '../../src/agent/secrets';
import { PolicyBlockedError } from '../../src/browser/errors';
import type { BrowserEnvironment, StorageState } from '../../src/browser/environment';
import { NEVER_RESTORED, restoreDocumentState, storageRestored } from '../../src/browser/page-state';
import type { RestoreReport } from '../../src/browser/page-state';
import { describeUrlPolicy } from '../../src/contract/url-policy';
import type { TaskInput } from '../../src/contract/task';
import type {
  HoldSessionInput,
  HoldSessionResult,
  OpenSessionInput,
  ReleaseInput,
} from '../../src/contract/activities';
import { sessionRestored } from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import { mapOrigin } from '../../src/replay/recording';
import { activityDeadlineSignal, heartbeatDetails, nonRetryable, taskUrlPolicy, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import { decideBrowser } from './browser-decide';
import { replayBrowserStep } from './browser-replay';
import { cachedBrowserStep } from './browser-cache';
import { PageCheckpoints } from './browser-state';
import type { SavedPage } from './browser-state';
import type { EnvironmentDriver, OpenedSession } from './driver';
import { actOnPage, observePage } from './page-steps';
import { inDoubtText, openJournal } from './request-log';
import { endBrowserTakeover, takeOverBrowser } from './browser-takeover';
import type { PageSteps } from './page-steps';
import { holdForReply } from './session-hold';
import { loadSignin } from '../signin';
import { keepOutputPage } from '../output';

/**
 * How long an open waits in line in a full pool before giving the slot back to Temporal's retry (which may find a
 * free slot on another worker). Waiting here hands a freed browser on at once; a retry would find it up to
 * 5 s later.
 */
const POOL_WAIT_MS = 30_000;
/** An open stops this long before its activity's timeout, so a browser it was still trying to get is released. */
const OPEN_CLEANUP_MS = 10_000;

export function createBrowserDriver(deps: ActivityDeps, files: RunFiles): EnvironmentDriver {
  const pages = new PageCheckpoints(deps, files);
  const steps: PageSteps = {
    deps,
    files,
    target: (sessionId) => deps.pool.get(sessionId),
    afterAct: (req) => pages.saveStep(req.runId, req.step, req.generation, deps.pool.get(req.sessionId)),
    journal: (sessionId) => deps.pool.get(sessionId).journal,
  };
  return {
    sessionPrefix: '',
    open: (req, input) => openBrowser(deps, files, pages, req, input),
    observe: (req) => observePage(steps, req),
    act: (req) => actOnPage(steps, req),
    release: (req) => releaseBrowser(deps, files, pages, req),
    hold: (req) => holdBrowser(deps, files, pages, req),
    reclaim: (req) => Promise.resolve({ alive: deps.pool.reclaim(req.sessionId) }),
    decide: (req, input) => decideBrowser(deps, files, req, input),
    replayStep: (req, input) => replayBrowserStep(deps, files, () => deps.pool.get(req.sessionId), req, input),
    cacheStep: (req, input) => cachedBrowserStep(deps, files, () => deps.pool.get(req.sessionId), req, input),
    takeover: (req) => takeOverBrowser(deps, req),
    endTakeover: (req) => endBrowserTakeover(deps, req),
  };
}

/**
 * Opens a browser session in this worker's pool, under the worker's URL policy narrowed by the task's. A start URL
 * the policy refuses fails at once (NavigationError, not retried).
 */
async function openBrowser(
  deps: ActivityDeps,
  files: RunFiles,
  pages: PageCheckpoints,
  req: OpenSessionInput,
  input: TaskInput,
): Promise<OpenedSession> {
  const { runId: taskId } = req;
  const w = await files.writer(taskId);
  let url = input.startUrl;
  let saved: SavedPage | undefined;
  let earlier: string[] = [];
  if (req.restore) {
    // From the run store, so a page saved on one worker restores on another (another machine, with S3): the newer
    // of the last step's checkpoint and the page saved at a question.
    saved = await pages.load(taskId);
    const [state, events] = await Promise.all([w.readRunState(), w.events()]);
    const last = saved?.document?.url || ((state.url as string | undefined) ?? lastUrl(events) ?? input.startUrl);
    // An adoption on a new origin (`cua adopt --url`): the folder's pages are read with the site's origin now.
    const moved = input.adoptOf?.origin;
    url = last && mapOrigin(last, moved);
    // The new context has no back stack: a back past the restored page loads the pages the run showed before it.
    if (last) earlier = earlierUrls(events, last).map((u) => mapOrigin(u, moved));
  }
  // A task with a saved sign-in opens with its cookies and storage when it has no page of its own to restore.
  const signin = input.signin && !saved ? await loadSignin(deps, files, input.signin) : undefined;
  const urlPolicy = taskUrlPolicy(deps.config, input);
  const journal = await openJournal(deps, files, taskId);
  const session = await deps.pool
    .openSession(
      {
        viewport: input.viewport,
        downloadsDir: path.join(files.dir(taskId), 'downloads'),
        ...(saved ? { storageState: saved.storage } : {}),
        ...(signin ? { storageState: signin.storage as StorageState } : {}),
        ...(saved?.document ? { sessionStorage: saved.document.sessionStorage } : {}),
        ...(url ? { url } : {}),
        ...(earlier.length > 0 ? { environment: { earlierUrls: earlier } } : {}),
        urlPolicy,
        owner: taskId,
        // A provider's session is tried again when a captcha solve on its first page does not end in this time.
        captchaWaitMs: input.captcha.waitSeconds * 1000,
        journal,
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
  const report = saved ? await restorePage(deps, taskId, session.env, saved) : undefined;
  if (req.reason === 'worker_lost') {
    const page = { url: session.env.url(), title: await session.env.page.title().catch(() => '') };
    // What may or may not have happened: the act in flight (unless the lost worker recorded it as done) and the
    // requests with no recorded answer. The model reads this note with the step's new observation.
    const act = stepDone ? undefined : req.actInDoubt;
    const doubt = inDoubtText(act, journal.inDoubtAtOpen, page);
    await w.appendEvent(
      sessionRestored(
        stepDone ? req.step + 1 : req.step,
        `The browser session was lost and restored at ${url ?? 'a blank page'}.${doubt ? ` ${doubt}` : ''}`,
        {
          generation: req.generation,
          metadata: {
            note: 'session_restored',
            restored_url: url ?? null,
            ...(report && saved
              ? {
                  restored_from: saved.from,
                  restored: report.restored,
                  not_restored: report.notRestored,
                  blanked: report.blanked,
                }
              : {}),
            ...(doubt
              ? {
                  in_doubt: {
                    ...(act ? { action: act.summary, started_at: act.startedAt } : {}),
                    requests: journal.inDoubtAtOpen.map((e) => ({
                      method: e.method,
                      url: e.url,
                      started_at: e.started_at,
                      body_preview: e.body_preview,
                    })),
                    page,
                  },
                }
              : {}),
          },
        },
      ),
    );
  }
  // An adopted run's first session (the original's folder saved no page of ours): its last URL, loaded anew.
  if (input.adoptOf && req.restore && !saved && req.reason !== 'worker_lost') {
    await w.appendEvent(reopenedNote(req, url ?? null));
  }
  deps.log?.(
    `session ${session.sessionId} opened for ${taskId} (${req.reason}, generation ${req.generation}; ` +
      `URL policy: ${describeUrlPolicy(urlPolicy)})`,
  );
  return {
    sessionId: session.sessionId,
    taskQueue: deps.sessionQueue,
    url: session.env.url(),
    holdSeconds: deps.config.browser.holdWhileWaitingSeconds,
    ...(req.lostActGeneration !== undefined ? { stepDone } : {}),
  };
}

/**
 * The note an adopted run's first session leaves for the model: the page was reopened at the folder's last URL. It
 * goes with the next step's observation (after a reply, the step after the question's).
 */
function reopenedNote(req: OpenSessionInput, url: string | null) {
  const step = req.reason === 'reply' ? req.step + 1 : req.step;
  return sessionRestored(step, reopenedPageText(url), {
    generation: req.generation,
    metadata: { note: 'session_restored', restored_url: url, [PAGE_REOPENED_KEY]: url },
  });
}

/**
 * The saved page's forms, scroll and focus put back into the just opened session (its storage, sessionStorage and URL
 * went in with the open). A page that cannot take them is logged and reported, never the open's failure.
 */
async function restorePage(
  deps: ActivityDeps,
  taskId: string,
  env: BrowserEnvironment,
  saved: SavedPage,
): Promise<RestoreReport> {
  const { document } = saved;
  const storage = storageRestored(saved.storage, document ?? { sessionStorage: {} });
  const unrestored = {
    restored: storage,
    notRestored: ['form fields', 'scroll', 'focus', ...NEVER_RESTORED],
    blanked: [],
  };
  if (!document) return unrestored;
  try {
    const report = await withHeartbeat(() => restoreDocumentState(env.page, document));
    return { ...report, restored: [...storage, ...report.restored] };
  } catch (err) {
    deps.log?.(`${taskId}: the saved page's forms, scroll and focus were not restored: ${String(err)}`);
    return { ...unrestored, blanked: document.blanked };
  }
}

/** Closes the session: the final page probed (a task that ended) or its page saved (a pause) first. */
async function releaseBrowser(
  deps: ActivityDeps,
  files: RunFiles,
  pages: PageCheckpoints,
  req: ReleaseInput,
): Promise<void> {
  const { pool } = deps;
  if (!pool.has(req.sessionId)) return;
  try {
    // The task ended: the last page's state, before the browser goes.
    if (!req.save) await probeFinalPage(deps, files, req);
    if (!req.save) await keepOutputPage(files, req.runId, pool.get(req.sessionId), secretRedactor(deps));
    if (req.save) await savePage(files, pages, req.runId, pool.get(req.sessionId));
  } catch (err) {
    if (!req.writesOnce) throw err;
    await pool.close(req.sessionId);
    throw err;
  }
  await pool.close(req.sessionId);
}

/** The whole page, into the run store (owner-only in a folder store, like the rest of the run), and its URL. */
async function savePage(
  files: RunFiles,
  pages: PageCheckpoints,
  taskId: string,
  env: BrowserEnvironment,
): Promise<void> {
  await withHeartbeat(() => pages.saveForQuestion(taskId, env));
  const w = await files.writer(taskId);
  await w.writeRunState({ ...(await w.readRunState()), url: env.url() });
}

/**
 * A question: the page saved now (a worker lost during the wait still restores it), and the live session held for
 * browser.holdWhileWaitingSeconds, saved again and closed when the hold ends unclaimed. Not held (saved and closed, as
 * a release would): no hold configured, the session already gone, or openers waiting for its slot.
 */
function holdBrowser(
  deps: ActivityDeps,
  files: RunFiles,
  pages: PageCheckpoints,
  req: HoldSessionInput,
): Promise<HoldSessionResult> {
  const { pool } = deps;
  const env = pool.has(req.sessionId) ? pool.get(req.sessionId) : undefined;
  return holdForReply(pool, req, {
    seconds: deps.config.browser.holdWhileWaitingSeconds,
    save: async () => {
      if (env && pool.has(req.sessionId)) await savePage(files, pages, req.runId, env);
    },
    what: 'page',
    log: deps.log,
  });
}

/** Scrubs every configured secret value from a text the run folder keeps. */
function secretRedactor(deps: ActivityDeps): (text: string) => string {
  const secrets = knownSecretValues(deps.config.secrets ?? {}, process.env);
  return (text) => redactSecrets(text, secrets);
}

/**
 * The task's final-page probes (TaskInput.finalPageProbes), evaluated on the page as the task left it and recorded
 * in the run (src/agent/final-page.ts). Once per run: a retried release finds them recorded. A page that cannot be
 * probed is each probe's error, never the release's (a store that cannot be reached is retried with the release).
 */
async function probeFinalPage(deps: ActivityDeps, files: RunFiles, req: ReleaseInput): Promise<void> {
  const scripts = (await files.input(req.runId)).finalPageProbes ?? [];
  const key = `${req.runId}/${FINAL_PAGE_FILE}`;
  if (scripts.length === 0 || (await files.store.exists(key))) return;
  const env = deps.pool.get(req.sessionId);
  const redact = secretRedactor(deps);
  // Task-given script in a page that may hold a session signed in with the operator's secrets: only where the
  // operator trusts the task starters (redaction cannot stop a script that encodes what it reads).
  const probes = deps.config.browser.pageProbes
    ? await withHeartbeat(() => runProbes((e) => env.evaluate(e), scripts, { redact }))
    : probesNotRun(scripts);
  const record: FinalPageRecord = { url: redact(env.url()), recorded_at: new Date().toISOString(), probes };
  await files.store.writeAtomic(key, JSON.stringify(record, null, 2));
}
