// A question's hold of a live session, the same for each environment whose pool can keep one (the browser's, the
// desktop's): what the session keeps (a page, a home) is saved first, so a worker lost during the wait still leaves
// it; then the session is held for the worker's hold time (browser.holdWhileWaitingSeconds) and saved again when the
// hold ends unclaimed. Not held (no hold configured, the session gone, the pool refusing): saved and closed.
import type { HoldSessionInput, HoldSessionResult } from '../../src/contract/activities';
import type { HoldEnd } from '../../src/runtime/session-holds';

/** What a pool offers for holding its sessions (BrowserPool, DesktopPool). */
export interface HoldingPool {
  has(sessionId: string): boolean;
  /** Holds the session for `ms`; `end` runs when the hold ends unclaimed, before the pool closes the session. */
  hold(sessionId: string, ms: number, end: (why: HoldEnd) => Promise<void>): boolean;
  close(sessionId: string): Promise<void>;
}

export type HoldOptions = {
  seconds: number;
  /** Saves what the session keeps: at the question, and with `why` when the hold ended (the session then closes). */
  save: (why?: HoldEnd) => Promise<void>;
  /** What `save` keeps, for the log ('page', 'home'). */
  what: string;
  log: ((line: string) => void) | undefined;
};

/** Saves the session's state and holds it for a reply (`held`), or closes it when it cannot be held. */
export async function holdForReply(
  pool: HoldingPool,
  req: HoldSessionInput,
  { seconds, save, what, log }: HoldOptions,
): Promise<HoldSessionResult> {
  const { runId: taskId, sessionId } = req;
  await save();
  const held =
    seconds > 0 &&
    pool.has(sessionId) &&
    pool.hold(sessionId, seconds * 1000, async (why) => {
      log?.(`session ${sessionId} of ${taskId}: hold ended (${why}); saving its ${what} and closing it`);
      await save(why);
    });
  if (!held) await pool.close(sessionId);
  else log?.(`session ${sessionId} of ${taskId} held for a reply (up to ${seconds} s)`);
  return { held };
}
