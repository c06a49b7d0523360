// The worker's desktop sessions: ids, a session limit, closing one or all, and a process exit hook that kills
// whatever is still running when Node exits.
import { randomBytes } from 'node:crypto';
import { DesktopPoolFullError, UnknownDesktopSessionError } from './errors';
import { DesktopSession } from './session';
import type { DesktopOptions } from './session';

export type DesktopPoolOptions = {
  maxSessions: number;
  /** Options every session starts from; `open`'s options override them. */
  defaults?: Partial<DesktopOptions>;
  /**
   * The host uid (and gid) of every session's sandbox when the worker runs as root (DesktopOptions.sandboxUid;
   * default DEFAULT_SANDBOX_HOST_UID). A worker that is not root runs its sandboxes as itself.
   */
  sandboxUid?: number;
  log?: (line: string) => void;
};

export class DesktopPool {
  private readonly sessions = new Map<string, DesktopSession>();
  private opening = 0;
  private readonly onExit = (): void => {
    for (const session of this.sessions.values()) session.killNow();
  };

  constructor(private readonly options: DesktopPoolOptions) {}

  /** Open sessions (not counting those still starting). */
  get size(): number {
    return this.sessions.size;
  }

  get maxSessions(): number {
    return this.options.maxSessions;
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** Opens a session; throws DesktopPoolFullError when `maxSessions` are open or starting. */
  async open(options: DesktopOptions): Promise<{ sessionId: string; session: DesktopSession }> {
    if (this.sessions.size + this.opening >= this.options.maxSessions) {
      throw new DesktopPoolFullError(`the desktop pool is full (${this.options.maxSessions} sessions)`);
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
      this.options.log?.(`[desktop pool] opened ${sessionId} on ${session.display}`);
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

  /** Closes one session; an unknown id is a no-op (closing is idempotent). */
  async close(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    if (this.sessions.size === 0) process.off('exit', this.onExit);
    await session.close();
    this.options.log?.(`[desktop pool] closed ${sessionId}`);
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.sessionIds().map((id) => this.close(id)));
  }
}
