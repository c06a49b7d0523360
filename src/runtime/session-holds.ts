// Sessions a worker keeps alive while their task waits for a reply (browser.holdWhileWaitingSeconds): each held one
// has a deadline, and when it ends (the hold ran out, the pool needs the place, the worker shuts down) the session's
// page is saved first and then it is closed. A reply within the hold takes the session back (`take`) as it was.

/** Why a hold ended without a reply taking the session back. */
export type HoldEnd = 'expired' | 'pool_needed' | 'shutdown';

type Hold = { since: number; timer: NodeJS.Timeout; save: (why: HoldEnd) => Promise<void> };

export class SessionHolds {
  private readonly holds = new Map<string, Hold>();
  /** Holds being ended right now (saved, then closed): such a session is no longer anyone's to take back. */
  private readonly ending = new Set<string>();

  constructor(
    private readonly close: (sessionId: string) => Promise<void>,
    private readonly log?: (line: string) => void,
  ) {}

  /** Held sessions (their places count as free: an open that needs one ends the hold longest held). */
  get count(): number {
    return this.holds.size;
  }

  has(sessionId: string): boolean {
    return this.holds.has(sessionId);
  }

  /** Holds a session for `ms`; `save` keeps its state before it is closed by the hold's end. */
  hold(sessionId: string, ms: number, save: (why: HoldEnd) => Promise<void>): void {
    this.forget(sessionId);
    const timer = setTimeout(() => void this.end(sessionId, 'expired'), ms);
    timer.unref();
    this.holds.set(sessionId, { since: Date.now(), timer, save });
  }

  /** A reply came: the session is its task's again, if it is still held. */
  take(sessionId: string): boolean {
    const hold = this.holds.get(sessionId);
    if (!hold) return false;
    clearTimeout(hold.timer);
    this.holds.delete(sessionId);
    return true;
  }

  /** The session is being closed otherwise (released, replaced): its hold just goes. */
  forget(sessionId: string): void {
    this.take(sessionId);
  }

  /** Whether the session's hold is being ended (its state saved before it closes). */
  isEnding(sessionId: string): boolean {
    return this.ending.has(sessionId);
  }

  /** The session held longest, if any. */
  longest(): string | undefined {
    let oldest: [string, number] | undefined;
    for (const [id, hold] of this.holds) if (!oldest || hold.since < oldest[1]) oldest = [id, hold.since];
    return oldest?.[0];
  }

  /** Ends a hold: saves the session's state (a failure is logged: the save at the hold's start is still there), closes it. */
  async end(sessionId: string, why: HoldEnd): Promise<void> {
    const hold = this.holds.get(sessionId);
    if (!hold || !this.take(sessionId)) return;
    this.ending.add(sessionId);
    try {
      await hold.save(why).catch((err: unknown) => {
        this.log?.(`held session ${sessionId}: its page was not saved again (${why}): ${String(err)}`);
      });
      await this.close(sessionId);
    } finally {
      this.ending.delete(sessionId);
    }
  }

  /** Ends every hold (the worker shuts down). */
  async endAll(why: HoldEnd): Promise<void> {
    await Promise.all([...this.holds.keys()].map((id) => this.end(id, why)));
  }
}
