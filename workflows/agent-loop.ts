// The task workflow's loop: the algorithm on one screen. Begin the run folder; then, before each step, the stops
// (agent-stops.ts), a person's controls and continue-as-new; each step observes, decides and acts in the task's session
// (re-opened when its worker is lost), and the limits follow it. Each concept is a stage of its own in stages/:
// sessions, environment (observe, act), decisions (model, replay, cache), questions, limits, controls (pause, say,
// takeover), start, ending. A new between-steps concern is a new stage and one line here. The same loop drives every
// environment (browser, desktop): the session activities behind the proxies pick it from the task. agent.ts wires it.
// Deterministic: only @temporalio/workflow and pure modules.
import { isCancellation } from '@temporalio/workflow';
import type { DecideCall, ObserveResult, SessionRef } from '../src/contract/activities';
import type { TaskResult } from '../src/contract/task';
import { stopOf } from './agent-stops';
import type { LoopFacts, StepEnd } from './agent-stops';
import { isSessionLost } from './failures';
import { StepClock } from './metrics';
import type { CarriedState, AgentTask } from './task-state';
import { CacheDecisions } from './stages/cache-decisions';
import { taskContext } from './stages/context';
import type { TaskContext } from './stages/context';
import { PersonControls } from './stages/controls';
import { ModelDecisions } from './stages/decisions';
import type { DecisionSource } from './stages/decisions';
import { Ending } from './stages/ending';
import { StepEnvironment } from './stages/environment';
import { Limits } from './stages/limits';
import { Questions } from './stages/questions';
import { ReplayDecisions } from './stages/replay-decisions';
import { Sessions } from './stages/sessions';
import { SigninLock } from './stages/signin';
import { TaskStart } from './stages/start';

export { FOLD_OBSERVE_PATCH, HOLD_SESSION_PATCH, OPEN_QUEUE_PATCH } from './stages/context';
export { CONTROL_PATCH } from './stages/controls';

const MAX_SESSION_REOPENS_PER_STEP = 3;

/** How a run of the loop ends: the task's result, or the state to continue as new with. */
export type LoopEnd = { result: TaskResult } | { carry: CarriedState };

/** Where the task's steps come from: a replay's recording, a cached task's cache, or the model. */
function decisionSource(ctx: TaskContext): DecisionSource {
  if (ctx.input.replayOf) return new ReplayDecisions(ctx);
  return ctx.input.cache && ctx.input.environment === 'browser' ? new CacheDecisions(ctx) : new ModelDecisions(ctx);
}

export class AgentLoop {
  private readonly ctx: TaskContext;
  private readonly sessions: Sessions;
  private readonly environment: StepEnvironment;
  private readonly decisions: DecisionSource;
  private readonly questions: Questions;
  private readonly limits: Limits;
  private readonly controls: PersonControls;
  private readonly start: TaskStart;
  private readonly ending: Ending;
  private readonly signin: SigninLock;
  /** How the last step ended (for the stops). */
  private stepEnd: StepEnd = null;

  /** `continued`: this run continues an earlier one as new (its state is the task's carried state). */
  constructor(task: AgentTask, continued: boolean) {
    const ctx = (this.ctx = taskContext(task, continued));
    this.sessions = new Sessions(ctx);
    this.environment = new StepEnvironment(ctx, this.sessions);
    this.decisions = decisionSource(ctx);
    this.questions = new Questions(ctx, this.sessions, this.decisions);
    this.limits = new Limits(ctx, this.questions);
    this.controls = new PersonControls(ctx, this.sessions);
    this.start = new TaskStart(ctx, this.questions);
    this.signin = new SigninLock(ctx);
    this.ending = new Ending(ctx, this.sessions, this.signin);
  }

  /** Runs steps until a stop holds (then finishes the task) or the run should continue as new. */
  async run(): Promise<LoopEnd> {
    const { state, task, continued } = this.ctx;
    if (!continued) this.stepEnd = await this.start.begin();
    await this.signin.acquire(); // before the first session opens (a task with no sign-in: nothing)
    const stepsAtStart = state.step;
    for (;;) {
      const stop = stopOf(this.facts());
      if (stop) return { result: await this.ending.finish(stop, this.facts()) };
      await this.controls.betweenSteps();
      if (this.ending.dueToContinue(state.step - stepsAtStart)) return { carry: this.sessions.carry() };
      state.step += 1;
      task.publish();
      await this.step();
      this.stepEnd = await this.limits.afterStep(this.stepEnd);
    }
  }

  /** Ends a task that was cancelled or failed: records the end (as far as it can) and returns the error to throw. */
  endOnError(err: unknown): Promise<unknown> {
    return this.ending.onError(err);
  }

  private facts(): LoopFacts {
    const { input, state } = this.ctx;
    return { input, state, stepEnd: this.stepEnd, lastInvalidOutput: this.decisions.lastInvalidOutput };
  }

  /** One step, run again in a re-opened session when its worker is lost (up to MAX_SESSION_REOPENS_PER_STEP times). */
  private async step(): Promise<void> {
    const { ctx } = this;
    ctx.clock = new StepClock();
    this.stepEnd = null;
    try {
      for (let reopen = 0; ; reopen++) {
        const session = await this.sessions.ensure(() => this.start.openReason());
        try {
          this.stepEnd = await this.takeStep(session);
          break;
        } catch (err) {
          if (!isSessionLost(err) || reopen >= MAX_SESSION_REOPENS_PER_STEP) throw err;
          if (await this.sessions.recover(err)) break;
        }
      }
    } catch (err) {
      ctx.clock.done(ctx.input.environment, isCancellation(err) ? 'cancelled' : 'error');
      throw err;
    }
    ctx.clock.done(ctx.input.environment, 'ok');
  }

  /** Observe, decide, act on each call of the decision; a terminate or a question ends the step. */
  private async takeStep(session: SessionRef): Promise<StepEnd> {
    const obs = await this.environment.observe(session);
    const calls = await this.decisions.next(session, obs);
    if (!calls) return null;
    const loop = await this.limits.trackLoop(obs, calls);
    for (const [index, call] of calls.entries()) {
      const end = await this.carryOut(session, obs, call, index, calls.length);
      if (end !== undefined) return end;
    }
    await this.decisions.acted();
    return this.limits.afterLoop(loop);
  }

  /** One call of the step's decision; a StepEnd when it ends the step (a terminate, a question), else undefined. */
  private async carryOut(
    session: SessionRef,
    obs: ObserveResult,
    call: DecideCall,
    index: number,
    count: number,
  ): Promise<StepEnd | undefined> {
    const { task, actOnStops } = this.ctx;
    const final = index === count - 1 || call.kind !== 'act';
    const asked =
      call.kind === 'act' || actOnStops ? await this.environment.act(session, call, index, final) : undefined;
    if (call.kind !== 'act' && !actOnStops) task.record(call, obs.url);
    // The act held back a resend of a request in doubt, or requests an approval rule holds: the runtime asks.
    if (asked !== undefined) {
      const asker = asked.approvalHolds
        ? { by: 'approval' as const, holds: asked.approvalHolds }
        : { by: 'runtime' as const };
      return (await this.questions.ask(asked.text, asker)) ? null : 'no_reply';
    }
    if (call.kind === 'terminate') {
      task.answer = call.text ?? '';
      await this.decisions.acted();
      return 'finished';
    }
    // Calls after a question are not run: the model decides again with the user's reply.
    if (call.kind === 'ask') {
      const asker = { by: 'model' as const, providerCheck: call.question === 'provider_check' };
      return (await this.questions.ask(call.text ?? '', asker)) ? null : 'no_reply';
    }
    return undefined;
  }
}
