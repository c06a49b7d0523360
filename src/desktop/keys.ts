// Key names: the model's spellings ("Enter", "Ctrl-S", "CTRL+SHIFT+T", "esc") mapped to xdotool keysyms.
import { UnknownKeyError } from './errors';

/** Lower-cased key name → xdotool keysym (modifiers use xdotool's own names). */
export const XDOTOOL_KEY_TABLE: Readonly<Record<string, string>> = {
  ctrl: 'ctrl',
  control: 'ctrl',
  lctrl: 'ctrl',
  rctrl: 'ctrl',
  alt: 'alt',
  option: 'alt',
  shift: 'shift',
  super: 'super',
  win: 'super',
  windows: 'super',
  meta: 'super',
  cmd: 'super',
  command: 'super',
  enter: 'Return',
  return: 'Return',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  space: 'space',
  spacebar: 'space',
  backspace: 'BackSpace',
  delete: 'Delete',
  del: 'Delete',
  insert: 'Insert',
  ins: 'Insert',
  home: 'Home',
  end: 'End',
  pageup: 'Prior',
  page_up: 'Prior',
  pgup: 'Prior',
  prior: 'Prior',
  pagedown: 'Next',
  page_down: 'Next',
  pgdn: 'Next',
  next: 'Next',
  up: 'Up',
  arrowup: 'Up',
  down: 'Down',
  arrowdown: 'Down',
  left: 'Left',
  arrowleft: 'Left',
  right: 'Right',
  arrowright: 'Right',
  capslock: 'Caps_Lock',
  caps_lock: 'Caps_Lock',
  numlock: 'Num_Lock',
  scrolllock: 'Scroll_Lock',
  pause: 'Pause',
  printscreen: 'Print',
  print: 'Print',
  menu: 'Menu',
  contextmenu: 'Menu',
  minus: 'minus',
  plus: 'plus',
  equal: 'equal',
  comma: 'comma',
  period: 'period',
  slash: 'slash',
  backslash: 'backslash',
  semicolon: 'semicolon',
  apostrophe: 'apostrophe',
  grave: 'grave',
  bracketleft: 'bracketleft',
  bracketright: 'bracketright',
};

/** Printable characters that are not their own keysym name. */
const PUNCTUATION: Readonly<Record<string, string>> = {
  ' ': 'space',
  '-': 'minus',
  '+': 'plus',
  '=': 'equal',
  ',': 'comma',
  '.': 'period',
  '/': 'slash',
  '\\': 'backslash',
  ';': 'semicolon',
  ':': 'colon',
  "'": 'apostrophe',
  '"': 'quotedbl',
  '`': 'grave',
  '~': 'asciitilde',
  '[': 'bracketleft',
  ']': 'bracketright',
  '{': 'braceleft',
  '}': 'braceright',
  '(': 'parenleft',
  ')': 'parenright',
  '<': 'less',
  '>': 'greater',
  '!': 'exclam',
  '?': 'question',
  '@': 'at',
  '#': 'numbersign',
  $: 'dollar',
  '%': 'percent',
  '^': 'asciicircum',
  '&': 'ampersand',
  '*': 'asterisk',
  _: 'underscore',
  '|': 'bar',
};

const FUNCTION_KEY = /^f([1-9]|1[0-9]|2[0-4])$/;

/** One key name → its keysym. Letters stay as written alone ("A" is a capital A) and are lowered in a chord. */
export function normalizeKey(name: string, inChord = false): string {
  const mapped = XDOTOOL_KEY_TABLE[name.toLowerCase()];
  if (mapped !== undefined) return mapped;
  if (FUNCTION_KEY.test(name.toLowerCase())) return name.toUpperCase();
  if (/^[a-z]$/i.test(name)) return inChord ? name.toLowerCase() : name;
  if (/^[0-9]$/.test(name)) return name;
  const punctuation = PUNCTUATION[name];
  if (punctuation !== undefined) return punctuation;
  throw new UnknownKeyError(name);
}

/** "Ctrl-S", "ctrl+shift+t", "ctrl++" → "ctrl+s", "ctrl+shift+t", "ctrl+plus". */
export function normalizeChord(chord: string): string {
  // Split on "+" or "-" between two characters, so "-" and "+" themselves can still be the last key.
  const parts = chord.split(/(?<=[^+-])[+-](?=.)/);
  return parts.map((part) => normalizeKey(part, parts.length > 1)).join('+');
}

/** "ctrl+a Delete" → ["ctrl+a", "Delete"]; throws UnknownKeyError naming the first key it does not know. */
export function normalizeKeys(keys: string): string[] {
  const chords = keys
    .trim()
    .split(/\s+/)
    .filter((c) => c.length > 0);
  if (chords.length === 0) throw new UnknownKeyError(keys);
  return chords.map(normalizeChord);
}
