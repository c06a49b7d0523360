// The worker's desktop sessions: ids, its slots, closing one or all, their lifetimes (a desktop idle past a
// limit is closed; opening one for a run first closes the run's older one), desktops held while their tasks wait for
// a reply (`hold`: the slot counts as free, an open that needs it ends the one held longest), and a process exit
// hook that kills whatever is still running when Node exits.
import { randomBytes } from 'node:crypto';
import { SessionHolds } from '../runtime/session-holds';
import type { HoldEnd } from '../runtime/session-holds';
import { SessionLifetimes } from '../runtime/session-lifetimes';
import type { LifetimeEnd, LifetimeOptions } from '../runtime/session-lifetimes';
import { DesktopPoolFullError, UnknownDesktopSessionError } from './errors';
import { DesktopSession } from './session';
import type { DesktopOptions } from './session';
import { DesktopTakeovers } from './takeovers';

export type DesktopPoolOptions = LifetimeOptions & {
  slots: number;
  /** Options every session starts from; `open`'s options override them. */
  defaults?: Partial<DesktopOptions>;
  /**
   * The host uid (and gid) of every session's sandbox when the worker runs as root (DesktopOptions.sandboxUid;
   * default DEFAULT_SANDBOX_HOST_UID). A worker that is not root runs its sandboxes as itself.
   */
  sandboxUid?: number;
  /** Desktop takeovers (takeovers.ts): where noVNC's page listens (the worker's `takeover.host`). */
  takeover?: { host?: string };
  log?: (line: string) => void;
};

/** What opening a desktop is for: `owner`, the run it belongs to (its older desktop here is closed first). */
export type DesktopOpenOptions = { owner?: string };

export class DesktopPool {
  private readonly sessions = new Map<string, DesktopSession>();
  /** Owners and idle clocks of the open desktops; closes the idle ones. */
  private readonly lifetimes: SessionLifetimes;
  /** Desktops kept alive while their tasks wait for a reply: saved and closed when the hold ends or the slot is needed. */
  private readonly holds: SessionHolds;
  private opening = 0;
  private readonly onExit = (): void => {
    for (const session of this.sessions.values()) session.killNow();
  };

  /** Desktops lent to a person over VNC: never closed as idle; their idle clock starts again at the hand-back. */
  readonly takeovers: DesktopTakeovers;

  constructor(private readonly options: DesktopPoolOptions) {
    this.holds = new SessionHolds((id) => this.close(id), options.log);
    this.lifetimes = new SessionLifetimes(
      options,
      (id, why) => this.close(id, why),
      (id) => this.holds.keeps(id) || this.takeovers.isLeased(id),
    );
    this.takeovers = new DesktopTakeovers({
      ...options.takeover,
      onEnd: (id) => this.lifetimes.touch(id),
      ...(options.log ? { log: options.log } : {}),
    });
  }

  /** Open sessions (not counting those still starting). */
  get size(): number {
    return this.sessions.size;
  }

  get slots(): number {
    return this.options.slots;
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Desktops held while their tasks wait for a reply. */
  get held(): number {
    return this.holds.count;
  }

  /**
   * Keeps a desktop alive while its task waits for a reply, for up to `ms`; its slot counts as free meanwhile. When
   * the hold ends unclaimed (its time is up, an open needs the slot, the pool closes all) `end` runs and the desktop
   * is closed (if `end` has not closed it). False (nothing held) when the desktop is not open.
   */
  hold(sessionId: string, ms: number, end: (why: HoldEnd) => Promise<void>): boolean {
    if (!this.sessions.has(sessionId)) return false;
    this.holds.hold(sessionId, ms, end);
    return true;
  }

  /**
   * A reply came: true if the desktop was still held (it is its task's again, windows and all), false if it is gone.
   * A hold being ended is waited for first, so a new desktop for the reply opens after its home was saved.
   */
  async reclaim(sessionId: string): Promise<boolean> {
    await this.holds.settled(sessionId);
    if (!this.holds.take(sessionId)) return false;
    this.lifetimes.touch(sessionId);
    return this.sessions.has(sessionId);
  }

  /**
   * Opens a session; throws DesktopPoolFullError when `slots` are open or starting and none of them is held for
   * a reply (a held one is saved and closed for it, the one held longest first). A desktop still kept for the same
   * owner (one a lost activity left behind) is closed first, so its slot is not waited for.
   */
  async open(
    options: DesktopOptions,
    { owner }: DesktopOpenOptions = {},
  ): Promise<{ sessionId: string; session: DesktopSession }> {
    await this.lifetimes.closeOwnedBy(owner);
    const full = () => this.sessions.size + this.opening >= this.options.slots;
    await this.holds.freeSlot(full);
    if (full()) {
      throw new DesktopPoolFullError(`the desktop pool is full (${this.options.slots} sessions)`);
    }
    this.opening++;
    try {
      const { log, defaults, sandboxUid } = this.options;
      const session = await DesktopSession.open({
        log,
        ...(sandboxUid === undefined ? {} : { sandboxUid }),
        ...defaults,
        ...options,
      });
      const sessionId = `desk-${randomBytes(6).toString('hex')}`;
      if (this.sessions.size === 0) process.on('exit', this.onExit);
      this.sessions.set(sessionId, session);
      this.lifetimes.add(sessionId, () => session.idleFor(), owner);
      this.options.log?.(`[desktop pool] opened ${sessionId} on ${session.display}${owner ? ` for ${owner}` : ''}`);
      return { sessionId, session };
    } finally {
      this.opening--;
    }
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** The open session with this id; throws UnknownDesktopSessionError. */
  get(sessionId: string): DesktopSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw new UnknownDesktopSessionError(`no open desktop session "${sessionId}"`);
    return session;
  }

  /** Closes one session; an unknown id is a no-op (closing is idempotent). `why`: the pool closes it on its own. */
  async close(sessionId: string, why?: LifetimeEnd): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    this.lifetimes.delete(sessionId);
    this.holds.forget(sessionId);
    if (this.sessions.size === 0) process.off('exit', this.onExit);
    await this.takeovers.endSession(sessionId);
    await session.close();
    const reason =
      why === 'idle'
        ? ` (unused for ${Math.round((this.options.idleTimeoutMs ?? 0) / 1000)} s)`
        : why === 'replaced'
          ? ' (its run opened a new desktop)'
          : '';
    this.options.log?.(`[desktop pool] closed ${sessionId}${reason}`);
  }

  /** Closes the desktops unused for the idle timeout or longer; returns their ids. */
  closeIdle(): Promise<string[]> {
    return this.lifetimes.closeIdle();
  }

  /** Closes every desktop (a held one saved first) and stops the idle sweep (until the next open). */
  async closeAll(): Promise<void> {
    await this.holds.endAll('shutdown');
    this.lifetimes.stop();
    await Promise.all(this.sessionIds().map((id) => this.close(id)));
  }
}
