// Key names: the model's spellings mapped to Playwright's, and routing of chords the page cannot handle.

/** Lower-cased model key name → Playwright key name. Names not listed pass through unchanged. */
export const KEY_NAME_TABLE: Readonly<Record<string, string>> = {
  ctrl: 'Control',
  control: 'Control',
  lctrl: 'Control',
  rctrl: 'Control',
  alt: 'Alt',
  option: 'Alt',
  opt: 'Alt',
  shift: 'Shift',
  cmd: 'ControlOrMeta',
  command: 'ControlOrMeta',
  meta: 'Meta',
  super: 'Meta',
  win: 'Meta',
  windows: 'Meta',
  enter: 'Enter',
  return: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  space: ' ',
  spacebar: ' ',
  backspace: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  insert: 'Insert',
  ins: 'Insert',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  page_up: 'PageUp',
  pgup: 'PageUp',
  pagedown: 'PageDown',
  page_down: 'PageDown',
  pgdn: 'PageDown',
  up: 'ArrowUp',
  arrowup: 'ArrowUp',
  down: 'ArrowDown',
  arrowdown: 'ArrowDown',
  left: 'ArrowLeft',
  arrowleft: 'ArrowLeft',
  right: 'ArrowRight',
  arrowright: 'ArrowRight',
  capslock: 'CapsLock',
  numlock: 'NumLock',
  scrolllock: 'ScrollLock',
  pause: 'Pause',
  printscreen: 'PrintScreen',
  contextmenu: 'ContextMenu',
  menu: 'ContextMenu',
};

const FUNCTION_KEY = /^f([1-9]|1[0-9]|2[0-4])$/;

/** Maps one model key name to Playwright's name; single letters become lower case. */
export function normalizeKey(name: string): string {
  const trimmed = name.length > 1 ? name.trim() : name;
  const lower = trimmed.toLowerCase();
  const mapped = KEY_NAME_TABLE[lower];
  if (mapped !== undefined) return mapped;
  if (FUNCTION_KEY.test(lower)) return lower.toUpperCase();
  if (/^[a-z]$/i.test(trimmed)) return lower;
  return trimmed;
}

/** Normalises a chord; a single "ctrl+shift+r" string is split on "+". */
export function normalizeChord(chord: readonly string[]): string[] {
  const parts = chord.length === 1 && /.\+./.test(chord[0] ?? '') ? (chord[0] ?? '').split('+') : chord;
  return parts.filter((k) => k.length > 0).map(normalizeKey);
}

/** What a chord means when the page itself cannot act on it. */
export type ChordRoute = 'find' | 'refresh' | 'back' | 'forward' | 'page';

const ROUTES: ReadonlyArray<{ keys: string[]; route: Exclude<ChordRoute, 'page'> }> = [
  { keys: ['Control', 'f'], route: 'find' },
  { keys: ['Control', 'r'], route: 'refresh' },
  { keys: ['Control', 'Shift', 'r'], route: 'refresh' },
  { keys: ['F5'], route: 'refresh' },
  { keys: ['Alt', 'ArrowLeft'], route: 'back' },
  { keys: ['Alt', 'ArrowRight'], route: 'forward' },
];

function chordKey(keys: readonly string[]): string {
  return keys
    .map((k) => (k === 'ControlOrMeta' ? 'Control' : k))
    .sort()
    .join('+');
}

/** Decides whether a normalised chord is a browser-chrome command or goes to the page. */
export function routeChord(normalized: readonly string[]): ChordRoute {
  const key = chordKey(normalized);
  return ROUTES.find((r) => chordKey(r.keys) === key)?.route ?? 'page';
}
