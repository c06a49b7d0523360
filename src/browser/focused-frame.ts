// The URL of the frame the keyboard types into: the page itself, or the (possibly cross-origin, possibly nested)
// iframe that holds the focus. A secret's host check uses it, so a page cannot have a secret typed into an embedded
// frame of another site.
import type { Frame, Page } from 'playwright';

/** How deep nested iframes are followed; a focus deeper than this is in no frame any host pattern matches. */
const MAX_DEPTH = 8;

export async function focusedFrameUrl(page: Page): Promise<string> {
  let frame: Frame = page.mainFrame();
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const handle = await frame.evaluateHandle(() => document.activeElement);
    const element = handle.asElement();
    const child = element ? await element.contentFrame() : null;
    await handle.dispose();
    if (!child) return frame.url();
    frame = child;
  }
  return 'about:too-deeply-nested-frames';
}
