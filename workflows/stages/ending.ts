// How the task ends: by a stop (agent-stops.ts: finished, no reply, a limit, too many invalid outputs, the step
// budget), cancelled, or failed; or, with its work not done, continued as new. Each end releases the session and
// records the end in the run folder (as far as a failing run store allows) and notifies. Deterministic.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type { EndReason, TaskState, TaskResult } from '../../src/contract/task';
import type { LoopFacts, Stop } from '../agent-stops';
import { endReasonOf, isStoreFailure } from '../failures';
import { notifyEnd } from '../notify';
import { extractOutput } from './output';
import { reportToMonitor } from '../monitor-report';
import type { TaskContext } from './context';
import type { Sessions } from './sessions';
import type { SigninLock } from './signin';

export class Ending {
  constructor(
    private readonly ctx: TaskContext,
    private readonly sessions: Sessions,
    private readonly signin: SigninLock,
  ) {}

  /** Continue as new once this run has taken a step and Temporal suggests it, or the task's own step limit says so. */
  dueToContinue(ranHere: number): boolean {
    const after = this.ctx.input.continueAsNewAfterSteps;
    return ranHere > 0 && (workflowInfo().continueAsNewSuggested || (after !== undefined && ranHere >= after));
  }

  /** Ends the task the way a stop says: its error, the session released (unless it is already), the end recorded. */
  async finish(stop: Stop, facts: LoopFacts): Promise<TaskResult> {
    const { task } = this.ctx;
    const error = stop.error?.(facts);
    if (error !== undefined) task.error = error;
    if (stop.release) await this.sessions.release(false);
    await this.signin.release();
    await extractOutput(this.ctx, stop.endReason);
    await this.finalize(stop.status, stop.endReason, stop.reason(facts));
    await notifyEnd(task);
    const result = task.result();
    await reportToMonitor(this.ctx.input, result);
    return result;
  }

  /** Ends a task that was cancelled or failed: records the end (as far as it can) and returns the error to throw. */
  async onError(err: unknown): Promise<unknown> {
    if (isCancellation(err)) {
      await this.finishCancelled();
      return err;
    }
    return this.finishFailed(err);
  }

  /** Records the task's end in its run folder (and publishes its status). */
  private async finalize(final: TaskState, why: EndReason, reason: string | null): Promise<void> {
    const { task, input, state, proxies } = this.ctx;
    task.status = final;
    task.endReason = why;
    task.control.ended = true;
    task.publish();
    const recorded = await proxies.shared(`finalize · ${final}`).finalize({
      runId: input.runId,
      status: final,
      answer: task.answer,
      reason,
      endReason: why,
      steps: state.step,
      ...task.outputView(),
    });
    // A used-up step budget is answered with the last observation's text (histories recorded before: no result).
    if (recorded) task.answer = recorded.answer;
  }

  /** Cancelled: ends now, even while its run store is full or unreachable (what it would write is tried once). */
  private async finishCancelled(): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      await this.sessions.release(false, true);
      await this.signin.release();
      await this.finalize('cancelled', 'cancelled', 'cancelled by user').catch((finalizeErr: unknown) => {
        if (!isStoreFailure(finalizeErr)) throw finalizeErr;
        log.warn('could not record the cancellation in the run folder', { error: String(finalizeErr) });
      });
      await notifyEnd(this.ctx.task);
    });
  }

  /** Failed: records why (as far as the run store allows) and returns the TaskFailed error carrying the result. */
  private async finishFailed(err: unknown): Promise<ApplicationFailure> {
    const { task, input, state } = this.ctx;
    const message =
      err instanceof ActivityFailure && err.cause
        ? err.cause.message
        : err instanceof ApplicationFailure && err.type === 'ReplayDiverged'
          ? err.message
          : String(err);
    task.error = message;
    const why = endReasonOf(err, input);
    await CancellationScope.nonCancellable(async () => {
      const storeDown = why === 'run_folder';
      await this.sessions.release(false, storeDown).catch(() => undefined);
      await this.signin.release();
      try {
        await this.finalize('failed', why, message);
      } catch (finalizeErr) {
        // The run store that ended the task may still be down: the task's result says why it ended all the same
        // (its run folder keeps the status it had; nothing recorded is lost).
        if (!storeDown || !isStoreFailure(finalizeErr)) throw finalizeErr;
        log.warn('could not record the end of the task in its run folder', { error: String(finalizeErr) });
      }
      await notifyEnd(task);
    });
    const result: TaskResult = { ...task.result(), endReason: why };
    await reportToMonitor(input, result);
    return ApplicationFailure.create({
      message: `task failed at step ${state.step}: ${message}`,
      type: 'TaskFailed',
      nonRetryable: true,
      details: [result],
    });
  }
}
