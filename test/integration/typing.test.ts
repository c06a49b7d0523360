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

  it('a date masked on input: the reformatted value counts as taken', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('12252026', { at: AT.date });
      expect(outcome.typing).toEqual({ typed: 'insert', reason: 'accepted' });
      expect(await env.page.inputValue('#date')).toBe('12/25/2026');
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

describe('fields that need keys are typed by keys', () => {
  it('a card number masked on keydown ends grouped in fours', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('4242424242424242', { at: AT.card });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'key-listeners' });
      expect(await env.page.inputValue('#card')).toBe('4242 4242 4242 4242');
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

  it('a contenteditable region', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('notes', { at: AT.editable });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'not-a-text-field' });
      expect(await env.page.textContent('#editable')).toBe('notes');
    });
  });

  it('a text with a line break (Enter is a key press)', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('a\nb', { at: AT.plain });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'control-characters' });
      expect(await env.page.inputValue('#plain')).toBe('ab');
    });
  });
});

describe('a field that refuses the insert is put back, then typed by keys, never twice', () => {
  it('nothing took: typed by keys once', async () => {
    await onTypingPage(async (env) => {
      const outcome = await env.type('secret', { at: AT.guarded });
      expect(outcome.typing).toEqual({ typed: 'keys', reason: 'not-taken' });
      expect(await env.page.inputValue('#guarded')).toBe('secret');
    });
  });

  it('part of it took: the field goes back to its old value and caret, then keys', async () => {
    await onTypingPage(async (env) => {
      expect((await env.type('x', { at: AT.trickle })).typing).toEqual({ typed: 'insert', reason: 'accepted' });
      expect((await env.type('yz', { at: AT.trickle })).typing).toEqual({ typed: 'keys', reason: 'not-taken' });
      expect(await env.page.inputValue('#trickle')).toBe('xyz');
    });
  });

  it('part of it took and the field would not go back: emptied and refilled by keys', async () => {
    await onTypingPage(async (env) => {
      expect((await env.type('x', { at: AT.sticky })).typing).toEqual({ typed: 'insert', reason: 'accepted' });
      expect((await env.type('yz', { at: AT.sticky })).typing).toEqual({ typed: 'keys', reason: 'not-taken' });
      expect(await env.page.inputValue('#sticky')).toBe('xyz');
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
