// Small functions that run inside the page (serialised by Playwright), so each must be self-contained.

/** Init script: links and forms that would open a new window open in place instead (single-tab policy). */
export function keepNavigationInTab(): void {
  const w = window as unknown as { __cuaSingleTab?: boolean };
  if (w.__cuaSingleTab) return;
  w.__cuaSingleTab = true;
  const retarget = (el: Element | null): void => {
    const target = el?.getAttribute('target');
    if (el && target && target !== '_self' && target !== '_parent' && target !== '_top')
      el.setAttribute('target', '_self');
  };
  // Count window.open calls, so the controller knows a popup is on its way even before the browser reports it.
  const open = window.open;
  const counted = function (this: Window, ...args: Parameters<typeof window.open>): Window | null {
    const counter = window as unknown as { __cuaWindowOpens?: number };
    counter.__cuaWindowOpens = (counter.__cuaWindowOpens ?? 0) + 1;
    return open.apply(this, args);
  };
  Object.defineProperty(window, 'open', { value: counted, writable: true, configurable: true });
  document.addEventListener('click', (e) => retarget((e.target as Element | null)?.closest?.('a, area') ?? null), true);
  document.addEventListener('submit', (e) => retarget(e.target as Element | null), true);
}

/** Removes new-window targets from every link, area and form now on the page; returns how many were changed. */
export function stripNewWindowTargets(): number {
  let changed = 0;
  for (const el of Array.from(document.querySelectorAll('a[target], area[target], form[target], base[target]'))) {
    const target = el.getAttribute('target');
    if (target && target !== '_self' && target !== '_parent' && target !== '_top') {
      el.setAttribute('target', '_self');
      changed += 1;
    }
  }
  return changed;
}

export type ViewportInfo = { top: number; height: number; scrollHeight: number; left: number; width: number };

/** Where the viewport sits on the page, in CSS pixels. */
export function readViewport(): ViewportInfo {
  const root = document.scrollingElement ?? document.documentElement;
  const vv = window.visualViewport;
  return {
    top: Math.round(window.scrollY),
    left: Math.round(window.scrollX),
    height: Math.round(vv?.height ?? window.innerHeight),
    width: Math.round(vv?.width ?? window.innerWidth),
    scrollHeight: Math.round(Math.max(root?.scrollHeight ?? 0, document.body?.scrollHeight ?? 0, window.innerHeight)),
  };
}

/** Resolves once no scroll event (anywhere in the document) happened for `quietMs`, or after `capMs`. */
export function waitScrollIdle([quietMs, capMs]: [number, number]): Promise<boolean> {
  return new Promise((resolve) => {
    let timer = setTimeout(() => finish(true), quietMs);
    const cap = setTimeout(() => finish(false), capMs);
    const onScroll = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(true), quietMs);
    };
    function finish(ok: boolean): void {
      clearTimeout(timer);
      clearTimeout(cap);
      document.removeEventListener('scroll', onScroll, true);
      resolve(ok);
    }
    document.addEventListener('scroll', onScroll, true);
  });
}

/** The four PDF signals: URL suffix, document content type, an embedded PDF, a pdf.js viewer. */
export type PdfSignals = { urlSuffix: boolean; contentType: boolean; embed: string | null; viewer: boolean };

export function readPdfSignals(): PdfSignals {
  const embed = document.querySelector('embed[type="application/pdf"], object[type="application/pdf"]');
  const src = embed ? (embed.getAttribute('src') ?? embed.getAttribute('data')) : null;
  return {
    urlSuffix: /\.pdf$/i.test(location.pathname),
    contentType: document.contentType === 'application/pdf',
    embed: embed
      ? src && /^https?:/i.test(new URL(src, location.href).href)
        ? new URL(src, location.href).href
        : ''
      : null,
    viewer: 'PDFViewerApplication' in window,
  };
}

/** Text of a pdf.js-style text layer, if the page shows one. */
export function readPdfTextLayer(): string {
  return Array.from(document.querySelectorAll('.textLayer'))
    .map((el) => (el as HTMLElement).innerText)
    .join('\n')
    .trim();
}

/** How many times the page called window.open since the last call of this function. */
export function takeWindowOpenCount(): number {
  const counter = window as unknown as { __cuaWindowOpens?: number };
  const count = counter.__cuaWindowOpens ?? 0;
  counter.__cuaWindowOpens = 0;
  return count;
}
