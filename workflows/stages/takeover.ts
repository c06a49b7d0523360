// A takeover: the live browser (or desktop) leased to a person until they hand it back. The lease is the workflow's:
// every timing.leaseCheckSeconds its worker is asked again for it (the same lease while that worker lives); a lost
// worker's session is re-opened, its page restored, and the same lease granted there (a new address, in the status
// query). The handback's note tells the model how long a person had it, what changed and what they said.
// Deterministic.
import { ActivityFailure, condition, log, setCurrentDetails } from '@temporalio/workflow';
import type { EndTakeoverResult, StartTakeoverResult } from '../../src/contract/activities';
import type { HandbackInput, TakeoverLease } from '../../src/contract/task';
import { handbackNote } from '../../src/agent/handback';
import { isSessionLost } from '../failures';
import { notifyPaused } from '../notify';
import type { TaskContext } from './context';
import type { Sessions } from './sessions';

const MAX_LEASE_REOPENS = 3;

/** The lease as the takeover update and the status query show it: the address with its token, for a person. */
function leaseOf(leaseId: string, granted: StartTakeoverResult, since = granted.startedAt): TakeoverLease {
  const sep = granted.url.includes('?') ? '&' : '?';
  // noVNC's page (a desktop's lease) takes the token as the VNC password; the browser's viewer as `token`.
  const param = /\/vnc\.html/.test(granted.url) ? 'password' : 'token';
  return {
    leaseId,
    url: `${granted.url}${sep}${param}=${encodeURIComponent(granted.token)}`,
    token: granted.token,
    ...(granted.cdpUrl ? { cdpUrl: granted.cdpUrl } : {}),
    since,
  };
}

export class Takeovers {
  constructor(
    private readonly ctx: TaskContext,
    private readonly sessions: Sessions,
    private readonly recordControl: (kind: 'taken_over') => Promise<void>,
  ) {}

  /** Leases the session to a person and waits for the handback; its note is recorded for the next step. */
  async takeOver(): Promise<void> {
    const { state, input, task } = this.ctx;
    const { control } = task;
    control.takeoverRequested = false;
    state.takeovers = (state.takeovers ?? 0) + 1;
    const leaseId = `lease-${state.step}-${state.takeovers}`;
    let granted: StartTakeoverResult;
    try {
      granted = await this.lease(leaseId);
    } catch (err) {
      // An environment that cannot be taken over (or a lease refused): the update says why; the task goes on.
      if (!(err instanceof ActivityFailure)) throw err;
      control.takeoverError = err.cause?.message ?? String(err);
      await this.sessions.ensure('resume');
      return;
    }
    const first = granted;
    control.since = first.startedAt;
    control.lease = leaseOf(leaseId, granted);
    task.status = 'taken_over';
    task.publish();
    setCurrentDetails(
      `**Taken over by a person** since ${first.startedAt.slice(11, 19)} UTC (lease ${leaseId}; its address: \`npx cua status ${input.runId}\`)\n\nHand back: \`npx cua handback ${input.runId} "<what you did>"\``,
    );
    await this.recordControl('taken_over');
    await notifyPaused(task);
    // Every timing.leaseCheckSeconds the lease's worker is asked again (a lost one is replaced and the lease re-granted).
    const check = input.timing.leaseCheckSeconds * 1000;
    while (!(await condition(() => control.handback !== null, check))) {
      granted = await this.lease(leaseId);
      if (granted.url !== control.lease?.url || granted.token !== control.lease?.token) {
        control.lease = leaseOf(leaseId, granted, control.since);
      }
    }
    await this.handBack(leaseId, first);
  }

  /** The lease ends on its worker; the handback's note (what changed, what the person said) goes to the run folder. */
  private async handBack(leaseId: string, first: StartTakeoverResult): Promise<void> {
    const { state, input, task, proxies } = this.ctx;
    const { control } = task;
    const ended = await this.endLease(leaseId);
    const handback = control.handback as HandbackInput;
    const before = ended.leaseLost ? first.page : { url: ended.urlBefore, title: ended.titleBefore };
    const startedAt = ended.leaseLost ? first.startedAt : ended.startedAt;
    const text = handbackNote({
      durationMs: Date.parse(ended.endedAt) - Date.parse(startedAt),
      urlBefore: before.url,
      urlAfter: ended.urlAfter,
      titleBefore: before.title,
      titleAfter: ended.titleAfter,
      note: handback.note ?? null,
    });
    await proxies.shared(`step ${state.step + 1} · handback`).recordControl({
      runId: input.runId,
      step: state.step + 1,
      generation: state.generation,
      kind: 'handback',
      text,
      metadata: {
        lease_id: leaseId,
        started_at: startedAt,
        ended_at: ended.endedAt,
        inputs: ended.inputs,
        url_before: before.url,
        url_after: ended.urlAfter,
        title_before: before.title,
        title_after: ended.titleAfter,
        ...(handback.note ? { person_note: handback.note } : {}),
      },
    });
    control.lease = null;
    control.handback = null;
    control.since = null;
    task.status = 'running';
    task.publish();
    setCurrentDetails('');
  }

  /** The lease granted on the session's worker; a lost worker's session is re-opened (its page restored) first. */
  private async lease(leaseId: string): Promise<StartTakeoverResult> {
    const { state, input, proxies } = this.ctx;
    for (let reopen = 0; ; reopen++) {
      const session = await this.sessions.ensure(reopen === 0 ? 'resume' : 'worker_lost');
      try {
        return await proxies
          .onSession(session, `step ${state.step} · takeover`)
          .startTakeover({ runId: input.runId, sessionId: session.sessionId, leaseId });
      } catch (err) {
        if (!isSessionLost(err) || reopen >= MAX_LEASE_REOPENS) throw err;
        log.warn('the taken-over session was lost; re-opening it for the same lease', { error: String(err) });
        state.session = null;
      }
    }
  }

  /** Ends the lease on its worker; a worker lost meanwhile: what the workflow knows (the note says the page now). */
  private async endLease(leaseId: string): Promise<EndTakeoverResult> {
    const { state, input, proxies } = this.ctx;
    for (;;) {
      const session = await this.sessions.ensure('worker_lost');
      try {
        return await proxies
          .onSession(session, `step ${state.step} · hand back`)
          .endTakeover({ runId: input.runId, sessionId: session.sessionId, leaseId });
      } catch (err) {
        if (!isSessionLost(err)) throw err;
        state.session = null;
      }
    }
  }
}
