// A step's work in the environment: observe (behind the captcha gate; or the observation the step before's last act
// took) and act, one call of the decision at a time, on the worker that holds the session. Deterministic.
import { ApplicationFailure, log } from '@temporalio/workflow';
import type { DecideCall, ObserveResult, SessionRef } from '../../src/contract/activities';
import { decideCaptchaTimeout } from '../../src/agent/captcha-policy';
import { addSpent } from '../task-limits';
import type { TaskContext } from './context';
import type { Sessions } from './sessions';

/** A question the act leaves for the runtime to ask: about a resend in doubt, or an approval of held requests. */
export type RuntimeAsk = { text: string; approvalHolds?: string[] };

export class StepEnvironment {
  constructor(
    private readonly ctx: TaskContext,
    private readonly sessions: Sessions,
  ) {}

  /** The step's observation: the one the step before's last act took, else an observe (behind the captcha gate). */
  async observe(session: SessionRef): Promise<ObserveResult> {
    const { state, input, proxies } = this.ctx;
    const waitMs = this.captchaWaitMs();
    const obs =
      this.sessions.takeObserved() ??
      (await proxies.onSession(session, `step ${state.step} · observe`).observe({
        runId: input.runId,
        step: state.step,
        generation: state.generation,
        sessionId: session.sessionId,
        captchaWaitMs: waitMs,
      }));
    state.lastUrl = obs.url;
    if (obs.captchaTimedOut) this.captchaTimedOut(waitMs);
    return obs;
  }

  /** The captcha gate waited in vain: go on, switch the gate off after too many, or end the task. */
  private captchaTimedOut(waitMs: number): void {
    const { state, input } = this.ctx;
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

  private captchaWaitMs(): number {
    return this.ctx.state.captchaGateOff ? 0 : this.ctx.input.captcha.waitSeconds * 1000;
  }

  /**
   * Carries out one call of the step's decision in the session; `final` also records the step's post screenshot.
   * Returns the runtime's question when the act held back a resend of a request in doubt (ActResult.runtimeQuestion),
   * or requests approval rules hold (with their holds' ids).
   */
  async act(session: SessionRef, call: DecideCall, index: number, final: boolean): Promise<RuntimeAsk | undefined> {
    const { state, input, task, proxies, patches, actOnStops } = this.ctx;
    const row = task.record(call, state.lastUrl);
    task.actStarted(row);
    // Folding: the step's last act observes for the next step when there is one (the budget allows it).
    const foldHere = patches.fold && final && call.kind === 'act';
    const next =
      foldHere && state.step < input.maxSteps ? { step: state.step + 1, captchaWaitMs: this.captchaWaitMs() } : null;
    this.sessions.actStarting(call.summary, foldHere);
    const acted = await proxies.onSession(session, `step ${state.step} · ${call.summary}`).act({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      sessionId: session.sessionId,
      action: call.action,
      ...(actOnStops ? { call: index, final } : {}),
      ...(next ? { next } : {}),
    });
    this.sessions.actLanded(next && acted.next ? { step: next.step, obs: acted.next } : null);
    addSpent(state, acted.usage);
    task.actDone();
    state.lastUrl = acted.url;
    row.url = acted.url;
    const text = acted.textObservation ?? acted.error;
    row.textObservation = text ? text.slice(0, 300) : null;
    if (acted.runtimeQuestion === undefined) return undefined;
    return {
      text: acted.runtimeQuestion,
      ...(acted.approvalHolds?.length ? { approvalHolds: acted.approvalHolds } : {}),
    };
  }
}
