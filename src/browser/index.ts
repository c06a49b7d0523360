// Public surface of the browser layer: environment, controller, pool (and its Browserbase provider), URL policy guard,
// key table, typed errors, captcha policy.
export { BrowserEnvironment } from './environment';
export { adaptiveTypingDelay, DEFAULT_TYPING_DELAY_MS } from './typing';
export type { TypingReason, TypingReport } from './typing';
export { bingSearchUrl, normalizeUrl } from './navigation';
export { describeViewport } from './pageContext';
export type { ActionOutcome, EnvironmentOptions, Point, StorageState, TypeOptions } from './environment';
export { BrowserController } from './controller';
export type { ControllerOptions, PopupCapture, Viewport } from './controller';
export { BrowserPool } from './pool';
export type { OpenSessionOptions, PoolOptions, Session } from './pool-options';
export { SAME_TAB_SEARCH_COOKIE } from './session-setup';
export type { BrowserProvider, ProvidedBrowser } from './provider';
export { BrowserbaseProvider } from './browserbase';
export type { BrowserbaseOptions, BrowserbaseTiming } from './browserbase';
export { CHROMIUM_ARGS, chromiumPath, launchBrowser } from './launch';
export type { LaunchOptions } from './launch';
export { KEY_NAME_TABLE, normalizeChord, normalizeKey, routeChord } from './keys';
export type { ChordRoute } from './keys';
export { DEFAULT_SETTLE } from './settle';
export type { SettleOptions, SettleReport } from './settle';
export { htmlToMarkdown, pdfBytesToText, PDF_TEXT_LAYER_MIN_CHARS } from './markdown';
export type { SavedDownload } from './downloads';
export { isRecoverable } from './recovery';
export { blockedPageHtml, PolicyGuard } from './policy-guard';
export type { BlockedLoad, GuardOptions } from './policy-guard';
export {
  CAPTCHA_RESUME_DELAY_MS,
  CAPTCHA_SOLVING_FINISHED,
  CAPTCHA_SOLVING_STARTED,
  CaptchaGate,
  DEFAULT_CAPTCHA_POLICY,
  decideCaptchaTimeout,
} from './captcha';
export type { CaptchaGateOptions, CaptchaPolicy, CaptchaTimeoutDecision } from './captcha';
export {
  BrowserClosedError,
  BrowserError,
  BrowserProviderError,
  CaptchaTimeoutError,
  DialogLoopError,
  DownloadLimitError,
  LatePopupError,
  NavigationError,
  PageRecoveryError,
  PageTextError,
  PolicyBlockedError,
  PoolFullError,
  UnknownKeyError,
  UnknownSessionError,
} from './errors';
