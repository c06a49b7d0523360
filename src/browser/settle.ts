// Waiting for a page to settle after an action, by signals (load state, network quiet, DOM quiet), each capped.
import type { Frame, Page, Request } from 'playwright';
import { INPUT_TIMER_CAP_MS, inputWorkInPage } from './input-timers';
import type { InputWork } from './input-timers';

export type SettleOptions = {
  /** Longest wait for the load event of a navigation the action started. */
  loadCapMs: number;
  /** The network counts as quiet after this long with no request in flight. */
  networkQuietMs: number;
  /** Longest wait for network quiet (pages that poll or stream never go quiet). */
  networkCapMs: number;
  /** The DOM counts as quiet after this long with no mutation. */
  domQuietMs: number;
  /** Longest wait for DOM quiet (animated pages never stop mutating). */
  domCapMs: number;
  /** Upper bound on the whole settle, whatever the signals say. */
  maxMs: number;
  /**
   * Quiet time counts from the start of the settle (after an action: its effects may start late, like a
   * debounced fetch) rather than from the last activity seen (before a screenshot of a page left alone, which
   * counts as settled at once when it has been quiet long enough already).
   */
  fromStart?: boolean;
  /**
   * Before the quiet windows, wait for the timers the keyboard input started (a search box's debounce, and what its
   * callback sets in turn; see input-timers.ts) and the CSS transitions running when it ended; the quiet windows then
   * count from when the last of them was over.
   */
  inputTimers?: boolean;
};

export const DEFAULT_SETTLE: SettleOptions = {
  loadCapMs: 5_000,
  networkQuietMs: 300,
  networkCapMs: 3_000,
  domQuietMs: 200,
  domCapMs: 2_000,
  maxMs: 8_000,
};

/**
 * After a pointer action (click, move, drag, scroll): what a click starts (a navigation, a fetch, a redraw) shows
 * within a frame or two, and a navigation it starts is then waited for to its load. The windows are longer than
 * keyboard input's because a click's timers are not tracked: a handler that fetches after a short timeout (a menu's
 * contents) is still caught; a popup opened after a long one is not waited for (late-popup.ts adopts it).
 */
export const POINTER_SETTLE: Partial<SettleOptions> = { networkQuietMs: 100, domQuietMs: 100 };

/** The quiet windows after keyboard input and navigations, and before a screenshot: what happens at once or next. */
const SHORT_WINDOWS = { networkQuietMs: 60, domQuietMs: 60 };

/**
 * After keyboard input: the timers it started and the transitions it set going are waited for (input-timers.ts), so
 * the quiet windows need only cover what happens at once (a fetch the key started, a redraw) or right after a timer.
 */
export const INPUT_SETTLE: Partial<SettleOptions> = { ...SHORT_WINDOWS, inputTimers: true };

/**
 * After a navigation: the load event is waited for, and requests in flight by then (a page's data fetched at load) are
 * waited for as ever; the quiet windows only have to catch a request or change that starts right after it.
 */
export const NAVIGATION_SETTLE: Partial<SettleOptions> = { ...SHORT_WINDOWS };

/** Longest wait for timers the input started (each at most INPUT_TIMER_CAP_MS, but a debounce may re-arm). */
export const INPUT_WAIT_CAP_MS = 2_000;

/**
 * A wheel scroll counts as done after this long without a scroll event: a smooth scroll fires one every frame (about
 * 16 ms), so three frames in a row without one is its end.
 */
export const SCROLL_IDLE_MS = 50;

/** After a scroll that has already gone idle, quiet counts from the last activity seen, not from now. */
export const SCROLL_SETTLE: Partial<SettleOptions> = { ...POINTER_SETTLE, fromStart: false };

/**
 * Before a screenshot: a short look, counted from the last activity seen (a page left quiet is shot at once). Its
 * windows are those of an action's settle, so a page that has just settled is not watched again.
 */
export const SCREENSHOT_SETTLE: Partial<SettleOptions> = {
  ...SHORT_WINDOWS,
  maxMs: 3_000,
  fromStart: false,
};

/**
 * How settling went: how long it took and which signals were reached before their caps; `timersMs`, after keyboard
 * input, is the part of `ms` spent waiting for the timers and transitions the input started.
 */
export type SettleReport = { ms: number; load: boolean; network: boolean; dom: boolean; timersMs?: number };

const IGNORED_TYPES = new Set(['eventsource', 'websocket', 'manifest', 'ping']);

/** Counts a page's requests in flight, remembers when the network was last busy, and counts navigations. */
export class NetworkTracker {
  private readonly inflight = new Set<Request>();
  private lastActivity = Date.now();
  private readonly idleWaiters = new Set<() => void>();
  /** When a request last started or ended (epoch ms). */
  get lastActivityAt(): number {
    return this.lastActivity;
  }

  /** Main-frame navigations seen so far. */
  navigations = 0;

  constructor(page: Page) {
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) this.navigations += 1;
    });
    page.on('request', (r) => {
      if (IGNORED_TYPES.has(r.resourceType())) return;
      this.inflight.add(r);
      this.lastActivity = Date.now();
    });
    const done = (r: Request): void => {
      if (!this.inflight.delete(r)) return;
      this.lastActivity = Date.now();
      if (this.inflight.size === 0) for (const wake of [...this.idleWaiters]) wake();
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
  }

  /** Counts something else the page did (a dialog it opened) as activity: the network's quiet starts again. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  get pending(): number {
    return this.inflight.size;
  }

  /** Milliseconds since the last request started or ended (or since `since`), 0 while any is in flight. */
  quietFor(since = 0): number {
    return this.inflight.size > 0 ? 0 : Date.now() - Math.max(this.lastActivity, since);
  }

  /**
   * Resolves true once quiet for `quietMs`, false when `capMs` runs out first. Quiet time counts from `since`
   * at the earliest, so a request a debounce timer fires shortly after the action is still waited for.
   */
  async waitQuiet(quietMs: number, capMs: number, since = 0): Promise<boolean> {
    const deadline = Date.now() + capMs;
    for (;;) {
      const quiet = this.quietFor(since);
      if (quiet >= quietMs) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      // While requests are in flight, look again as soon as the last one ends (not a window later).
      await (this.inflight.size > 0 ? this.idle(left) : delay(Math.min(left, quietMs - quiet)));
    }
  }

  /** Resolves once no request is in flight, or after `ms`. */
  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.idleWaiters.add(wake);
    });
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitLoad(page: Page, capMs: number): Promise<boolean> {
  if (capMs <= 0) return false;
  try {
    await page.waitForLoadState('load', { timeout: capMs });
    return true;
  } catch {
    return false;
  }
}

/**
 * Init script: every document keeps the time of its last DOM mutation (epoch ms, the same clock as Node's), so
 * a settle can tell at once that a page has been quiet for a while instead of watching it for `domQuietMs`.
 */
export function trackMutationsInPage(): void {
  const w = window as unknown as { __cuaLastMutation?: number };
  if (w.__cuaLastMutation !== undefined) return;
  w.__cuaLastMutation = Date.now();
  const observer = new MutationObserver(() => {
    w.__cuaLastMutation = Date.now();
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

/** In-page: when the document last changed (epoch ms, kept by `trackMutationsInPage`), or null if it is not tracked. */
export function lastMutationInPage(): number | null {
  return (window as unknown as { __cuaLastMutation?: number }).__cuaLastMutation ?? null;
}

/**
 * In-page: resolve once no DOM mutation happened for `quietMs` (counted from the last mutation the init script
 * saw, but not before `notBefore`), or false after `capMs`.
 */
function domQuietInPage([quietMs, capMs, notBefore]: [number, number, number]): Promise<boolean> {
  return new Promise((resolve) => {
    const root = document.documentElement;
    if (!root) return resolve(true);
    const now = Date.now();
    const last = (window as unknown as { __cuaLastMutation?: number }).__cuaLastMutation ?? now;
    const quietSoFar = now - Math.max(last, notBefore);
    if (quietSoFar >= quietMs) return resolve(true);
    let timer = setTimeout(() => finish(true), quietMs - Math.max(0, quietSoFar));
    const cap = setTimeout(() => finish(false), capMs);
    const observer = new MutationObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(true), quietMs);
    });
    function finish(ok: boolean): void {
      observer.disconnect();
      clearTimeout(timer);
      clearTimeout(cap);
      resolve(ok);
    }
    observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}

/** Waits for DOM quiet; a navigation destroying the context just means "measure again on the new page". */
async function waitDomQuiet(page: Page, quietMs: number, deadline: number, notBefore: number): Promise<boolean> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= quietMs) return false;
    try {
      return await page.evaluate(domQuietInPage, [quietMs, left, notBefore] as [number, number, number]);
    } catch {
      if (page.isClosed()) return false;
      await waitLoad(page, Math.min(1_000, deadline - Date.now()));
    }
  }
}

/** How long reading one frame may take before it counts as "nothing pending" (a frame still loading, say). */
const TIMER_READ_CAP_MS = 200;

/**
 * When what the input started will be over (0 if nothing is pending, or nothing could be read): timers, and with
 * `animations` the CSS transitions and animations running now. The page's own document is read, and when the focus
 * is in a frame (the keys went there), every frame.
 */
async function inputWorkDue(page: Page, animations: boolean): Promise<number> {
  const arg: [boolean, number] = [animations, INPUT_TIMER_CAP_MS];
  const read = (frame: Frame): Promise<InputWork | undefined> =>
    Promise.race([frame.evaluate(inputWorkInPage, arg), delay(TIMER_READ_CAP_MS).then(() => undefined)]).catch(
      () => undefined,
    );
  const main = await read(page.mainFrame());
  if (!(main?.focusInFrame ?? false)) return main?.due ?? 0;
  const frames = await Promise.all(page.frames().slice(1).map(read));
  return Math.max(main?.due ?? 0, ...frames.map((work) => work?.due ?? 0));
}

/**
 * Waits until the timers the last input started have run (and those they set in turn), and the transitions running
 * when it ended are over, at most `capMs`; true when there were any. Transitions are looked at once only: a page
 * that starts one after another (a carousel) would keep the settle waiting.
 */
async function waitInputTimers(page: Page, capMs: number): Promise<boolean> {
  const deadline = Date.now() + capMs;
  for (let reads = 0; ; reads += 1) {
    if (page.isClosed()) return reads > 0;
    const due = await inputWorkDue(page, reads === 0);
    const left = deadline - Date.now();
    if (due === 0 || left <= 0) return reads > 0 || due > 0;
    // A timer past its due time has not run yet (the page is busy): look again shortly.
    await delay(Math.min(left, Math.max(5, due - Date.now())));
  }
}

/**
 * Lets the page settle after an action; never throws, always within `maxMs`.
 * Network quiet and DOM quiet are measured side by side; if a navigation or a request happened while they
 * were measured (say a debounced fetch that redraws a list), both are measured again on what came of it.
 */
export async function settlePage(
  page: Page,
  network: NetworkTracker,
  options: SettleOptions = DEFAULT_SETTLE,
): Promise<SettleReport> {
  const start = Date.now();
  const deadline = start + options.maxMs;
  const left = (): number => Math.max(0, deadline - Date.now());
  let load = false;
  let networkOk = false;
  let dom = false;
  let timersMs: number | undefined;
  let quietFrom = start;
  if (options.inputTimers ?? false) {
    const waited = await waitInputTimers(page, Math.min(INPUT_WAIT_CAP_MS, left()));
    if (waited) quietFrom = Date.now();
    timersMs = waited ? quietFrom - start : 0;
  }
  for (let round = 0; round < 4 && left() > 0; round += 1) {
    const navigations = network.navigations;
    const roundStart = Date.now();
    const since = round === 0 && (options.fromStart ?? true) ? quietFrom : 0;
    const networkCap = (): number => Math.min(options.networkCapMs, left());
    const loadAndNetwork = async (): Promise<[boolean, boolean]> => {
      const quiet = await network.waitQuiet(options.networkQuietMs, networkCap(), since);
      const loaded = await waitLoad(page, Math.min(options.loadCapMs, left()));
      return [loaded, quiet && (await network.waitQuiet(options.networkQuietMs, networkCap()))];
    };
    const domDeadline = Math.min(deadline, Date.now() + options.domCapMs);
    [[load, networkOk], dom] = await Promise.all([
      loadAndNetwork(),
      page.isClosed() ? Promise.resolve(false) : waitDomQuiet(page, options.domQuietMs, domDeadline, since),
    ]);
    // A page that never went quiet is not measured again: the caps have spoken.
    const navigated = network.navigations !== navigations;
    const changed = navigated || (networkOk && dom && network.lastActivityAt > roundStart);
    if (!changed || page.isClosed()) break;
  }
  const report = { ms: Date.now() - start, load, network: networkOk, dom };
  return timersMs === undefined ? report : { ...report, timersMs };
}
