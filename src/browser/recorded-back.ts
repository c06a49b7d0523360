// `back` past a restored tab's own history. A restore opens a new browser context, so the tab's back stack is gone;
// the run's record still knows the pages shown before (src/agent/history.ts earlierUrls). Where the restored tab has
// no earlier entry of its own, `back` takes the newest of them (the environment loads it with a plain GET), and from
// a page loaded so, the one before it: successive backs walk down the record instead of swinging between two pages.
import type { Page } from 'playwright';
import { withCdp } from './cdp';

type NavigationHistory = { currentIndex: number; entries: Array<{ id: number; url: string }> };

export class RecordedBack {
  /** Recorded URLs not yet taken, newest last. */
  private readonly remaining: string[];
  /** Navigation entries of pages loaded from the record: a back from one of them goes on down the record. */
  private readonly loaded = new Set<number>();

  constructor(
    earlier: readonly string[],
    /** The restored tab (a popup that took over later has a history of its own, and no record). */
    private readonly tab: Page,
  ) {
    this.remaining = [...earlier];
  }

  /**
   * The recorded URL `back` should load on `page` instead of the browser's own back, taken off the record; undefined
   * when the browser goes back itself (it has an earlier entry, the record is used up, the page is another tab's).
   */
  async take(page: Page): Promise<string | undefined> {
    if (page !== this.tab || this.remaining.length === 0) return undefined;
    const history = await navigationHistory(page);
    if (!history) return undefined;
    const current = history.entries[history.currentIndex];
    const fromRecord = current !== undefined && this.loaded.has(current.id);
    if (!fromRecord && hasEarlierEntry(history)) return undefined;
    return this.remaining.pop();
  }

  /** Notes the page's current entry as loaded from the record (after `take`'s URL was opened). */
  async markLoaded(page: Page): Promise<void> {
    const history = await navigationHistory(page);
    const current = history?.entries[history.currentIndex];
    if (current) this.loaded.add(current.id);
  }
}

function navigationHistory(page: Page): Promise<NavigationHistory | undefined> {
  return withCdp(page, (cdp) => cdp.send('Page.getNavigationHistory'));
}

/** An entry before the current one, other than the blank page every new tab opens on (Playwright's about:blank). */
function hasEarlierEntry({ entries, currentIndex }: NavigationHistory): boolean {
  return entries.slice(0, currentIndex).some((e, i) => !(i === 0 && e.url === 'about:blank'));
}
