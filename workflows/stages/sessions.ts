// The task's session (a browser or a desktop on some worker): opened or restored, held through a wait for a person and
// taken back after it, released, and recovered when its worker is lost. Also what a lost worker leaves in doubt: the
// act in flight, and the next step's observation a folded act took (FOLD_OBSERVE_PATCH). Deterministic.
import { log } from '@temporalio/workflow';
import type { ObserveResult, OpenSessionInput, SessionRef } from '../../src/contract/activities';
import { isSessionLost } from '../failures';
import type { CarriedState } from '../task-state';
import type { TaskContext } from './context';

/** The next step's observation, taken by the last act of the step before (see ActInput.next). */
type Observed = { step: number; generation: number; obs: ObserveResult };

/** Why a session is opened (see OpenSessionInput.reason). */
export type OpenReason = OpenSessionInput['reason'];

export class Sessions {
  private observed: Observed | null;
  /** The generation of the act in flight when it is a step's last (see OpenSessionInput.lostActGeneration). */
  private lastActInFlight: number | null = null;
  /** The act in flight, for the note a lost worker's successor writes (see OpenSessionInput.actInDoubt). */
  private actInFlight: { summary: string; startedAt: string } | null = null;

  constructor(private readonly ctx: TaskContext) {
    this.observed = ctx.state.observed ?? null;
  }

  /** The task's session, opened (or restored) for `reason` (a function: asked only then) when it has none. */
  async ensure(reason: OpenReason | (() => OpenReason)): Promise<SessionRef> {
    const session = this.ctx.state.session;
    if (session) return session;
    return (await this.open(typeof reason === 'function' ? reason() : reason)).session;
  }

  /** Opens (or restores) the task's session; `stepDone`: a lost worker had finished the step (see lostActGeneration). */
  async open(
    reason: OpenReason,
    lostActGeneration?: number,
    actInDoubt?: OpenSessionInput['actInDoubt'],
  ): Promise<{ session: SessionRef; stepDone: boolean }> {
    const { state, input, proxies, patches } = this.ctx;
    state.generation += reason === 'start' || reason === 'fork' ? 0 : 1;
    const { stepDone, storeWaitMinutes, ...opened } = await proxies
      .opener(`step ${state.step} · open ${input.environment} (${reason})`, patches.openQueue)
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

  /** An act is starting; `lastOfStep`: it is the step's last and folds the next observation in (see recover). */
  actStarting(summary: string, lastOfStep: boolean): void {
    this.actInFlight = { summary, startedAt: new Date().toISOString() };
    this.lastActInFlight = lastOfStep ? this.ctx.state.generation : null;
  }

  /** The act came back; `next`: the next step's observation it took. */
  actLanded(next: { step: number; obs: ObserveResult } | null): void {
    this.lastActInFlight = null;
    this.actInFlight = null;
    if (next) this.observed = { ...next, generation: this.ctx.state.generation };
  }

  /** The step's observation a folded act took, if it is this step's in this session (taken once). */
  takeObserved(): ObserveResult | null {
    const { state } = this.ctx;
    const { observed } = this;
    this.observed = null;
    return observed?.step === state.step && observed.generation === state.generation ? observed.obs : null;
  }

  /** What continues as new: the carried state, with the next step's observation when an act took it. */
  carry(): CarriedState {
    const { state } = this.ctx;
    return this.observed ? { ...state, observed: this.observed } : state;
  }

  /**
   * The step's session was lost: re-opens it. True if the lost worker had finished the step (its last act was
   * recorded as done: the next step starts in the restored session); false if the step is observed and decided again.
   */
  async recover(err: unknown): Promise<boolean> {
    const { state, task, input } = this.ctx;
    const envName = input.environment;
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

  /** Holds the session through a wait (its page saved) when it may be held; else releases it. False: nothing held. */
  async holdForWait(why: string, mayHold: boolean): Promise<boolean> {
    if (mayHold && (this.ctx.state.session?.holdSeconds ?? 0) > 0) return this.hold(why);
    await this.release(true);
    return false;
  }

  /** Holds the session through the wait (its page saved); false when it was released instead, or is gone. */
  private async hold(why: string): Promise<boolean> {
    const { state, input, proxies } = this.ctx;
    const session = state.session;
    if (!session) return false;
    try {
      const { held } = await proxies
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

  /** After the wait: the held session, if it is still alive, goes on as it was; otherwise the next open restores it. */
  async reclaim(): Promise<void> {
    const { state, input, proxies } = this.ctx;
    const session = state.session;
    if (!session) return;
    try {
      const { alive } = await proxies
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
  async release(save: boolean, writesOnce = false): Promise<void> {
    const { state, input, proxies } = this.ctx;
    const session = state.session;
    if (!session) return;
    state.session = null;
    try {
      await proxies.onSession(session, `step ${state.step} · release ${input.environment}`).releaseSession({
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
}
