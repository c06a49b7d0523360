// The task workflow's loop as a class, one method per phase: open the session, observe, decide, act, ask the user
// (and wait durably for the reply), recover a lost session, finish. State lives in fields (the carried part in
// TaskState); when the loop stops is the table in agent-stops.ts. The same loop drives every environment (browser,
// desktop): the session activities behind the proxies pick the environment from the task. agent.ts only wires it.
// Deterministic: only @temporalio/workflow and pure modules.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  DecideCall,
  EndTakeoverResult,
  ObserveResult,
  OpenSessionInput,
  SessionRef,
  StartRunResult,
  StartTakeoverResult,
} from '../src/contract/activities';
import { loopNote, loopQuestion, parseLimitReply } from '../src/agent/budget';
import type { LimitQuestion } from '../src/contract/task';
import { handbackNote } from '../src/agent/handback';
import { decideCaptchaTimeout } from '../src/agent/captcha-policy';
import { autoReplyText } from '../src/agent/reply';
import { browserOpenQueue } from '../src/contract/queues';
import { DEFAULT_STORE_FAULT_WAIT_MINUTES } from '../src/trajectory/store-wait';
import type {
  EndReason,
  HandbackInput,
  ReplyInput,
  RunStatus,
  TakeoverLease,
  TaskInput,
  TaskResult,
} from '../src/contract/task';
import { activityProxies } from './activity-proxies';
import { countInvalidReply, StepClock } from './metrics';
import type { ActivityProxies } from './activity-proxies';
import { endReasonOf, isSessionLost, isStoreFailure } from './failures';
import { stopOf } from './agent-stops';
import type { LoopFacts, Stop, StepEnd } from './agent-stops';
import { notifyEnd, notifyPaused, notifyWaiting, rememberNotifyEvents } from './notify';
import type { CarriedState, TaskState } from './task-state';
import {
  addSpent,
  applyLimitReply,
  budgetReached,
  countRepeat,
  LIMITS_PATCH,
  loopKey,
  repeatsLast,
  startLimits,
} from './task-limits';
import type { LoopVerdict } from './task-limits';

const MAX_SESSION_REOPENS_PER_STEP = 3;

/** The lease as the takeover update and the status query show it: the address with its token, for a person. */
function leaseOf(leaseId: string, granted: StartTakeoverResult, since = granted.startedAt): TakeoverLease {
  const sep = granted.url.includes('?') ? '&' : '?';
  // noVNC's page (a desktop's lease) takes the token as the VNC password; the browser's viewer as `token`.
  const param = /\/vnc\.html/.test(granted.url) ? 'password' : 'token';
  return {
    leaseId,
    url: `${granted.url}${sep}${param}=${encodeURIComponent(granted.token)}`,
    token: granted.token,
    ...(granted.cdpUrl ? { cdpUrl: granted.cdpUrl } : {}),
    since,
  };
}

/**
 * Patch id: a browser step's last act also takes the next step's pre observation (one round trip fewer per step),
 * and a worker lost after that act recorded its post observation no longer makes the step be decided again.
 */
export const FOLD_OBSERVE_PATCH = 'fold-observe-into-act';

/**
 * Patch id: a browser task's session opens go to browserOpenQueue, which a worker polls only while its pool has room
 * (instead of the shared queue, where a worker with a full pool took opens and made them wait in its own line while
 * another worker had room).
 */
export const OPEN_QUEUE_PATCH = 'open-browser-on-room-queue';

/**
 * Patch id: a question keeps the task's session alive on its worker (holdSession: the page saved first) instead of
 * releasing it, and a reply takes it back (reclaimSession) when it is still alive, going on on the same live page; a
 * session the worker closed meanwhile (or a lost worker) is re-opened and restored as before.
 */
export const HOLD_SESSION_PATCH = 'hold-session-while-waiting';

/**
 * Patch id: a person's controls (task-control.ts) stop the loop between steps: a pause (the session held, then saved
 * and released as for a question) until a resume, a takeover (the live browser leased to a person) until a handback;
 * messages said to the task are recorded for the next step. Histories recorded before it never took a control.
 */
export const CONTROL_PATCH = 'person-controls';

/** How a run of the loop ends: the task's result, or the state to continue as new with. */
export type LoopEnd = { result: TaskResult } | { carry: CarriedState };

type Observed = { step: number; generation: number; obs: ObserveResult };

export class AgentLoop {
  private readonly input: TaskInput;
  private readonly state: CarriedState;
  private readonly proxies: ActivityProxies;
  /** The desktop records every call of a turn in act, stops included; the browser's decide records its stops. */
  private readonly actOnStops: boolean;
  /** Decided once per workflow (histories recorded before the patch replay without it). */
  private readonly fold: boolean;
  /** Likewise: a question holds the session instead of releasing it (see HOLD_SESSION_PATCH). */
  private readonly holdOnAsk: boolean;
  /** Likewise decided once: where session opens are scheduled (see OPEN_QUEUE_PATCH). */
  private readonly openQueue: string | undefined;
  /** The next step's observation, taken by the last act of the step before (see ActInput.next). */
  private observed: Observed | null;
  /** The generation of the act in flight when it is a step's last (see OpenSessionInput.lostActGeneration). */
  private lastActInFlight: number | null = null;
  /** The act in flight, for the note a lost worker's successor writes (see OpenSessionInput.actInDoubt). */
  private actInFlight: { summary: string; startedAt: string } | null = null;
  /** How the last step ended (for the stops). */
  private stepEnd: StepEnd = null;
  /** A cached task's step was decided by the model: keep its decision once acted. */
  private rememberStep = false;
  /** A replayed question's recorded reply (answers: 'recorded'), for this step's ask. */
  private recordedReply: string | null = null;
  /** The error text of the last model reply that was no valid action (for the stops). */
  private lastInvalidReply = '';
  /** An adoption's steps taken over from its folder (its first session opens for the next); null: no adoption. */
  private adoptedSteps: number | null = null;
  /** Likewise decided once: budgets ask, loops are detected, CuaCost is published (see LIMITS_PATCH). */
  private readonly limitsOn: boolean;
  /** The text of the last reply the task recorded. */
  private lastReply = '';
  /** The step's clock for its latency metric (workflows/metrics.ts) and the budget's working time. */
  private clock = new StepClock();

  /** `continued`: this run continues an earlier one as new (its state is the task's carried state). */
  constructor(
    private readonly task: TaskState,
    private readonly continued: boolean,
  ) {
    this.input = task.input;
    this.state = task.carried;
    // How long activities may wait for an unusable run store: what the session's worker said (the default until
    // then, and in histories from before it said so). Sizes timeouts only: a replay takes its results from the history.
    this.proxies = activityProxies(
      this.input.timing,
      () => this.state.storeWaitMinutes ?? DEFAULT_STORE_FAULT_WAIT_MINUTES,
    );
    const envName = this.input.environment;
    this.actOnStops = envName === 'desktop';
    this.fold = envName === 'browser' && patched(FOLD_OBSERVE_PATCH);
    this.openQueue =
      envName === 'browser' && patched(OPEN_QUEUE_PATCH) ? browserOpenQueue(workflowInfo().taskQueue) : undefined;
    this.holdOnAsk = patched(HOLD_SESSION_PATCH);
    this.limitsOn = patched(LIMITS_PATCH);
    task.costAttribute = this.limitsOn;
    this.observed = this.state.observed ?? null;
  }

  /** Runs steps until a stop holds (then finishes the task) or the run should continue as new. */
  async run(): Promise<LoopEnd> {
    const { state } = this;
    if (!this.continued) {
      this.task.publish();
      if (this.input.forkOf !== undefined) await this.startFork();
      else if (this.input.adoptOf !== undefined && this.input.followUp === undefined) await this.startAdopt();
      else if (this.input.followUp === undefined) {
        this.started(await this.proxies.shared('start run').startRun(this.input));
      } else await this.startFollowUp(this.input.followUp);
    }
    const stepsAtStart = state.step;
    for (;;) {
      const stop = stopOf(this.facts());
      if (stop) return { result: await this.finish(stop) };
      await this.controlPoint();
      if (this.dueToContinue(state.step - stepsAtStart)) {
        return { carry: this.observed ? { ...state, observed: this.observed } : state };
      }
      state.step += 1;
      this.task.publish();
      await this.step();
      if (!this.limitsOn) continue;
      addSpent(state, undefined, this.clock.working());
      this.task.publish();
      if (this.stepEnd === null) this.stepEnd = await this.checkBudget();
    }
  }

  /** What the starting worker said: the events its webhook wants, its budgets (with LIMITS_PATCH). */
  private started(result: StartRunResult | undefined): void {
    rememberNotifyEvents(this.state, result);
    if (this.limitsOn) startLimits(this.state, this.input, result);
  }

  /** A budget used up asks the user (again while a reply raised it too little); `stop` ends the task. */
  private async checkBudget(): Promise<StepEnd> {
    for (;;) {
      const reached = budgetReached(this.state, this.input, this.state.step);
      if (!reached) return null;
      const end = await this.askLimit(reached.text, reached.expects);
      if (end !== null) return end;
    }
  }

  /**
   * Loop detection after a step's decision: the same actions as the step before on its URL, and a screen that did
   * not change (compared by an activity), count as a repeat. Only with LIMITS_PATCH, for steps of plain actions.
   */
  private async trackLoop(obs: ObserveResult, calls: readonly DecideCall[]): Promise<LoopVerdict> {
    const { state, input } = this;
    if (!this.limitsOn || calls.some((c) => c.kind !== 'act')) return 'none';
    const key = loopKey(calls);
    const last = state.loop;
    let samePage = false;
    if (last && repeatsLast(state, key, obs.url)) {
      const distance = await this.proxies.shared(`step ${state.step} · same page?`).screenDistance({
        runId: input.runId,
        a: last.shot,
        b: obs.screenshot,
      });
      samePage = distance <= input.loop.maxDistance;
    }
    const summary = calls.map((c) => c.summary).join(', ');
    return countRepeat(state, { key, summary, url: obs.url, shot: obs.screenshot }, samePage, input.loop.repeats);
  }

  /** After the step's acts: a loop told to the model (a note with the next step) or asked about. */
  private async afterLoop(verdict: LoopVerdict): Promise<StepEnd> {
    const { state } = this;
    const loop = state.loop;
    if (verdict === 'none' || !loop) return null;
    if (verdict === 'ask') return this.askLimit(loopQuestion(loop.summary, loop.count), { kind: 'loop' });
    await this.proxies.shared(`step ${state.step + 1} · loop note`).recordControl({
      runId: this.input.runId,
      step: state.step + 1,
      generation: state.generation,
      kind: 'loop',
      text: loopNote(loop.summary, loop.count),
    });
    return null;
  }

  /** The runtime's question about a budget or a loop, recorded and asked; the reply goes on, or ends the task. */
  private async askLimit(text: string, expects: LimitQuestion): Promise<StepEnd> {
    const { state, input } = this;
    const call = state.questionCount + 1;
    await this.proxies.shared(`step ${state.step} · ${expects.kind} question`).recordControl({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      kind: 'question',
      text,
      index: call,
      metadata: { asked_for: expects.kind === 'loop' ? 'loop' : `budget:${expects.budget}` },
    });
    if (!(await this.ask(text, true, { expects, call }))) return 'unanswered';
    const parsed = parseLimitReply(this.lastReply, expects);
    // The validator refused anything else; a reply it never saw (an automatic one) that is no such reply stops.
    if (parsed.ok && applyLimitReply(state, expects, parsed.reply)) return null;
    return expects.kind === 'loop' ? 'loop' : 'budget';
  }

  /** Ends a task that was cancelled or failed: records the end (as far as it can) and returns the error to throw. */
  async endOnError(err: unknown): Promise<unknown> {
    if (isCancellation(err)) {
      await this.finishCancelled();
      return err;
    }
    return this.finishFailed(err);
  }

  private facts(): LoopFacts {
    return { input: this.input, state: this.state, stepEnd: this.stepEnd, lastInvalidReply: this.lastInvalidReply };
  }

  /** Continue as new once this run has taken a step and Temporal suggests it, or the task's own step limit says so. */
  private dueToContinue(ranHere: number): boolean {
    const after = this.input.continueAsNewAfterSteps;
    return ranHere > 0 && (workflowInfo().continueAsNewSuggested || (after !== undefined && ranHere >= after));
  }

  /** One step, run again in a re-opened session when its worker is lost (up to MAX_SESSION_REOPENS_PER_STEP times). */
  private async step(): Promise<void> {
    this.clock = new StepClock();
    try {
      await this.stepInSession();
    } catch (err) {
      this.clock.done(this.input.environment, isCancellation(err) ? 'cancelled' : 'error');
      throw err;
    }
    this.clock.done(this.input.environment, 'ok');
  }

  private async stepInSession(): Promise<void> {
    const { state } = this;
    this.stepEnd = null;
    for (let reopen = 0; ; reopen++) {
      const session = state.session ?? (await this.open(this.openReason())).session;
      try {
        this.stepEnd = await this.takeStep(session);
        return;
      } catch (err) {
        if (!isSessionLost(err) || reopen >= MAX_SESSION_REOPENS_PER_STEP) throw err;
        if (await this.recover(err)) return;
      }
    }
  }

  /**
   * Why a step finds no session: the task's start, a follow-up's, a fork's or an adoption's first step, or a run
   * continued as new.
   */
  private openReason(): OpenSessionInput['reason'] {
    const { state } = this;
    if (!this.continued && this.adoptedSteps !== null && state.step === this.adoptedSteps + 1) return 'adopt';
    if (state.step === 1 && !this.continued) return 'start';
    if (!this.continued && state.step === (this.input.forkOf?.step ?? 0) + 1) return 'fork';
    return state.followUpAt === state.step ? 'follow_up' : 'continue';
  }

  /** A follow-up task: recorded in the run folder after its last step, where this run's steps go on. */
  private async startFollowUp(text: string): Promise<void> {
    const started = await this.proxies.shared('follow-up').startFollowUp({ runId: this.input.runId, text });
    this.started(started);
    this.state.step = started.steps;
    this.state.followUpAt = started.steps + 1;
  }

  /**
   * A fork (`cua fork`): its run folder made of the source run's steps up to the fork's step, whose page its first
   * step opens in (restored); the next step is decided anew.
   */
  private async startFork(): Promise<void> {
    const started = await this.proxies.shared('fork').startFork(this.input);
    this.started(started);
    this.state.step = started.steps;
  }

  /**
   * An adoption (`cua adopt`): the run folder the original (Fara) wrote, imported under this task's id, is taken over
   * after its last step. A question it waits on is asked again (the task waits for its reply, as for any question);
   * the first session reopens the folder's last URL (it saved no page of ours) and says so to the model.
   */
  private async startAdopt(): Promise<void> {
    const started = await this.proxies.shared('adopt').startAdopt(this.input);
    this.started(started);
    this.state.step = started.steps;
    this.adoptedSteps = started.steps;
    if (started.question !== undefined) this.stepEnd = (await this.ask(started.question)) ? null : 'unanswered';
  }

  /**
   * Between steps: a person's pause or takeover stops the loop until a resume or a handback (the step under way has
   * finished); then the messages said to the task are recorded for the next step, where the model reads them.
   */
  private async controlPoint(): Promise<void> {
    const { control } = this.task;
    if (!control.stopRequested && control.says.length === 0) return;
    patched(CONTROL_PATCH);
    while (control.stopRequested) {
      if (control.takeoverRequested) await this.takeOver();
      else await this.pause();
    }
    while (control.says.length > 0) {
      const step = this.state.step + 1;
      const at = this.state.saysAt?.step === step ? this.state.saysAt : { step, count: 0 };
      await this.proxies.shared(`step ${step} · message`).recordControl({
        runId: this.input.runId,
        step,
        generation: this.state.generation,
        kind: 'say',
        text: control.says[0] as string,
        index: at.count + 1,
      });
      this.state.saysAt = { step, count: at.count + 1 };
      control.says.shift();
    }
  }

  /**
   * A takeover: the live browser (or desktop) leased to a person until they hand it back. The lease is the workflow's:
   * every timing.leaseCheckSeconds its worker is asked again for it (the same lease while that worker lives); a lost worker's
   * session is re-opened, its page restored, and the same lease granted there (a new address, in the status query).
   * The handback's note tells the model how long a person had it, what changed and what they said.
   */
  private async takeOver(): Promise<void> {
    const { state, input, task } = this;
    const { control } = task;
    control.takeoverRequested = false;
    state.takeovers = (state.takeovers ?? 0) + 1;
    const leaseId = `lease-${state.step}-${state.takeovers}`;
    let granted: StartTakeoverResult;
    try {
      granted = await this.lease(leaseId);
    } catch (err) {
      // An environment that cannot be taken over (or a lease refused): the update says why; the task goes on.
      if (!(err instanceof ActivityFailure)) throw err;
      control.takeoverError = err.cause?.message ?? String(err);
      if (state.session === null) await this.open('resume');
      return;
    }
    const first = granted;
    control.since = first.startedAt;
    control.lease = leaseOf(leaseId, granted);
    task.status = 'taken_over';
    task.publish();
    setCurrentDetails(
      `**Taken over by a person** since ${first.startedAt.slice(11, 19)} UTC (lease ${leaseId}; its address: \`npx cua status ${input.runId}\`)\n\nHand back: \`npx cua handback ${input.runId} "<what you did>"\``,
    );
    await this.recordControl('taken_over');
    await notifyPaused(task);
    // Every timing.leaseCheckSeconds the lease's worker is asked again (a lost one is replaced and the lease re-granted).
    const check = input.timing.leaseCheckSeconds * 1000;
    while (!(await condition(() => control.handback !== null, check))) {
      granted = await this.lease(leaseId);
      if (granted.url !== control.lease?.url || granted.token !== control.lease?.token) {
        control.lease = leaseOf(leaseId, granted, control.since);
      }
    }
    const ended = await this.endLease(leaseId);
    const handback = control.handback as HandbackInput;
    const before = ended.leaseLost ? first.page : { url: ended.urlBefore, title: ended.titleBefore };
    const startedAt = ended.leaseLost ? first.startedAt : ended.startedAt;
    const text = handbackNote({
      durationMs: Date.parse(ended.endedAt) - Date.parse(startedAt),
      urlBefore: before.url,
      urlAfter: ended.urlAfter,
      titleBefore: before.title,
      titleAfter: ended.titleAfter,
      note: handback.note ?? null,
    });
    await this.proxies.shared(`step ${state.step + 1} · handback`).recordControl({
      runId: input.runId,
      step: state.step + 1,
      generation: state.generation,
      kind: 'handback',
      text,
      metadata: {
        lease_id: leaseId,
        started_at: startedAt,
        ended_at: ended.endedAt,
        inputs: ended.inputs,
        url_before: before.url,
        url_after: ended.urlAfter,
        title_before: before.title,
        title_after: ended.titleAfter,
        ...(handback.note ? { person_note: handback.note } : {}),
      },
    });
    control.lease = null;
    control.handback = null;
    control.since = null;
    task.status = 'running';
    task.publish();
    setCurrentDetails('');
  }

  /** The lease granted on the session's worker; a lost worker's session is re-opened (its page restored) first. */
  private async lease(leaseId: string): Promise<StartTakeoverResult> {
    const { state, input } = this;
    for (let reopen = 0; ; reopen++) {
      const session = state.session ?? (await this.open(reopen === 0 ? 'resume' : 'worker_lost')).session;
      try {
        return await this.proxies
          .onSession(session, `step ${state.step} · takeover`)
          .startTakeover({ runId: input.runId, sessionId: session.sessionId, leaseId });
      } catch (err) {
        if (!isSessionLost(err) || reopen >= MAX_SESSION_REOPENS_PER_STEP) throw err;
        log.warn('the taken-over session was lost; re-opening it for the same lease', { error: String(err) });
        state.session = null;
      }
    }
  }

  /** Ends the lease on its worker; a worker lost meanwhile: what the workflow knows (the note says the page now). */
  private async endLease(leaseId: string): Promise<EndTakeoverResult> {
    const { state, input } = this;
    for (;;) {
      const session = state.session ?? (await this.open('worker_lost')).session;
      try {
        return await this.proxies
          .onSession(session, `step ${state.step} · hand back`)
          .endTakeover({ runId: input.runId, sessionId: session.sessionId, leaseId });
      } catch (err) {
        if (!isSessionLost(err)) throw err;
        state.session = null;
      }
    }
  }

  /**
   * A pause: the session held (its page saved; released when the hold ends, as for a question), the status `paused`
   * until a resume (or a takeover, which leases the page from here). Lasts as long as needed: nothing runs meanwhile.
   */
  private async pause(): Promise<void> {
    const { state, input, task } = this;
    const { control } = task;
    control.pauseRequested = false;
    control.paused = true;
    control.since = new Date().toISOString();
    task.status = 'paused';
    task.publish();
    setCurrentDetails(
      `**Paused** after step ${state.step} since ${control.since.slice(11, 19)} UTC\n\nResume: \`npx cua resume ${input.runId}\``,
    );
    const held = (state.session?.holdSeconds ?? 0) > 0 ? await this.hold('paused') : await this.released();
    await this.recordControl('paused');
    await notifyPaused(task);
    control.pauseSettled = true;
    await condition(() => !control.paused || control.takeoverRequested);
    control.paused = false;
    control.pauseSettled = false;
    if (held) await this.reclaim();
    if (control.takeoverRequested) return; // the takeover goes on from here (a session is opened for it if need be)
    control.since = null;
    task.status = 'running';
    task.publish();
    setCurrentDetails('');
    await this.recordControl('resumed');
    if (!state.session) await this.open('resume');
  }

  /** A control's trace in the run folder (status, message or note), for the step the loop stopped after. */
  private recordControl(kind: 'paused' | 'taken_over' | 'resumed', step = this.state.step): Promise<void> {
    return this.proxies.shared(`step ${step} · ${kind.replace('_', ' ')}`).recordControl({
      runId: this.input.runId,
      step,
      generation: this.state.generation,
      kind,
    });
  }

  /** Observe, decide, act on each call of the decision; a terminate or a question ends the step. */
  private async takeStep(session: SessionRef): Promise<StepEnd> {
    const obs = await this.observe(session);
    const calls = this.input.replayOf
      ? await this.replayOrDecide(session, obs)
      : this.input.cache && this.input.environment === 'browser'
        ? await this.cachedOrDecide(session, obs)
        : await this.decide(obs);
    if (!calls) return null;
    const loop = await this.trackLoop(obs, calls);
    for (const [index, call] of calls.entries()) {
      const final = index === calls.length - 1 || call.kind !== 'act';
      const asked = call.kind === 'act' || this.actOnStops ? await this.act(session, call, index, final) : undefined;
      if (call.kind !== 'act' && !this.actOnStops) this.task.record(call, obs.url);
      // The act held back a resend of a request in doubt: the runtime asks the user, as a critical point.
      if (asked !== undefined) return (await this.ask(asked, true)) ? null : 'unanswered';
      if (call.kind === 'terminate') {
        this.task.answer = call.text ?? '';
        await this.remember();
        return 'answered';
      }
      // Calls after a question are not run: the model decides again with the user's reply.
      if (call.kind === 'ask') return (await this.ask(call.text ?? '')) ? null : 'unanswered';
    }
    await this.remember();
    return this.afterLoop(loop);
  }

  /**
   * A cached task's step (input.cache): the decision cached for a page that looks like this one, when its element is
   * still there (no model call); else the model's decision, kept in the cache once acted (remember).
   */
  private async cachedOrDecide(session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null> {
    const { state, input } = this;
    const counts = (state.cached ??= { hits: 0, healed: 0, decided: 0 });
    const got = await this.proxies.onSession(session, `step ${state.step} · cache`).cacheStep({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      sessionId: session.sessionId,
    });
    if (got.kind !== 'diverged') {
      counts[got.kind === 'healed' ? 'healed' : 'hits'] += 1;
      state.invalidReplies = 0;
      return got.decision.calls ?? [got.decision];
    }
    counts.decided += 1;
    const calls = await this.decide(obs);
    this.rememberStep = calls !== null;
    return calls;
  }

  /** After a cached task's decided step is acted: its decision goes into the cache. */
  private async remember(): Promise<void> {
    if (!this.rememberStep) return;
    this.rememberStep = false;
    const { state } = this;
    await this.proxies.shared(`step ${state.step} · cache it`).cacheRemember({
      runId: this.input.runId,
      step: state.step,
      generation: state.generation,
    });
  }

  /** Opens (or restores) the task's session; `stepDone`: a lost worker had finished the step (see lostActGeneration). */
  private async open(
    reason: OpenSessionInput['reason'],
    lostActGeneration?: number,
    actInDoubt?: OpenSessionInput['actInDoubt'],
  ): Promise<{ session: SessionRef; stepDone: boolean }> {
    const { state, input } = this;
    state.generation += reason === 'start' || reason === 'fork' ? 0 : 1;
    const { stepDone, storeWaitMinutes, ...opened } = await this.proxies
      .opener(`step ${state.step} · open ${input.environment} (${reason})`, this.openQueue)
      .openSession({
        runId: input.runId,
        generation: state.generation,
        restore: reason !== 'start',
        reason,
        step: state.step,
        ...(lostActGeneration !== undefined ? { lostActGeneration } : {}),
        ...(actInDoubt ? { actInDoubt } : {}),
      });
    state.session = { ...opened, generation: state.generation };
    if (storeWaitMinutes !== undefined) state.storeWaitMinutes = storeWaitMinutes;
    state.lastUrl = opened.url;
    return { session: state.session, stepDone: stepDone === true };
  }

  /** The step's observation: the one the step before's last act took, else an observe (behind the captcha gate). */
  private async observe(session: SessionRef): Promise<ObserveResult> {
    const { state, input, observed } = this;
    const waitMs = this.captchaWaitMs();
    const prior = observed?.step === state.step && observed.generation === state.generation ? observed.obs : null;
    this.observed = null;
    const obs =
      prior ??
      (await this.proxies.onSession(session, `step ${state.step} · observe`).observe({
        runId: input.runId,
        step: state.step,
        generation: state.generation,
        sessionId: session.sessionId,
        captchaWaitMs: waitMs,
      }));
    state.lastUrl = obs.url;
    if (obs.captchaTimedOut) {
      state.captchaTimeouts = (state.captchaTimeouts ?? 0) + 1;
      const decision = decideCaptchaTimeout({ ...input.captcha, waitMs }, state.captchaTimeouts);
      log.warn('captcha gate timed out', { step: state.step, timeouts: state.captchaTimeouts, decision });
      if (decision === 'raise') {
        throw ApplicationFailure.nonRetryable(
          `a captcha was not solved within ${input.captcha.waitSeconds}s`,
          'CaptchaTimeout',
        );
      }
      if (decision === 'disable-gate') state.captchaGateOff = true;
    }
    return obs;
  }

  /**
   * A replay's step (input.replayOf): the recording's action when the live page still matches it (no model call),
   * else the model's decision; the first step that does not match turns the replay off for the rest of the task (or,
   * `strict`, ends it with end reason replay_diverged).
   */
  private async replayOrDecide(session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null> {
    const { state, input } = this;
    const replay = (state.replay ??= { on: true, replayed: 0, healed: 0, decided: 0 });
    this.recordedReply = null;
    if (replay.on) {
      const got = await this.proxies.onSession(session, `step ${state.step} · replay`).replayStep({
        runId: input.runId,
        step: state.step,
        generation: state.generation,
        sessionId: session.sessionId,
      });
      if (got.kind !== 'diverged') {
        replay[got.kind] += 1;
        this.recordedReply = got.reply ?? null;
        state.invalidReplies = 0;
        return got.decision.calls ?? [got.decision];
      }
      replay.on = false;
      replay.diverged = { step: state.step, reason: got.reason };
      log.warn('replay diverged', { step: state.step, reason: got.reason });
      if (input.replayOf?.strict) {
        throw ApplicationFailure.nonRetryable(
          `the replay diverged at step ${state.step}: ${got.reason}`,
          'ReplayDiverged',
        );
      }
    }
    replay.decided += 1;
    return this.decide(obs);
  }

  /** The model's calls for the step; null when its reply was no valid action (counted; the model reads the error). */
  private async decide(obs: ObserveResult): Promise<DecideCall[] | null> {
    const { state, task } = this;
    const ref = { runId: this.input.runId, step: state.step, generation: state.generation };
    // The Temporal UI's Current Details say so while the model is deciding (and, when it is slow or failing, for how
    // long); the tries and the last error are on the pending decide activity. Metadata only: replay is unchanged.
    task.modelCallSince = new Date().toISOString();
    setCurrentDetails(
      `**Step ${state.step}: waiting for the model** since ${task.modelCallSince.slice(11, 19)} UTC\n\nIts tries and the last try's error: Pending Activities (decide).`,
    );
    const decision = await this.proxies.model(`step ${state.step} · decide`).decide(ref);
    addSpent(state, decision.usage);
    task.modelCallSince = null;
    setCurrentDetails('');
    if (decision.kind === 'invalid') {
      // Not a failure: the error was recorded as the step's observation and the model reads it next step.
      const row = task.record(decision, obs.url);
      state.invalidReplies = (state.invalidReplies ?? 0) + 1;
      countInvalidReply(this.input.environment);
      row.textObservation = (decision.text ?? '').slice(0, 300);
      log.warn('invalid model reply', { step: state.step, inARow: state.invalidReplies, error: decision.text });
      this.lastInvalidReply = decision.text ?? '';
      return null;
    }
    state.invalidReplies = 0;
    return decision.calls ?? [decision];
  }

  /**
   * Carries out one call of the step's decision in the session; `final` also records the step's post screenshot.
   * Returns the runtime's question when the act held back a resend of a request in doubt (ActResult.runtimeQuestion).
   */
  private async act(session: SessionRef, call: DecideCall, index: number, final: boolean): Promise<string | undefined> {
    const { state, input, task } = this;
    const row = task.record(call, state.lastUrl);
    task.actStarted(row);
    this.actInFlight = { summary: call.summary, startedAt: new Date().toISOString() };
    // Folding: the step's last act observes for the next step when there is one (the budget allows it).
    const foldHere = this.fold && final && call.kind === 'act';
    const next =
      foldHere && state.step < input.maxSteps ? { step: state.step + 1, captchaWaitMs: this.captchaWaitMs() } : null;
    this.lastActInFlight = foldHere ? state.generation : null;
    const acted = await this.proxies.onSession(session, `step ${state.step} · ${call.summary}`).act({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      sessionId: session.sessionId,
      action: call.action,
      ...(this.actOnStops ? { call: index, final } : {}),
      ...(next ? { next } : {}),
    });
    this.lastActInFlight = null;
    this.actInFlight = null;
    addSpent(state, acted.usage);
    task.actDone();
    if (next && acted.next) this.observed = { step: next.step, generation: state.generation, obs: acted.next };
    state.lastUrl = acted.url;
    row.url = acted.url;
    const text = acted.textObservation ?? acted.error;
    row.textObservation = text ? text.slice(0, 300) : null;
    return acted.runtimeQuestion;
  }

  private captchaWaitMs(): number {
    return this.state.captchaGateOff ? 0 : this.input.captcha.waitSeconds * 1000;
  }

  /**
   * Asks the user and waits (durably, the session held or released) for the reply; false if the ask timed out.
   * `byRuntime`: the runtime's question about a held-back resend (recorded by the act); the reply settles it.
   */
  private async ask(
    text: string,
    byRuntime = false,
    limit?: { expects: LimitQuestion; call: number },
  ): Promise<boolean> {
    const { state, input, task } = this;
    if (byRuntime && !limit) {
      task.record(
        {
          actionName: 'ask_user_question',
          action: {},
          thoughts: '',
          summary: `ask_user_question (runtime) "${text.slice(0, 40)}…"`,
          kind: 'ask',
          text,
        },
        state.lastUrl,
      );
    }
    state.questionCount += 1;
    const question = {
      id: `q${state.questionCount}`,
      text,
      step: state.step,
      ...(limit ? { expects: limit.expects } : {}),
    };
    task.question = question;
    // A replay with `answers: 'recorded'` answers the recorded question with its recorded reply; an unattended task
    // (autoReply) stops at a budget or a loop: nobody is there to decide to spend more.
    let autoReply: string | undefined;
    if (limit) autoReply = autoReplyText(input.autoReply) === undefined ? undefined : 'stop';
    else {
      autoReply = this.recordedReply ?? autoReplyText(input.autoReply);
      this.recordedReply = null;
    }
    let held = false;
    if (autoReply !== undefined) {
      task.pendingReply = { text: autoReply, questionId: question.id };
    } else {
      task.status = 'waiting_for_user';
      task.publish();
      setCurrentDetails(`**Waiting for a reply** (question ${question.id}, step ${state.step})\n\n> ${text}`);
      await notifyWaiting(task);
      held = this.holdOnAsk && (state.session?.holdSeconds ?? 0) > 0 ? await this.hold() : await this.released();
      await this.proxies.shared(`step ${state.step} · pause (waiting for user)`).pause({
        runId: input.runId,
        question: text,
      });
      const replied = await this.clock.offClock(async () =>
        input.askTimeoutSeconds
          ? await condition(() => task.pendingReply !== null, `${input.askTimeoutSeconds}s`)
          : (await condition(() => task.pendingReply !== null), true),
      );
      if (!replied) return false;
    }
    const reply = task.pendingReply as ReplyInput | null;
    if (!reply) return false;
    const recorded = this.proxies.shared(`step ${state.step} · user reply`).recordReply({
      runId: input.runId,
      questionId: question.id,
      text: reply.text,
      step: state.step,
      ...(limit ? { call: limit.call } : byRuntime ? { settlesHeldRequests: true } : {}),
    });
    this.lastReply = reply.text;
    // A held session is taken back while the reply is recorded (one round trip less before the next screenshot).
    await Promise.all([recorded, held ? this.reclaim() : undefined]);
    task.pendingReply = null;
    task.question = null;
    task.status = 'running';
    setCurrentDetails('');
    task.publish();
    if (!state.session) await this.open('reply');
    return true;
  }

  /**
   * The step's session was lost: re-opens it. True if the lost worker had finished the step (its last act was
   * recorded as done: the next step starts in the restored session); false if the step is observed and decided again.
   */
  private async recover(err: unknown): Promise<boolean> {
    const { state, task } = this;
    const envName = this.input.environment;
    state.session = null;
    this.observed = null;
    const lostAct = this.lastActInFlight;
    this.lastActInFlight = null;
    const actInDoubt = this.actInFlight ?? undefined;
    this.actInFlight = null;
    // Lost during the step's last act: if it was recorded as done, the step is over; otherwise its effect is unknown.
    if (lostAct !== null && (await this.open('worker_lost', lostAct, actInDoubt)).stepDone) {
      log.warn(`${envName} session lost after the step's last act was recorded; going on in a new session`, {
        step: state.step,
        error: String(err),
      });
      task.actDone();
      return true;
    }
    log.warn(`${envName} session lost; re-opening and re-observing the step`, { step: state.step, error: String(err) });
    task.markSuperseded();
    if (lostAct === null) await this.open('worker_lost', undefined, actInDoubt);
    return false;
  }

  /** Releases the session for the wait, its page saved (as before HOLD_SESSION_PATCH); false: nothing is held. */
  private async released(): Promise<false> {
    await this.release(true);
    return false;
  }

  /** Holds the session through the wait (its page saved); false when it was released instead, or is gone. */
  private async hold(why = 'waiting for user'): Promise<boolean> {
    const { state, input } = this;
    const session = state.session;
    if (!session) return false;
    try {
      const { held } = await this.proxies
        .onSession(session, `step ${state.step} · hold ${input.environment} (${why})`)
        .holdSession({ runId: input.runId, sessionId: session.sessionId });
      if (!held) state.session = null;
      return held;
    } catch (err) {
      if (!isSessionLost(err)) throw err;
      log.warn('session gone when holding it for the reply', { error: String(err) });
      state.session = null;
      return false;
    }
  }

  /** After the reply: the held session, if it is still alive, goes on as it was; otherwise the reply re-opens one. */
  private async reclaim(): Promise<void> {
    const { state, input } = this;
    const session = state.session;
    if (!session) return;
    try {
      const { alive } = await this.proxies
        .onSession(session, `step ${state.step} · reclaim ${input.environment}`)
        .reclaimSession({ runId: input.runId, sessionId: session.sessionId });
      if (alive) return;
    } catch (err) {
      if (!isSessionLost(err)) throw err;
      log.warn('held session gone at the reply', { error: String(err) });
    }
    state.session = null;
    this.observed = null;
  }

  /** Releases the session; `writesOnce`: the task ends without waiting for its run store (see ReleaseInput.writesOnce). */
  private async release(save: boolean, writesOnce = false): Promise<void> {
    const { state, input } = this;
    const session = state.session;
    if (!session) return;
    state.session = null;
    try {
      await this.proxies.onSession(session, `step ${state.step} · release ${input.environment}`).releaseSession({
        runId: input.runId,
        sessionId: session.sessionId,
        save,
        ...(writesOnce ? { writesOnce } : {}),
      });
    } catch (err) {
      if (!isSessionLost(err)) throw err;
      log.warn('session already gone when releasing', { error: String(err) });
    }
  }

  /** Ends the task the way a stop says: its error, the session released (unless it is already), the end recorded. */
  private async finish(stop: Stop): Promise<TaskResult> {
    const error = stop.error?.(this.facts());
    if (error !== undefined) this.task.error = error;
    if (stop.release) await this.release(false);
    await this.finalize(stop.status, stop.endReason, stop.reason(this.facts()));
    await notifyEnd(this.task);
    return this.task.result();
  }

  /** Records the task's end in its run folder (and publishes its status). */
  private async finalize(final: RunStatus, why: EndReason, reason: string | null): Promise<void> {
    const { task } = this;
    task.status = final;
    task.endReason = why;
    task.control.ended = true;
    task.publish();
    const recorded = await this.proxies.shared(`finalize · ${final}`).finalize({
      runId: this.input.runId,
      status: final,
      answer: task.answer,
      reason,
      endReason: why,
      steps: this.state.step,
    });
    // A used-up step budget is answered with the last observation's text (histories recorded before: no result).
    if (recorded) task.answer = recorded.answer;
  }

  /** Cancelled: ends now, even while its run store is full or unreachable (what it would write is tried once). */
  private async finishCancelled(): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      await this.release(false, true);
      await this.finalize('cancelled', 'cancelled', 'cancelled by user').catch((finalizeErr: unknown) => {
        if (!isStoreFailure(finalizeErr)) throw finalizeErr;
        log.warn('could not record the cancellation in the run folder', { error: String(finalizeErr) });
      });
      await notifyEnd(this.task);
    });
  }

  /** Failed: records why (as far as the run store allows) and returns the TaskFailed error carrying the result. */
  private async finishFailed(err: unknown): Promise<ApplicationFailure> {
    const message =
      err instanceof ActivityFailure && err.cause
        ? err.cause.message
        : err instanceof ApplicationFailure && err.type === 'ReplayDiverged'
          ? err.message
          : String(err);
    this.task.error = message;
    const why = endReasonOf(err, this.input);
    await CancellationScope.nonCancellable(async () => {
      const storeDown = why === 'run_folder';
      await this.release(false, storeDown).catch(() => undefined);
      try {
        await this.finalize('failed', why, message);
      } catch (finalizeErr) {
        // The run store that ended the task may still be down: the task's result says why it ended all the same
        // (its run folder keeps the status it had; nothing recorded is lost).
        if (!storeDown || !isStoreFailure(finalizeErr)) throw finalizeErr;
        log.warn('could not record the end of the task in its run folder', { error: String(finalizeErr) });
      }
      await notifyEnd(this.task);
    });
    const result: TaskResult = { ...this.task.result(), endReason: why };
    return ApplicationFailure.create({
      message: `task failed at step ${this.state.step}: ${message}`,
      type: 'TaskFailed',
      nonRetryable: true,
      details: [result],
    });
  }
}
