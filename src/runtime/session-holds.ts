// Sessions a worker keeps alive while their task waits for a reply (browser.holdWhileWaitingSeconds; the browser and
// desktop pools each keep theirs here): each held one has a deadline, and when it ends (the hold ran out, the pool
// needs the slot, the worker shuts down) what the session keeps (a page, a home) is saved and then it is closed. A
// reply within the hold takes the session back (`take`) as it was.

/** Why a hold ended without a reply taking the session back. */
export type HoldEnd = 'expired' | 'pool_needed' | 'shutdown';

type Hold = { since: number; timer: NodeJS.Timeout; save: (why: HoldEnd) => Promise<void> };

export class SessionHolds {
  private readonly holds = new Map<string, Hold>();
  /** Holds being ended right now (saved, then closed), each until done: no longer anyone's to take back. */
  private readonly ending = new Map<string, Promise<void>>();

  constructor(
    private readonly close: (sessionId: string) => Promise<void>,
    private readonly log?: (line: string) => void,
  ) {}

  /** Held sessions (their slots count as free: an open that needs one ends the hold longest held). */
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

  /** Whether the session is held or its hold is being ended (no idle limit applies to it). */
  keeps(sessionId: string): boolean {
    return this.has(sessionId) || this.isEnding(sessionId);
  }

  /** Waits until the session's hold, if it is being ended, is done: its state saved and the session closed. */
  async settled(sessionId: string): Promise<void> {
    await this.ending.get(sessionId)?.catch(() => undefined);
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
    const ended = (async () => {
      await hold.save(why).catch((err: unknown) => {
        this.log?.(`held session ${sessionId}: its state was not saved again (${why}): ${String(err)}`);
      });
      await this.close(sessionId);
    })();
    this.ending.set(sessionId, ended);
    try {
      await ended;
    } finally {
      this.ending.delete(sessionId);
    }
  }

  /** Ends the holds, longest held first (`pool_needed`), while `full` says an open finds no free slot. */
  async freeSlot(full: () => boolean): Promise<void> {
    for (let oldest = this.longest(); oldest && full(); oldest = this.longest()) await this.end(oldest, 'pool_needed');
  }

  /** Ends every hold (the worker shuts down). */
  async endAll(why: HoldEnd): Promise<void> {
    await Promise.all([...this.holds.keys()].map((id) => this.end(id, why)));
  }
}
