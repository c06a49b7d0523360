// Environment layer: one method per model action, in viewport pixels. Decides what the agent's single tab is
// (popups taken over, old page closed), routes browser-chrome chords, reports how long the page took to settle, and
// turns a page the URL policy refused during an action into a PolicyBlockedError (policy-guard.ts).
import type { BrowserContext, Page } from 'playwright';
import { CaptchaGate } from './captcha';
import { BrowserController } from './controller';
import type { ControllerOptions } from './controller';
import { downloadNoticeUrl } from './downloads';
import type { SavedDownload } from './downloads';
import { DownloadLimitError, LatePopupError, NavigationError, PolicyBlockedError, UnknownKeyError } from './errors';
import { FIND_HOST_ID, installFindOverlay } from './findOverlay';
import { capturePng } from './capture';
import { pressChord } from './keyboard';
import { normalizeChord, routeChord } from './keys';
import { pageMarkdown } from './markdown';
import { readViewport, stripNewWindowTargets, waitScrollIdle } from './pageScripts';
import { bingSearchUrl, firstLine, isDownloadStart, isInterrupted, normalizeUrl } from './navigation';
import { describeViewport } from './pageContext';
import { PolicyGuard } from './policy-guard';
import { EgressGuard, refusalLine } from './egress-guard';
import type { RequestJournal } from './request-journal';
import { RecordedBack } from './recorded-back';
import { isRecoverable } from './recovery';
import { delay, INPUT_SETTLE, lastMutationInPage, NAVIGATION_SETTLE, POINTER_SETTLE } from './settle';
import { SCREENSHOT_SETTLE, SCROLL_IDLE_MS, SCROLL_SETTLE } from './settle';
import type { SettleOptions, SettleReport } from './settle';
import { Typist } from './typing';
import type { TypingReport } from './typing';
import { IdleClock } from '../runtime/session-lifetimes';
import { adoptLate, LatePopups, watchClick } from './late-popup';

/** How long to wait for the browser to report a popup the page is known to have opened. */
const POPUP_REPORT_CAP_MS = 5_000;

/** Reading operations (screenshot, page context, text) simply run on the blank page replacing a dialog-looping one. */
const AFTER_DIALOG_LOOP = { retryAfterDialogLoop: true };

export type Point = { x: number; y: number };

export type TypeOptions = { pressEnter?: boolean; deleteExistingText?: boolean; at?: Point };

/**
 * What an action did besides its own effect: how long settling took, whether a popup became the page, downloads, and
 * for a back in a restored tab with no earlier entry of its own, the recorded URL it loaded instead (a plain GET).
 */
export type ActionOutcome = {
  settle: SettleReport;
  popupAdopted: boolean;
  downloads: SavedDownload[];
  loadedFromRecord?: string;
  /** A `type`: whether its text was inserted at once or typed by keys, and why (typing.ts). */
  typing?: TypingReport;
};

export type EnvironmentOptions = ControllerOptions & {
  /** Close the old page when a popup takes over (default true); false keeps it open in the background. */
  singleTab?: boolean;
  /** Upper bound on the `wait` action. */
  maxWaitSeconds?: number;
  /** Milliseconds between keys for a text under 100 characters (longer: at most 10); default DEFAULT_TYPING_DELAY_MS. */
  typingDelayMs?: number;
  /** Insert texts at once where the field accepts it (default: on unless `typingDelayMs` is set; typing.ts). */
  fastTyping?: boolean;
  /** Host patterns whose pages are always typed by keys. */
  keyTypingHosts?: readonly string[];
  /** Builds the URL for a `web_search` given plain words. */
  searchUrl?: (query: string) => string;
  /**
   * The captcha gate listens to the pages' console for the solving messages (a browser that solves captchas, such as
   * Browserbase's). Default false: the gate is always open, and no page can close it.
   */
  captchaSignals?: boolean;
  /** After a solve finished, the gate waits this long before waiting for the page (default CAPTCHA_RESUME_DELAY_MS). */
  captchaResumeMs?: number;
  /**
   * A restored session: the URLs its run showed before its first page, newest last (src/agent/history.ts
   * earlierUrls). A back past the tab's own history loads them, one by one (recorded-back.ts).
   */
  earlierUrls?: readonly string[];
};

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

function addReports(a: SettleReport, b: SettleReport): SettleReport {
  return { ms: a.ms + b.ms, load: b.load, network: b.network, dom: b.dom };
}

export class BrowserEnvironment {
  readonly captcha: CaptchaGate;
  private readonly singleTab: boolean;
  private readonly clock = new IdleClock();
  private readonly latePopups = new LatePopups();
  /** The last action's settling time (ms), until takeSettleMs reads it. */
  private lastSettleMs: number | null = null;
  private readonly typist: Typist;
  /** The last `type`'s report, until takeTyping reads it. */
  private lastTyping: TypingReport | null = null;
  /** The run's journal of requests that change something, when the session keeps one (session-setup.ts). */
  journal?: RequestJournal;
  private readonly recordedBack: RecordedBack | undefined;
  /** Checks what leaves the context once a secret was typed into it (egress-guard.ts). */
  readonly egress: EgressGuard;

  constructor(
    readonly controller: BrowserController,
    private readonly options: EnvironmentOptions,
    /** The session's URL policy (default: the default policy, without interception). */
    readonly guard: PolicyGuard = new PolicyGuard(),
  ) {
    this.singleTab = options.singleTab ?? true;
    this.typist = new Typist(options);
    this.egress = new EgressGuard(controller.context);
    const earlier = options.earlierUrls ?? [];
    this.recordedBack = earlier.length > 0 ? new RecordedBack(earlier, controller.page) : undefined;
    this.captcha = new CaptchaGate({
      listen: options.captchaSignals ?? false,
      ...(options.captchaResumeMs === undefined ? {} : { resumeDelayMs: options.captchaResumeMs }),
      readyCapMs: controller.readyCapMs,
    });
    controller.onPage((page) => this.captcha.attach(page));
    controller.onPage((page) => guard.watch(page));
    controller.filterDownloads((url) => guard.allowsDownload(url));
  }

  /** The environment of a context; `guard` must already be attached to it (PolicyGuard.attach). */
  static async create(
    context: BrowserContext,
    options: EnvironmentOptions,
    guard?: PolicyGuard,
  ): Promise<BrowserEnvironment> {
    return new BrowserEnvironment(await BrowserController.create(context, options), options, guard);
  }

  /** The page the agent currently sees. */
  get page(): Page {
    return this.controller.page;
  }

  /** Milliseconds since the last operation ended; 0 while one is running. */
  idleFor(): number {
    return this.clock.idleFor();
  }

  private track<T>(work: () => Promise<T>): Promise<T> {
    return this.clock.track(work);
  }

  /**
   * Runs one action: the operation (with recovery), settling, popup take-over, download notice. A top-level page the
   * URL policy refused meanwhile (a link, form, redirect hop, popup or download) fails the action with
   * PolicyBlockedError once the page has settled where it stayed; a page closed for a dialog loop fails it with
   * DialogLoopError, a download stopped at a cap with DownloadLimitError.
   *
   * A dialog loop that closed the page after the last action ended is reported by this one, which then is not carried
   * out (it was meant for the page that is gone) — unless it is a navigation (`leavesPage`), which just goes ahead.
   * So is a popup the last click opened since its step (LatePopupError; it becomes the page).
   */
  private act(
    operation: (page: Page) => Promise<void>,
    settleOptions: Partial<SettleOptions> = {},
    leavesPage = false,
  ): Promise<ActionOutcome> {
    return this.track(async () => {
      await this.refuseAfterLatePopup();
      this.guard.takeBlocks(); // refusals before this action are not its doing
      const earlierLoop = this.controller.takeDialogLoop();
      if (earlierLoop && !leavesPage) throw earlierLoop;
      const capture = this.controller.capturePopups();
      let settle: SettleReport;
      let popup: Page | undefined;
      try {
        await this.controller.run(operation);
        settle = await this.controller.settle(settleOptions);
        // A popup whose first page the policy refused is not waited for: it will not become a page to take over.
        const requested =
          capture.take() === undefined && (await this.controller.popupRequested()) && !this.guard.popupRefused;
        popup = requested ? await capture.next(POPUP_REPORT_CAP_MS) : capture.take();
      } finally {
        capture.stop();
      }
      if (popup && this.guard.refusedPopup(popup)) {
        await popup.close().catch(() => undefined);
        popup = undefined;
      }
      if (popup) {
        await this.controller.adopt(popup, !this.singleTab);
        settle = addReports(settle, await this.controller.settle());
      }
      const { saved: downloads, stopped } = await this.controller.takeDownloads();
      if (downloads.length > 0) {
        await this.controller.run((page) => page.goto(downloadNoticeUrl(downloads)).then(() => undefined));
      }
      const loop = this.controller.takeDialogLoop();
      if (loop) throw loop;
      const refused = this.guard.takeBlocks().find((b) => b.kind === 'page');
      if (refused) throw new PolicyBlockedError(refused.url, refused.reason);
      const leak = this.egress.takeRefusals()[0];
      if (leak) throw new PolicyBlockedError(leak.host, refusalLine(leak));
      if (stopped.length > 0) throw new DownloadLimitError(stopped.map((e) => e.message).join('; '));
      this.lastSettleMs = settle.ms;
      return { settle, popupAdopted: popup !== undefined, downloads };
    });
  }

  /** How long the last action's settling took (ms), once; null when no action settled since the last call. */
  takeSettleMs(): number | null {
    const ms = this.lastSettleMs;
    this.lastSettleMs = null;
    return ms;
  }

  /** A click; a popup it opens after its step has ended is taken over at the next observation (late-popup.ts). */
  private async click(
    x: number,
    y: number,
    button: 'left' | 'right' | 'middle',
    clickCount: number,
  ): Promise<ActionOutcome> {
    const startedAt = Date.now();
    const late = watchClick(this.page, this.controller.capturePopups());
    let outcome: ActionOutcome;
    try {
      outcome = await this.act(async (page) => {
        await page.evaluate(stripNewWindowTargets);
        await page.mouse.click(x, y, { button, clickCount });
      }, POINTER_SETTLE);
    } catch (err) {
      late.stop();
      throw err;
    }
    if (outcome.popupAdopted) late.stop();
    else this.latePopups.watch(late, startedAt);
    return outcome;
  }

  /**
   * Before an observation: takes over a popup the last click opened after its step ended (`wait`: waiting for what is
   * left of the click's 1 s window when none has come yet), as the original's click would have. True when one did.
   */
  adoptLatePopup(wait = true): Promise<boolean> {
    return this.track(async () => {
      const popup = wait ? await this.latePopups.take() : this.latePopups.takeArrived();
      return adoptLate(popup, this.controller, this.guard, !this.singleTab);
    });
  }

  /** An action's start: a popup the last click opened since (after the model's screenshot) becomes the page instead. */
  private async refuseAfterLatePopup(): Promise<void> {
    const popup = this.latePopups.takeArrived();
    this.latePopups.drop(); // a popup an earlier click opens from now on is this action's capture's
    if (await adoptLate(popup, this.controller, this.guard, !this.singleTab)) throw new LatePopupError();
  }

  leftClick(x: number, y: number): Promise<ActionOutcome> {
    return this.click(x, y, 'left', 1);
  }

  doubleClick(x: number, y: number): Promise<ActionOutcome> {
    return this.act(async (page) => {
      await page.evaluate(stripNewWindowTargets);
      await page.mouse.dblclick(x, y);
    }, POINTER_SETTLE);
  }

  tripleClick(x: number, y: number): Promise<ActionOutcome> {
    return this.click(x, y, 'left', 3);
  }

  rightClick(x: number, y: number): Promise<ActionOutcome> {
    return this.click(x, y, 'right', 1);
  }

  middleClick(x: number, y: number): Promise<ActionOutcome> {
    return this.click(x, y, 'middle', 1);
  }

  mouseMove(x: number, y: number): Promise<ActionOutcome> {
    return this.act((page) => page.mouse.move(x, y, { steps: 5 }), POINTER_SETTLE);
  }

  /** Drags from wherever the pointer is now to (x, y): move to the start first with `mouseMove`. */
  leftClickDrag(x: number, y: number): Promise<ActionOutcome> {
    return this.act(async (page) => {
      await page.mouse.down();
      try {
        await page.mouse.move(x, y, { steps: 10 });
      } finally {
        await page.mouse.up();
      }
    }, POINTER_SETTLE);
  }

  /** Types into the focused element (or first clicks `at`), optionally clearing it first and pressing Enter after. */
  async type(text: string, options: TypeOptions = {}): Promise<ActionOutcome> {
    this.lastTyping = null; // set once the text is in, even when the action then fails (a page the policy refused)
    const outcome = await this.act(async (page) => {
      this.lastTyping = await this.typist.typeAction(page, text, options);
    }, INPUT_SETTLE);
    return this.lastTyping ? { ...outcome, typing: this.lastTyping } : outcome;
  }

  /** How the last `type` typed its text, once; null when no `type` ran since the last call. */
  takeTyping(): TypingReport | null {
    const typing = this.lastTyping;
    this.lastTyping = null;
    return typing;
  }

  /** A key chord: Ctrl+F opens the find overlay, refresh/back/forward chords drive the browser, the rest the page. */
  keys(chord: readonly string[]): Promise<ActionOutcome> {
    const normalized = normalizeChord(chord);
    if (normalized.length === 0) return Promise.reject(new UnknownKeyError('(empty chord)'));
    switch (routeChord(normalized)) {
      case 'find':
        return this.act(async (page) => {
          await page.evaluate(installFindOverlay, FIND_HOST_ID);
        });
      case 'refresh':
        return this.refresh();
      case 'back':
        return this.historyBack();
      case 'forward':
        return this.historyForward();
      case 'page':
        return this.act((page) => pressChord(page, normalized), INPUT_SETTLE);
    }
  }

  /** Scrolls by pixels with the mouse wheel (over `at` if given, else wherever the pointer is). */
  scroll(dx: number, dy: number, at?: Point): Promise<ActionOutcome> {
    return this.act(async (page) => {
      if (at) await page.mouse.move(at.x, at.y);
      const idle = page.evaluate(waitScrollIdle, [SCROLL_IDLE_MS, 2_000] as [number, number]);
      await page.mouse.wheel(dx, dy);
      await idle;
      // The scroll has been idle for SCROLL_IDLE_MS already: count quiet from the last request and DOM change seen (a
      // lazy loader's fetch or inserted rows are still waited for) instead of starting a fresh window.
    }, SCROLL_SETTLE);
  }

  hscroll(dx: number, at?: Point): Promise<ActionOutcome> {
    return this.scroll(dx, 0, at);
  }

  private navigate(go: (page: Page) => Promise<unknown>, what: string): Promise<ActionOutcome> {
    return this.act(
      async (page) => {
        try {
          await go(page);
        } catch (error) {
          if (this.guard.pageBlocked) return; // the policy cancelled it: act() reports that
          if (isDownloadStart(error) && (await this.controller.waitForDownload(5_000))) return;
          if (isRecoverable(error)) throw error;
          if (error instanceof Error && error.name === 'TimeoutError') {
            await page.evaluate(() => window.stop()).catch(() => undefined);
            return;
          }
          // A page that sends the browser elsewhere while loading: the agent will see where it ended up.
          if (isInterrupted(error)) return;
          // Chromium commits its error page just after the failure; let that finish so it cannot cut the next visit.
          await this.controller.settle();
          throw new NavigationError(`Could not ${what}: ${firstLine(error)}`, { cause: error });
        }
      },
      NAVIGATION_SETTLE,
      true,
    );
  }

  private get navTimeoutMs(): number {
    return this.options.navTimeoutMs ?? 30_000;
  }

  /** Opens an address; one the URL policy refuses is never requested (PolicyBlockedError). */
  async visitUrl(url: string): Promise<ActionOutcome> {
    const target = normalizeUrl(url);
    await this.guard.admit(target);
    return this.navigate(
      (page) => page.goto(target, { waitUntil: 'commit', timeout: this.navTimeoutMs }),
      `open ${target}`,
    );
  }

  /** Searches for plain words, or opens a ready-made search URL. */
  webSearch(queryOrUrl: string): Promise<ActionOutcome> {
    const isUrl = /^https?:\/\//i.test(queryOrUrl.trim());
    return this.visitUrl(isUrl ? queryOrUrl : (this.options.searchUrl ?? bingSearchUrl)(queryOrUrl));
  }

  /**
   * The browser's back. In a restored tab with no earlier entry of its own, the run's previous URL instead, opened
   * as visitUrl opens an address (a GET under the URL policy; what was posted or typed there is not sent again).
   */
  historyBack(): Promise<ActionOutcome> {
    return this.track(async () => {
      const recorded = await this.recordedBack?.take(this.page);
      if (recorded === undefined) {
        return this.navigate((page) => page.goBack({ waitUntil: 'commit', timeout: this.navTimeoutMs }), 'go back');
      }
      const outcome = await this.visitUrl(recorded);
      await this.recordedBack?.markLoaded(this.page);
      return { ...outcome, loadedFromRecord: recorded };
    });
  }

  historyForward(): Promise<ActionOutcome> {
    return this.navigate((page) => page.goForward({ waitUntil: 'commit', timeout: this.navTimeoutMs }), 'go forward');
  }

  refresh(): Promise<ActionOutcome> {
    return this.navigate((page) => page.reload({ waitUntil: 'commit', timeout: this.navTimeoutMs }), 'reload');
  }

  /** Waits as the model asked (capped), then lets the page settle. */
  wait(seconds: number): Promise<ActionOutcome> {
    const capped = Math.min(Math.max(0, seconds), this.options.maxWaitSeconds ?? 30);
    return this.act(() => delay(capped * 1000));
  }

  /** A PNG of the viewport, taken once the page has had a short chance to settle. */
  async screenshot(options: { settle?: boolean } = {}): Promise<Buffer> {
    return (await this.timedScreenshot(options)).png;
  }

  /**
   * A screenshot and when its capture began (epoch ms, after the settle): a DOM change at or after `startedAt` may be
   * missing from it, which is what tells whether it may stand for the page a moment later (see lastChangeAt).
   */
  timedScreenshot(options: { settle?: boolean } = {}): Promise<{ png: Buffer; startedAt: number }> {
    return this.track(() =>
      this.controller.run(async (page) => {
        if (options.settle ?? true) await this.controller.settle(SCREENSHOT_SETTLE);
        const startedAt = Date.now();
        return { png: await capturePng(page), startedAt };
      }, AFTER_DIALOG_LOOP),
    );
  }

  /**
   * When the page's document last changed (epoch ms, this process's clock), or null when unknown. A screenshot taken
   * before that moment may no longer show the page; a new document counts as a change from its start.
   */
  lastChangeAt(): Promise<number | null> {
    return this.track(() => this.controller.run((page) => page.evaluate(lastMutationInPage), AFTER_DIALOG_LOOP));
  }

  /**
   * Evaluates a JavaScript expression in the active page's main frame (through CDP, so the page's CSP does not stop
   * it) and returns its JSON value; for final-page probes (src/agent/final-page.ts), which wrap and time-box it.
   */
  evaluate(expression: string): Promise<unknown> {
    return this.track(() => this.controller.run((page) => page.evaluate(expression), AFTER_DIALOG_LOOP));
  }

  /** "Current URL: …" and where the viewport sits on the page. */
  pageContext(): Promise<string> {
    return this.track(() =>
      this.controller.run(
        async (page) => describeViewport(page.url(), await page.evaluate(readViewport)),
        AFTER_DIALOG_LOOP,
      ),
    );
  }

  /** The page as markdown (PDFs as their text), for read_page_answer_question. */
  pageMarkdown(): Promise<string> {
    return this.track(() =>
      this.controller.run((page) => {
        this.guard.assertReadable(page.url());
        return pageMarkdown(page);
      }, AFTER_DIALOG_LOOP),
    );
  }

  url(): string {
    return this.controller.page.url();
  }

  title(): Promise<string> {
    return this.controller.run((page) => page.title(), AFTER_DIALOG_LOOP);
  }

  /** Waits for the captcha gate; true when open, false on timeout (apply `decideCaptchaTimeout`). */
  waitForCaptcha(timeoutMs: number): Promise<boolean> {
    return this.captcha.wait(timeoutMs);
  }

  /** Cookies and localStorage of this session, to release the browser now and restore the session later. */
  saveStorageState(path?: string): Promise<StorageState> {
    return this.controller.context.storageState(path === undefined ? {} : { path });
  }

  async close(): Promise<void> {
    this.latePopups.drop();
    await this.controller.close();
    await this.guard.close();
  }
}
