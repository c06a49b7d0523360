// The page context line: the URL and where the viewport sits on the page.
import type { ViewportInfo } from './pageScripts';

/** "Current URL: …" plus the viewport line; the percentage is how far down the page the viewport's bottom edge reaches. */
export function describeViewport(url: string, v: ViewportInfo): string {
  const bottom = Math.min(v.top + v.height, v.scrollHeight);
  const percent = v.scrollHeight > 0 ? Math.round((bottom / v.scrollHeight) * 100) : 100;
  const shownUrl = url.startsWith('data:') ? `${url.slice(0, url.indexOf(',') + 1)}…` : url;
  return `Current URL: ${shownUrl}\nViewport: scrolled to ${percent}% of page (${v.top}-${bottom}px of ${v.scrollHeight}px)`;
}
