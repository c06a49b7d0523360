// How a task begins: a new task's run folder, a fork's (`cua fork`: the source's steps up to the fork's), an
// adoption's (`cua adopt`: a folder the original wrote, taken over after its last step) or a follow-up's (`cua
// continue`: after the task's last step); and why a step finds no session (which says what the open restores).
// Deterministic.
import type { OpenSessionInput, StartRunResult } from '../../src/contract/activities';
import type { StepEnd } from '../agent-stops';
import { rememberNotifyEvents } from '../notify';
import { startLimits } from '../task-limits';
import type { TaskContext } from './context';
import type { Questions } from './questions';

export class TaskStart {
  /** An adoption's steps taken over from its folder (its first session opens for the next); null: no adoption. */
  private adoptedSteps: number | null = null;

  constructor(
    private readonly ctx: TaskContext,
    private readonly questions: Questions,
  ) {}

  /** Starts the run folder the way the task says; an adoption's waiting question may end the step ('no_reply'). */
  async begin(): Promise<StepEnd> {
    const { input, task, proxies } = this.ctx;
    task.publish();
    if (input.forkOf !== undefined) await this.startFork();
    else if (input.adoptOf !== undefined && input.followUp === undefined) return this.startAdopt();
    else if (input.followUp === undefined) this.started(await proxies.shared('start run').startRun(input));
    else await this.startFollowUp(input.followUp);
    return null;
  }

  /**
   * Why a step finds no session: the task's start, a follow-up's, a fork's or an adoption's first step, or a run
   * continued as new.
   */
  openReason(): OpenSessionInput['reason'] {
    const { state, input, continued } = this.ctx;
    if (!continued && this.adoptedSteps !== null && state.step === this.adoptedSteps + 1) return 'adopt';
    if (state.step === 1 && !continued) return 'start';
    if (!continued && state.step === (input.forkOf?.step ?? 0) + 1) return 'fork';
    return state.followUpAt === state.step ? 'follow_up' : 'continue';
  }

  /** What the starting worker said: the events its webhook wants, its budgets (with LIMITS_PATCH). */
  private started(result: StartRunResult | undefined): void {
    const { state, input, patches } = this.ctx;
    rememberNotifyEvents(state, result);
    if (patches.limitsOn) startLimits(state, input, result);
  }

  /** A follow-up task: recorded in the run folder after its last step, where this run's steps go on. */
  private async startFollowUp(text: string): Promise<void> {
    const { state, input, proxies } = this.ctx;
    const started = await proxies.shared('follow-up').startFollowUp({ runId: input.runId, text });
    this.started(started);
    state.step = started.steps;
    state.followUpAt = started.steps + 1;
  }

  /** A fork: its run folder made of the source run's steps up to the fork's step; the next step is decided anew. */
  private async startFork(): Promise<void> {
    const started = await this.ctx.proxies.shared('fork').startFork(this.ctx.input);
    this.started(started);
    this.ctx.state.step = started.steps;
  }

  /**
   * An adoption: a question the folder waits on is asked again (the task waits for its reply, as for any question);
   * the first session reopens the folder's last URL (it saved no page of ours) and says so to the model.
   */
  private async startAdopt(): Promise<StepEnd> {
    const started = await this.ctx.proxies.shared('adopt').startAdopt(this.ctx.input);
    this.started(started);
    this.ctx.state.step = started.steps;
    this.adoptedSteps = started.steps;
    if (started.question === undefined) return null;
    return (await this.questions.ask(started.question)) ? null : 'no_reply';
  }
}
