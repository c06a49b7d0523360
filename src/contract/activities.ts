// Inputs and outputs of the activities. Small on purpose: they travel through workflow history
// (ids, paths and short strings only, never screenshot bytes).
import type { EndReason, QuestionKind, TaskOutput, TaskState, TaskInput } from './task';

export interface SessionRef {
  sessionId: string;
  /** The task queue of the worker process that owns this browser session. */
  taskQueue: string;
  generation: number;
  /** See OpenSessionResult.holdSeconds. */
  holdSeconds?: number;
}

export interface OpenSessionInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  generation: number;
  /** Restore storage state and URL saved in the run folder (after a release or a lost worker). */
  restore: boolean;
  /** Why the session is being (re)opened; recorded as a note when restoring. */
  reason: 'start' | 'reply' | 'worker_lost' | 'continue' | 'resume' | 'follow_up' | 'fork' | 'adopt';
  step: number;
  /**
   * Re-opening after the worker was lost during the step's last act, in this generation: if that act's post
   * observation was recorded, the step is done (`stepDone`), and the restored session belongs to the next step.
   */
  lostActGeneration?: number;
  /**
   * Re-opening after the worker was lost during an act: which action it was and when it started (workflow time), so
   * the session_restored note (which the model reads) can say it may or may not have taken effect.
   */
  actInDoubt?: { summary: string; startedAt: string };
}

export interface OpenSessionResult {
  sessionId: string;
  /** The queue of the worker process that holds the session (its observe/act go there). */
  taskQueue: string;
  url: string;
  /**
   * How long this worker keeps the session alive while its task waits for a reply (browser.holdWhileWaitingSeconds);
   * absent or 0: a question releases it (environments without a hold, histories recorded before it existed).
   */
  holdSeconds?: number;
  /** See `OpenSessionInput.lostActGeneration`; absent in histories recorded before it existed. */
  stepDone?: boolean;
  /**
   * How long this worker waits for an unusable run store (config store.faultWaitMinutes): the workflow sizes its
   * activities' timeouts by it. Absent in histories recorded before it existed.
   */
  storeWaitMinutes?: number;
}

export interface StepRef {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  step: number;
  generation: number;
}

export interface ObserveResult {
  url: string;
  screenshot: string;
  captchaTimedOut: boolean;
}

/** One tool call of a decision: the browser agent decides one per step, the desktop agent one or more. */
export interface DecideCall {
  actionName: string;
  /** The parsed action's arguments in model space (small JSON; no thoughts). */
  action: Record<string, unknown>;
  thoughts: string;
  /** One line for UIs: "left_click (500, 340)". */
  summary: string;
  /** `invalid`: the model's output was no valid action; it was recorded with its error and the loop goes on. */
  kind: 'act' | 'terminate' | 'ask' | 'invalid';
  /** terminate → the answer; ask → the question; invalid → the one-line error the model reads next step. */
  text: string | null;
  /** An `ask` that is a provider's check (its confirmation request) rather than the model's own question. */
  question?: 'provider_check';
}

/**
 * The decision of a step. The browser's is one call (this object); a desktop step lists all its calls in `calls`
 * (this object then repeats the first), each carried out by its own act in order.
 */
export interface DecideResult extends DecideCall {
  calls?: DecideCall[];
  /** What the step's model call(s) used (tokens: prompt + completion), for budgets; absent in older histories. */
  usage?: StepUsage;
}

/** A step's model usage as the workflow counts it: two small numbers, never the calls themselves. */
export interface StepUsage {
  tokens: number;
  costUsd: number;
}

/** One call of a step's decision, to be carried out in the session. */
export interface ActInput extends StepRef {
  sessionId: string;
  action: Record<string, unknown>;
  /** Desktop steps: the call's place in the step (0 = first) and whether it is the step's last (post screenshot). */
  call?: number;
  final?: boolean;
  /**
   * Observe the next step here too (browser): the post screenshot becomes the next step's pre observation (a copy of
   * the same image, captured again only if the page changed after it), saving the next step an observe round trip.
   * `captchaWaitMs` is the gate the next observe would apply: while a captcha solve is in progress nothing is
   * observed here and the next step's observe waits for it.
   */
  next?: { step: number; captchaWaitMs: number };
}

/**
 * Where an act's time went, in whole milliseconds (for benchmarks and anyone asking why a step was slow): the element
 * record, the action itself, the settling after it, recording events, settling before and taking the post
 * screenshot, saving it with the page's URL and context, the page checkpoint, and observing the next step. A
 * browser's acts give every part; other environments give those they have.
 */
export interface ActTimings {
  element?: number;
  action: number;
  settle?: number;
  record: number;
  screenshotSettle?: number;
  screenshot: number;
  save: number;
  checkpoint: number;
  next?: number;
}

export interface ActResult {
  url: string;
  textObservation: string | null;
  error: string | null;
  /** The next step's observation, when `ActInput.next` asked for it and it could be taken. */
  next?: ObserveResult;
  /** What the act's tool used in model calls (read_page's question), for budgets; absent when it made none. */
  usage?: StepUsage;
  /**
   * The act held back a resend of a request in doubt (sent before a worker was lost, no answer recorded) and recorded
   * the runtime's question about it (an ask_user_question with metadata.asked_by "runtime"): the workflow asks it.
   */
  runtimeQuestion?: string;
  /**
   * The runtime's question is an approval: approval rules held these requests (their holds' ids in the run's
   * journal); only a person's reply decides them.
   */
  approvalHolds?: string[];
  /** Where the act's time went (absent from acts recorded before it was measured, and from a retried act's answer). */
  timings?: ActTimings;
  /**
   * A browser's `type`: whether the text was inserted at once or typed by keys, and why (src/browser/typing.ts
   * TypingReason). Absent for other actions, other environments, and acts recorded before it was reported.
   */
  typing?: { typed: 'insert' | 'keys'; reason: string };
}

export interface ReleaseInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  sessionId: string;
  /** Save storage state + URL to the run folder so a later session can restore it. */
  save: boolean;
  /**
   * The task ends without waiting for its run store (the store ended it, or it was cancelled): the release tries its
   * writes once, not waiting out a full or unreachable store, and closes the session whether they went through or not.
   */
  writesOnce?: boolean;
}

/** Keep the session alive while its task waits for a reply (its page or home saved first), or take it back after one. */
export interface HoldSessionInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  sessionId: string;
}

export interface HoldSessionResult {
  /** False: the session was saved and released instead (no hold in this environment or worker): open on the reply. */
  held: boolean;
}

export interface ReclaimSessionResult {
  /** True: the held session is still open in this worker, as it was; false: it was saved and closed meanwhile. */
  alive: boolean;
}

/** A takeover (`cua takeover`): a person drives the session's browser under a lease the workflow names. */
export interface TakeoverRef {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  sessionId: string;
  /** One path segment: 1 to 128 letters, digits, '.', '_' or '-'. The same id again is the same lease. */
  leaseId: string;
}

/**
 * How a person reaches the taken-over browser. The token travels in this result, so in workflow history: encrypted
 * there when the payload codec is on (docs/security.md); it is the lease's alone and dies with it.
 */
export interface StartTakeoverResult {
  /** http(s)://<worker's takeover endpoint>/takeover/<leaseId>: the viewer page; its WebSocket is <url>/ws. */
  url: string;
  /** Required by every request: `?token=` or `Authorization: Bearer`. */
  token: string;
  /** With browser.takeoverCdp: ws(s)://…/takeover/<leaseId>/cdp?token=…, for `chromium.connectOverCDP` (operator only). */
  cdpUrl?: string;
  /** When the lease started (ISO 8601), and the page then. */
  startedAt: string;
  page: { url: string; title: string };
}

/** What the person did, for the hand-back note the model reads (src/agent/handback.ts). Times are ISO 8601. */
export interface EndTakeoverResult {
  startedAt: string;
  endedAt: string;
  /** Clicks (mouse downs), wheel turns, keys pressed, texts typed and navigations carried out. */
  inputs: number;
  urlBefore: string;
  urlAfter: string;
  titleBefore: string;
  titleAfter: string;
  /**
   * This worker held no such lease (the worker that granted it was lost, and the session re-opened here): the times
   * are now and both pages are the current one; the workflow's own record of the start is the better one.
   */
  leaseLost?: boolean;
}

export interface RecordReplyInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  questionId: string;
  text: string;
  step: number;
  /** A runtime question's reply (a budget's, a loop's): its place among the run's questions (the event id's suffix). */
  call?: number;
  /** The reply is to the runtime's question about held-back requests: they are settled (may be sent again). */
  settlesHeldRequests?: boolean;
  /** The reply decides an approval of these holds (ActResult.approvalHolds): yes approves, no denies. */
  approvalHolds?: string[];
}

/** A control's trace in the run folder (activities/run.ts recordControl). */
export interface RecordControlInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  /** The step the model reads a message or note with (the next one), or the step the task stopped after. */
  step: number;
  generation: number;
  /**
   * `paused` / `taken_over` / `resumed`: the status (status.json says `running` for the first two; the precise one is
   * in metadata.stats.run_status). `say`: a user_message `followup_task` with metadata.kind "steer". `handback`: the
   * note the model reads about what a person did (a tool_output with no action, metadata.note "handback").
   * `question`: the runtime's question about a budget or a loop (an ask_user_question, metadata.asked_by "runtime",
   * `index` its place among the step's questions). `loop`: the note the model reads about its repeated action.
   */
  kind: 'paused' | 'taken_over' | 'resumed' | 'say' | 'handback' | 'question' | 'loop';
  text?: string;
  /** `say`: the message's place among the step's messages (1, 2, …). */
  index?: number;
  /** `handback`: what the note's metadata records (duration, URLs, titles, the person's note). */
  metadata?: Record<string, unknown>;
}

/** A follow-up task in a finished task's run: its instruction, recorded after the run's last step. */
export interface StartFollowUpInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  text: string;
}

export interface StartFollowUpResult extends StartRunResult {
  /** The run's last step so far: the follow-up's first step is the next one. */
  steps: number;
}

/** A fork's start: what startFork copied (its first step is the next one). */
export interface StartForkResult extends StartRunResult {
  /** The steps inherited from the source run (the fork's `forkOf.step`). */
  steps: number;
}

/** An adoption's start: what startAdopt found in the imported folder (its first step is the next one). */
export interface StartAdoptResult extends StartRunResult {
  /** The folder's steps: the adopted task's first step is the next one. */
  steps: number;
  /** The question the folder waits on (the task waits for its reply first); absent when it was running. */
  question?: string;
}

export interface FinalizeInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  status: TaskState;
  answer: string | null;
  reason: string | null;
  /** Absent in histories recorded before end reasons existed. */
  endReason?: EndReason;
  steps: number;
  /** A task with an output schema: its output (null: none), and why it has none (docs/output.md). */
  output?: TaskOutput | null;
  outputError?: string;
}

/**
 * The extraction of a task's output (a task with an output schema, at its end): after step `step` (its generation
 * names the record), from `answer` (null at a budget stop: the last step's text is taken), the memorized facts and
 * the final page's text the session's release kept. `partial`: the task stopped at its step or cost budget.
 */
export interface ExtractOutputInput {
  /** The task id; wire name, as in the other activities' inputs. */
  runId: string;
  step: number;
  generation: number;
  answer: string | null;
  partial: boolean;
}

export interface ExtractOutputResult {
  /** The validated output, or null when none came (`error` says why, one line). */
  output: TaskOutput | null;
  error?: string;
  /** What the extraction's calls used, for the task's spending. */
  usage?: StepUsage;
}

export interface FinalizeResult {
  /** The answer recorded (for max_rounds: the last step's observation text). */
  answer: string | null;
}

/** What the worker that starts a task says about it (startRun); absent in histories recorded before it said anything. */
export interface StartRunResult {
  /** The events this worker's webhook wants (notifications.webhook.events); absent: it has no webhook. */
  notifyEvents?: NotifyEvent[];
  /** This worker's default budgets and cost cap (config `budget`); absent: none. */
  budget?: WorkerBudget;
}

/** The worker config's `budget`: defaults for tasks that set none, and the cap on any cost limit (a reply's too). */
export interface WorkerBudget {
  maxCost?: number;
  maxTokens?: number;
  maxMinutes?: number;
  costCap?: number;
}

/** Two screenshots of a run (paths in its folder) compared: their distance, 0 (the same) to 1. */
export interface ScreenDistanceInput {
  /** The task id; wire name, kept so recorded histories replay and activities scheduled before an upgrade still run. */
  runId: string;
  a: string;
  b: string;
}

/** What a webhook is told about: a task waits for a reply, is paused, failed, completed (or max_rounds), or cancelled. */
export const NOTIFY_EVENTS = ['waiting', 'paused', 'failed', 'completed', 'cancelled', 'monitor_changed'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/**
 * One notification, as the workflow knows it (the notify activity turns it into the webhook's body, signed with the
 * worker's secret; neither the URL nor the secret is in here, so neither enters workflow history).
 */
export interface NotifyInput {
  event: NotifyEvent;
  /** This notification's own id (its child workflow's id): the same on every retry, so a receiver can drop repeats. */
  deliveryId: string;
  taskId: string;
  status: TaskState;
  step: number;
  instruction: string;
  /** The pending question; `kind` says who asks and why (`approval`: a request held for a person's yes). */
  question?: { id: string; text: string; kind?: QuestionKind };
  answer?: string;
  error?: string;
  endReason?: EndReason;
  /** An ended task with an output schema: its output (null: none), and why it has none. */
  output?: TaskOutput | null;
  outputError?: string;
  /**
   * `monitor_changed`: a schedule's monitor saw the run's value change, or its condition become true (the condition
   * as given; the value before, from the run `previousTaskId`, and now).
   */
  monitor?: { schedule: string; condition: string; old: unknown; new: unknown; previousTaskId: string | null };
  /** When it happened (workflow time, ISO 8601); each attempt's request carries its own send time besides. */
  at: string;
}

export interface ObserveInput extends StepRef {
  sessionId: string;
  /** How long a captcha solve the page announced may be waited out before the screenshot. */
  captchaWaitMs?: number;
}

/**
 * The task workflow's activities as it calls them: the run folder (shared queue), the session (its worker's queue)
 * and the model call. activities/catalog.ts implements them; workflows see only this interface.
 */
export interface TaskActivities {
  /** Creates the run folder; says which events the worker's webhook wants (undefined: no webhook, or before it said). */
  startRun(input: TaskInput): Promise<StartRunResult | undefined>;
  /** Marks the run as waiting for the user (a pause in the run folder). */
  pause(req: { /** The task id; wire name. */ runId: string; question: string }): Promise<void>;
  recordReply(req: RecordReplyInput): Promise<void>;
  finalize(req: FinalizeInput): Promise<FinalizeResult>;
  /** A task with an output schema: the extraction call(s) at its end (docs/output.md). */
  extractOutput(req: ExtractOutputInput): Promise<ExtractOutputResult>;
  recordControl(req: RecordControlInput): Promise<void>;
  /** The distance between two of the run's screenshots (loop detection: is the page unchanged?). */
  screenDistance(req: ScreenDistanceInput): Promise<number>;
  startFollowUp(req: StartFollowUpInput): Promise<StartFollowUpResult>;
  /**
   * Creates a fork's run folder (input.forkOf): the source's steps up to the fork's, their screenshots and that step's
   * page checkpoint (or desktop home), the hint; refuses (InvalidTaskInput) a step the source did not finish or saved
   * no page for.
   */
  startFork(input: TaskInput): Promise<StartForkResult>;
  /**
   * Takes over an adopted run folder (input.adoptOf) its starter imported into the run store: counts its steps, finds
   * the question it waits on, records the task input; refuses (InvalidTaskInput) a run with no imported folder.
   */
  startAdopt(input: TaskInput): Promise<StartAdoptResult>;
  /** The task's saved sign-in can be loaded here; else InvalidTaskInput, one line (no such name, no key for it). */
  checkSignin(req: { name: string }): Promise<void>;
  /** Saves the task's last page state back under its sign-in's name (`signinRefresh`); false when it saved none. */
  refreshSignin(req: { taskId: string; name: string }): Promise<boolean>;
  openSession(req: OpenSessionInput): Promise<OpenSessionResult>;
  releaseSession(req: ReleaseInput): Promise<void>;
  /** A question: saves the session's page and keeps the session alive for a quick reply (or releases it). */
  holdSession(req: HoldSessionInput): Promise<HoldSessionResult>;
  /** The reply came: whether the held session is still alive (it is the task's again). */
  reclaimSession(req: HoldSessionInput): Promise<ReclaimSessionResult>;
  observe(req: ObserveInput): Promise<ObserveResult>;
  act(req: ActInput): Promise<ActResult>;
  decide(req: StepRef): Promise<DecideResult>;
  /**
   * A replay's step (input.replayOf), on the session's worker: the recorded action of the same step, checked against
   * the live page and recorded as the step's action (replayed as it was, or healed: its point moved to where the
   * recorded element is now), or the reason it does not match (nothing recorded; the model decides the step).
   */
  replayStep(req: ReplayStepInput): Promise<ReplayStepResult>;
  /**
   * A cached task's step (input.cache), on the session's worker: the decision cached for a page that looks like this
   * one, checked against the live page (its element) and recorded as the step's action (`replayed`, or `healed`), or
   * `diverged` (no entry, or one that no longer fits: then marked invalid) and the model decides.
   */
  cacheStep(req: ReplayStepInput): Promise<ReplayStepResult>;
  /** Keeps the model's decision of a cached task's step (acted by now) in the cache, for its page (shared queue). */
  cacheRemember(req: StepRef): Promise<void>;
  /** POSTs one notification to the worker's webhook (returns at once when it has none); throws to be retried. */
  notify(req: NotifyInput): Promise<void>;
  /** A person takes the session's browser over (on the session's queue): a lease on the worker's takeover endpoint. */
  startTakeover(req: TakeoverRef): Promise<StartTakeoverResult>;
  /** The person hands it back: the lease ends (its viewers and CDP connections are cut); what they did. */
  endTakeover(req: TakeoverRef): Promise<EndTakeoverResult>;
}

/** A replay's step, checked in the session that holds the live page. */
export interface ReplayStepInput extends StepRef {
  sessionId: string;
}

/**
 * How a replay's step went: `replayed` (the page matched the recording; the recorded action, recorded again as this
 * step's), `healed` (the recorded element moved: the action's point is where it is now), or `diverged` (why not).
 * `reply`: a recorded question's recorded reply (when the replay uses the recorded replies: `answers: 'recorded'`).
 */
export type ReplayStepResult =
  | { kind: 'replayed' | 'healed'; decision: DecideResult; reply?: string; distance: number | null }
  | { kind: 'diverged'; reason: string };
