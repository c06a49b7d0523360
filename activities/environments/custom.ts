// The driver of the environments an application brings (src/environments/plugin.ts): opens and closes their
// sessions, and observes, acts and decides in them as in a browser (page-steps.ts, browser-decide.ts). The sessions
// live in this worker process; their observe/act go to its own session queue, so a lost worker's session is
// re-opened elsewhere.
import { randomBytes } from 'node:crypto';
import { UnknownSessionError } from '../../src/browser/errors';
import { CustomSessions } from '../../src/environments/plugin';
import type { CustomEnvironment, EnvironmentSession } from '../../src/environments/plugin';
import { sessionRestored } from '../../src/trajectory/events';
import { lastUrl } from '../../src/agent/history';
import type { TaskInput } from '../../src/contract/task';
import { activitySignal, nonRetryable, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import type { OpenSessionInput, ReleaseInput } from '../../src/contract/activities';
import { decideBrowser } from './browser-decide';
import type { EnvironmentDriver, OpenedSession } from './driver';
import { actOnPage, observePage } from './page-steps';
import type { PageSteps, StepTarget } from './page-steps';

const CUSTOM_SESSION_PREFIX = 'env-';

function stepTarget(s: EnvironmentSession, lost: (err: Error) => never): StepTarget {
  // Each call goes to the session itself (its `this`), whatever the class keeps privately; a session that says it
  // is lost (EnvironmentSessionLostError) becomes a lost session for the workflow.
  const g = <T>(call: () => Promise<T>): Promise<T> =>
    call().catch((err: unknown) => {
      if (err instanceof Error && err.name === 'EnvironmentSessionLostError') lost(err);
      throw err;
    });
  // What the step sees by (the screenshot, the page context): a session that cannot show its screen is in doubt
  // whatever it throws, and is opened again (as the browser reloads a page it cannot capture); an action's error
  // stays the action's, for the model to read.
  const seen = <T>(what: string, call: () => Promise<T>): Promise<T> =>
    g(call).catch((err: unknown) => {
      if (err instanceof Error && err.name === 'UnknownSessionError') throw err;
      const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      lost(new Error(`its ${what} failed (${text.split('\n')[0] ?? text})`));
    });
  return {
    leftClick: (x, y) => g(() => s.leftClick(x, y)),
    doubleClick: (x, y) => g(() => s.doubleClick(x, y)),
    tripleClick: (x, y) => g(() => s.tripleClick(x, y)),
    rightClick: (x, y) => g(() => s.rightClick(x, y)),
    mouseMove: (x, y) => g(() => s.mouseMove(x, y)),
    leftClickDrag: (x, y) => g(() => s.leftClickDrag(x, y)),
    type: (text, options) => g(() => s.type(text, options)),
    keys: (chord) => g(() => s.keys(chord)),
    scroll: (dx, dy) => g(() => s.scroll(dx, dy)),
    visitUrl: (url) => g(() => s.visitUrl(url)),
    historyBack: () => g(() => s.historyBack()),
    wait: (seconds) => g(() => s.wait(seconds)),
    pageMarkdown: () => g(() => s.pageMarkdown()),
    screenshot: () => seen('screenshot', () => s.screenshot()),
    timedScreenshot: async () => {
      const startedAt = Date.now();
      return { png: await seen('screenshot', () => s.screenshot()), startedAt };
    },
    url: () => s.url(),
    close: () => s.close(),
    pageContext: () =>
      seen('page context', () => (s.pageContext ? s.pageContext() : Promise.resolve(`Current URL: ${s.url()}`))),
    waitForCaptcha: () => Promise.resolve(true),
    lastChangeAt: () => Promise.resolve(null),
  };
}

export function createCustomDriver(deps: ActivityDeps, files: RunFiles): EnvironmentDriver {
  const sessions = (deps.customSessions ?? new CustomSessions()).byId;
  /** Forgets a session and closes it (a close that fails is not the caller's failure). */
  const forget = async (sessionId: string, session: EnvironmentSession): Promise<void> => {
    sessions.delete(sessionId);
    await session.close().catch(() => undefined);
  };

  const environmentOf = (name: string): CustomEnvironment => {
    const env = deps.environments?.get(name);
    if (!env) {
      const hosted = ['browser', ...(deps.desktops ? ['desktop'] : []), ...(deps.environments?.keys() ?? [])];
      nonRetryable(
        new Error(`this worker hosts no environment '${name}' (it hosts ${hosted.join(', ')})`),
        'EnvironmentUnavailableError',
      );
    }
    return env;
  };

  const get = (sessionId: string): StepTarget => {
    const held = sessions.get(sessionId);
    if (!held) throw new UnknownSessionError(`No open session ${sessionId} (closed, or never opened here).`);
    // A session that says it is lost is forgotten and closed; the workflow opens the environment again.
    return stepTarget(held.session, (err) => {
      void forget(sessionId, held.session);
      throw new UnknownSessionError(`the session ${sessionId} was lost: ${err.message}`);
    });
  };
  const steps: PageSteps = { deps, files, target: get };

  const open = async (req: OpenSessionInput, input: TaskInput): Promise<OpenedSession> => {
    const env = environmentOf(input.environment);
    const { runId: taskId } = req;
    const w = await files.writer(taskId);
    // A session this worker still holds for the run (a lost activity left it) goes first.
    for (const [id, held] of sessions) if (held.taskId === taskId) await forget(id, held.session);
    const url = req.restore
      ? (((await w.readRunState()).url as string | undefined) ?? lastUrl(await w.events()) ?? input.startUrl ?? null)
      : (input.startUrl ?? null);
    const session = await withHeartbeat(() =>
      env.open({
        taskId,
        runId: taskId,
        url,
        screen: input.viewport,
        restore: req.restore,
        signal: activitySignal() ?? new AbortController().signal,
      }),
    );
    const sessionId = `${CUSTOM_SESSION_PREFIX}${env.name}:${taskId}:g${req.generation}:${randomBytes(3).toString('hex')}`;
    sessions.set(sessionId, { taskId, session });
    if (req.reason === 'worker_lost') {
      await w.appendEvent(
        sessionRestored(req.step, `The ${env.name} session was lost and opened again at ${session.url() || '…'}.`, {
          generation: req.generation,
          metadata: { note: 'session_restored', restored_url: session.url() || null },
        }),
      );
    }
    deps.log?.(`${env.name} session ${sessionId} opened for ${taskId} (${req.reason})`);
    return { sessionId, taskQueue: deps.sessionQueue, url: session.url() };
  };

  /** Closes the session; with `save` (a question) its location is kept for the re-open. */
  const release = async (req: ReleaseInput): Promise<void> => {
    const held = sessions.get(req.sessionId);
    if (!held) return;
    if (req.save) {
      const w = await files.writer(req.runId);
      await w.writeRunState({ ...(await w.readRunState()), url: held.session.url() });
    }
    sessions.delete(req.sessionId);
    await held.session.close();
  };

  return {
    sessionPrefix: CUSTOM_SESSION_PREFIX,
    open,
    observe: (req) => observePage(steps, req),
    act: (req) => actOnPage(steps, req),
    release,
    // The browser agent's model request: an application's environment takes the browser's actions.
    decide: (req, input) => decideBrowser(deps, files, req, input),
  };
}
