// The page-side halves of saving and restoring "the page" (page-state.ts): functions serialised by Playwright into
// each frame, so each is self-contained (its helpers nested inside it), and the text of the init script that seeds
// one origin's sessionStorage. Reading: sessionStorage, the form controls a person changed, scroll positions and
// focus. Writing: the same back, with input and change events fired.

/** One form control as saved: where it is (a CSS selector unique in its document) and what it holds. */
export type FieldState =
  | { selector: string; kind: 'value'; value: string; password?: true }
  | { selector: string; kind: 'checked'; checked: boolean }
  | { selector: string; kind: 'select'; selected: number[] }
  | { selector: string; kind: 'html'; html: string; text: string };

/** A scroll position: the document's (selector null) or an element's. */
export type ScrollState = { selector: string | null; x: number; y: number };

/** What one frame's document holds, as `readFrameState` reads it. */
export type FrameRead = {
  origin: string | null;
  sessionStorage: Record<string, string> | null;
  fields: FieldState[];
  scroll: ScrollState[];
  /** The focused element (not the body, not a frame element), and whether this document has the focus. */
  focus: { selector: string; hasFocus: boolean } | null;
};

/**
 * Reads one frame's document: sessionStorage, every control whose state differs from its default (a password's
 * value is never read: it comes back empty, marked), contenteditable regions, scroll positions, the focused element.
 */
export function readFrameState(): FrameRead {
  const unique = (s: string): boolean => {
    try {
      return document.querySelectorAll(s).length === 1;
    } catch {
      return false;
    }
  };
  const selectorOf = (el: Element): string => {
    if (el.id && unique(`#${CSS.escape(el.id)}`)) return `#${CSS.escape(el.id)}`;
    const tag = el.tagName.toLowerCase();
    const name = el.getAttribute('name');
    if (name) {
      const byName = `${tag}[name="${CSS.escape(name)}"]`;
      if (unique(byName)) return byName;
      const value = el.getAttribute('value');
      const byValue = value === null ? '' : `${byName}[value="${CSS.escape(value)}"]`;
      if (byValue && unique(byValue)) return byValue;
    }
    const steps: string[] = [];
    for (let at: Element | null = el; at && at !== document.documentElement; at = at.parentElement) {
      if (at !== el && at.id && unique(`#${CSS.escape(at.id)}`)) {
        steps.unshift(`#${CSS.escape(at.id)}`);
        break;
      }
      const t = at.tagName.toLowerCase();
      const same = at.parentElement
        ? Array.from(at.parentElement.children).filter((c) => c.tagName === at?.tagName)
        : [];
      steps.unshift(same.length > 1 ? `${t}:nth-of-type(${same.indexOf(at) + 1})` : t);
    }
    return steps.join(' > ');
  };
  const skipped = new Set(['hidden', 'submit', 'button', 'reset', 'image', 'file']);
  const fields: FieldState[] = [];
  for (const el of Array.from(document.querySelectorAll('input, textarea, select, [contenteditable]'))) {
    if (el instanceof HTMLInputElement) {
      if (skipped.has(el.type)) continue;
      if (el.type === 'checkbox' || el.type === 'radio') {
        if (el.checked !== el.defaultChecked)
          fields.push({ selector: selectorOf(el), kind: 'checked', checked: el.checked });
      } else if (el.value !== el.defaultValue) {
        const password = el.type === 'password';
        fields.push({
          selector: selectorOf(el),
          kind: 'value',
          value: password ? '' : el.value,
          ...(password ? { password: true as const } : {}),
        });
      }
    } else if (el instanceof HTMLTextAreaElement) {
      if (el.value !== el.defaultValue) fields.push({ selector: selectorOf(el), kind: 'value', value: el.value });
    } else if (el instanceof HTMLSelectElement) {
      const options = Array.from(el.options);
      if (options.some((o) => o.selected !== o.defaultSelected)) {
        const selected = options.flatMap((o, i) => (o.selected ? [i] : []));
        fields.push({ selector: selectorOf(el), kind: 'select', selected });
      }
    } else if (el instanceof HTMLElement && el.isContentEditable && !el.parentElement?.isContentEditable) {
      if (el.innerHTML.trim() !== '')
        fields.push({ selector: selectorOf(el), kind: 'html', html: el.innerHTML, text: el.textContent ?? '' });
    }
  }
  const root = document.scrollingElement ?? document.documentElement;
  const scroll: ScrollState[] = [];
  if (window.scrollX || window.scrollY) scroll.push({ selector: null, x: window.scrollX, y: window.scrollY });
  for (const el of Array.from(document.body?.querySelectorAll('*') ?? [])) {
    if ((el.scrollTop || el.scrollLeft) && el !== root)
      scroll.push({ selector: selectorOf(el), x: el.scrollLeft, y: el.scrollTop });
  }
  const active = document.activeElement;
  const focusable =
    active &&
    active !== document.body &&
    active !== root &&
    !(active instanceof HTMLIFrameElement) &&
    !(active instanceof HTMLFrameElement);
  let session: Record<string, string> | null = null;
  try {
    session = Object.fromEntries(Object.keys(sessionStorage).map((k) => [k, sessionStorage.getItem(k) ?? '']));
  } catch {
    session = null; // an opaque origin (about:blank, a sandboxed frame) has none
  }
  return {
    origin: location.origin === 'null' ? null : location.origin,
    sessionStorage: session,
    fields,
    scroll,
    focus: focusable ? { selector: selectorOf(active), hasFocus: document.hasFocus() } : null,
  };
}

/** What `writeFrameState` was given for one frame: its fields and scroll positions, and the element to focus. */
export type FrameWrite = { fields: FieldState[]; scroll: ScrollState[]; focus: string | null };

/** Puts a frame's fields back (firing input and change), then its scroll positions and focus; returns what missed. */
export function writeFrameState(state: FrameWrite): {
  missing: string[];
  fields: number;
  scrolled: boolean;
  focused: boolean;
} {
  const missing: string[] = [];
  let fields = 0;
  const fire = (el: Element): void => {
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  };
  const find = (selector: string): Element | null => {
    try {
      return document.querySelector(selector);
    } catch {
      return null;
    }
  };
  // Through the prototype's setter, as a typing person would: frameworks (React) watch that one, not the property.
  const setValue = (el: HTMLInputElement | HTMLTextAreaElement, value: string): void => {
    const proto = el instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
    if (setter) setter.call(el, value);
    else el.value = value;
  };
  for (const field of state.fields) {
    const el = find(field.selector);
    if (!el) {
      missing.push(field.selector);
      continue;
    }
    if (field.kind === 'value' && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement))
      setValue(el, field.value);
    else if (field.kind === 'checked' && el instanceof HTMLInputElement) el.checked = field.checked;
    else if (field.kind === 'select' && el instanceof HTMLSelectElement)
      Array.from(el.options).forEach((o, i) => (o.selected = field.selected.includes(i)));
    else if (field.kind === 'html' && el instanceof HTMLElement) {
      if (el.innerHTML !== field.html) el.innerHTML = field.html;
    } else {
      missing.push(field.selector);
      continue;
    }
    fire(el);
    fields += 1;
  }
  let scrolled = false;
  for (const s of state.scroll) {
    const el = s.selector === null ? null : find(s.selector);
    if (s.selector === null) window.scrollTo(s.x, s.y);
    else if (el) el.scrollTo(s.x, s.y);
    else missing.push(s.selector);
    scrolled = scrolled || s.selector === null || el !== null;
  }
  let focused = false;
  if (state.focus !== null) {
    const el = find(state.focus);
    if (el instanceof HTMLElement || el instanceof SVGElement) {
      el.focus({ preventScroll: true });
      focused = document.activeElement === el;
    } else missing.push(state.focus);
  }
  return { missing, fields, scrolled, focused };
}

/**
 * The init script that puts one origin's saved sessionStorage back in each frame of that origin as its document
 * starts (an item the frame's tab already has is kept). Built as text, not serialised with an argument: the items
 * sit behind the origin check, so a frame of another origin runs the check and returns without ever holding them as
 * a value (no page can read another origin's saved items). Entries, not an object literal: a `__proto__` key stays.
 */
export function sessionStorageSeedScript(origin: string, items: Record<string, string>): string {
  return [
    '(() => {',
    `  if (location.origin !== ${JSON.stringify(origin)}) return;`,
    `  const entries = ${JSON.stringify(Object.entries(items))};`,
    '  try {',
    '    for (const [key, value] of entries) {',
    '      if (sessionStorage.getItem(key) === null) sessionStorage.setItem(key, value);',
    '    }',
    '  } catch {',
    '    // this document may not use sessionStorage (storage blocked)',
    '  }',
    '})();',
  ].join('\n');
}

/** One origin's storage in Playwright's storage-state shape (IndexedDB records with plain JSON keys and values). */
export type OriginRead = {
  /** null for an opaque origin (about:blank, a data: URL): nothing to read. */
  origin: string | null;
  localStorage: Array<{ name: string; value: string }>;
  indexedDB: unknown[];
};

/**
 * Reads the document's origin's localStorage and IndexedDB as Playwright's storage state writes them, or null when a
 * record's key or value is not plain JSON (a Date, a Blob, a typed array): the caller then asks Playwright, which
 * encodes those. Cheap: it reads this document's origin only, where Playwright's own call also opens every other
 * origin the context ever visited (over 100 ms each).
 */
export async function readOriginStorage(): Promise<OriginRead | null> {
  const plain = (v: unknown): boolean =>
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v)) ||
    (Array.isArray(v) && v.every(plain)) ||
    (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype && Object.values(v as object).every(plain));
  const done = <T>(req: IDBRequest<T>): Promise<T> =>
    new Promise((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  const readStore = async (store: IDBObjectStore): Promise<Record<string, unknown> | null> => {
    const [keys, values] = await Promise.all([done(store.getAllKeys()), done(store.getAll())]);
    if (!values.every(plain) || (store.keyPath === null && !keys.every(plain))) return null;
    const keyPath = store.keyPath;
    return {
      name: store.name,
      records: values.map((value, i) => (keyPath === null ? { key: keys[i], value } : { value })),
      indexes: Array.from(store.indexNames).map((n) => {
        const index = store.index(n);
        return {
          name: index.name,
          keyPath: typeof index.keyPath === 'string' ? index.keyPath : undefined,
          keyPathArray: Array.isArray(index.keyPath) ? index.keyPath : undefined,
          multiEntry: index.multiEntry,
          unique: index.unique,
        };
      }),
      autoIncrement: store.autoIncrement,
      keyPath: typeof keyPath === 'string' ? keyPath : undefined,
      keyPathArray: Array.isArray(keyPath) ? keyPath : undefined,
    };
  };
  if (location.origin === 'null') return { origin: null, localStorage: [], indexedDB: [] };
  const localStorageItems = Object.keys(localStorage)
    .filter((name) => !name.startsWith('__pwCoverage.'))
    .map((name) => ({ name, value: localStorage.getItem(name) ?? '' }));
  const databases: unknown[] = [];
  for (const info of await indexedDB.databases()) {
    if (!info.name || !info.version) return null;
    const db = await done(indexedDB.open(info.name));
    try {
      const names = Array.from(db.objectStoreNames);
      const tx = names.length > 0 ? db.transaction(names, 'readonly') : null;
      const stores = tx ? await Promise.all(names.map((n) => readStore(tx.objectStore(n)))) : [];
      if (stores.some((s) => s === null)) return null;
      databases.push({ name: info.name, version: info.version, stores });
    } finally {
      db.close();
    }
  }
  return { origin: location.origin, localStorage: localStorageItems, indexedDB: databases };
}
