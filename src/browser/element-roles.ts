// An element's ARIA role and accessible name from the facts the page reported (element-script.ts): an approximation
// of the browser's own computation, enough to find the element again on a later visit. Pure.

/** What decides an element's role. */
export interface RoleFacts {
  tag: string;
  roleAttr: string | null;
  type: string | null;
  href: string | null;
  multiple: boolean;
  size: number;
  list: boolean;
  editable: boolean;
  alt: string | null;
}

/** Where an accessible name may come from, in the order the computation tries them. */
export interface NameSources {
  ariaLabel: string | null;
  labelledBy: string | null;
  labels: readonly string[];
  alt: string | null;
  buttonValue: string | null;
  title: string | null;
  placeholder: string | null;
  text: string;
}

const INPUT_ROLES: Readonly<Record<string, string>> = {
  button: 'button',
  submit: 'button',
  reset: 'button',
  image: 'button',
  checkbox: 'checkbox',
  radio: 'radio',
  range: 'slider',
  number: 'spinbutton',
  search: 'searchbox',
  email: 'textbox',
  tel: 'textbox',
  text: 'textbox',
  url: 'textbox',
  password: 'textbox',
};

const TAG_ROLES: Readonly<Record<string, string>> = {
  button: 'button',
  summary: 'button',
  textarea: 'textbox',
  h1: 'heading',
  h2: 'heading',
  h3: 'heading',
  h4: 'heading',
  h5: 'heading',
  h6: 'heading',
  nav: 'navigation',
  main: 'main',
  header: 'banner',
  footer: 'contentinfo',
  aside: 'complementary',
  form: 'form',
  dialog: 'dialog',
  ul: 'list',
  ol: 'list',
  li: 'listitem',
  option: 'option',
  table: 'table',
  tr: 'row',
  td: 'cell',
  th: 'columnheader',
  p: 'paragraph',
  progress: 'progressbar',
  article: 'article',
};

/** Roles whose name may come from the element's own text. */
const NAME_FROM_CONTENT = new Set([
  'button',
  'link',
  'heading',
  'cell',
  'columnheader',
  'rowheader',
  'option',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'treeitem',
  'checkbox',
  'radio',
  'switch',
  'tooltip',
]);

/** The explicit role (its first token) or the tag's implicit one; null for a generic element. */
export function roleOf(f: RoleFacts): string | null {
  const explicit = f.roleAttr?.trim().split(/\s+/)[0]?.toLowerCase();
  if (explicit) return explicit;
  switch (f.tag) {
    case 'a':
    case 'area':
      return f.href === null ? null : 'link';
    case 'input': {
      const type = f.type ?? 'text';
      if (f.list && ['text', 'search', 'email', 'tel', 'url'].includes(type)) return 'combobox';
      return INPUT_ROLES[type] ?? null;
    }
    case 'select':
      return f.multiple || f.size > 1 ? 'listbox' : 'combobox';
    case 'img':
      return f.alt === '' ? 'presentation' : 'img';
    default:
      return TAG_ROLES[f.tag] ?? (f.editable ? 'textbox' : null);
  }
}

/**
 * The accessible name: aria-labelledby, aria-label, a form field's labels, alt, an input button's label, the text
 * (for roles named from content), title, placeholder; the first that is not blank, whitespace collapsed, capped.
 */
export function accessibleName(s: NameSources, role: string | null, cap = 200): string {
  const field = role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'listbox';
  const candidates = [
    s.labelledBy,
    s.ariaLabel,
    s.labels.join(' '),
    s.alt,
    s.buttonValue,
    role !== null && NAME_FROM_CONTENT.has(role) && !field ? s.text : null,
    s.title,
    s.placeholder,
  ];
  for (const c of candidates) {
    const name = (c ?? '').replace(/\s+/g, ' ').trim();
    if (name) return name.slice(0, cap);
  }
  return '';
}
