// Polls a condition until it holds or a deadline passes (no fixed sleeps where a condition can be waited for).
import { setTimeout as sleep } from 'node:timers/promises';
import { DesktopTimeoutError } from './errors';

export type PollOptions = {
  timeoutMs: number;
  intervalMs?: number;
  /** What is waited for, for the error message: "the display :3 to answer". */
  what: string;
};

/**
 * Calls `probe` until it returns a value other than undefined and resolves that value; throws DesktopTimeoutError
 * at the deadline. An error thrown by the probe ends the wait at once (probes catch what only means "not yet").
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 50;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      throw new DesktopTimeoutError(`timed out after ${options.timeoutMs} ms waiting for ${options.what}`);
    }
    await sleep(interval);
  }
}
