// The `browser` section of the configuration: where the browser comes from (Chromium here, a CDP URL, Browserbase),
// its session limits and timeouts, and the switches of what a session may do.
import { z } from 'zod';
import { DEFAULT_READ_PAGE_MAX_CHARS } from '../agent/page-question';
import { parseHostPattern } from '../common/host-patterns';
import { checkSlotKeys, oneSlotsField } from './config-slots';

/**
 * Browserbase sessions for the browser (`browser.provider: "browserbase"`). The API key is the worker's, like a
 * model's: from this file or BROWSERBASE_API_KEY, sent only to `baseUrl`, never put in a task's history or a log.
 */
const BrowserbaseSchema = z.strictObject({
  apiKey: z.string().min(1).optional(),
  projectId: z.string().min(1).optional(),
  /** The sessions API (default https://api.browserbase.com); http(s). */
  baseUrl: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }).optional(),
});

/** Cross-field rules of the browser section, each with its own path and a one-line message. */
function checkBrowserProvider(
  browser: { provider: string; cdpUrl?: string | undefined; browserbase?: z.infer<typeof BrowserbaseSchema> },
  ctx: z.RefinementCtx,
): void {
  const issue = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (browser.provider !== 'browserbase') {
    if (browser.browserbase) issue(['browserbase'], "is set but browser.provider is not 'browserbase'");
    return;
  }
  if (browser.cdpUrl !== undefined) issue(['cdpUrl'], "cannot be used with browser.provider 'browserbase'");
  if (!browser.browserbase?.apiKey) {
    issue(['browserbase', 'apiKey'], "is required with browser.provider 'browserbase' (or BROWSERBASE_API_KEY)");
  }
  if (!browser.browserbase?.projectId) {
    issue(['browserbase', 'projectId'], "is required with browser.provider 'browserbase' (or BROWSERBASE_PROJECT_ID)");
  }
}

export const BrowserSchema = z
  .strictObject({
    executablePath: z.string().optional(),
    cdpUrl: z.string().optional(),
    /**
     * Where the browser comes from. 'chromium' (default): the worker's own, Debian's Chromium launched here, or the
     * browser at cdpUrl. 'browserbase': a Browserbase session per task session (`browserbase` below).
     */
    provider: z.enum(['chromium', 'browserbase']).default('chromium'),
    browserbase: BrowserbaseSchema.optional(),
    headless: z.boolean().default(true),
    /** Browser sessions open at once on this worker; absent: derived from its cores and memory (runtime/limits.ts). */
    slots: z.number().int().min(1).max(256).optional(),
    /** `slots` by its wire name, kept so existing config files keep working (config-slots.ts). */
    maxSessions: z.number().int().min(1).max(256).optional(),
    idleTimeoutSeconds: z.number().positive().default(600),
    /**
     * A task that asks the user a question keeps its live browser this long (0: none), so a reply within it goes on
     * on the same page, nothing restored. The page is saved at the question all the same, and again when the hold
     * ends, the pool needs the slot, or the worker shuts down; a held browser is not closed as idle. A desktop task
     * keeps its desktop (X session, windows, programs) as long, its home saved the same way.
     */
    holdWhileWaitingSeconds: z.number().min(0).max(86_400).default(600),
    /**
     * A request that changes something (a form post, a POST/PUT/PATCH/DELETE fetch) that was under way when a worker
     * was lost may or may not have reached its server. Off (default): sending the same request again is held back
     * and the user is asked first. On: it is sent again, and the model is told so.
     */
    resendInDoubt: z.boolean().default(false),
    /**
     * Write each journal entry of a request that changes something before the request leaves the browser, by
     * routing every request of the session through the worker (as a URL policy that restricts the web does anyway).
     * Off: entries are written from the browser's network events, which a worker killed within milliseconds of a
     * post can miss.
     */
    journalBeforeSend: z.boolean().default(false),
    singleTab: z.boolean().default(true),
    /** A download larger than this is cancelled and its partial file removed. */
    maxDownloadMiB: z.number().positive().default(100),
    /**
     * Before each operation the page gets this long to reach DOMContentLoaded; a page still loading then is stopped
     * (window.stop) and the operation goes on with what has arrived.
     */
    pageReadyTimeoutSeconds: z.number().positive().max(600).default(60),
    /**
     * The captcha gate listens to pages' console messages announcing a solve (`browserbase-solving-started` and
     * `-finished`). Absent: on for a remote browser (cdpUrl, Browserbase), which may solve captchas; off for one
     * launched here, whose gate is then always open (a page printing the messages cannot hold a task).
     */
    captchaSignals: z.boolean().optional(),
    /**
     * Milliseconds between key presses when a text under 100 characters is typed by keys (longer texts: at most
     * 10 ms). Keys are pressed one by one, so pages reacting per key (debounced suggestions) see every key. Absent:
     * DEFAULT_TYPING_DELAY_MS; raise it for a site that drops keys typed quickly. Setting it turns `fastTyping` off
     * unless `fastTyping` is set too.
     */
    typingDelayMs: z.number().min(0).max(1000).optional(),
    /**
     * Insert a text at once (input events, no key events) when the focused field accepts it, and type by keys only
     * fields that need keys: ones listening to keys themselves (masks, autocompletes), ones that did not take the
     * insert, contenteditables and frames (src/browser/typing.ts). Absent: on, unless `typingDelayMs` is set.
     */
    fastTyping: z.boolean().optional(),
    /** Pages on these hosts (host patterns: example.com, *.example.com, host:port) are always typed by keys. */
    keyTypingHosts: z
      .array(
        z
          .string()
          .refine((h) => parseHostPattern(h) !== undefined, 'a host pattern: example.com, *.example.com or host:port'),
      )
      .optional(),
    /**
     * Run a task's final-page probes (`finalPageProbes`, an evaluation's `page_js` checks): JavaScript the task
     * gives, in its last page, which may be a site the agent signed in to with your secrets. Off by default, so a
     * task starter cannot script such a page; turn it on (or CUA_PAGE_PROBES=1) on workers whose task starters you
     * trust. `cua eval` turns it on for the worker it starts together with its own Temporal server.
     */
    pageProbes: z.boolean().default(false),
    /** read_page_answer_question sends at most this many characters of the page's text to its model sub-call. */
    readPageMaxChars: z.number().int().min(1000).max(1_000_000).default(DEFAULT_READ_PAGE_MAX_CHARS),
    /**
     * A takeover's lease also offers raw CDP (`cdpUrl`, for `chromium.connectOverCDP`): the whole browser of this
     * worker, every task's context, with no URL policy. The operator's only; off by default (docs/security.md).
     * Only for the browser the worker launches itself.
     */
    takeoverCdp: z.boolean().default(false),
  })
  .superRefine(checkBrowserProvider)
  .superRefine(checkSlotKeys)
  .transform((browser) => oneSlotsField(browser, undefined))
  .default({
    slots: undefined,
    provider: 'chromium',
    headless: true,
    idleTimeoutSeconds: 600,
    holdWhileWaitingSeconds: 600,
    resendInDoubt: false,
    journalBeforeSend: false,
    singleTab: true,
    maxDownloadMiB: 100,
    pageReadyTimeoutSeconds: 60,
    pageProbes: false,
    readPageMaxChars: DEFAULT_READ_PAGE_MAX_CHARS,
    takeoverCdp: false,
  });
