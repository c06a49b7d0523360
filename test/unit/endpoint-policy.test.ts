// Specification of the model endpoint rule: a configured key goes only to its own base URL; a task's override gets
// no key or the key the config names for that URL; overrides can be turned off or limited to an allow-list.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  baseUrlAllowed,
  ModelEndpointMissing,
  ModelOverrideRefused,
  normalizeBaseUrl,
  resolveModelEndpoint,
} from '../../src/model/endpoint-policy';
import type { EndpointChoice, EndpointRules } from '../../src/model/endpoint-policy';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';

const CONFIGURED = { baseUrl: 'http://x/v1', model: 'fara', apiKey: 'sk-secret-123', temperature: 0.1 };
const rules = (extra: Partial<EndpointRules> = {}): EndpointRules => ({ models: { default: CONFIGURED }, ...extra });
const choice = (over: Partial<EndpointChoice> = {}): EndpointChoice => ({ name: 'default', ...over });

describe('resolveModelEndpoint: where the key goes', () => {
  it.each<[string, Partial<EndpointChoice>, Partial<EndpointRules>, { baseUrl: string; model: string; key?: string }]>([
    [
      'no override: the configured endpoint and its key',
      {},
      {},
      { baseUrl: 'http://x/v1', model: 'fara', key: 'sk-secret-123' },
    ],
    [
      'the same URL: keeps the key',
      { baseUrl: 'http://x/v1' },
      {},
      { baseUrl: 'http://x/v1', model: 'fara', key: 'sk-secret-123' },
    ],
    [
      'the same URL with a trailing slash: keeps the key',
      { baseUrl: 'http://X:80/v1/' },
      {},
      { baseUrl: 'http://x/v1', model: 'fara', key: 'sk-secret-123' },
    ],
    [
      'a model-only override: same URL, keeps the key',
      { model: 'other' },
      {},
      { baseUrl: 'http://x/v1', model: 'other', key: 'sk-secret-123' },
    ],
    [
      'another URL without a named key: no key',
      { baseUrl: 'http://evil:9/v1', model: 'm' },
      {},
      { baseUrl: 'http://evil:9/v1', model: 'm' },
    ],
    [
      'a host-suffix trick is another URL',
      { baseUrl: 'http://x.evil/v1' },
      {},
      { baseUrl: 'http://x.evil/v1', model: 'fara' },
    ],
    [
      'a longer path is another URL',
      { baseUrl: 'http://x/v1/extra' },
      {},
      { baseUrl: 'http://x/v1/extra', model: 'fara' },
    ],
    ['another scheme is another URL', { baseUrl: 'https://x/v1' }, {}, { baseUrl: 'https://x/v1', model: 'fara' }],
    [
      'another port is another URL',
      { baseUrl: 'http://x:8080/v1' },
      {},
      { baseUrl: 'http://x:8080/v1', model: 'fara' },
    ],
    ['user info makes another URL', { baseUrl: 'http://u:p@x/v1' }, {}, { baseUrl: 'http://u:p@x/v1', model: 'fara' }],
    [
      'another URL with a key named for it (trailing slash ignored)',
      { baseUrl: 'http://other:9/v1/' },
      { keys: { 'http://other:9/v1': 'sk-other' } },
      { baseUrl: 'http://other:9/v1/', model: 'fara', key: 'sk-other' },
    ],
    [
      'a key named for another URL is not given',
      { baseUrl: 'http://evil:9/v1' },
      { keys: { 'http://other:9/v1': 'sk-other' } },
      { baseUrl: 'http://evil:9/v1', model: 'fara' },
    ],
    [
      'a key named for a prefix is not given to a longer path',
      { baseUrl: 'http://other:9/v1/x' },
      { keys: { 'http://other:9/v1': 'sk-other' } },
      { baseUrl: 'http://other:9/v1/x', model: 'fara' },
    ],
    [
      'an allow-list hit: allowed, still no key',
      { baseUrl: 'http://scripted:8400/v1' },
      { overrides: { allowedBaseUrls: ['http://scripted:8400'] } },
      { baseUrl: 'http://scripted:8400/v1', model: 'fara' },
    ],
    [
      'overrides off, the override equals the configured endpoint: allowed',
      { baseUrl: 'http://x/v1/', model: 'fara' },
      { overrides: { allow: false } },
      { baseUrl: 'http://x/v1', model: 'fara', key: 'sk-secret-123' },
    ],
    [
      'no configured endpoint: the task gives one, with no key',
      { name: 'default', baseUrl: 'http://m/v1', model: 'script' },
      { models: {} },
      { baseUrl: 'http://m/v1', model: 'script' },
    ],
  ])('%s', (_name, over, extra, expected) => {
    const endpoint = resolveModelEndpoint(choice(over), rules(extra));
    expect(endpoint.baseUrl).toBe(expected.baseUrl);
    expect(endpoint.model).toBe(expected.model);
    expect(endpoint.apiKey).toBe(expected.key);
  });

  it('keeps the configured sampling settings for an override', () => {
    expect(resolveModelEndpoint(choice({ baseUrl: 'http://y/v1' }), rules())).toEqual({
      baseUrl: 'http://y/v1',
      model: 'fara',
      temperature: 0.1,
    });
  });
});

describe('resolveModelEndpoint: refusals', () => {
  it.each<[string, Partial<EndpointChoice>, Partial<EndpointRules>, string, string]>([
    [
      'overrides off, another URL',
      { baseUrl: 'http://evil:9/v1' },
      { overrides: { allow: false } },
      'modelOverrides.allow',
      'task overrides the model base URL to http://evil:9/v1, which the worker does not allow (config modelOverrides.allow is false)',
    ],
    [
      'overrides off, another model',
      { model: 'pricier' },
      { overrides: { allow: false } },
      'modelOverrides.allow',
      'task overrides the model to pricier, which the worker does not allow (config modelOverrides.allow is false)',
    ],
    [
      'an allow-list miss',
      { baseUrl: 'http://evil:9/v1' },
      { overrides: { allowedBaseUrls: ['http://scripted:8400/v1'] } },
      'modelOverrides.allowedBaseUrls',
      'task overrides the model base URL to http://evil:9/v1, which the worker does not allow (config modelOverrides.allowedBaseUrls)',
    ],
    [
      'an allow-list host-suffix trick',
      { baseUrl: 'http://x.evil/v1' },
      { overrides: { allowedBaseUrls: ['http://x'] } },
      'modelOverrides.allowedBaseUrls',
      'task overrides the model base URL to http://x.evil/v1, which the worker does not allow (config modelOverrides.allowedBaseUrls)',
    ],
    [
      'a refusal shows the URL without user info or query',
      { baseUrl: 'http://u:p@evil:9/v1?k=1' },
      { overrides: { allowedBaseUrls: ['http://scripted/v1'] } },
      'modelOverrides.allowedBaseUrls',
      'task overrides the model base URL to http://evil:9/v1, which the worker does not allow (config modelOverrides.allowedBaseUrls)',
    ],
  ])('%s', (_name, over, extra, setting, message) => {
    const run = () => resolveModelEndpoint(choice(over), rules(extra));
    expect(run).toThrow(ModelOverrideRefused);
    expect(run).toThrow(message);
    try {
      run();
    } catch (err) {
      expect(err).toMatchObject({ name: 'ModelOverrideRefused', setting });
      expect((err as Error).message).not.toContain('\n');
      expect((err as Error).message).not.toContain('sk-secret-123');
    }
  });

  it('no endpoint anywhere → ModelEndpointMissing naming the settings', () => {
    const run = () => resolveModelEndpoint({ name: 'gpu' }, { models: {} });
    expect(run).toThrow(ModelEndpointMissing);
    expect(run).toThrow("no model endpoint 'gpu' configured");
  });
});

describe('normalizeBaseUrl and baseUrlAllowed', () => {
  it.each<[string, string]>([
    ['http://x/v1/', 'http://x/v1'],
    ['HTTP://X:80/v1', 'http://x/v1'],
    ['https://x:443/', 'https://x'],
    ['http://x:8080/v1//', 'http://x:8080/v1'],
    ['http://u:p@x/v1', 'http://u:p@x/v1'],
    ['http://x/v1?q=1', 'http://x/v1?q=1'],
    ['not a url', 'not a url'],
  ])('normalizeBaseUrl(%j) = %j', (url, expected) => {
    expect(normalizeBaseUrl(url)).toBe(expected);
  });

  it.each<[string, string, boolean]>([
    ['http://x/v1', 'http://x/v1', true],
    ['http://x/v1/', 'http://x/v1', true],
    ['http://x/v1/chat', 'http://x/v1', true],
    ['http://x/v12', 'http://x/v1', false],
    ['http://x/v1', 'http://x', true],
    ['http://x.evil/v1', 'http://x', false],
    ['http://evil/x/v1', 'http://x', false],
    ['http://x:81/v1', 'http://x', false],
    ['https://x/v1', 'http://x', false],
    ['http://x/v1?q=1', 'http://x/v1?q=2', false],
  ])('baseUrlAllowed(%j, %j) = %s', (url, allowed, expected) => {
    expect(baseUrlAllowed(url, allowed)).toBe(expected);
  });
});

describe('the worker config', () => {
  const load = (content: unknown) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cua-policy-')), 'cua.config.json');
    fs.writeFileSync(file, JSON.stringify(content));
    return loadConfig({ file, env: {} });
  };

  it('reads modelOverrides and modelKeys; both are optional', () => {
    const cfg = load({
      modelOverrides: { allowedBaseUrls: ['http://127.0.0.1:8400/v1'] },
      modelKeys: { 'http://127.0.0.1:8400/v1': 'sk-scripted' },
    });
    expect(cfg.modelOverrides).toEqual({ allow: true, allowedBaseUrls: ['http://127.0.0.1:8400/v1'] });
    expect(cfg.modelKeys).toEqual({ 'http://127.0.0.1:8400/v1': 'sk-scripted' });
    expect(load({}).modelOverrides).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    [
      'an allow-list entry that is no URL',
      { modelOverrides: { allowedBaseUrls: ['gpu-box'] } },
      /modelOverrides\.allowedBaseUrls\.0/,
    ],
    ['an unknown modelOverrides key', { modelOverrides: { allowed: false } }, /modelOverrides: .*"allowed"/],
    ['a modelKeys URL that is no URL', { modelKeys: { 'gpu-box': 'k' } }, /modelKeys/],
  ])('%s → ConfigError', (_name, content, message) => {
    expect(() => load(content)).toThrow(ConfigError);
    expect(() => load(content)).toThrow(message);
  });
});
