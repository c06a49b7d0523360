// The sign-in lock's queue (workflows/signin-lock.ts): one holder at a time, the others waiting first come first
// served. Pure and deterministic: each change leaves notices (who to tell what), which the lock workflow sends as
// signals. Tasks are named by their task id (their workflow id, the same across continue-as-new).

/** What a task is told: it holds the sign-in now, or it waits behind `holder`. */
export type LockNotice = { taskId: string; granted: boolean; holder: string | null };

/** What crosses the lock's continue-as-new, and what its query shows. */
export type LockState = { holder: string | null; waiting: string[] };

export class LockQueue {
  private holder: string | null;
  private readonly waiting: string[];
  private notices: LockNotice[] = [];

  constructor(state?: LockState) {
    this.holder = state?.holder ?? null;
    this.waiting = [...(state?.waiting ?? [])];
  }

  /** A task asks for the sign-in: granted when free; else queued (once) and told who holds it. */
  acquire(taskId: string): void {
    if (this.holder === taskId) {
      this.notices.push({ taskId, granted: true, holder: taskId }); // asked again (a retry): told again
    } else if (this.holder === null) {
      this.holder = taskId;
      this.notices.push({ taskId, granted: true, holder: taskId });
    } else {
      if (!this.waiting.includes(taskId)) this.waiting.push(taskId);
      this.notices.push({ taskId, granted: false, holder: this.holder });
    }
  }

  /** A task is done with the sign-in (or stops waiting for it); the next in line is granted it. */
  release(taskId: string): void {
    const at = this.waiting.indexOf(taskId);
    if (at >= 0) this.waiting.splice(at, 1);
    if (this.holder !== taskId) return;
    this.holder = this.waiting.shift() ?? null;
    if (this.holder === null) return;
    this.notices.push({ taskId: this.holder, granted: true, holder: this.holder });
    for (const w of this.waiting) this.notices.push({ taskId: w, granted: false, holder: this.holder });
  }

  /** The notices left by the changes since the last call (each task's last one only). */
  takeNotices(): LockNotice[] {
    const last = new Map(this.notices.map((n) => [n.taskId, n]));
    this.notices = [];
    return [...last.values()];
  }

  hasNotices(): boolean {
    return this.notices.length > 0;
  }

  /** Nobody holds it and nobody waits. */
  idle(): boolean {
    return this.holder === null && this.waiting.length === 0;
  }

  /** Someone waits behind the holder (then the lock checks the holder is still running). */
  contended(): boolean {
    return this.holder !== null && this.waiting.length > 0;
  }

  get current(): string | null {
    return this.holder;
  }

  state(): LockState {
    return { holder: this.holder, waiting: [...this.waiting] };
  }
}
