// A person's controls between steps (task-control.ts holds their handlers): a pause until a resume, a takeover until
// a handback (takeover.ts), and the messages said to the task, recorded for the next step where the model reads them.
// The step under way always finishes first. Deterministic.
import { condition, patched, setCurrentDetails } from '@temporalio/workflow';
import { notifyPaused } from '../notify';
import type { TaskContext } from './context';
import type { Sessions } from './sessions';
import { Takeovers } from './takeover';

/**
 * Patch id: a person's controls (task-control.ts) stop the loop between steps: a pause (the session held, then saved
 * and released as for a question) until a resume, a takeover (the live browser leased to a person) until a handback;
 * messages said to the task are recorded for the next step. Histories recorded before it never took a control.
 */
export const CONTROL_PATCH = 'person-controls';

export class PersonControls {
  private readonly takeovers: Takeovers;

  constructor(
    private readonly ctx: TaskContext,
    private readonly sessions: Sessions,
  ) {
    this.takeovers = new Takeovers(ctx, sessions, (kind) => this.recordControl(kind));
  }

  /** Between steps: a pause or takeover holds the loop until it ends; then the messages said are recorded. */
  async betweenSteps(): Promise<void> {
    const { control } = this.ctx.task;
    if (!control.stopRequested && control.says.length === 0) return;
    patched(CONTROL_PATCH);
    while (control.stopRequested) {
      if (control.takeoverRequested) await this.takeovers.takeOver();
      else await this.pause();
    }
    while (control.says.length > 0) {
      await this.recordSay(control.says[0] as string);
      control.says.shift(); // only once recorded: a failed record keeps the message
    }
  }

  /** A message said to the task, recorded for the next step (numbered among that step's messages). */
  private async recordSay(text: string): Promise<void> {
    const { state, input, proxies } = this.ctx;
    const step = state.step + 1;
    const at = state.saysAt?.step === step ? state.saysAt : { step, count: 0 };
    await proxies.shared(`step ${step} · message`).recordControl({
      runId: input.runId,
      step,
      generation: state.generation,
      kind: 'say',
      text,
      index: at.count + 1,
    });
    state.saysAt = { step, count: at.count + 1 };
  }

  /**
   * A pause: the session held (its page saved; released when the hold ends, as for a question), the status `paused`
   * until a resume (or a takeover, which leases the page from here). Lasts as long as needed: nothing runs meanwhile.
   */
  private async pause(): Promise<void> {
    const { state, input, task } = this.ctx;
    const { control } = task;
    control.pauseRequested = false;
    control.paused = true;
    control.since = new Date().toISOString();
    task.status = 'paused';
    task.publish();
    setCurrentDetails(
      `**Paused** after step ${state.step} since ${control.since.slice(11, 19)} UTC\n\nResume: \`npx cua resume ${input.runId}\``,
    );
    const held = await this.sessions.holdForWait('paused', true);
    await this.recordControl('paused');
    await notifyPaused(task);
    control.pauseSettled = true;
    await condition(() => !control.paused || control.takeoverRequested);
    control.paused = false;
    control.pauseSettled = false;
    if (held) await this.sessions.reclaim();
    if (control.takeoverRequested) return; // the takeover goes on from here (a session is opened for it if need be)
    control.since = null;
    task.status = 'running';
    task.publish();
    setCurrentDetails('');
    await this.recordControl('resumed');
    await this.sessions.ensure('resume');
  }

  /** A control's trace in the run folder (status, message or note), for the step the loop stopped after. */
  private recordControl(kind: 'paused' | 'taken_over' | 'resumed'): Promise<void> {
    const { state, input, proxies } = this.ctx;
    return proxies.shared(`step ${state.step} · ${kind.replace('_', ' ')}`).recordControl({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      kind,
    });
  }
}
