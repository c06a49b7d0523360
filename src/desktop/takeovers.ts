// The desktop takeover leases of one worker: per lease, the session's screen shared over VNC (vnc.ts) with its own
// password, which is the lease's token. The pool keeps a leased desktop however long it idles; a lease ends when
// handed back or when its session closes, and says for how long and which windows were open before and after.
import os from 'node:os';
import type { EndTakeoverResult, StartTakeoverResult } from '../contract/activities';
import { VncShare } from './vnc';

export type DesktopTakeoverOptions = {
  /** Where noVNC's page and socket listen (the worker's `takeover.host`); default 127.0.0.1. */
  host?: string;
  /** A lease of this session ended (the pool starts its idle clock again). */
  onEnd?: (sessionId: string) => void;
  log?: (line: string) => void;
};

/** One line on what the desktop shows (its windows), in place of a page's title. */
export type DescribeScreen = () => Promise<string>;

type DesktopLease = { sessionId: string; share: VncShare; startedAt: Date; before: string; describe: DescribeScreen };
export type DesktopLeaseSummary = Omit<EndTakeoverResult, 'leaseLost'>;

export class DesktopTakeovers {
  private readonly leases = new Map<string, DesktopLease>();
  private readonly ended = new Map<string, DesktopLeaseSummary>();

  constructor(private readonly options: DesktopTakeoverOptions = {}) {}

  /** Shares the session's display (`display`, ":<n>") under `leaseId`; the same id again is the same lease. */
  async lease(
    sessionId: string,
    display: string,
    leaseId: string,
    describe: DescribeScreen,
  ): Promise<StartTakeoverResult> {
    let lease = this.leases.get(leaseId);
    if (!lease) {
      const before = await describe();
      const { host, log } = this.options;
      const share = await VncShare.start({ display, ...(host ? { host } : {}), ...(log ? { log } : {}) });
      lease = { sessionId, share, startedAt: new Date(), before, describe };
      this.leases.set(leaseId, lease);
      this.ended.delete(leaseId);
    }
    return {
      // noVNC's page; the token is its password (`&password=<token>`, or typed when it asks).
      url: `${this.base(lease.share)}/vnc.html?autoconnect=true&resize=scale`,
      token: lease.share.password,
      startedAt: lease.startedAt.toISOString(),
      page: { url: '', title: lease.before },
    };
  }

  /** Ends a lease; what it reports (inputs are not observed over VNC: 0). A repeated end answers the same. */
  async end(leaseId: string): Promise<DesktopLeaseSummary | undefined> {
    const lease = this.leases.get(leaseId);
    if (!lease) return this.ended.get(leaseId);
    try {
      await lease.share.stop();
      const after = await lease.describe().catch(() => '');
      const summary = {
        startedAt: lease.startedAt.toISOString(),
        endedAt: new Date().toISOString(),
        inputs: 0,
        urlBefore: '',
        urlAfter: '',
        titleBefore: lease.before,
        titleAfter: after,
      };
      this.ended.set(leaseId, summary);
      return summary;
    } finally {
      this.leases.delete(leaseId);
      this.options.onEnd?.(lease.sessionId);
    }
  }

  isLeased(sessionId: string): boolean {
    return [...this.leases.values()].some((l) => l.sessionId === sessionId);
  }

  /** The session is closing: its leases end. */
  async endSession(sessionId: string): Promise<void> {
    const ids = [...this.leases].filter(([, l]) => l.sessionId === sessionId).map(([id]) => id);
    await Promise.all(ids.map((id) => this.end(id)));
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.leases.keys()].map((id) => this.end(id)));
  }

  private base(share: VncShare): string {
    const host = this.options.host ?? '127.0.0.1';
    const named = host === '0.0.0.0' || host === '::' ? os.hostname() : host;
    return `http://${named.includes(':') ? `[${named}]` : named}:${share.webPort}`;
  }
}
