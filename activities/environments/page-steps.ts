// Observe and act on a page: the steps of the browser driver and of an application's own environments (custom.ts),
// which show a screen and take the browser's actions. Observe records the pre screenshot (behind the captcha gate);
// act dispatches the decided action, records its tool output and the post screenshot, and may observe the next step.
import { dispatchAction } from '../../src/agent/dispatch';
import { withActionSpan } from '../../src/telemetry/spans';
import { RUNTIME_QUESTION_KEY, TEXT_OBSERVATION_KEY } from '../../src/agent/history';
import { ACTIONS_WITH_SUB_CALLS } from '../../src/agent/page-question';
import type { BrowserEnvironment } from '../../src/browser/environment';
import { NORM1000, resizedPixelsSpace } from '../../src/coords/viewport';
import type { EnvironmentSession } from '../../src/environments/plugin';
import { postObservation, preObservation, runtimeQuestion, toolOutput } from '../../src/trajectory/events';
import type { RequestJournal } from '../../src/browser/request-journal';
import { autoReplyText } from '../../src/agent/reply';
import type { TaskInput } from '../../src/contract/task';
import { eventId } from '../../src/trajectory/ids';
import type { TrajectoryWriter } from '../../src/trajectory/writer';
import type {
  ActInput,
  ActResult,
  ActTimings,
  ObserveInput,
  ObserveResult,
  StepRef,
} from '../../src/contract/activities';
import { Laps } from '../../src/common/laps';
import { copyDownloads } from '../local-files';
import { pageQuestioner } from '../page-subcall';
import { recordDeferred, recordStartPage } from '../step-records';
import { heldBackQuestion, heldBackText } from './request-log';
import { heldForApproval } from '../../src/browser/approval-lines';
import { APPROVAL_HOLDS_KEY, approvalQuestion, heldForApprovalText } from '../../src/agent/approvals';
import { elementRecorder } from './element-note';
import type { ElementNote } from '../../src/browser/element-record';
import type { Seen } from '../step-records';
import { nonRetryable, recordedPre, screenOf, secretResolver, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';

/** What observe/act use of a session: the browser's surface, with the browser-only parts answered plainly. */
export interface StepTarget extends EnvironmentSession {
  pageContext(): Promise<string>;
  /** A custom environment has no captcha gate: always open. */
  waitForCaptcha(timeoutMs: number): Promise<boolean>;
  /** Unknown: the post screenshot is never reused as the next pre one (the workflow does not fold here anyway). */
  lastChangeAt(): Promise<number | null>;
  /** The screenshot and when its capture began, as the browser gives them (BrowserEnvironment.timedScreenshot). */
  timedScreenshot(): Promise<{ png: Buffer; startedAt: number }>;
}

/** The session observe/act work in: a browser of the pool, or a session of an application's own environment. */
export type PageTarget = StepTarget | BrowserEnvironment;

/** A driver's side of the page steps: its dependencies, and the session a step's id names. */
export interface PageSteps {
  deps: ActivityDeps;
  files: RunFiles;
  target(sessionId: string): PageTarget;
  /**
   * Called once a step's action is done and its post screenshot taken, just before the post observation that makes
   * the step count as done is recorded: the browser's page checkpoint (so a step that counts as done always has its
   * page saved). It must not fail the act for its own reasons.
   */
  afterAct?(req: ActInput): Promise<void>;
  /** The session's journal of requests that change something (the browser's; request-journal.ts), if it keeps one. */
  journal?(sessionId: string): RequestJournal | undefined;
}

/** Pre screenshot, URL and page context of a step (after the captcha gate); step 1's is the start page too. */
export async function observePage(s: PageSteps, req: ObserveInput): Promise<ObserveResult> {
  const w = await s.files.writer(req.runId);
  const env = s.target(req.sessionId);
  return withHeartbeat(async () => {
    const recorded = await recordedPre(w, req);
    if (recorded) return recorded;
    await s.deps.checkpoint?.('observe', req);
    // The captcha gate: open at once unless a remote browser announced a solve in progress.
    const captchaTimedOut = req.captchaWaitMs ? !(await env.waitForCaptcha(req.captchaWaitMs)) : false;
    // A popup the last click opened after its step ended becomes the page now, as the original's 1 s window has it.
    if ('adoptLatePopup' in env) await env.adoptLatePopup();
    const seen = { png: await env.screenshot(), url: env.url(), pageInfo: await env.pageContext() };
    if (req.step === 1) await recordStartPage(w, seen);
    const pre = await recordPre(w, req, seen);
    return { ...pre, captchaTimedOut };
  });
}

/** Carries out the decided action in the session; records tool output and the post screenshot. */
export async function actOnPage(s: PageSteps, req: ActInput): Promise<ActResult> {
  const { deps, files } = s;
  const w = await files.writer(req.runId);
  const input = await files.input(req.runId);
  const { family, resized } = screenOf(input);
  const parsed = family.actionSchema.safeParse(req.action);
  if (!parsed.success) {
    nonRetryable(new Error(`act got an invalid ${String(req.action.action)} action`), 'InvalidAction');
  }
  const action = parsed.data;
  const ids = (kind: 'action' | 'tool' | 'post') => eventId({ step: req.step, kind, generation: req.generation });
  // A retry after the step was recorded: report what was recorded, do not act again.
  if (await w.hasEvent(ids('post'))) return recordedAct(w, req, ids('tool'), ids('post'));
  const laps = new Laps();
  const env = s.target(req.sessionId);
  const journal = s.journal?.(req.sessionId);
  journal?.setStep({ step: req.step, generation: req.generation });
  const subCalls = ACTIONS_WITH_SUB_CALLS.includes(action.action)
    ? await pageQuestioner(deps, input, w, { ...req, actionId: ids('action') })
    : undefined;
  const space = family.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height);
  // A browser records the element its action acts on, for the tool output's metadata (element-note.ts).
  const recordElement = 'page' in env ? elementRecorder(deps.config, env, { space, viewport: input.viewport }) : null;
  let element: ElementNote | undefined;
  const traced = { environment: input.environment, action: action.action, taskId: req.runId, step: req.step };
  const result = await withActionSpan(
    { ...traced, url: env.url() },
    () =>
      withHeartbeat(() =>
        dispatchAction(action, {
          target: env,
          space,
          viewport: input.viewport,
          resolveSecrets: secretResolver(deps.config, env),
          answerFromPage: subCalls?.answerFromPage ?? (async () => ''),
          ...(recordElement
            ? {
                beforeAction: async (done) => {
                  const t0 = performance.now();
                  element = await recordElement(done);
                  laps.add('element', performance.now() - t0);
                },
              }
            : {}),
        }),
      ),
    (done) => ({ url: env.url(), error: done.error }),
  );
  const settled = 'takeSettleMs' in env ? env.takeSettleMs() : null;
  if (settled !== null) laps.add('settle', settled);
  const typing = 'takeTyping' in env ? env.takeTyping() : null; // a browser's `type`: inserted or typed by keys
  laps.lap('action', (laps.ms.element ?? 0) + (settled ?? 0));
  await withHeartbeat(async () => deps.checkpoint?.('act', req));
  const doubt = journal ? await heldRequestsOf(journal, input) : undefined;
  if (doubt) result.textObservation = [result.textObservation, doubt.text].filter(Boolean).join('\n');
  // The action decide left for act (its tool called a model) goes into the stream with that call.
  if (subCalls) await recordDeferred(w, ids('action'), subCalls.calls);
  await withHeartbeat(() => copyDownloads(files, req.runId)); // into a shared store (S3), before the step counts
  await w.appendEvent(
    toolOutput(
      req.step,
      ids('action'),
      { output: doubt ? `${result.output}\n${doubt.text}`.trim() : result.output, error: result.error ?? '' },
      {
        generation: req.generation,
        metadata: {
          ...(element ?? {}),
          ...(typing ? { typing } : {}),
          ...(result.textObservation ? { [TEXT_OBSERVATION_KEY]: result.textObservation } : {}),
          ...(doubt?.question ? { [RUNTIME_QUESTION_KEY]: doubt.question } : {}),
          ...(doubt?.approvalHolds ? { [APPROVAL_HOLDS_KEY]: doubt.approvalHolds } : {}),
        },
      },
    ),
  );
  return withHeartbeat(async () => {
    // When the capture began: a change after that may be missing from the post screenshot (observeNext).
    laps.lap('record');
    const asked = Date.now();
    const { png, startedAt: capturedAt } = await env.timedScreenshot();
    laps.add('screenshotSettle', capturedAt - asked); // the browser settles again before it captures
    laps.lap('screenshot', laps.ms.screenshotSettle ?? 0);
    const shot = await w.saveScreenshot(req.step, 'post', png, req.generation);
    const url = env.url();
    const pageInfo = await env.pageContext();
    laps.lap('save');
    await s.afterAct?.(req);
    laps.lap('checkpoint');
    await w.appendEvent(
      postObservation(
        req.step,
        ids('action'),
        { screenshot_path: shot, url, page_info: pageInfo },
        { generation: req.generation },
      ),
    );
    if (doubt?.question) await recordRuntimeQuestion(w, req, doubt.question, doubt.approvalHolds);
    laps.lap('record');
    const acted = {
      url,
      textObservation: result.textObservation,
      error: result.error,
      ...(typing ? { typing } : {}),
      ...(doubt?.question ? { runtimeQuestion: doubt.question } : {}),
      ...(doubt?.approvalHolds ? { approvalHolds: doubt.approvalHolds } : {}),
    };
    // A question is asked before the next step: its observation is taken after the reply.
    if (!req.next || doubt?.question) return { ...acted, timings: timingsOf(laps) };
    const next = await observeNext(s, req, req.next, env, { png, capturedAt, url, pageInfo });
    laps.lap('next');
    return { ...acted, ...(next ? { next } : {}), timings: timingsOf(laps) };
  });
}

/** The act's laps as its timings: the parts every act has default to 0, the browser's own are left out elsewhere. */
function timingsOf(laps: Laps): ActTimings {
  const { action = 0, record = 0, screenshot = 0, save = 0, checkpoint = 0, ...rest } = laps.ms;
  return { action, record, screenshot, save, checkpoint, ...rest };
}

/** What a step recorded already answers a retried act with: its URL, text observation and error. */
async function recordedAct(w: TrajectoryWriter, req: ActInput, toolId: string, postId: string): Promise<ActResult> {
  const events = await w.events();
  const tool = events.find((e) => e.id === toolId);
  const post = events.find((e) => e.id === postId);
  const metadata = tool?.metadata as Record<string, unknown> | undefined;
  const text = metadata?.[TEXT_OBSERVATION_KEY];
  const question = metadata?.[RUNTIME_QUESTION_KEY];
  const holds = metadata?.[APPROVAL_HOLDS_KEY];
  const approvalHolds = Array.isArray(holds) ? holds.filter((h): h is string => typeof h === 'string') : undefined;
  // A retry after the post observation: the runtime's question is recorded (if the lost try did not get to it).
  if (typeof question === 'string') await recordRuntimeQuestion(w, req, question, approvalHolds);
  return {
    url: post?.type === 'observation' && post.observation_type === 'environment' ? (post.url ?? '') : '',
    textObservation: typeof text === 'string' ? text : null,
    error: tool?.type === 'observation' && tool.observation_type === 'tool_output' ? tool.error || null : null,
    ...(typeof question === 'string' ? { runtimeQuestion: question } : {}),
    ...(typeof question === 'string' && approvalHolds?.length ? { approvalHolds } : {}),
  };
}

/** What the act's requests held: the model's text, and the runtime's question (approval holds: their ids). */
type HeldByAct = { text: string; question?: string; approvalHolds?: string[] };

/**
 * Requests the act's action caused that were not sent: ones an approval rule holds (the runtime asks a person, even
 * in an unattended task), and resends of requests in doubt, held back (the runtime asks the user, unless the task is
 * unattended) or let through (the worker allows it). Undefined when there were none.
 */
async function heldRequestsOf(journal: RequestJournal, input: TaskInput): Promise<HeldByAct | undefined> {
  await journal.flush();
  const holds = journal.takeApprovalHolds();
  const doubt = resendsOf(journal, input);
  if (holds.length === 0) return doubt;
  const shown = holds.map(heldForApproval);
  return {
    text: [doubt?.text, heldForApprovalText(shown)].filter(Boolean).join('\n'),
    question: approvalQuestion(shown),
    approvalHolds: holds.map((h) => h.id),
  };
}

/** Resends of requests in doubt: held back or let through; what the model reads of them. */
function resendsOf(journal: RequestJournal, input: TaskInput): HeldByAct | undefined {
  const held = journal.takeHeld();
  const resent = journal.takeResent().map((r) => r.entry);
  if (held.length === 0 && resent.length === 0) return undefined;
  const asking = held.length > 0 && autoReplyText(input.autoReply) === undefined;
  return {
    text: heldBackText(held, resent, asking),
    ...(asking ? { question: heldBackQuestion(held) } : {}),
  };
}

/** The runtime's question after the step's action, once (its id is the step's and generation's). */
async function recordRuntimeQuestion(
  w: TrajectoryWriter,
  req: ActInput,
  question: string,
  approvalHolds?: readonly string[],
): Promise<void> {
  const metadata = approvalHolds?.length ? { [APPROVAL_HOLDS_KEY]: [...approvalHolds] } : {};
  const event = runtimeQuestion(req.step, question, { generation: req.generation, metadata });
  if (!(await w.hasEvent(event.id))) await w.appendEvent(event);
}

/**
 * The next step's pre observation, taken at the end of an act: the post screenshot, copied (not captured again)
 * unless the page changed after it was taken or a popup the click opened late has become the page. Undefined while a captcha solve holds the gate (the next step's
 * observe then waits for it).
 */
async function observeNext(
  s: PageSteps,
  req: ActInput,
  next: NonNullable<ActInput['next']>,
  env: PageTarget,
  post: { png: Buffer; capturedAt: number; url: string; pageInfo: string },
): Promise<ObserveResult | undefined> {
  const ref: StepRef = { runId: req.runId, step: next.step, generation: req.generation };
  await s.deps.checkpoint?.('observe', ref);
  if (next.captchaWaitMs > 0 && !(await env.waitForCaptcha(0))) return undefined;
  // A popup the click has opened by now becomes the page (without waiting for one: the click's step stays short).
  const adopted = 'adoptLatePopup' in env && (await env.adoptLatePopup(false));
  const changedAt = adopted ? null : await env.lastChangeAt();
  const changed = changedAt === null || changedAt >= post.capturedAt;
  const png = changed ? await env.screenshot() : post.png;
  const url = changed ? env.url() : post.url;
  const pageInfo = changed ? await env.pageContext() : post.pageInfo;
  const pre = await recordPre(await s.files.writer(req.runId), ref, { png, url, pageInfo });
  return { ...pre, captchaTimedOut: false };
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
