// An in-page stand-in for the browser's find bar (Ctrl+F), which Playwright cannot reach.
// The input takes focus, so the agent's next `type` and `Enter` land in it as they would for a person.
// Matches are painted with the CSS Custom Highlight API, so the page's own DOM is left untouched.

export const FIND_HOST_ID = '__cua_find_host';

/** Runs inside the page (serialised by Playwright): must not reference anything outside itself. */
export function installFindOverlay(hostId: string): void {
  const existing = document.getElementById(hostId);
  const existingInput = existing?.shadowRoot?.querySelector('input');
  if (existingInput) {
    existingInput.focus();
    existingInput.select();
    return;
  }
  const style = document.createElement('style');
  style.id = `${hostId}_style`;
  style.textContent =
    '::highlight(cua-find){background:#ffeb3b;color:inherit}' + '::highlight(cua-find-current){background:#ff9632}';
  (document.head ?? document.documentElement).appendChild(style);

  const host = document.createElement('div');
  host.id = hostId;
  host.style.cssText = 'all:initial;position:fixed;top:8px;right:16px;z-index:2147483647';
  const root = host.attachShadow({ mode: 'open' });
  root.innerHTML =
    '<style>div{display:flex;gap:6px;align-items:center;font:13px sans-serif;background:#fff;color:#222;' +
    'border:1px solid #999;border-radius:6px;padding:6px 8px;box-shadow:0 2px 8px rgba(0,0,0,.25)}' +
    'input{width:180px;font:inherit;padding:2px 4px}button{font:inherit;padding:0 6px}</style>' +
    '<div><input type="text" aria-label="Find in page" placeholder="Find in page">' +
    '<span data-count>0/0</span>' +
    '<button data-prev title="Previous match (Shift+Enter)">&#8593;</button>' +
    '<button data-next title="Next match (Enter)">&#8595;</button>' +
    '<button data-close title="Close (Esc)">&#10005;</button></div>';
  document.documentElement.appendChild(host);

  const input = root.querySelector('input') as HTMLInputElement;
  const count = root.querySelector('[data-count]') as HTMLSpanElement;
  let query = '';
  let ranges: Range[] = [];
  let current = -1;

  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  function collect(needle: string): Range[] {
    const found: Range[] = [];
    if (!needle || !document.body) return found;
    const lower = needle.toLowerCase();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) =>
        n.parentElement && !skip.has(n.parentElement.tagName) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT,
    });
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = (node.textContent ?? '').toLowerCase();
      for (let i = text.indexOf(lower); i >= 0; i = text.indexOf(lower, i + lower.length)) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + lower.length);
        found.push(range);
      }
    }
    return found;
  }

  function paint(): void {
    const registry = (CSS as unknown as { highlights?: Map<string, unknown> }).highlights;
    const HighlightCtor = (window as unknown as { Highlight?: new (...r: Range[]) => unknown }).Highlight;
    if (registry && HighlightCtor) {
      registry.set('cua-find', new HighlightCtor(...ranges.filter((_, i) => i !== current)));
      const active = ranges[current];
      if (active) registry.set('cua-find-current', new HighlightCtor(active));
      else registry.delete('cua-find-current');
    }
    count.textContent = ranges.length ? `${current + 1}/${ranges.length}` : '0/0';
    const active = ranges[current];
    active?.startContainer.parentElement?.scrollIntoView({ block: 'center', inline: 'nearest' });
  }

  function step(direction: 1 | -1): void {
    if (input.value !== query) {
      query = input.value;
      ranges = collect(query);
      current = ranges.length ? 0 : -1;
    } else if (ranges.length) {
      current = (current + direction + ranges.length) % ranges.length;
    }
    paint();
  }

  function close(): void {
    const registry = (CSS as unknown as { highlights?: Map<string, unknown> }).highlights;
    registry?.delete('cua-find');
    registry?.delete('cua-find-current');
    host.remove();
    style.remove();
  }

  input.addEventListener('keydown', (e) => {
    e.stopPropagation();
    if (e.key === 'Enter') {
      e.preventDefault();
      step(e.shiftKey ? -1 : 1);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      close();
    }
  });
  for (const type of ['keyup', 'keypress', 'input']) input.addEventListener(type, (e) => e.stopPropagation());
  root.querySelector('[data-next]')?.addEventListener('click', () => step(1));
  root.querySelector('[data-prev]')?.addEventListener('click', () => step(-1));
  root.querySelector('[data-close]')?.addEventListener('click', close);
  input.focus();
}
