// The task's saved sign-in (input.signin): checked, then its lock taken before the first session opens (one task at a
// time per sign-in: workflows/signin-lock.ts), and given back at every end the workflow sees (finished, failed,
// cancelled), after the final page is saved back under the name when the task asks (input.signinRefresh). A
// terminated task cannot give it back: the lock notices. While the task waits, its status says for whom.
// Deterministic; only tasks with a sign-in run any of it (histories without one replay as before).
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  log,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { signinAcquireSignal, signinLock, signinLockId, signinNoticeSignal, signinReleaseSignal } from '../signin-lock';
import type { LockNotice } from '../signin-lock';
import type { TaskContext } from './context';

/** How often a task tries to reach the lock (signal it, else start it) before it gives up. */
const REACH_ATTEMPTS = 5;

export class SigninLock {
  private readonly name: string | undefined;
  /** The task holds the lock (a continued run took it before it continued). */
  private granted: boolean;
  private released = false;
  /** The lock heard of this task (it asked). */
  private asked = false;

  constructor(private readonly ctx: TaskContext) {
    this.name = ctx.input.signin;
    this.granted = ctx.continued && this.name !== undefined;
    if (this.name !== undefined) setHandler(signinNoticeSignal, (notice) => this.heard(notice));
  }

  private heard(notice: LockNotice): void {
    if (this.released || this.granted) return;
    if (notice.granted && notice.taskId === this.ctx.input.runId) {
      this.granted = true;
      this.ctx.task.signinWait = null;
    } else if (!notice.granted && this.name !== undefined) {
      this.ctx.task.signinWait = { name: this.name, heldBy: notice.holder };
    }
  }

  /** Checks the sign-in can be loaded (else the task fails with InvalidTaskInput) and waits for its lock. */
  async acquire(): Promise<void> {
    const { name, ctx } = this;
    if (name === undefined || this.granted) return;
    await ctx.proxies.shared(`sign-in ${name} · check`).checkSignin({ name });
    ctx.task.signinWait = { name, heldBy: null };
    await this.ask(name);
    await condition(() => this.granted);
    ctx.task.signinWait = null;
  }

  /** Signals the lock; when it is not running, starts it (as a child left running) with this task first in line. */
  private async ask(name: string): Promise<void> {
    const taskId = this.ctx.input.runId;
    for (let attempt = 1; attempt <= REACH_ATTEMPTS; attempt++) {
      try {
        await getExternalWorkflowHandle(signinLockId(name)).signal(signinAcquireSignal, { taskId });
        this.asked = true;
        return;
      } catch {
        // no lock running: start one
      }
      try {
        await CancellationScope.nonCancellable(() =>
          startChild(signinLock, {
            workflowId: signinLockId(name),
            args: [{ name, first: taskId }],
            taskQueue: workflowInfo().taskQueue,
            parentClosePolicy: ParentClosePolicy.ABANDON,
            cancellationType: ChildWorkflowCancellationType.ABANDON,
            staticSummary: `sign-in ${name}: one task at a time`,
          }),
        );
        this.asked = true;
        return;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }
    throw ApplicationFailure.create({
      message: `could not reach the lock of sign-in '${name}'`,
      type: 'InvalidTaskInput',
      nonRetryable: true,
    });
  }

  /**
   * The task ends: its last page state saved back under the name (input.signinRefresh, when it held the lock), then
   * the lock given back (a task still in line leaves it). Never fails the end.
   */
  async release(): Promise<void> {
    const { name, ctx } = this;
    if (name === undefined || this.released) return;
    this.released = true;
    ctx.task.signinWait = null;
    await CancellationScope.nonCancellable(async () => {
      if (this.granted && ctx.input.signinRefresh) {
        await ctx.proxies
          .shared(`sign-in ${name} · save back`)
          .refreshSignin({ taskId: ctx.input.runId, name })
          .catch((err: unknown) => log.warn('the sign-in was not saved back', { name, error: String(err) }));
      }
      if (!this.asked && !this.granted) return;
      await getExternalWorkflowHandle(signinLockId(name))
        .signal(signinReleaseSignal, { taskId: ctx.input.runId })
        .catch((err: unknown) => log.warn('the sign-in lock was not told of the end', { name, error: String(err) }));
    });
  }
}
