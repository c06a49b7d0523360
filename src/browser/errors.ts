// Typed failures of the browser layer; `name` always equals the class name so callers can match on it.

export class BrowserError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A key name in a chord that neither our table nor Playwright knows. */
export class UnknownKeyError extends BrowserError {
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Unknown key "${key}". Use key names such as Control, Shift, Alt, Enter, Escape, Tab, ArrowLeft or F5; ` +
        'to enter text, use the `type` action instead.',
      options,
    );
  }
}

/** The page died and neither reloading nor re-visiting its URL brought it back. */
export class PageRecoveryError extends BrowserError {}

/** A navigation (visit, search, back, forward, refresh) failed for a reason other than a dead page. */
export class NavigationError extends BrowserError {}

/**
 * The URL policy refused a document: the address asked for, a link, form, redirect hop or popup an action led to.
 * The message, `blocked by policy: <url>: <reason>`, is what the model is told.
 */
export class PolicyBlockedError extends NavigationError {
  constructor(
    readonly url: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`blocked by policy: ${url}: ${reason}`, options);
  }
}

/**
 * A page opened dialog boxes (alert, confirm, prompt) in a loop and was closed; the session goes on with a blank
 * page. The message, `the page <url> opened 11 dialog boxes in 3 s; it was closed`, is what the model is told.
 */
export class DialogLoopError extends BrowserError {}

/** A download went past the size or time cap and was cancelled: `download of <name> stopped: larger than 100 MiB`. */
export class DownloadLimitError extends BrowserError {}

/**
 * A popup the last click opened after the screenshot the model decided on became the page when the next action
 * started; that action was not carried out (it was meant for the old page). The message is what the model is told.
 */
export class LatePopupError extends BrowserError {
  constructor() {
    super(
      'A new tab opened after the last screenshot (a popup from the earlier click) and is now the active page; ' +
        'nothing was done: look at the new screenshot and decide again.',
    );
  }
}

/** The browser process is gone or the remote browser disconnected. */
export class BrowserClosedError extends BrowserError {}

/** The pool already holds its maximum number of sessions. */
export class PoolFullError extends BrowserError {}

/** No open session has this id (never opened, closed, or closed for being idle). */
export class UnknownSessionError extends BrowserError {}

/** The captcha gate stayed closed past its timeout. */
export class CaptchaTimeoutError extends BrowserError {}

/** Text could not be read from a page or its PDF. */
export class PageTextError extends BrowserError {}

/** A browser provider (Browserbase) gave no working session within its attempts. */
export class BrowserProviderError extends BrowserError {}

/** A takeover could not be granted: a lease id that cannot be one, or the takeover endpoint could not listen. */
export class TakeoverError extends BrowserError {}
