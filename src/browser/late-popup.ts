// Popups a click opens after its step has ended, from a timer say. The original's click waits up to 1 s for a popup
// each time (seed 001 §3.2); ours settles by signals and returns sooner, so a popup opened later would be missed.
// Instead, the click's popup capture stays open after the click, and the next observation takes the popup over: at
// the latest there, waiting only for what is left of the click's 1 s window when none has come yet. The click's own
// step is not made longer.
import type { Page } from 'playwright';
import type { PopupCapture } from './controller';

/** How long after a click starts a popup it opens still counts as the click's (the original's window). */
export const LATE_POPUP_WINDOW_MS = 1_000;

export class LatePopups {
  private pending: { capture: PopupCapture; until: number } | undefined;

  /** Keeps `capture` (started with the click at `startedAt`) open until the next observation takes it. */
  watch(capture: PopupCapture, startedAt: number): void {
    this.drop();
    this.pending = { capture, until: startedAt + LATE_POPUP_WINDOW_MS };
  }

  /** Stops watching (another action began, the session closes). */
  drop(): void {
    this.pending?.capture.stop();
    this.pending = undefined;
  }

  /** The newest popup the watched click opened, waiting out the rest of its window for one; undefined: none. */
  async take(): Promise<Page | undefined> {
    const pending = this.pending;
    if (!pending) return undefined;
    this.pending = undefined;
    try {
      const left = pending.until - Date.now();
      return pending.capture.take() ?? (left > 0 ? await pending.capture.next(left) : undefined);
    } finally {
      pending.capture.stop();
    }
  }
}
