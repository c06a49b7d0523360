// Typing: a text is inserted at once into fields that take it (no key events), and typed key by key into fields that
// need keys (a keydown mask, a keyup autocomplete, a field that refuses inserts), never twice. Fixture page:
// test/fixtures/browser/pages/typing.html, one field per row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../src/browser';
import type { BrowserEnvironment, EnvironmentOptions } from '../../src/browser';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';

type Seen = { type: string; target: string; key?: string; inputType?: string };

/** Where each field of the fixture page is (its middle, in viewport pixels). */
const AT = {
  plain: { x: 100, y: 24 },
  react: { x: 100, y: 64 },
  card: { x: 100, y: 104 },
  date: { x: 100, y: 144 },
  city: { x: 100, y: 184 },
  guarded: { x: 100, y: 224 },
  trickle: { x: 100, y: 264 },
  editable: { x: 100, y: 304 },
  sticky: { x: 100, y: 344 },
};

let server: FixtureServer;
let pool: BrowserPool;

beforeAll(async () => {
  server = await startFixtureServer();
  pool = new BrowserPool({ slots: 2 });
});

afterAll(async () => {
  await pool?.shutdown();
  await server?.close();
});

/** A fresh session (nothing remembered about hosts) on the fixture page; closed after `use`. */
async function onTypingPage(
  use: (env: BrowserEnvironment) => Promise<void>,
  environment: Partial<EnvironmentOptions> = {},
): Promise<void> {
  const { sessionId, env } = await pool.openSession({
    viewport: { width: 800, height: 600 },
    downloadsDir: '/tmp/cua-test-downloads',
    environment,
  });
  try {
    await env.visitUrl(server.url('/pages/typing.html'));
    await use(env);
  } finally {
    await pool.close(sessionId);
  }
}

type Typed = ['insert' | 'keys', string];

/** What a field of the fixture page holds: an input's value, a contenteditable's text. */
const contentOf = (env: BrowserEnvironment, id: string): Promise<string | null | undefined> =>
  env.page.evaluate((id) => {
    const el = document.getElementById(id);
    return el instanceof HTMLInputElement ? el.value : el?.textContent;
  }, id);

const seenBy = async (env: BrowserEnvironment, id: string): Promise<Seen[]> =>
  (await env.page.evaluate(() => (window as unknown as { __events: Seen[] }).__events)).filter((e) => e.target === id);

describe('fields that take an insert get the text at once', () => {
  it('a plain field: one insert, no key events', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('hello world!', { at: AT.plain });
      expect(outcome.typing).toEqual({ typed: 'insert', reason: 'accepted' });
      expect(env.takeTyping()).toEqual({ typed: 'insert', reason: 'accepted' });
      expect(env.takeTyping()).toBeNull();
      expect(await env.page.inputValue('#plain')).toBe('hello world!');
      expect((await seenBy(env, 'plain')).map((e) => `${e.type}:${e.inputType}`)).toEqual([
        'beforeinput:insertText',
        'input:insertText',
      ]);
    });
  });

  it('a React-style controlled input: its state follows, and the value stays', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('Ada Lovelace', { at: AT.react });
      expect(outcome.typing).toEqual({ typed: 'insert', reason: 'accepted' });
      await env.page.evaluate(() => (window as unknown as { __renderReact: () => void }).__renderReact());
      expect(await env.page.textContent('#react-state')).toBe('Ada Lovelace');
      expect(await env.page.inputValue('#react')).toBe('Ada Lovelace');
    });
  });

  it('clearing first and Enter after still work around an insert', async () => {
    await onTypingPage(async (env) => {
      await env.type('old', { at: AT.plain });
      await env.type('new', { at: AT.plain, deleteExistingText: true, pressEnter: true });
      expect(await env.page.inputValue('#plain')).toBe('new');
      const keys = (await seenBy(env, 'plain')).filter((e) => e.type === 'keydown').map((e) => e.key);
      expect(keys).toEqual(['Control', 'a', 'Backspace', 'Enter']);
    });
  });
});

describe('one text into one field: how it went, and what the field ends holding (never the text twice)', () => {
  it.each<[string, keyof typeof AT, string, Typed, string]>([
    ['a date masked on input (reformatted counts as taken)', 'date', '12252026', ['insert', 'accepted'], '12/25/2026'],
    ['a card number masked on keydown', 'card', '4242424242424242', ['keys', 'key-listeners'], '4242 4242 4242 4242'],
    ['a contenteditable region', 'editable', 'notes', ['keys', 'not-a-text-field'], 'notes'],
    ['a text with a line break (Enter is a key)', 'plain', 'a\nb', ['keys', 'control-characters'], 'ab'],
    ['a field that undoes an insert: nothing took', 'guarded', 'secret', ['keys', 'not-taken'], 'secret'],
  ])('%s', async (_name, field, text, [typed, reason], ends) => {
    await onTypingPage(async (env) => {
      expect((await env.type(text, { at: AT[field] })).typing).toEqual({ typed, reason });
      expect(await contentOf(env, field)).toBe(ends);
    });
  });

  it('a field in a frame', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('framed', { at: { x: 100, y: 392 } });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'not-a-text-field' });
      expect(await env.page.frameLocator('#frame').locator('#inner').inputValue()).toBe('framed');
    });
  });

  it('a debounced autocomplete listening to keyup shows its suggestions', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('par', { at: AT.city });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'key-listeners' });
      await env.page.waitForSelector('#suggestions li', { timeout: 2_000 });
      expect(await env.page.locator('#suggestions li').allTextContents()).toEqual(['Paris', 'Parma']);
    });
  });
});

describe('a field that took part of an insert is put back, then typed by keys', () => {
  it.each<[string, keyof typeof AT]>([
    ['one that goes back: its old value and caret restored', 'trickle'],
    ['one that would not go back: emptied and refilled by keys', 'sticky'],
  ])('%s', async (_name, field) => {
    await onTypingPage(async (env) => {
      expect((await env.type('x', { at: AT[field] })).typing).toEqual({ typed: 'insert', reason: 'accepted' });
      expect((await env.type('yz', { at: AT[field] })).typing).toEqual({ typed: 'keys', reason: 'not-taken' });
      expect(await contentOf(env, field)).toBe('xyz');
    });
  });

  it('the host is then typed by keys for the rest of the session', async () => {
    await onTypingPage(async (env) => {
      await env.type('secret', { at: AT.guarded });
      const outcome = await env.type('plain text', { at: AT.plain });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'host-needed-keys' });
      expect(await env.page.inputValue('#plain')).toBe('plain text');
    });
  });
});

describe('configuration', () => {
  it.each<[string, Partial<EnvironmentOptions>, string, string]>([
    ['fast typing off', { fastTyping: false }, 'keys', 'fast-typing-off'],
    ['a typing delay alone: keys, as before fast typing', { typingDelayMs: 0 }, 'keys', 'fast-typing-off'],
    ['a typing delay with fast typing on', { typingDelayMs: 50, fastTyping: true }, 'insert', 'accepted'],
    ['a host listed for keys', { keyTypingHosts: ['127.0.0.1'] }, 'keys', 'host-listed'],
    ['another host listed', { keyTypingHosts: ['*.example.com'] }, 'insert', 'accepted'],
  ])('%s', async (_name, environment, typed, reason) => {
    await onTypingPage(async (env) => {
      expect((await env.type('abc', { at: AT.plain })).typing).toEqual({ typed, reason });
      expect(await env.page.inputValue('#plain')).toBe('abc');
    }, environment);
  });
});
