// How long a worker keeps its sessions, for every pool (browsers, desktops): each session's idle clock, a sweep that
// closes the sessions idle past a limit, and owners. A run holds one session at a time, so opening one for a run
// first closes any the pool still holds for it: one a lost activity left behind (a missed heartbeat, a retried open).

/** Milliseconds since a session's last operation ended; 0 while one runs. */
export class IdleClock {
  private busy = 0;
  private lastActivity = Date.now();

  idleFor(): number {
    return this.busy > 0 ? 0 : Date.now() - this.lastActivity;
  }

  /** Runs one operation of the session, which is not idle meanwhile. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.busy += 1;
    try {
      return await work();
    } finally {
      this.busy -= 1;
      this.lastActivity = Date.now();
    }
  }
}

export type LifetimeOptions = {
  /** Sessions with no operation for this long are closed; absent: they are kept until closed. */
  idleTimeoutMs?: number;
  /** How often idle sessions are looked for; defaults to a quarter of the idle timeout (50 ms to 30 s). */
  sweepIntervalMs?: number;
};

/** Why a pool closes a session on its own. */
export type LifetimeEnd = 'idle' | 'replaced';

type Held = { owner: string | undefined; idleFor: () => number; touchedAt?: number };

/** The sessions of one pool, by id: who each is for and how long it has been idle. The pool closes them. */
export class SessionLifetimes {
  private readonly held = new Map<string, Held>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: LifetimeOptions,
    private readonly close: (sessionId: string, why: LifetimeEnd) => Promise<void>,
    /** Sessions held while their task waits for a reply (session-holds.ts): no idle limit applies to them. */
    private readonly isHeld: (sessionId: string) => boolean = () => false,
  ) {}

  /** Keeps an opened session (and starts the sweep when there is an idle limit). */
  add(sessionId: string, idleFor: () => number, owner?: string): void {
    this.held.set(sessionId, { owner, idleFor });
    this.startSweeper();
  }

  /** The session was used without an operation of its own (taken back after a hold): its idle clock starts again. */
  touch(sessionId: string): void {
    const h = this.held.get(sessionId);
    if (h) h.touchedAt = Date.now();
  }

  /** Forgets a session the pool closed. */
  delete(sessionId: string): void {
    this.held.delete(sessionId);
  }

  /** Closes the sessions held for `owner` (a new one is being opened for it); returns their ids. */
  async closeOwnedBy(owner: string | undefined): Promise<string[]> {
    if (owner === undefined) return [];
    const stale = [...this.held].filter(([, h]) => h.owner === owner).map(([id]) => id);
    await Promise.all(stale.map((id) => this.close(id, 'replaced')));
    return stale;
  }

  /** Closes the sessions idle for the limit or longer (never a held one); returns their ids. */
  async closeIdle(): Promise<string[]> {
    const limit = this.options.idleTimeoutMs;
    if (limit === undefined) return [];
    const now = Date.now();
    const idle = [...this.held]
      .filter(([id, h]) => !this.isHeld(id) && Math.min(h.idleFor(), now - (h.touchedAt ?? -Infinity)) >= limit)
      .map(([id]) => id);
    await Promise.all(idle.map((id) => this.close(id, 'idle')));
    return idle;
  }

  /** Stops the sweep (the pool is shutting down); a later `add` starts it again. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private startSweeper(): void {
    const limit = this.options.idleTimeoutMs;
    if (limit === undefined || this.sweeper) return;
    const every = this.options.sweepIntervalMs ?? Math.min(30_000, Math.max(50, Math.floor(limit / 4)));
    this.sweeper = setInterval(() => void this.closeIdle().catch(() => undefined), every);
    this.sweeper.unref();
  }
}
