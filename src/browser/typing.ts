// Typing a text into the focused field: inserted at once (one `beforeinput`/`input` pair, no key events, a few
// milliseconds) when the field accepts that, else key by key at the configured pace. Fields that need keys are found
// before (the field itself listens to keydown/keypress/keyup, it is no plain input or textarea, it is in a frame)
// and after (the inserted text did not take: the field is put back as it was, then typed by keys). A host whose
// field refused an insert is typed by keys for the rest of the session.
import type { CDPSession, Page } from 'playwright';
import { matchesHost, parseHostPattern } from '../common/host-patterns';
import type { HostPattern } from '../common/host-patterns';
import { withCdp } from './cdp';
import { stripNewWindowTargets } from './pageScripts';

/**
 * Per-key delay for short texts typed by keys. Keys are pressed one by one whatever the delay, so a page reacting to
 * each key (a debounced suggestion box) sees them all; 20 ms is 50 keys a second, a fast typist's pace.
 */
export const DEFAULT_TYPING_DELAY_MS = 20;

/** Texts under 100 characters are typed at `shortMs` per key, longer ones at most 10 ms per key. */
export function adaptiveTypingDelay(text: string, shortMs = DEFAULT_TYPING_DELAY_MS): number {
  return text.length < 100 ? shortMs : Math.min(shortMs, 10);
}

/** Why a text was typed the way it was. */
export type TypingReason =
  /** insert: the field took the inserted text (as it was, or reformatted by a mask). */
  | 'accepted'
  /** insert: the field could not be read back after the insert; it is not typed again (never twice). */
  | 'unchecked'
  /** keys: fast typing is off (`fastTyping` false, or a `typingDelayMs` set without `fastTyping`). */
  | 'fast-typing-off'
  /** keys: the page's host is in `keyTypingHosts`. */
  | 'host-listed'
  /** keys: a field of this host refused an insert earlier in the session. */
  | 'host-needed-keys'
  /** keys: the text holds a line break or tab, which are key presses (Enter may submit a form). */
  | 'control-characters'
  /** keys: the focused field itself listens to keydown, keypress or keyup (a mask, an autocomplete). */
  | 'key-listeners'
  /** keys: the focus is on no enabled text input or textarea of the page (a contenteditable, a frame, the page). */
  | 'not-a-text-field'
  /** keys: the field could not be inspected (not Chromium, a closed page, a failed call). */
  | 'not-inspected'
  /** keys: the inserted text did not take; the field was put back as it was first. */
  | 'not-taken';

/** How a text was typed: inserted at once or key by key, and why. */
export type TypingReport = { typed: 'insert' | 'keys'; reason: TypingReason };

/** A session's typing options (the environment's, EnvironmentOptions). */
export type TypingOptions = {
  /** Insert texts at once where fields accept it (default: on unless `typingDelayMs` is set). */
  fastTyping?: boolean;
  /** Pages on these hosts (host patterns, host-patterns.ts) are always typed by keys. */
  keyTypingHosts?: readonly string[];
  /** Per-key delay of the keys path for short texts (adaptiveTypingDelay). */
  typingDelayMs?: number;
};

/** A `type` action's options besides its text. */
export type TypeActionOptions = { at?: { x: number; y: number }; deleteExistingText?: boolean; pressEnter?: boolean };

/** The focused element of the page (through open shadow roots) when it is an enabled, writable text field. */
const FOCUSED_TEXT_FIELD = `(() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el.disabled || el.readOnly) return null;
  const types = ['text', 'search', 'email', 'url', 'tel', 'password', 'number'];
  return el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' && types.includes(el.type)) ? el : null;
})()`;

/** The field's value and selection (types without a selection, such as email: the caret counts as at the end). */
const READ_FIELD = `function () {
  const n = this.value.length;
  const at = (v) => (typeof v === 'number' ? v : n);
  return { value: this.value, start: at(this.selectionStart), end: at(this.selectionEnd) };
}`;

/**
 * After the insert (and one turn of the page's event loop, for handlers that reset a value a moment later): 'taken'
 * when the field holds the text inserted at the old selection, or the same letters and digits in order (a mask that
 * reformats). Otherwise the field is put back (its old value through the native setter, an input event so the page's
 * state follows, the focus if the page moved it, as split code fields do, the old selection): 'restored', or
 * 'unrestored' when the value would not go back.
 */
const CHECK_AND_RESTORE = `async function (before, text) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  const value = this.value;
  const expected = before.value.slice(0, before.start) + text + before.value.slice(before.end);
  const bare = (s) => s.replace(/[^\\p{L}\\p{N}]/gu, '');
  if (value === expected || (value !== before.value && bare(value) === bare(expected))) return 'taken';
  if (value !== before.value) {
    const proto = this.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(this, before.value);
    this.dispatchEvent(new Event('input', { bubbles: true }));
  }
  if (this.getRootNode().activeElement !== this) this.focus({ preventScroll: true });
  try {
    this.setSelectionRange(before.start, before.end);
  } catch {}
  return this.value === before.value ? 'restored' : 'unrestored';
}`;

const KEY_EVENTS = new Set(['keydown', 'keypress', 'keyup']);
const OBJECT_GROUP = 'cua-typing';

type FieldState = { value: string; start: number; end: number };
type Inspected = { field: 'none' } | { field: 'keys' } | { field: 'insert'; objectId: string; before: FieldState };
type Check = 'taken' | 'restored' | 'unrestored';

/** The focused text field, whether it listens to keys, and what it holds: two CDP round trips. */
async function inspectFocus(session: CDPSession): Promise<Inspected> {
  const { result } = await session.send('Runtime.evaluate', {
    expression: FOCUSED_TEXT_FIELD,
    objectGroup: OBJECT_GROUP,
    silent: true,
  });
  const objectId = result.objectId;
  if (result.subtype !== 'node' || objectId === undefined) return { field: 'none' };
  const [{ listeners }, read] = await Promise.all([
    session.send('DOMDebugger.getEventListeners', { objectId, depth: 0 }),
    session.send('Runtime.callFunctionOn', { objectId, functionDeclaration: READ_FIELD, returnByValue: true }),
  ]);
  if (listeners.some((l) => KEY_EVENTS.has(l.type))) return { field: 'keys' };
  return { field: 'insert', objectId, before: read.result.value as FieldState };
}

async function checkInsert(session: CDPSession, objectId: string, before: FieldState, text: string): Promise<Check> {
  const { result, exceptionDetails } = await session.send('Runtime.callFunctionOn', {
    objectId,
    functionDeclaration: CHECK_AND_RESTORE,
    arguments: [{ value: before }, { value: text }],
    awaitPromise: true,
    returnByValue: true,
  });
  if (exceptionDetails) throw new Error(exceptionDetails.text);
  return result.value as Check;
}

function releaseObjects(page: Page): void {
  void withCdp(page, (s) => s.send('Runtime.releaseObjectGroup', { objectGroup: OBJECT_GROUP }));
}

/** The page's host and port as a host pattern compares them, or undefined for a URL without a host. */
function hostOf(url: string): { host: string; port: number; key: string } | undefined {
  try {
    const u = new URL(url);
    if (u.hostname === '') return undefined;
    const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
    return { host: u.hostname, port, key: `${u.hostname}:${port}` };
  } catch {
    return undefined;
  }
}

/** One session's typing: its options, and the hosts whose fields needed keys so far. */
export class Typist {
  private readonly fast: boolean;
  private readonly keyHosts: HostPattern[];
  private readonly neededKeys = new Set<string>();

  constructor(private readonly options: TypingOptions = {}) {
    this.fast = options.fastTyping ?? options.typingDelayMs === undefined;
    this.keyHosts = (options.keyTypingHosts ?? []).flatMap((p) => parseHostPattern(p) ?? []);
  }

  /** A `type` action: clicks `at` first, clears the field (Ctrl+A, Backspace), types, presses Enter; says how. */
  async typeAction(page: Page, text: string, options: TypeActionOptions): Promise<TypingReport> {
    if (options.at) {
      await page.evaluate(stripNewWindowTargets);
      await page.mouse.click(options.at.x, options.at.y);
    }
    if (options.deleteExistingText) {
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.press('Backspace');
    }
    const report = await this.type(page, text);
    if (options.pressEnter) await page.keyboard.press('Enter');
    return report;
  }

  /** Why `text` goes by keys on a page at `url` whatever its field, or undefined when the field decides. */
  keysBefore(text: string, url: string): TypingReason | undefined {
    if (!this.fast) return 'fast-typing-off';
    if (/[\n\r\t]/.test(text)) return 'control-characters';
    const host = hostOf(url);
    if (host && this.keyHosts.some((p) => matchesHost(p, host.host, host.port))) return 'host-listed';
    if (host && this.neededKeys.has(host.key)) return 'host-needed-keys';
    return undefined;
  }

  /** Types `text` into the page's focused element; says how. */
  async type(page: Page, text: string): Promise<TypingReport> {
    const early = this.keysBefore(text, page.url());
    if (early) return this.byKeys(page, text, early);
    const inspected = await withCdp(page, inspectFocus);
    if (inspected?.field !== 'insert') {
      if (inspected) releaseObjects(page);
      const reason =
        inspected === undefined ? 'not-inspected' : inspected.field === 'keys' ? 'key-listeners' : 'not-a-text-field';
      return this.byKeys(page, text, reason);
    }
    await page.keyboard.insertText(text);
    const check = await withCdp(page, (s) => checkInsert(s, inspected.objectId, inspected.before, text));
    releaseObjects(page);
    if (check === undefined) return { typed: 'insert', reason: 'unchecked' };
    if (check === 'taken') return { typed: 'insert', reason: 'accepted' };
    const host = hostOf(page.url());
    if (host) this.neededKeys.add(host.key);
    if (check === 'unrestored') await this.clearAndRetype(page, inspected.before.value);
    return this.byKeys(page, text, 'not-taken');
  }

  /** A field that would not take its old value back: emptied by keys, then its old value typed back by keys. */
  private async clearAndRetype(page: Page, old: string): Promise<void> {
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Backspace');
    if (old !== '') await page.keyboard.type(old, { delay: adaptiveTypingDelay(old, this.options.typingDelayMs) });
  }

  private async byKeys(page: Page, text: string, reason: TypingReason): Promise<TypingReport> {
    await page.keyboard.type(text, { delay: adaptiveTypingDelay(text, this.options.typingDelayMs) });
    return { typed: 'keys', reason };
  }
}
