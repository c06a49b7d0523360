// Controller layer: keeps one page usable on messy real sites — ready before each operation,
// popups and downloads captured (downloads capped), dialogs dismissed (a page opening them in a loop is closed),
// and dead pages recovered (probe → reload → re-visit).
import type { BrowserContext, Dialog, Download, Page } from 'playwright';
import { DEFAULT_DOWNLOAD_LIMITS, saveDownload } from './downloads';
import type { SavedDownload } from './downloads';
import { BrowserClosedError, DialogLoopError, DownloadLimitError } from './errors';
import { INPUT_TIMER_CAP_MS, trackInputTimersInPage } from './input-timers';
import { keepNavigationInTab, takeWindowOpenCount } from './pageScripts';
import { isRecoverable, recoverPage } from './recovery';
import { DEFAULT_SETTLE, NetworkTracker, settlePage, trackMutationsInPage } from './settle';
import type { SettleOptions, SettleReport } from './settle';

export type Viewport = { width: number; height: number };

export type ControllerOptions = {
  viewport: Viewport;
  downloadsDir: string;
  settle?: Partial<SettleOptions>;
  /** Cap on waiting for DOM content before an operation (default DEFAULT_PAGE_READY_MS); past it the page is stopped. */
  readyCapMs?: number;
  navTimeoutMs?: number;
  /** A download larger than this is cancelled (default 100 MiB). */
  maxDownloadBytes?: number;
  /** A download still running after this long is cancelled (default 60 s). */
  maxDownloadMs?: number;
};

/**
 * A page that opens more than DIALOG_LOOP_COUNT dialog boxes within DIALOG_LOOP_WINDOW_MS is in a dialog loop (say
 * `for (;;) alert(x)`): its script never yields, so nothing else can run in it, and it is closed.
 */
export const DIALOG_LOOP_COUNT = 10;
export const DIALOG_LOOP_WINDOW_MS = 3_000;

/** How long an operation waits for its page's DOM content before it stops the load (window.stop) and goes on. */
export const DEFAULT_PAGE_READY_MS = 60_000;

/** Popups collected while armed; `take` returns the newest one still open, `next` waits for one (capped). */
export type PopupCapture = { take(): Page | undefined; next(capMs: number): Promise<Page | undefined>; stop(): void };

type PageState = {
  network: NetworkTracker;
  crashed: boolean;
  /** When the page's recent dialogs opened (epoch ms, within the loop window). */
  dialogs: number[];
  /** Set once the page was closed for a dialog loop. */
  dialogLoop?: DialogLoopError;
};

/** Downloads saved, and those stopped at a cap. */
export type TakenDownloads = { saved: SavedDownload[]; stopped: DownloadLimitError[] };

/** Defines esbuild's `__name` helper as a no-op in every document (see BrowserController.create). */
export const NAME_HELPER_SHIM = 'globalThis.__name = globalThis.__name || function (fn) { return fn; };';

export class BrowserController {
  private current: Page;
  private readonly states = new WeakMap<Page, PageState>();
  private readonly pendingDownloads: Array<Promise<SavedDownload | Error>> = [];
  private readonly downloadWaiters = new Set<() => void>();
  private readonly pageHooks: Array<(page: Page) => void> = [];
  /** Blank pages opened here to replace a closed one (never mistaken for popups). */
  private readonly replacements = new WeakSet<Page>();
  /** A dialog loop not yet reported to an action, and the replacement of its page while that is under way. */
  private dialogLoop: DialogLoopError | undefined;
  private replacing: Promise<void> | undefined;
  private downloadFilter: ((url: string) => boolean) | undefined;
  private lastUrl = 'about:blank';
  private closed = false;
  readonly settleOptions: SettleOptions;

  private constructor(
    readonly context: BrowserContext,
    page: Page,
    readonly options: ControllerOptions,
  ) {
    this.settleOptions = { ...DEFAULT_SETTLE, ...options.settle };
    this.current = page;
    this.watch(page);
  }

  /** Opens the first page of `context` (or adopts its existing one) and installs the init script. */
  static async create(context: BrowserContext, options: ControllerOptions): Promise<BrowserController> {
    // Functions we pass to page.evaluate are serialized from our compiled code. Under tsx/esbuild (the `cua` CLI
    // and workers), nested named functions are wrapped in `__name(fn, "name")`, which does not exist in the page:
    // without this shim every such in-page script throws (and settling, for one, waits out its caps).
    await context.addInitScript({ content: NAME_HELPER_SHIM });
    await context.addInitScript(keepNavigationInTab);
    await context.addInitScript(trackMutationsInPage);
    await context.addInitScript(trackInputTimersInPage, INPUT_TIMER_CAP_MS);
    const page = context.pages()[0] ?? (await context.newPage());
    const controller = new BrowserController(context, page, options);
    await controller.ensureReady(page);
    return controller;
  }

  get page(): Page {
    return this.current;
  }

  /** The page-ready cap in milliseconds. */
  get readyCapMs(): number {
    return this.options.readyCapMs ?? DEFAULT_PAGE_READY_MS;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Registers a hook run on every page this controller starts managing (now and later). */
  onPage(hook: (page: Page) => void): void {
    this.pageHooks.push(hook);
    hook(this.current);
  }

  private watch(page: Page): void {
    if (this.states.has(page)) return;
    const state: PageState = { network: new NetworkTracker(page), crashed: false, dialogs: [] };
    this.states.set(page, state);
    page.on('crash', () => (state.crashed = true));
    page.on('download', (d) => this.onDownload(d));
    page.on('dialog', (d) => this.onDialog(page, state, d));
    page.on('framenavigated', (frame) => {
      if (state.dialogLoop) return;
      if (frame === page.mainFrame() && !frame.url().startsWith('chrome')) this.lastUrl = frame.url();
    });
    for (const hook of this.pageHooks) hook(page);
  }

  private state(page: Page): PageState {
    this.watch(page);
    return this.states.get(page) as PageState;
  }

  /** Downloads whose URL `keep` refuses are cancelled instead of saved (the URL policy). */
  filterDownloads(keep: (url: string) => boolean): void {
    this.downloadFilter = keep;
  }

  private onDownload(download: Download): void {
    if (this.downloadFilter && !this.downloadFilter(download.url())) {
      void download.cancel().catch(() => undefined);
      for (const wake of this.downloadWaiters) wake(); // the navigation that started it is over
      return;
    }
    const limits = {
      maxBytes: this.options.maxDownloadBytes ?? DEFAULT_DOWNLOAD_LIMITS.maxBytes,
      maxMs: this.options.maxDownloadMs ?? DEFAULT_DOWNLOAD_LIMITS.maxMs,
    };
    this.pendingDownloads.push(
      saveDownload(download, this.options.downloadsDir, limits).catch((e: unknown) => e as Error),
    );
    for (const wake of this.downloadWaiters) wake();
  }

  /** Dismisses a dialog (accepts beforeunload, so leaving works); a page opening them in a loop is closed. */
  private onDialog(page: Page, state: PageState, dialog: Dialog): void {
    void (dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
    if (state.dialogLoop) return;
    state.network.touch(); // a settle under way goes on while the page keeps opening dialogs
    const now = Date.now();
    state.dialogs = state.dialogs.filter((t) => now - t < DIALOG_LOOP_WINDOW_MS);
    state.dialogs.push(now);
    if (state.dialogs.length <= DIALOG_LOOP_COUNT) return;
    state.dialogLoop = new DialogLoopError(
      `the page ${page.url()} opened ${state.dialogs.length} dialog boxes in ${DIALOG_LOOP_WINDOW_MS / 1000} s; ` +
        'it was closed',
    );
    this.dialogLoop = state.dialogLoop;
    const replacing = this.closeLoopingPage(page).finally(() => {
      if (this.replacing === replacing) this.replacing = undefined;
    });
    this.replacing = replacing;
  }

  /** Closes a page stuck in a dialog loop; if it was the current one, a blank page takes its place (never its URL). */
  private async closeLoopingPage(page: Page): Promise<void> {
    const wasCurrent = page === this.current;
    if (wasCurrent) this.lastUrl = 'about:blank';
    await page.close({ runBeforeUnload: false }).catch(() => undefined);
    if (!wasCurrent || this.closed || page !== this.current) return;
    try {
      const fresh = await this.context.newPage();
      this.replacements.add(fresh);
      this.watch(fresh);
      this.current = fresh;
    } catch {
      // The context is closing; the next operation fails or recovers (to about:blank) as for any closed page.
    }
  }

  /** The dialog loop that closed a page since last asked (each reported once). */
  takeDialogLoop(): DialogLoopError | undefined {
    const loop = this.dialogLoop;
    this.dialogLoop = undefined;
    return loop;
  }

  /**
   * Makes a page fit for an operation: front, right viewport, DOM content loaded. A page still without it after the
   * cap (`readyCapMs`) is told to stop loading, and the operation goes on with what has arrived.
   */
  async ensureReady(page: Page = this.current): Promise<void> {
    if (this.closed) throw new BrowserClosedError('This browser session has been closed.');
    if (page.isClosed()) throw new Error('Target page, context or browser has been closed');
    if (this.state(page).crashed) throw new Error('Target crashed');
    await page.bringToFront();
    const size = page.viewportSize();
    const { width, height } = this.options.viewport;
    if (size?.width !== width || size.height !== height) await page.setViewportSize({ width, height });
    try {
      await page.waitForLoadState('domcontentloaded', { timeout: this.readyCapMs });
    } catch {
      await page.evaluate(() => window.stop()).catch(() => undefined);
    }
  }

  /**
   * Runs an operation on the ready current page; a dead page is recovered once and the operation retried. A page
   * closed for a dialog loop meanwhile is not recovered: the operation fails with DialogLoopError, or with
   * `retryAfterDialogLoop` runs again on the blank page that replaced it (a screenshot, say).
   */
  async run<T>(operation: (page: Page) => Promise<T>, options: { retryAfterDialogLoop?: boolean } = {}): Promise<T> {
    await this.replacing;
    const page = this.current;
    try {
      await this.ensureReady(page);
      return await operation(page);
    } catch (error) {
      const loop = this.states.get(page)?.dialogLoop;
      if (loop && !this.closed) {
        await this.replacing;
        if (!(options.retryAfterDialogLoop ?? false)) {
          if (this.dialogLoop === loop) this.dialogLoop = undefined;
          throw loop;
        }
        await this.ensureReady(this.current);
        return operation(this.current);
      }
      if (this.closed || !isRecoverable(error)) throw error;
      const recovered = await this.recover(page);
      await this.ensureReady(recovered);
      return operation(recovered);
    }
  }

  /** Recovers `page` (default: the current one); a replacement page becomes current and the dead one is closed. */
  async recover(page: Page = this.current): Promise<Page> {
    const state = this.state(page);
    const recovered = await recoverPage(
      {
        page,
        context: this.context,
        browser: this.context.browser(),
        pageIsDead: page.isClosed() || state.crashed,
        lastUrl: this.lastUrl,
      },
      this.options.navTimeoutMs,
    );
    if (recovered !== page) {
      this.watch(recovered);
      this.current = recovered;
      await page.close().catch(() => undefined);
    }
    return recovered;
  }

  /** Waits for the current page to settle by signals; reports how long it took. */
  async settle(options: Partial<SettleOptions> = {}): Promise<SettleReport> {
    const page = this.current;
    if (page.isClosed()) return { ms: 0, load: false, network: false, dom: false };
    return settlePage(page, this.state(page).network, { ...this.settleOptions, ...options });
  }

  /** Starts collecting pages the context opens (window.open, target=_blank that slipped through). */
  capturePopups(): PopupCapture {
    const seen: Page[] = [];
    let wake: (() => void) | undefined;
    const onPage = (p: Page): void => {
      if (p === this.current) return;
      seen.push(p);
      wake?.();
    };
    this.context.on('page', onPage);
    // A blank page replacing one closed for a dialog loop is reported before it is known as such: skipped here.
    const take = (): Page | undefined => seen.filter((p) => !p.isClosed() && !this.replacements.has(p)).at(-1);
    const next = async (capMs: number): Promise<Page | undefined> => {
      if (take()) return take();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, capMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      return take();
    };
    return { take, next, stop: () => this.context.off('page', onPage) };
  }

  /** True when the current page called window.open since last asked (its popup may not be reported yet). */
  async popupRequested(): Promise<boolean> {
    const page = this.current;
    if (page.isClosed()) return false;
    return (await page.evaluate(takeWindowOpenCount).catch(() => 0)) > 0;
  }

  /** Makes `page` the current one; the previous page is closed unless `keepOld`. */
  async adopt(page: Page, keepOld: boolean): Promise<void> {
    const old = this.current;
    this.watch(page);
    this.current = page;
    await this.ensureReady(page).catch(() => undefined);
    if (!keepOld && old !== page) await old.close().catch(() => undefined);
  }

  /** Resolves true once a download has started, false after `capMs`. */
  waitForDownload(capMs: number): Promise<boolean> {
    if (this.pendingDownloads.length > 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => finish(true);
      const timer = setTimeout(() => finish(false), capMs);
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        this.downloadWaiters.delete(wake);
        resolve(ok);
      };
      this.downloadWaiters.add(wake);
    });
  }

  /** Waits for downloads started so far to be saved or stopped at a cap, and hands them over (each only once). */
  async takeDownloads(): Promise<TakenDownloads> {
    const results = await Promise.all(this.pendingDownloads.splice(0));
    return {
      saved: results.filter((r): r is SavedDownload => !(r instanceof Error)),
      stopped: results.filter((r): r is DownloadLimitError => r instanceof DownloadLimitError),
    };
  }

  /** Closes the context (all its pages); later operations fail with BrowserClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.context.close().catch(() => undefined);
  }
}
