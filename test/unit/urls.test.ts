import { describe, it, expect } from 'vitest';
import {
  BING_SEARCH_TEMPLATE,
  encodeQueryPlus,
  resolveVisitUrl,
  SearchTemplateError,
  webSearchUrl,
} from '../../src/model/urls';

describe('resolveVisitUrl', () => {
  it.each<[string, string]>([
    ['https://example.com/a?b=1', 'https://example.com/a?b=1'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/'],
    ['file:///tmp/a.html', 'file:///tmp/a.html'],
    ['about:blank', 'about:blank'],
    ['HTTPS://Example.com', 'HTTPS://Example.com'],
    ['example.com', 'https://example.com'],
    ['www.example.com/path?q=1', 'https://www.example.com/path?q=1'],
    ['localhost:3000/x', 'https://localhost:3000/x'],
    ['  example.com  ', 'https://example.com'],
    ['cheap flights to paris', 'https://www.bing.com/search?q=cheap+flights+to+paris&FORM=QBLH'],
    ['https://a.com/x y', 'https://a.com/x y'], // a scheme wins over the space rule
  ])('%j → %j', (input, expected) => {
    expect(resolveVisitUrl(input)).toBe(expected);
  });

  it('sends search words to the configured engine', () => {
    expect(resolveVisitUrl('two words', 'https://duckduckgo.com/?q={query}')).toBe(
      'https://duckduckgo.com/?q=two+words',
    );
  });
});

describe('webSearchUrl', () => {
  it.each<[string, string]>([
    ['weather', 'https://www.bing.com/search?q=weather&FORM=QBLH'],
    ['a&b=c', 'https://www.bing.com/search?q=a%26b%3Dc&FORM=QBLH'],
    ["it's (50%)!", 'https://www.bing.com/search?q=it%27s+%2850%25%29%21&FORM=QBLH'],
    ['café', 'https://www.bing.com/search?q=caf%C3%A9&FORM=QBLH'],
  ])('%j → %j', (query, expected) => {
    expect(webSearchUrl(query)).toBe(expected);
  });

  it('defaults to the Bing template', () => {
    expect(webSearchUrl('x')).toBe(BING_SEARCH_TEMPLATE.replace('{query}', 'x'));
  });

  it('fills a custom template', () => {
    expect(webSearchUrl('a b', 'http://127.0.0.1:9/search?q={query}')).toBe('http://127.0.0.1:9/search?q=a+b');
  });

  it('rejects a template without {query}', () => {
    expect(() => webSearchUrl('x', 'https://example.com/search')).toThrow(SearchTemplateError);
  });
});

describe('encodeQueryPlus (Python quote_plus)', () => {
  it.each<[string, string]>([
    ['a b', 'a+b'],
    ['a+b', 'a%2Bb'],
    ['_.-~', '_.-~'],
    ["!'()*", '%21%27%28%29%2A'],
    ['/?#', '%2F%3F%23'],
  ])('%j → %j', (input, expected) => {
    expect(encodeQueryPlus(input)).toBe(expected);
  });
});
