// URL helpers for the navigation actions: where visit_url goes for what the model wrote, and the
// search URL web_search (and visit_url given plain words) opens. Searching is done by opening a
// search engine's results page, as the original does (Bing by default; the template is configurable).

/**
 * Prefixes that are taken as a complete URL; anything else is treated as a bare host or search text. Besides the
 * original's (http, https, file, about), schemes a page may talk the model into are kept as written, so the URL
 * policy refuses them by name ("the javascript: scheme is not allowed") instead of them becoming `https://data:…`.
 */
const KNOWN_PREFIXES = [
  'https://',
  'http://',
  'file:',
  'about:',
  'data:',
  'javascript:',
  'view-source:',
  'chrome:',
  'chrome-extension:',
  'blob:',
  'filesystem:',
  'ftp:',
  'ws:',
  'wss:',
] as const;

/** Placeholder for the encoded query in a search URL template. */
export const QUERY_PLACEHOLDER = '{query}';

/** The original's search URL: Bing results, with the form code a search from bing.com sends. */
export const BING_SEARCH_TEMPLATE = `https://www.bing.com/search?q=${QUERY_PLACEHOLDER}&FORM=QBLH`;

/** Thrown for a search URL template without the query placeholder. */
export class SearchTemplateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Where visit_url navigates for `input`:
 * - starts with http://, https://, file:, about: or another scheme in KNOWN_PREFIXES (any letter case) → unchanged
 *   (the URL policy decides whether it may be opened);
 * - contains a space → the model wrote search words, not a URL → a web search for them;
 * - otherwise a bare host/path → `https://` is put in front.
 * Surrounding whitespace is ignored (the original did not trim; a trailing space turned a URL into a search).
 */
export function resolveVisitUrl(input: string, searchTemplate: string = BING_SEARCH_TEMPLATE): string {
  const url = input.trim();
  const lower = url.toLowerCase();
  if (KNOWN_PREFIXES.some((prefix) => lower.startsWith(prefix))) return url;
  if (url.includes(' ')) return webSearchUrl(url, searchTemplate);
  return `https://${url}`;
}

/** The results page for `query`; `engine` is a URL template containing `{query}` (default: Bing). */
export function webSearchUrl(query: string, engine: string = BING_SEARCH_TEMPLATE): string {
  if (!engine.includes(QUERY_PLACEHOLDER)) {
    throw new SearchTemplateError(`search URL template must contain ${QUERY_PLACEHOLDER}: ${engine}`);
  }
  return engine.split(QUERY_PLACEHOLDER).join(encodeQueryPlus(query));
}

/**
 * Form-style encoding as Python's quote_plus does it: spaces become '+', and everything except
 * letters, digits and `_.-~` is percent-encoded (encodeURIComponent leaves `!'()*` alone, so those
 * are encoded by hand).
 */
export function encodeQueryPlus(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}
