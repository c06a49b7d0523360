// Browserbase's retry waits and the hiding of its credentials in error text (pure).
import { describe, expect, it } from 'vitest';
import { BrowserbaseError, BrowserbaseRateLimitError, hideCredentials } from '../../src/browser/browserbase-api';
import { browserbaseRetryDelayMs, DEFAULT_BROWSERBASE_TIMING } from '../../src/browser/browserbase';

describe('browserbaseRetryDelayMs', () => {
  const other = new BrowserbaseError('Browserbase: creating a session answered HTTP 500', 500);
  const limited = new BrowserbaseRateLimitError('Browserbase: creating a session answered HTTP 429', 429);
  it.each<[string, number, unknown, number]>([
    ['any error after attempt 1', 1, other, 1_000],
    ['any error after attempt 2', 2, other, 2_000],
    ['any error after attempt 3', 3, new Error('page crashed'), 4_000],
    ['any error after attempt 4', 4, other, 8_000],
    ['a rate limit after attempt 1', 1, limited, 10_000],
    ['a rate limit after attempt 4', 4, limited, 10_000],
  ])('%s: %i → %s → %i ms', (_name, attempt, error, ms) => {
    expect(browserbaseRetryDelayMs(attempt, error)).toBe(ms);
  });

  it('tries five times by default', () => {
    expect(DEFAULT_BROWSERBASE_TIMING.attempts).toBe(5);
  });
});

describe('hideCredentials', () => {
  it.each([
    ['the API key anywhere', 'HTTP 401: key bb_live_abc is not valid', 'HTTP 401: key [redacted] is not valid'],
    [
      'the query of a connect URL',
      'WebSocket error: wss://connect.browserbase.com/?signingKey=s3cr3t&x=1 403',
      'WebSocket error: wss://connect.browserbase.com/?[redacted] 403',
    ],
    [
      'a ws:// URL without a query is kept',
      'ws://127.0.0.1:9/devtools/browser/1 refused',
      'ws://127.0.0.1:9/devtools/browser/1 refused',
    ],
    ['other URLs are kept', 'could not open https://example.com/?q=1', 'could not open https://example.com/?q=1'],
  ])('%s', (_name, text, hidden) => {
    expect(hideCredentials(text, 'bb_live_abc')).toBe(hidden);
  });
});
