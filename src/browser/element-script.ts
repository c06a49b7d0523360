// The page-side half of an act's element record (element-record.ts): what is under a point, or has the focus, read
// in one evaluation in an isolated world. The functions are serialised into the page, so each is self-contained:
// `collectElement` gets the others as arguments (`PageHelpers`). `uniqueSelector` is pure over a minimal node shape,
// so the unit tests run it on plain objects. Everything read from the page is capped; a field's value is never read.

/** Where the element is: under a point (viewport CSS pixels of the top document), or the focused one. */
export type ElementProbe = { kind: 'point'; x: number; y: number } | { kind: 'focus' };

/** A box in CSS pixels of the top document's viewport. */
export type Box = { x: number; y: number; width: number; height: number };

/** A frame or shadow root the element sits in: the selector of its frame element or host, in the scope above it. */
export type RawScope = { kind: 'frame' | 'shadow'; selector: string };

/** What the page reports of the element; role and name are worked out from it outside the page (element-roles.ts). */
export interface RawElement {
  tag: string;
  roleAttr: string | null;
  /** An input's or a button's type (lower case); null for other elements. */
  type: string | null;
  href: string | null;
  multiple: boolean;
  size: number;
  list: boolean;
  editable: boolean;
  ariaLabel: string | null;
  labelledBy: string | null;
  labels: string[];
  alt: string | null;
  /** The label an input button shows (its value attribute); null for every other element. */
  buttonValue: string | null;
  title: string | null;
  placeholder: string | null;
  /** Visible text, whitespace collapsed; empty for form fields (what a field holds is never read). */
  text: string;
  id: string | null;
  name: string | null;
  testId: string | null;
  selector: string;
  selectorUnique: boolean;
  within: RawScope[];
  /** The point or the focus is inside a frame of another origin: the record is of its frame element. */
  crossOrigin: boolean;
  box: Box;
  dpr: number;
}

export type RawResult = { found: RawElement } | { missing: string };

export interface CollectArgs {
  probe: ElementProbe;
  /** Longest visible text and accessible name kept. */
  textCap: number;
  /** Longest attribute value kept. */
  attrCap: number;
}

/** The slice of a DOM element `uniqueSelector` reads. */
export interface SelectorNode {
  readonly tagName: string;
  readonly id: string;
  getAttribute(name: string): string | null;
  readonly parentElement: SelectorNode | null;
  readonly children: ArrayLike<SelectorNode>;
}

/**
 * A CSS selector for `el` that `count` (querySelectorAll(...).length in its document or shadow root) finds once:
 * its id (unless it looks generated), a test id, its name, else the shortest tag + nth-of-type path from it upward
 * that is unique (anchored at an ancestor's id when one is reached). `unique` is false only when even the full
 * path is not (it is then returned anyway).
 */
export function uniqueSelector(
  el: SelectorNode,
  count: (selector: string) => number,
  esc: (value: string) => string,
): { selector: string; unique: boolean } {
  const MAX_VALUE = 80;
  const MAX_DEPTH = 16;
  const usable = (v: string | null): v is string => v !== null && v !== '' && v.length <= MAX_VALUE;
  // React's `:r1:`, Ember's `ember1234`, long numbers: ids that change from one page load to the next.
  const stableId = (v: string | null): v is string => usable(v) && !/[:]|\d{4,}/.test(v);
  const byId = (node: SelectorNode): string | null =>
    stableId(node.id) && count(`#${esc(node.id)}`) === 1 ? `#${esc(node.id)}` : null;
  const tag = el.tagName.toLowerCase();
  const candidates: string[] = [];
  if (stableId(el.id)) candidates.push(`#${esc(el.id)}`);
  for (const attr of ['data-testid', 'data-test', 'data-qa', 'data-cy']) {
    const v = el.getAttribute(attr);
    if (usable(v)) candidates.push(`[${attr}="${esc(v)}"]`);
  }
  const name = el.getAttribute('name');
  if (usable(name)) candidates.push(`${tag}[name="${esc(name)}"]`);
  for (const c of candidates) if (count(c) === 1) return { selector: c, unique: true };
  const steps: string[] = [];
  let at: SelectorNode | null = el;
  for (let depth = 0; at && depth < MAX_DEPTH; depth++) {
    const t = at.tagName.toLowerCase();
    const parent: SelectorNode | null = at.parentElement;
    const tagName = at.tagName;
    const same = parent ? Array.from(parent.children).filter((c) => c.tagName === tagName) : [];
    steps.unshift(same.length > 1 ? `${t}:nth-of-type(${same.indexOf(at) + 1})` : t);
    const path = steps.join(' > ');
    if (count(path) === 1) return { selector: path, unique: true };
    const anchor = parent ? byId(parent) : null;
    if (anchor && count(`${anchor} > ${path}`) === 1) return { selector: `${anchor} > ${path}`, unique: true };
    at = parent;
  }
  const path = steps.join(' > ');
  return { selector: path, unique: count(path) === 1 };
}

type Scope = Document | ShadowRoot;

/** The element found, the scope its selector is for, and where its document sits in the top viewport. */
export interface Located {
  el: Element;
  scope: Scope;
  within: RawScope[];
  offsetX: number;
  offsetY: number;
  crossOrigin: boolean;
}

/** A selector of `node` unique in `scope` (uniqueSelector with the page's querySelectorAll and CSS.escape). */
type SelectorIn = (node: Element, scope: Scope) => { selector: string; unique: boolean };

/** The page functions `collectElement` calls, passed in because each is serialised on its own. */
export interface PageHelpers {
  uniqueSelector: typeof uniqueSelector;
  locateElement: typeof locateElement;
  describeElement: typeof describeElement;
}

/**
 * Runs in the page: the element under the point (through open shadow roots and same-origin frames, then up to the
 * nearest interactive ancestor: the button around a span), or the focused one (likewise); a frame of another origin
 * is where it stops.
 */
export function locateElement(probe: ElementProbe, selectorIn: SelectorIn): Located | { missing: string } {
  const at: Located = {
    el: document.documentElement,
    scope: document,
    within: [],
    offsetX: 0,
    offsetY: 0,
    crossOrigin: false,
  };
  const isFrame = (node: Element): node is HTMLIFrameElement | HTMLFrameElement =>
    node.tagName === 'IFRAME' || node.tagName === 'FRAME';
  /** Steps into a frame element's document; null (and marked) when it is another origin's or not loaded. */
  const enterFrame = (frame: HTMLIFrameElement | HTMLFrameElement): Document | null => {
    let inner: Document | null = null;
    try {
      inner = frame.contentDocument;
    } catch {
      inner = null;
    }
    if (!inner) {
      at.crossOrigin = true;
      return null;
    }
    const r = frame.getBoundingClientRect();
    at.within.push({ kind: 'frame', selector: selectorIn(frame, at.scope).selector });
    at.offsetX += r.left + frame.clientLeft;
    at.offsetY += r.top + frame.clientTop;
    at.scope = inner;
    return inner;
  };
  const enterShadow = (host: Element, shadow: ShadowRoot): void => {
    at.within.push({ kind: 'shadow', selector: selectorIn(host, at.scope).selector });
    at.scope = shadow;
  };
  let el: Element | null;
  if (probe.kind === 'point') {
    const x = () => probe.x - at.offsetX;
    const y = () => probe.y - at.offsetY;
    el = document.elementFromPoint(probe.x, probe.y);
    for (let depth = 0; el && depth < 8; depth++) {
      const shadow: ShadowRoot | null = el.shadowRoot;
      const inShadow = shadow ? shadow.elementFromPoint(x(), y()) : null;
      if (shadow && inShadow && inShadow !== el) {
        enterShadow(el, shadow);
        el = inShadow;
        continue;
      }
      const inner = isFrame(el) ? enterFrame(el) : null;
      if (!inner) break;
      el = inner.elementFromPoint(x(), y());
    }
    if (!el) return { missing: 'no element at the point (outside the page?)' };
    const interactive =
      'a[href],area[href],button,input,select,textarea,label,summary,[contenteditable=""],[contenteditable="true"],' +
      '[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],' +
      '[role=option],[role=combobox],[role=textbox],[role=slider],[onclick]';
    for (let up: Element | null = el, i = 0; up && i < 6; up = up.parentElement, i++) {
      if (up.matches(interactive)) {
        el = up;
        break;
      }
    }
  } else {
    el = document.activeElement;
    for (let depth = 0; el && depth < 8; depth++) {
      const shadow: ShadowRoot | null = el.shadowRoot;
      if (shadow && shadow.activeElement) {
        enterShadow(el, shadow);
        el = shadow.activeElement;
        continue;
      }
      const inner = isFrame(el) ? enterFrame(el) : null;
      if (!inner) break;
      el = inner.activeElement;
    }
    const doc = el?.ownerDocument;
    if (!el || !doc || el === doc.body || el === doc.documentElement) return { missing: 'no focused element' };
  }
  at.el = el;
  return at;
}

/** Runs in the page: what the element is, says and looks like (no field's value), and where it is. */
export function describeElement(at: Located, args: CollectArgs, selectorIn: SelectorIn): RawElement {
  const { textCap, attrCap } = args;
  const clip = (s: string | null | undefined, n: number): string | null =>
    s === null || s === undefined
      ? null
      : s
          .slice(0, n * 4)
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, n);
  const node = at.el;
  const tag = node.tagName.toLowerCase();
  const attr = (n: string) => clip(node.getAttribute(n), attrCap);
  const type =
    tag === 'input' ? (attr('type') || 'text').toLowerCase() : tag === 'button' ? attr('type') || 'submit' : null;
  const editable = (node as HTMLElement).isContentEditable === true;
  const isField = tag === 'input' || tag === 'textarea' || tag === 'select' || editable;
  const root = node.getRootNode() as Scope;
  const labelledBy = (node.getAttribute('aria-labelledby') ?? '')
    .slice(0, 400)
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 5)
    .map((id) => clip(root.getElementById?.(id)?.textContent ?? '', textCap) ?? '')
    .join(' ');
  const labelList = (node as HTMLInputElement).labels;
  const labels = labelList
    ? Array.from(labelList)
        .slice(0, 3)
        .map((l) => clip(l.textContent, textCap) ?? '')
    : [];
  /** Text of visible text nodes (not script, style, hidden subtrees), bounded in nodes visited and length. */
  const visibleText = (): string => {
    const skip = ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'];
    const seen = new Map<Element, boolean>();
    const walker = node.ownerDocument.createTreeWalker(node, 4 /* NodeFilter.SHOW_TEXT */);
    let out = '';
    for (let n = walker.nextNode(), i = 0; n && i < 2000 && out.length < textCap * 2; n = walker.nextNode(), i++) {
      const parent = n.parentElement;
      if (!parent || skip.includes(parent.tagName)) continue;
      let visible = seen.get(parent);
      if (visible === undefined) {
        visible =
          typeof parent.checkVisibility === 'function'
            ? parent.checkVisibility({ visibilityProperty: true })
            : parent.getClientRects().length > 0;
        seen.set(parent, visible);
      }
      if (visible) out += ` ${(n.nodeValue ?? '').slice(0, textCap * 2)}`;
    }
    return clip(out, textCap) ?? '';
  };
  const r = node.getBoundingClientRect();
  const { selector, unique } = selectorIn(node, at.scope);
  const testIds = ['data-testid', 'data-test', 'data-qa', 'data-cy'].map(attr).filter((v) => v);
  return {
    tag,
    roleAttr: attr('role'),
    type,
    href: tag === 'a' || tag === 'area' ? attr('href') : null,
    multiple: node.hasAttribute('multiple'),
    size: Number(node.getAttribute('size')) || 0,
    list: node.hasAttribute('list'),
    editable,
    ariaLabel: attr('aria-label'),
    labelledBy: labelledBy || null,
    labels,
    alt: tag === 'img' || tag === 'area' || type === 'image' ? attr('alt') : null,
    buttonValue: tag === 'input' && ['button', 'submit', 'reset'].includes(type ?? '') ? attr('value') : null,
    title: attr('title'),
    placeholder: attr('placeholder'),
    text: isField ? '' : visibleText(),
    id: attr('id'),
    name: attr('name'),
    testId: testIds[0] ?? null,
    selector: selector.slice(0, 1000),
    selectorUnique: unique,
    within: at.within,
    crossOrigin: at.crossOrigin,
    box: { x: r.left + at.offsetX, y: r.top + at.offsetY, width: r.width, height: r.height },
    dpr: window.devicePixelRatio || 1,
  };
}

/** Runs in the page: the element the probe names, described; or why there is none. */
export function collectElement(args: CollectArgs, h: PageHelpers): RawResult {
  const selectorIn: SelectorIn = (node, scope) =>
    h.uniqueSelector(
      node,
      (s) => {
        try {
          return scope.querySelectorAll(s).length;
        } catch {
          return 0;
        }
      },
      (v) => CSS.escape(v),
    );
  const at = h.locateElement(args.probe, selectorIn);
  if ('missing' in at) return at;
  return { found: h.describeElement(at, args, selectorIn) };
}
