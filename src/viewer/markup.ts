// Small pieces of HTML the viewer's pages (and the console's forms) are made of: escaping, numbers, titled blocks,
// preformatted text. Everything taken from a run is model or page output, so untrusted: it goes through escapeHtml.

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

export const num = (n: number) => String(Math.round(n * 100) / 100);

export function block(title: string, body: string, cls = ''): string {
  return `<div class="block${cls ? ` ${cls}` : ''}"><h3>${escapeHtml(title)}</h3>${body}</div>`;
}

export const pre = (text: string, cls = '') => `<pre${cls ? ` class="${cls}"` : ''}>${escapeHtml(text)}</pre>`;
