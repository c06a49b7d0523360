// Specification of the pure parts of an act's element record: the unique selector (on a tiny node tree with a
// matcher for the selectors it writes), the role and accessible name from the page's facts, which element an action
// records, and the record built from the page's answer (boxes per space, redaction).
import { describe, expect, it } from 'vitest';
import type { AgentAction } from '../../src/actions/schemas';
import { elementProbeOf, modelBox, toElementRecord } from '../../src/browser/element-record';
import { accessibleName, roleOf } from '../../src/browser/element-roles';
import type { NameSources, RoleFacts } from '../../src/browser/element-roles';
import { uniqueSelector } from '../../src/browser/element-script';
import type { RawElement, SelectorNode } from '../../src/browser/element-script';
import { NORM1000, resizedPixelsSpace } from '../../src/coords/viewport';

/** A DOM element reduced to what uniqueSelector reads. */
class Node implements SelectorNode {
  readonly children: Node[] = [];
  parentElement: Node | null = null;
  constructor(
    readonly tagName: string,
    private readonly attrs: Record<string, string> = {},
  ) {}
  get id(): string {
    return this.attrs['id'] ?? '';
  }
  getAttribute(name: string): string | null {
    return this.attrs[name] ?? null;
  }
  add(...kids: Node[]): this {
    for (const k of kids) {
      k.parentElement = this;
      this.children.push(k);
    }
    return this;
  }
  all(): Node[] {
    return [this, ...this.children.flatMap((c) => c.all())];
  }
}

const el = (tag: string, attrs: Record<string, string> = {}, ...kids: Node[]) =>
  new Node(tag.toUpperCase(), attrs).add(...kids);

/** One step of the selectors uniqueSelector writes: `#id`, `[attr="v"]`, `tag[name="v"]`, `tag`, `tag:nth-of-type(k)`. */
function matchesStep(n: Node, step: string): boolean {
  const id = /^#(.+)$/.exec(step);
  if (id) return n.id === id[1];
  const attr = /^(\w*)\[([\w-]+)="(.*)"\]$/.exec(step);
  if (attr) return (!attr[1] || n.tagName.toLowerCase() === attr[1]) && n.getAttribute(attr[2]!) === attr[3];
  const nth = /^(\w+)(?::nth-of-type\((\d+)\))?$/.exec(step);
  if (!nth || n.tagName.toLowerCase() !== nth[1]) return false;
  if (!nth[2]) return true;
  const same = n.parentElement?.children.filter((c) => c.tagName === n.tagName) ?? [n];
  return same.indexOf(n) + 1 === Number(nth[2]);
}

/** How many nodes of the tree a `a > b > c` selector matches. */
function counter(root: Node): (selector: string) => number {
  return (selector) => {
    const steps = selector.split(' > ');
    const matches = (n: Node | null, i: number): boolean =>
      i < 0 ? true : n !== null && matchesStep(n, steps[i]!) && matches(n.parentElement, i - 1);
    return root.all().filter((n) => matches(n, steps.length - 1)).length;
  };
}

const esc = (v: string) => v;

describe('uniqueSelector', () => {
  const target = el('button', { id: 'save', 'data-testid': 'save-btn', name: 'go' });
  const generated = el('button', { id: ':r1:', 'data-testid': 'submit' });
  const named = el('input', { id: 'ember12345', name: 'q' });
  const twin1 = el('a', { href: '#1' });
  const twin2 = el('a', { href: '#2' });
  const deep = el('span');
  const dupId = el('button', { id: 'dup' });
  const root = el(
    'html',
    {},
    el(
      'body',
      {},
      target,
      generated,
      named,
      el('ul', {}, el('li', {}, twin1), el('li', {}, twin2)),
      el('section', { id: 'panel' }, el('div', {}, deep)),
      el('section', { id: 'other' }, el('div', {}, el('span'))),
      el('div', { id: 'dup' }),
      dupId,
    ),
  );
  const count = counter(root);

  it.each([
    ['its id first', target, '#save'],
    ['a test id when the id looks generated', generated, '[data-testid="submit"]'],
    ['tag and name when the id looks generated', named, 'input[name="q"]'],
    ['the shortest unique nth-of-type path', twin2, 'li:nth-of-type(2) > a'],
    ["a path anchored at an ancestor's id", deep, '#panel > div > span'],
    ['a path when its id is not unique', dupId, 'button:nth-of-type(3)'],
  ])('uses %s', (_what, node, expected) => {
    const got = uniqueSelector(node, count, esc);
    expect(got).toEqual({ selector: expected, unique: true });
    expect(count(got.selector)).toBe(1);
  });

  it('returns the full path, marked, when nothing is unique', () => {
    const a = el('p');
    const tree = el('html', {}, el('body', {}, a));
    expect(uniqueSelector(a, () => 2, esc)).toEqual({ selector: 'html > body > p', unique: false });
    void tree;
  });

  it('skips attribute values too long to be stable', () => {
    const long = el('button', { 'data-testid': 'x'.repeat(200) });
    el('html', {}, el('body', {}, long));
    expect(uniqueSelector(long, () => 1, esc).selector).toBe('button');
  });
});

const facts = (f: Partial<RoleFacts>): RoleFacts => ({
  tag: 'div',
  roleAttr: null,
  type: null,
  href: null,
  multiple: false,
  size: 0,
  list: false,
  editable: false,
  alt: null,
  ...f,
});

describe('roleOf', () => {
  it.each<[Partial<RoleFacts>, string | null]>([
    [{ tag: 'button', type: 'submit' }, 'button'],
    [{ tag: 'div', roleAttr: ' Tab extra' }, 'tab'],
    [{ tag: 'a', href: '/x' }, 'link'],
    [{ tag: 'a' }, null],
    [{ tag: 'input', type: 'text' }, 'textbox'],
    [{ tag: 'input', type: 'password' }, 'textbox'],
    [{ tag: 'input', type: 'text', list: true }, 'combobox'],
    [{ tag: 'input', type: 'checkbox' }, 'checkbox'],
    [{ tag: 'input', type: 'submit' }, 'button'],
    [{ tag: 'input', type: 'hidden' }, null],
    [{ tag: 'select' }, 'combobox'],
    [{ tag: 'select', multiple: true }, 'listbox'],
    [{ tag: 'img', alt: 'Logo' }, 'img'],
    [{ tag: 'img', alt: '' }, 'presentation'],
    [{ tag: 'h2' }, 'heading'],
    [{ tag: 'div', editable: true }, 'textbox'],
    [{ tag: 'span' }, null],
  ])('%o is %s', (f, role) => {
    expect(roleOf(facts(f))).toBe(role);
  });
});

const sources = (s: Partial<NameSources>): NameSources => ({
  ariaLabel: null,
  labelledBy: null,
  labels: [],
  alt: null,
  buttonValue: null,
  title: null,
  placeholder: null,
  text: '',
  ...s,
});

describe('accessibleName', () => {
  it.each<[string, Partial<NameSources>, string | null, string]>([
    ['aria-labelledby over aria-label', { labelledBy: 'Billing', ariaLabel: 'Other' }, 'button', 'Billing'],
    ['aria-label over text', { ariaLabel: 'Close', text: '×' }, 'button', 'Close'],
    ["a field's label", { labels: ['Email  address'], placeholder: 'you@x' }, 'textbox', 'Email address'],
    ["a field's placeholder last", { placeholder: 'Search', title: '' }, 'searchbox', 'Search'],
    ["never a field's text", { text: 'typed words' }, 'textbox', ''],
    ['an image by its alt', { alt: 'Logo' }, 'img', 'Logo'],
    ["an input button's label", { buttonValue: 'Send' }, 'button', 'Send'],
    ['a link by its text', { text: ' Next\n page ' }, 'link', 'Next page'],
    ['a generic element not by its text', { text: 'some words', title: 'Tip' }, null, 'Tip'],
  ])('%s', (_what, s, role, name) => {
    expect(accessibleName(sources(s), role)).toBe(name);
  });

  it('caps the name', () => {
    expect(accessibleName(sources({ text: 'a'.repeat(500) }), 'button', 200)).toHaveLength(200);
  });
});

describe('elementProbeOf', () => {
  it.each<[AgentAction, ReturnType<typeof elementProbeOf>]>([
    [
      { action: 'left_click', coordinate: [10, 20] },
      { kind: 'point', x: 10, y: 20 },
    ],
    [
      { action: 'double_click', coordinate: [1, 2] },
      { kind: 'point', x: 1, y: 2 },
    ],
    [
      { action: 'right_click', coordinate: [1, 2] },
      { kind: 'point', x: 1, y: 2 },
    ],
    [
      { action: 'triple_click', coordinate: [1, 2] },
      { kind: 'point', x: 1, y: 2 },
    ],
    [
      { action: 'mouse_move', coordinate: [3, 4] },
      { kind: 'point', x: 3, y: 4 },
    ],
    [
      { action: 'left_click_drag', coordinate: [5, 6] },
      { kind: 'point', x: 5, y: 6 },
    ],
    [
      { action: 'type', text: 'hi', coordinate: [7, 8] },
      { kind: 'point', x: 7, y: 8 },
    ],
    [{ action: 'type', text: 'hi' }, { kind: 'focus' }],
    [{ action: 'scroll', pixels: 100 }, undefined],
    [{ action: 'key', keys: ['Enter'] }, undefined],
    [{ action: 'visit_url', url: 'https://a.test/' }, undefined],
    [{ action: 'terminate', answer: 'done' }, undefined],
  ])('%o', (action, probe) => {
    expect(elementProbeOf(action)).toEqual(probe);
  });
});

describe('the record from the page answer', () => {
  const raw: RawElement = {
    tag: 'button',
    roleAttr: null,
    type: 'submit',
    href: null,
    multiple: false,
    size: 0,
    list: false,
    editable: false,
    ariaLabel: null,
    labelledBy: null,
    labels: [],
    alt: null,
    buttonValue: null,
    title: null,
    placeholder: null,
    text: 'Pay with s3cr3t',
    id: 'pay',
    name: null,
    testId: null,
    selector: '#pay',
    selectorUnique: true,
    within: [],
    crossOrigin: false,
    box: { x: 144, y: 90, width: 288, height: 45 },
    dpr: 1,
  };
  const viewport = { width: 1440, height: 900 };

  it('has the box in viewport pixels and in the model space, and redacts every string', () => {
    const record = toElementRecord(
      raw,
      { kind: 'point', x: 150, y: 100 },
      {
        space: NORM1000,
        viewport,
        redact: (s) => s.replaceAll('s3cr3t', '[secret]'),
      },
    );
    expect(record).toEqual({
      source: 'point',
      tag: 'button',
      role: 'button',
      name: 'Pay with [secret]',
      text: 'Pay with [secret]',
      selector: '#pay',
      selector_unique: true,
      attributes: { id: 'pay', type: 'submit' },
      box: { x: 144, y: 90, width: 288, height: 45 },
      model_box: { x: 100, y: 100, width: 200, height: 50 },
    });
  });

  it('adds the screenshot box when the device pixel ratio is not 1', () => {
    const record = toElementRecord({ ...raw, dpr: 2 }, { kind: 'focus' }, { space: NORM1000, viewport });
    expect(record.screenshot_box).toEqual({ x: 288, y: 180, width: 576, height: 90 });
  });

  it("converts to Fara-7B's resized-pixel space", () => {
    expect(modelBox({ x: 0, y: 450, width: 1440, height: 450 }, resizedPixelsSpace(1440, 896), viewport)).toEqual({
      x: 0,
      y: 448,
      width: 1440,
      height: 448,
    });
  });
});
