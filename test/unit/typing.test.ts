// Specification of typing's choices made before looking at a field (src/browser/typing.ts) and of its configuration
// (`browser.fastTyping`, `browser.keyTypingHosts`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { adaptiveTypingDelay, Typist } from '../../src/browser/typing';
import type { TypingOptions } from '../../src/browser/typing';
import { loadConfig } from '../../src/runtime/config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-typing-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function load(browser: unknown): ReturnType<typeof loadConfig> {
  const file = path.join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify({ browser }));
  return loadConfig({ file, env: {}, machine: { cores: 2, memoryBytes: 24 * 1024 ** 3 } });
}

describe('Typist.keysBefore: keys whatever the field', () => {
  it.each<[string, TypingOptions, string, string, string | undefined]>([
    ['default: the field decides', {}, 'hello', 'https://shop.example/', undefined],
    ['fast typing off', { fastTyping: false }, 'hello', 'https://shop.example/', 'fast-typing-off'],
    ['a delay set alone', { typingDelayMs: 12 }, 'hello', 'https://shop.example/', 'fast-typing-off'],
    ['a delay set with fast typing on', { typingDelayMs: 12, fastTyping: true }, 'hi', 'https://a.example/', undefined],
    ['a line break', {}, 'one\ntwo', 'https://shop.example/', 'control-characters'],
    ['a tab', {}, 'one\ttwo', 'https://shop.example/', 'control-characters'],
    ['a listed host', { keyTypingHosts: ['shop.example'] }, 'hi', 'https://shop.example/x', 'host-listed'],
    ['a listed subdomain pattern', { keyTypingHosts: ['*.example'] }, 'hi', 'https://a.b.example/', 'host-listed'],
    ['a host not listed', { keyTypingHosts: ['*.example'] }, 'hi', 'https://example/', undefined],
    ['a listed port', { keyTypingHosts: ['localhost:8080'] }, 'hi', 'http://localhost:8080/', 'host-listed'],
    ['another port', { keyTypingHosts: ['localhost:8080'] }, 'hi', 'http://localhost:8081/', undefined],
    ['a page without a host', { keyTypingHosts: ['example.com'] }, 'hi', 'about:blank', undefined],
  ])('%s', (_name, options, text, url, expected) => {
    expect(new Typist(options).keysBefore(text, url)).toBe(expected);
  });

  it('keeps the per-key delay of the keys path', () => {
    expect(adaptiveTypingDelay('hello', 12)).toBe(12);
    expect(adaptiveTypingDelay('x'.repeat(150), 12)).toBe(10);
  });
});

describe('configuration', () => {
  it('fastTyping and keyTypingHosts are absent by default and read when given', () => {
    expect(load({}).browser).not.toHaveProperty('fastTyping');
    expect(load({}).browser).not.toHaveProperty('keyTypingHosts');
    const browser = load({ fastTyping: false, keyTypingHosts: ['*.bank.example', 'localhost:3000'] }).browser;
    expect(browser).toMatchObject({ fastTyping: false, keyTypingHosts: ['*.bank.example', 'localhost:3000'] });
  });

  it.each([['bank.example/login'], ['*'], ['http://bank.example'], ['']])('%j is refused in one line', (pattern) => {
    expect(() => load({ keyTypingHosts: [pattern] })).toThrow(
      /browser\.keyTypingHosts\.0: a host pattern: example\.com, \*\.example\.com or host:port$/,
    );
  });
});
