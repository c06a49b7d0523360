// Taking a browser session over (`cua takeover`): a lease on this worker's takeover endpoint for the session's
// browser (src/browser/takeover/), and its end, which tells what the person did. The pool keeps a leased session
// open however long it idles; the lease ends with the hand-back or when the session closes.
import { pageFacts } from '../../src/browser/takeover/lease';
import type { EndTakeoverResult, StartTakeoverResult, TakeoverRef } from '../../src/contract/activities';
import type { ActivityDeps } from '../support';
import { leaseLost } from './driver';

/** Lends the session's browser to a person; the same lease id again (a retry) is the same lease. */
export async function takeOverBrowser(deps: ActivityDeps, req: TakeoverRef): Promise<StartTakeoverResult> {
  const env = deps.pool.get(req.sessionId); // UnknownSessionError when the session is gone: re-open, then take over
  const grant = await deps.pool.takeovers.lease(env, req.leaseId, { sessionId: req.sessionId });
  // Never the token: the log is not encrypted.
  deps.log?.(
    `session ${req.sessionId} of ${req.runId} taken over (lease ${req.leaseId}): ${grant.url}` +
      (grant.cdpUrl ? ' (raw CDP offered)' : ''),
  );
  return grant;
}

/**
 * Ends the lease; what the person did. A lease this worker does not hold (granted by a worker since lost) reports
 * the page as it is now, with `leaseLost`.
 */
export async function endBrowserTakeover(deps: ActivityDeps, req: TakeoverRef): Promise<EndTakeoverResult> {
  const summary = await deps.pool.takeovers.end(req.leaseId);
  if (summary) {
    deps.log?.(`session ${req.sessionId} of ${req.runId} handed back (lease ${req.leaseId}, ${summary.inputs} inputs)`);
    return summary;
  }
  const env = deps.pool.has(req.sessionId) ? deps.pool.get(req.sessionId) : undefined;
  return leaseLost(env ? await pageFacts(env) : { url: '', title: '' });
}
