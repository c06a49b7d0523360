// "The page", saved and put back: the URL, cookies, localStorage and IndexedDB of every origin (Playwright's storage
// state), sessionStorage of the origins the tab shows, form controls in every frame, scroll positions and focus.
// Pure browser work, no run store: the caller decides where a PageState goes. Password fields and fields holding a
// known secret value are saved empty and named in `blanked`; the values never leave this process unblanked.
import type { BrowserContext, Frame, Page } from 'playwright';
import type { StorageState } from './environment';
import { readFrameState, readOriginStorage, sessionStorageSeedScript, writeFrameState } from './page-state-scripts';
import type { FieldState, ScrollState } from './page-state-scripts';

export type { FieldState, ScrollState } from './page-state-scripts';

/** Marks a PageState (a file that lacks it is Playwright's bare storage state, as saved before it existed). */
export const PAGE_STATE_FORMAT = 'cua-page-state/1';

/** One frame's saved controls and scroll, found again by its index path from the main frame and its URL. */
export type FrameState = { path: number[]; url: string; fields: FieldState[]; scroll: ScrollState[] };

/** The document part of a page's state: everything but cookies and origin storage (small; saved every step). */
export type DocumentState = {
  format: typeof PAGE_STATE_FORMAT;
  capturedAt: string;
  url: string;
  /** origin → key → value, of every frame's origin it could read. */
  sessionStorage: Record<string, Record<string, string>>;
  frames: FrameState[];
  focus: { frame: number[]; selector: string } | null;
  /** Saved empty: password fields and fields holding a secret (selectors, `frame <path>: ` before a subframe's). */
  blanked: string[];
};

/** The whole page: the document part and the context's cookies, localStorage and IndexedDB. */
export type PageState = DocumentState & { storage: StorageState };

export type CaptureOptions = {
  /** Values that must never be saved (src/agent/secrets.ts knownSecretValues): a field holding one is saved empty. */
  secretValues?: readonly string[];
};

/** What a restore put back, what it could not, and which fields it found saved empty. */
export type RestoreReport = { restored: string[]; notRestored: string[]; blanked: string[] };

/** What no restore can bring back, named in every report. */
export const NEVER_RESTORED = ['in-memory script state', 'an open dialog', 'the back stack'] as const;

/** Captures the whole page: the context's storage (IndexedDB included) and the page's document state. */
export async function capturePageState(
  context: BrowserContext,
  page: Page,
  opts: CaptureOptions = {},
): Promise<PageState> {
  const [storage, doc] = await Promise.all([
    context.storageState({ indexedDB: true }),
    captureDocumentState(page, opts),
  ]);
  return { ...doc, storage };
}

/** The document part of the page's state, frame by frame (a frame that cannot be read is left out). */
export async function captureDocumentState(page: Page, opts: CaptureOptions = {}): Promise<DocumentState> {
  const secrets = (opts.secretValues ?? []).filter((s) => s.length > 0);
  const read = await Promise.all(
    framesWithPaths(page).map(async ({ frame, path }) => {
      const state = await frame.evaluate(readFrameState).catch(() => undefined);
      return state ? { frame, path, state } : undefined;
    }),
  );
  const doc: DocumentState = {
    format: PAGE_STATE_FORMAT,
    capturedAt: new Date().toISOString(),
    url: page.url(),
    sessionStorage: {},
    frames: [],
    focus: null,
    blanked: [],
  };
  let focusRank = -1;
  for (const entry of read) {
    if (!entry) continue;
    const { frame, path, state } = entry;
    const where = path.length === 0 ? '' : `frame ${path.join('.')}: `;
    const fields = state.fields.map((f) => blankSecrets(f, secrets, (s) => doc.blanked.push(where + s)));
    if (fields.length > 0 || state.scroll.length > 0)
      doc.frames.push({ path, url: frame.url(), fields, scroll: state.scroll });
    if (state.origin && state.sessionStorage) {
      doc.sessionStorage[state.origin] = withoutSecrets(state.sessionStorage, secrets, (k) =>
        doc.blanked.push(`sessionStorage ${state.origin} ${k}`),
      );
    }
    // The focus is in the deepest document that has it (a page without window focus: the main document's element).
    const rank = !state.focus ? -1 : state.focus.hasFocus ? 1 + path.length : path.length === 0 ? 0 : -1;
    if (state.focus && rank > focusRank) {
      focusRank = rank;
      doc.focus = { frame: path, selector: state.focus.selector };
    }
  }
  return doc;
}

/**
 * The context's cookies, and localStorage and IndexedDB of the origins its pages show now, over `earlier` (what an
 * earlier capture had of the others: a closed origin's storage cannot change). Much cheaper than Playwright's
 * storageState once the context has visited several origins (it opens each again); falls back to it when a page
 * holds records only it can encode, or cannot be read.
 */
export async function captureOpenStorage(context: BrowserContext, earlier?: StorageState): Promise<StorageState> {
  const [cookies, reads] = await Promise.all([
    context.cookies(),
    Promise.all(
      context.pages().map((p) =>
        p
          .mainFrame()
          .evaluate(readOriginStorage)
          .catch(() => null),
      ),
    ),
  ]);
  if (reads.some((r) => r === null)) return context.storageState({ indexedDB: true });
  const origins = new Map((earlier?.origins ?? []).map((o) => [o.origin, o]));
  for (const read of reads) {
    if (!read?.origin) continue;
    if (read.localStorage.length === 0 && read.indexedDB.length === 0) origins.delete(read.origin);
    else origins.set(read.origin, { ...read, origin: read.origin } as StorageState['origins'][number]);
  }
  return { cookies, origins: [...origins.values()] };
}

/**
 * Restores a page into `context` (best a new one): storage first (cookies, localStorage, IndexedDB), sessionStorage
 * through an init script so a single-page app finds it at load, then the URL, then the document state.
 */
export async function restorePageState(
  context: BrowserContext,
  page: Page,
  state: PageState,
  opts: { navigate?: (url: string) => Promise<unknown> } = {},
): Promise<RestoreReport> {
  await context.setStorageState(state.storage);
  const seeded = await seedSessionStorageOnLoad(context, state);
  try {
    await (opts.navigate ? opts.navigate(state.url) : page.goto(state.url, { waitUntil: 'load' }));
  } finally {
    await seeded?.dispose();
  }
  const report = await restoreDocumentState(page, state);
  return { ...report, restored: [...storageRestored(state.storage, state), ...report.restored] };
}

/**
 * Adds one init script per saved origin that gives the frames of that origin (and only those) its sessionStorage as
 * their first documents load; dispose them once the restored page has loaded (later loads must not put back what the
 * page removed meanwhile).
 */
export async function seedSessionStorageOnLoad(
  context: { addInitScript(script: string): Promise<{ dispose(): Promise<void> }> },
  state: Pick<DocumentState, 'sessionStorage'>,
): Promise<{ dispose(): Promise<void> } | undefined> {
  const origins = Object.entries(state.sessionStorage).filter(([, items]) => Object.keys(items).length > 0);
  if (origins.length === 0) return undefined;
  const scripts = await Promise.all(
    origins.map(([origin, items]) => context.addInitScript(sessionStorageSeedScript(origin, items))),
  );
  return { dispose: async () => void (await Promise.all(scripts.map((s) => s.dispose()))) };
}

/** What the storage part of a restore brought back, as report lines (sessionStorage included when saved). */
export function storageRestored(
  storage: StorageState | undefined,
  state: Pick<DocumentState, 'sessionStorage'>,
): string[] {
  const lines: string[] = [];
  if (storage && storage.cookies.length > 0) lines.push('cookies');
  if (storage?.origins.some((o) => o.localStorage.length > 0)) lines.push('localStorage');
  if (storage?.origins.some((o) => ((o as { indexedDB?: unknown[] }).indexedDB?.length ?? 0) > 0))
    lines.push('IndexedDB');
  if (Object.values(state.sessionStorage).some((items) => Object.keys(items).length > 0)) lines.push('sessionStorage');
  return lines;
}

/** Puts form values, scroll and focus back into a page that shows the saved URL's document (already loaded). */
export async function restoreDocumentState(page: Page, state: DocumentState): Promise<RestoreReport> {
  const notRestored: string[] = [...NEVER_RESTORED];
  // Another document (a redirect to a sign-in page, an error page): its fields are not the saved ones.
  if (page.url() !== state.url) {
    notRestored.push(`form fields, scroll and focus (the page opened as ${page.url()}, not ${state.url})`);
    return { restored: [], notRestored, blanked: [...state.blanked] };
  }
  const frames = framesWithPaths(page);
  let fields = 0;
  let scrolled = false;
  let focused = false;
  const targets = new Map<
    Frame,
    { fields: FieldState[]; scroll: ScrollState[]; focus: string | null; where: string }
  >();
  const targetOf = (path: number[], url: string | null) => {
    const frame = findFrame(frames, path, url);
    if (!frame) return undefined;
    const where = path.length === 0 ? '' : `frame ${path.join('.')}: `;
    if (!targets.has(frame)) targets.set(frame, { fields: [], scroll: [], focus: null, where });
    return targets.get(frame);
  };
  for (const saved of state.frames) {
    const target = targetOf(saved.path, saved.url);
    if (!target) {
      notRestored.push(`frame ${saved.path.join('.')} (${saved.url}) is not on the page`);
      continue;
    }
    target.fields.push(...saved.fields.filter((f) => !(f.kind === 'value' && f.password)));
    target.scroll.push(...saved.scroll);
  }
  if (state.focus) {
    const target = targetOf(state.focus.frame, null);
    if (target) target.focus = state.focus.selector;
    else notRestored.push('focus');
  }
  // Values and focus first, in every frame, then the scroll positions (a focus may scroll a frame into view).
  const writes = [...targets].flatMap(([frame, { where, fields: f, scroll, focus }]) => [
    { frame, where, write: { fields: f, scroll: [], focus } },
    { frame, where, write: { fields: [], scroll, focus: null } },
  ]);
  for (const { frame, where, write } of writes) {
    const done = await frame.evaluate(writeFrameState, write).catch(() => undefined);
    if (!done) {
      notRestored.push(`${where || 'the page'}: could not be written`);
      continue;
    }
    fields += done.fields;
    scrolled = scrolled || done.scrolled;
    focused = focused || done.focused;
    notRestored.push(...done.missing.map((s) => `${where}${s} (no longer on the page)`));
  }
  const restored = [
    ...(fields > 0 ? [`${fields} form field${fields === 1 ? '' : 's'}`] : []),
    ...(scrolled ? ['scroll'] : []),
    ...(focused ? ['focus'] : []),
  ];
  return { restored, notRestored, blanked: [...state.blanked] };
}

/** Every frame of the page with its index path from the main frame ([] for the main frame). */
function framesWithPaths(page: Page): Array<{ frame: Frame; path: number[] }> {
  const out: Array<{ frame: Frame; path: number[] }> = [];
  const walk = (frame: Frame, path: number[]): void => {
    if (frame.isDetached()) return;
    out.push({ frame, path });
    frame.childFrames().forEach((child, i) => walk(child, [...path, i]));
  };
  walk(page.mainFrame(), []);
  return out;
}

/** The frame at `path` (when its URL still matches, if given), else the first frame showing `url`. */
function findFrame(
  frames: Array<{ frame: Frame; path: number[] }>,
  path: number[],
  url: string | null,
): Frame | undefined {
  const key = path.join('.');
  const atPath = frames.find((f) => f.path.join('.') === key)?.frame;
  if (atPath && (url === null || atPath.url() === url)) return atPath;
  return url === null ? undefined : frames.find((f) => f.frame.url() === url)?.frame;
}

/** A field holding a secret (anywhere in its text) comes back empty; `onBlank` hears its selector. */
function blankSecrets(field: FieldState, secrets: readonly string[], onBlank: (selector: string) => void): FieldState {
  if (field.kind === 'value') {
    if (field.password) onBlank(field.selector);
    else if (secrets.some((s) => field.value.includes(s))) {
      onBlank(field.selector);
      return { ...field, value: '' };
    }
  }
  if (field.kind === 'html' && secrets.some((s) => field.html.includes(s) || field.text.includes(s))) {
    onBlank(field.selector);
    return { ...field, html: '', text: '' };
  }
  return field;
}

/** sessionStorage items without those holding a secret value. */
function withoutSecrets(
  items: Record<string, string>,
  secrets: readonly string[],
  onDrop: (key: string) => void,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(items)) {
    if (secrets.some((s) => value.includes(s))) onDrop(key);
    else kept[key] = value;
  }
  return kept;
}
