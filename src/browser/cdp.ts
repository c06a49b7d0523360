// One Chrome DevTools Protocol session per page, opened on first use and kept with the page, for the few things
// Playwright does not expose (a faster screenshot, the tab's navigation history). Chromium only: elsewhere none.
import type { CDPSession, Page } from 'playwright';

const sessions = new WeakMap<Page, Promise<CDPSession>>();

function isChromium(page: Page): boolean {
  return page.context().browser()?.browserType().name() === 'chromium';
}

/**
 * Runs `use` with the page's CDP session; undefined when the page is not Chromium's or is closed, or `use` fails
 * (the session is then opened afresh next time).
 */
export async function withCdp<T>(page: Page, use: (session: CDPSession) => Promise<T>): Promise<T | undefined> {
  if (!isChromium(page) || page.isClosed()) return undefined;
  try {
    let session = sessions.get(page);
    if (!session) {
      session = page.context().newCDPSession(page);
      sessions.set(page, session);
    }
    return await use(await session);
  } catch {
    sessions.delete(page);
    return undefined;
  }
}
