// The desktop's driver: open a sandboxed desktop for a run (its home is the run's `home/` folder, so a new worker
// finds the files again; each step that changed it is archived as that step's, desktop-home.ts), screenshot it before
// a step, carry out one tool call of a step (each its own action and tool_output event; the step's last call also
// records the post screenshot), hold it through a question's wait (windows and all) or close it, and decide a step
// with the desktop agent's two model calls (desktop-decide.ts).
import { withActionSpan } from '../../src/telemetry/spans';
import fs from 'node:fs/promises';
import { agentState } from '../../src/agent/decision';
import { TEXT_OBSERVATION_KEY } from '../../src/agent/history';
import { describeUrlPolicy } from '../../src/contract/url-policy';
import type { TaskInput } from '../../src/contract/task';
import type { DesktopPool, DesktopSession } from '../../src/desktop';
import { callObservation, checkCall, summarizeCall } from '../../src/desktop/agent';
import type { DesktopCall } from '../../src/desktop/agent';
import { actionEvent, postObservation, preObservation, sessionRestored, toolOutput } from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import type {
  ActInput,
  ActResult,
  HoldSessionInput,
  HoldSessionResult,
  ObserveInput,
  ObserveResult,
  OpenSessionInput,
  EndTakeoverResult,
  StartTakeoverResult,
  TakeoverRef,
} from '../../src/contract/activities';
import { recordStartPage } from '../step-records';
import { nonRetryable, recordedPre, taskUrlPolicy, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import { decideDesktop } from './desktop-decide';
import { runTool } from './desktop-tools';
import { homeOf, restoreHome, saveHome } from './desktop-home';
import { DESKTOP_AGENT, desktopScreen } from './desktop-step';
import { leaseLost } from './driver';
import type { EnvironmentDriver, OpenedSession } from './driver';
import { holdForReply } from './session-hold';

/** Desktop session ids start so (the desktop pool names them; table.ts routes observe/act/release by it). */
const DESKTOP_SESSION_PREFIX = 'desk-';

export function createDesktopDriver(deps: ActivityDeps, files: RunFiles): EnvironmentDriver {
  const steps = new SessionSteps();
  const release = async (req: HoldSessionInput): Promise<void> => {
    const desktops = pool(deps);
    if (desktops.has(req.sessionId)) await desktops.close(req.sessionId);
    await saveHome(files, req.runId, homeOf(files, req.runId), steps.of(req.sessionId));
    steps.forget(req.sessionId);
  };
  return {
    sessionPrefix: DESKTOP_SESSION_PREFIX,
    async open(req, input) {
      const opened = await openDesktop(deps, files, req, input);
      steps.set(opened.sessionId, req.step);
      return opened;
    },
    observe: (req) => observeDesktop(deps, files, req),
    act(req) {
      steps.set(req.sessionId, req.step);
      return actOnDesktop(deps, files, req);
    },
    release,
    hold: (req) => holdDesktop(deps, files, req, steps, release),
    reclaim: async (req) => ({ alive: await pool(deps).reclaim(req.sessionId) }),
    decide: (req, input) => decideDesktop(deps, files, req, input),
    // A person takes the desktop over through noVNC (src/desktop/takeovers.ts); the token is the VNC password.
    async takeover(req: TakeoverRef): Promise<StartTakeoverResult> {
      const session = pool(deps).get(req.sessionId);
      const grant = await pool(deps).takeovers.lease(req.sessionId, session.display, req.leaseId, () =>
        windowsLine(session),
      );
      deps.log?.(`desktop ${req.sessionId} of ${req.runId} taken over (lease ${req.leaseId}): ${grant.url}`);
      return grant;
    },
    async endTakeover(req: TakeoverRef): Promise<EndTakeoverResult> {
      const summary = await pool(deps).takeovers.end(req.leaseId);
      if (summary) return summary;
      const desktops = pool(deps);
      const shown = desktops.has(req.sessionId) ? await windowsLine(desktops.get(req.sessionId)) : '';
      return leaseLost({ url: '', title: shown });
    },
  };
}

/** The step each open desktop last worked on (its open's, then each act's): a home saved outside a step is its. */
class SessionSteps {
  private readonly steps = new Map<string, number>();

  set(sessionId: string, step: number): void {
    this.steps.delete(sessionId);
    this.steps.set(sessionId, step);
    if (this.steps.size > 256) this.steps.delete(this.steps.keys().next().value as string);
  }

  of(sessionId: string): number | undefined {
    return this.steps.get(sessionId);
  }

  forget(sessionId: string): void {
    this.steps.delete(sessionId);
  }
}

/**
 * A question: the home saved now (a worker lost during the wait still finds the files), and the live desktop held
 * for browser.holdWhileWaitingSeconds, so a quick reply finds its windows and background programs as they were. When
 * the hold ends unclaimed the desktop is closed and its home saved again; not held, it is closed (the home saved).
 */
function holdDesktop(
  deps: ActivityDeps,
  files: RunFiles,
  req: HoldSessionInput,
  steps: SessionSteps,
  release: (req: HoldSessionInput) => Promise<void>,
): Promise<HoldSessionResult> {
  return holdForReply(pool(deps), req, {
    seconds: deps.config.browser.holdWhileWaitingSeconds,
    save: async (why) => {
      // At the hold's end the desktop is closed first, as a release does (its programs write no more), then saved.
      if (why) return release(req);
      await withHeartbeat(() => saveHome(files, req.runId, homeOf(files, req.runId), steps.of(req.sessionId)));
    },
    what: 'home',
    log: deps.log,
  });
}

/** The one line the model (and the viewer) reads where a browser step has a URL: the desktop's windows. */
async function windowsLine(session: DesktopSession): Promise<string> {
  const windows = await session.windows().catch(() => []);
  const titles = windows.map((w) => w.title || '(untitled)');
  return titles.length > 0 ? `Windows: ${titles.join(' | ')}` : 'No windows are open.';
}

function pool(deps: ActivityDeps): DesktopPool {
  if (!deps.desktops) {
    nonRetryable(
      new Error('this worker has no desktop support (its log says why at start; see docs/desktop.md)'),
      'DesktopUnavailableError',
    );
  }
  return deps.desktops;
}

async function openDesktop(
  deps: ActivityDeps,
  files: RunFiles,
  req: OpenSessionInput,
  input: TaskInput,
): Promise<OpenedSession> {
  const d = deps.config.desktop;
  const desktops = pool(deps);
  const { runId: taskId } = req;
  const w = await files.writer(taskId);
  const homeDir = homeOf(files, taskId);
  await fs.mkdir(homeDir, { recursive: true, mode: 0o700 });
  // With a shared store (S3), the home as the last step left it, whichever worker ran that step.
  await restoreHome(files, taskId, homeDir);
  const screen = desktopScreen(input);
  const urlPolicy = taskUrlPolicy(deps.config, input);
  // Owned by the run: a desktop it still holds here (left by a lost activity) is closed first.
  const { sessionId } = await desktops.open(
    {
      homeDir,
      width: screen.width,
      height: screen.height,
      network: d.network,
      urlPolicy,
      apps: d.apps,
      typingChunk: d.typingChunk,
      typingDelayMs: d.typingDelayMs,
      commandTimeoutMs: d.commandTimeoutSeconds * 1000,
      maxCommandTimeoutMs: d.maxCommandTimeoutSeconds * 1000,
      outputHeadChars: d.outputHeadChars,
      outputTailChars: d.outputTailChars,
      ...(deps.log ? { log: deps.log } : {}),
    },
    { owner: taskId },
  );
  if (req.reason !== 'start') {
    const why =
      req.reason === 'worker_lost'
        ? 'The desktop was lost (its worker stopped) and a new one was started'
        : req.reason === 'fork'
          ? "A new desktop was started for this fork of an earlier run's step"
          : 'A new desktop was started after the pause';
    await w.appendEvent(
      sessionRestored(
        req.step,
        `${why}: windows and background processes from before are gone; the files in your home directory are kept.`,
        { generation: req.generation, metadata: { note: 'session_restored', environment: 'desktop' } },
      ),
    );
  }
  const network =
    d.network === 'policy' ? `via proxy, URL policy: ${describeUrlPolicy(urlPolicy)}` : d.network ? 'host' : 'off';
  deps.log?.(
    `desktop ${sessionId} opened for ${taskId} (${req.reason}, generation ${req.generation}; ` +
      `${screen.width}×${screen.height}, network ${network})`,
  );
  return { sessionId, taskQueue: deps.sessionQueue, url: '', holdSeconds: deps.config.browser.holdWhileWaitingSeconds };
}

async function observeDesktop(deps: ActivityDeps, files: RunFiles, req: ObserveInput): Promise<ObserveResult> {
  const w = await files.writer(req.runId);
  const session = pool(deps).get(req.sessionId);
  return withHeartbeat(async () => {
    const recorded = await recordedPre(w, req);
    if (recorded) return recorded;
    await deps.checkpoint?.('observe', req);
    const png = await session.screenshot();
    const pageInfo = await windowsLine(session);
    if (req.step === 1) await recordStartPage(w, { png, url: '', pageInfo });
    const screenshot = await w.saveScreenshot(req.step, 'pre', png, req.generation);
    await w.appendEvent(
      preObservation(
        req.step,
        { screenshot_path: screenshot, url: '', page_info: pageInfo },
        { generation: req.generation },
      ),
    );
    return { url: '', screenshot, captchaTimedOut: false };
  });
}

/** One tool call of the step: recorded as its action (calls after the first) and its tool_output, exactly once. */
async function actOnDesktop(deps: ActivityDeps, files: RunFiles, req: ActInput): Promise<ActResult> {
  const { runId: taskId } = req;
  const w = await files.writer(taskId);
  const input = await files.input(taskId);
  const k = req.call ?? 0;
  const stamp = { generation: req.generation, call: k };
  const ids = {
    action: eventId({ step: req.step, kind: 'action', ...stamp }),
    tool: eventId({ step: req.step, kind: 'tool', ...stamp }),
    post: eventId({ step: req.step, kind: 'post', generation: req.generation }),
  };
  const { action: rawName, ...rawArgs } = req.action;
  const call = checkCall(String(rawName), rawArgs);
  const events = await w.events();
  const recorded = events.find((e) => e.id === ids.tool);
  let output = recorded?.type === 'observation' && recorded.observation_type === 'tool_output' ? recorded : undefined;
  const session = pool(deps).get(req.sessionId);
  if (!output) {
    if (k > 0 && !events.some((e) => e.id === ids.action)) {
      await w.appendEvent(actionEvent(req.step, callFields(call), stamp));
    }
    const result = await withActionSpan(
      { environment: 'desktop', action: call.name, taskId, step: req.step },
      () => withHeartbeat(() => runTool(session, call, { deps, input, req, w })),
      (done) => ({ error: done.error ?? null }),
    );
    await withHeartbeat(async () => deps.checkpoint?.('act', req));
    output = toolOutput(
      req.step,
      ids.action,
      { output: result.output, ...(result.error ? { error: result.error } : {}) },
      {
        ...stamp,
        metadata: {
          [TEXT_OBSERVATION_KEY]: observationText(result),
          ...(result.point ? { point: result.point } : {}),
          // The grounding call's usage: the run's totals count it (src/trajectory/usage.ts).
          ...(result.subCalls ? { tool_sub_calls: result.subCalls } : {}),
        },
      },
    );
    await w.appendEvent(output);
  }
  if (req.final && !events.some((e) => e.id === ids.post)) {
    // The step's home, archived under the step before the step counts as done (its post observation).
    await withHeartbeat(() => saveHome(files, taskId, homeOf(files, taskId), req.step));
    await withHeartbeat(async () => {
      const shot = await w.saveScreenshot(req.step, 'post', await session.screenshot(), req.generation);
      await w.appendEvent(
        postObservation(
          req.step,
          ids.action,
          { screenshot_path: shot, url: '', page_info: await windowsLine(session) },
          { generation: req.generation },
        ),
      );
    });
  }
  return {
    url: '',
    textObservation: observationText(output),
    error: output.error || null,
  };
}

/** What the model reads back for a call: its output, or its error in the seed agent's words. */
function observationText(result: { output: string; error?: string }): string {
  return callObservation(result.output, result.error ?? '');
}

/** The action event of a step's second or later call (the first was recorded by decide with the model's output). */
function callFields(call: DesktopCall) {
  return {
    action_name: call.name,
    content: { action: call.name, arguments: call.arguments },
    action_nl_description: summarizeCall(call),
    agent_state: agentState(DESKTOP_AGENT, []),
    llm_conversation: { messages: [] },
    grounding: null,
  };
}
