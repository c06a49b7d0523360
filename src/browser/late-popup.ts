// Popups a click opens after its step has ended, from a timer say. The original's click waits up to 1 s for a popup
// each time (seed 001 §3.2); ours settles by signals and returns sooner, so a popup opened later would be missed.
// Instead, the click's popup capture stays open after the click until the next action starts. A popup that has come
// by the folded next observation (the act's) is taken over there; one that comes while the model decides is taken
// over when the next action starts, which is then not carried out (LatePopupError: it was decided on the old page).
// A separate observation waits for what is left of the click's 1 s window when none has come yet — and not at all
// when the clicked page has loaded another document since (its timers went with the old one). The click's own step
// is not made longer.
import type { Page } from 'playwright';
import type { BrowserController, PopupCapture } from './controller';
import type { PolicyGuard } from './policy-guard';

/** How long after a click starts a popup it opens still counts as the click's (the original's window). */
export const LATE_POPUP_WINDOW_MS = 1_000;

/** A click's popup capture and the clicked page's document loads since the click began. */
export interface ClickWatch {
  capture: PopupCapture;
  /** True once the clicked page has loaded another document (a link, a form): its timers are gone. */
  leftDocument(): boolean;
  stop(): void;
}

/** Starts watching a click on `page`: the popups the context opens, and whether `page` loads another document. */
export function watchClick(page: Page, capture: PopupCapture): ClickWatch {
  let loaded = false;
  const onLoad = (): void => {
    loaded = true;
  };
  page.on('domcontentloaded', onLoad);
  return {
    capture,
    leftDocument: () => loaded,
    stop: () => {
      capture.stop();
      page.off('domcontentloaded', onLoad);
    },
  };
}

export class LatePopups {
  private pending: { watch: ClickWatch; until: number } | undefined;

  /** Keeps `watch` (started with the click at `startedAt`) open until the next observation takes it. */
  watch(watch: ClickWatch, startedAt: number): void {
    this.drop();
    this.pending = { watch, until: startedAt + LATE_POPUP_WINDOW_MS };
  }

  /** Stops watching (another action began, the session closes). */
  drop(): void {
    this.pending?.watch.stop();
    this.pending = undefined;
  }

  /** The newest popup the watched click has opened by now, without waiting; undefined (still watching): none yet. */
  takeArrived(): Page | undefined {
    const popup = this.pending?.watch.capture.take();
    if (popup) this.drop();
    return popup;
  }

  /** The newest popup the watched click opened, waiting out the rest of its window for one; undefined: none. */
  async take(): Promise<Page | undefined> {
    const pending = this.pending;
    if (!pending) return undefined;
    this.pending = undefined;
    const { watch } = pending;
    try {
      const left = watch.leftDocument() ? 0 : pending.until - Date.now();
      return watch.capture.take() ?? (left > 0 ? await watch.capture.next(left) : undefined);
    } finally {
      watch.stop();
    }
  }
}

/**
 * Makes a popup that came late the page (closing the old one unless `keepOld`) and settles it; a closed popup, or one
 * whose page the URL policy refused (closed then), is not taken over. True when it became the page.
 */
export async function adoptLate(
  popup: Page | undefined,
  controller: BrowserController,
  guard: PolicyGuard,
  keepOld: boolean,
): Promise<boolean> {
  if (!popup || popup.isClosed()) return false;
  if (guard.refusedPopup(popup)) {
    await popup.close().catch(() => undefined);
    return false;
  }
  await controller.adopt(popup, keepOld);
  await controller.settle();
  return true;
}
