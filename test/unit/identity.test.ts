// Specification of choosing the identity: per endpoint in the worker config (a registry name or a text of its own),
// per task (registry names of the task's profile only), and the checks of an endpoint's settings against a profile.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { endpointFamily, endpointFamilyIssue } from '../../src/model/endpoint-prompt';
import { familyIssue, familyOf } from '../../src/families/registry';
import type { EndpointPromptSettings } from '../../src/model/endpoint-prompt';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';
import { TaskInputSchema } from '../../src/contract/task';

const CUSTOM = 'You are Scout, a browsing assistant for the travel desk.';

describe('the task input: a registry name of its family (checked as the task starts)', () => {
  const parse = (extra: Record<string, unknown>) =>
    TaskInputSchema.safeParse({ runId: 'r1', instruction: 'x', ...extra });
  const issue = (extra: Record<string, unknown>) => {
    const parsed = parse(extra);
    if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    const atStart = familyIssue(parsed.data);
    return atStart ? `${atStart.field}: ${atStart.reason}` : null;
  };

  it.each<[string, Record<string, unknown>]>([
    ['a fara-1.5 name', { identity: 'fara_qwen3vl' }],
    ["fara-7b's own", { profile: 'fara-7b', identity: 'fara_7b' }],
    ['none (the endpoint or profile decides)', {}],
  ])('accepts %s', (_name, extra) => {
    expect(issue(extra)).toBeNull();
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      "another profile's name",
      { identity: 'fara_7b' },
      `identity: identity "fara_7b" is fara-7b's, not fara-1.5's; fara-1.5's identities: fara_qwen35, fara_qwen3vl`,
    ],
    [
      'a text of its own (a task starter must not write the system prompt)',
      { profile: 'fara-7b', identity: CUSTOM },
      'identity: unknown identity "You are Scout, a browsing assistant for…"; known identities: fara_7b; a custom ' +
        'identity text can be set only in the worker config (models.<name>.identity)',
    ],
    [
      'a desktop task',
      { environment: 'desktop', identity: 'fara_qwen35' },
      'identity: the desktop agent has a prompt of its own; an identity is for the browser families',
    ],
    [
      'a family no process registered',
      { profile: 'gpt-5' },
      "profile: unknown model family 'gpt-5' (known: fara-1.5, fara-7b, openai-computer, anthropic-computer, gemini-computer, ui-tars-1.5, qwen-vl)",
    ],
  ])('refuses %s in one line', (_name, extra, message) => {
    expect(issue(extra)).toBe(message);
  });
});

describe('the worker config: models.<name>.identity and .profile', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-identity-'));
  const load = (endpoint: Record<string, unknown>) => {
    const file = path.join(dir, `c-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify({ models: { m: { baseUrl: 'http://a.test/v1', model: 'm', ...endpoint } } }));
    return loadConfig({ file, env: {} }).models.m;
  };

  it.each<[string, Record<string, unknown>]>([
    ['a registry name', { identity: 'fara_qwen3vl' }],
    ['a text of its own (20 characters or more)', { identity: CUSTOM }],
    ['a name of its declared profile', { profile: 'fara-7b', identity: 'fara_7b' }],
  ])('accepts %s', (_name, endpoint) => {
    expect(load(endpoint)).toMatchObject(endpoint);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a short unknown name',
      { identity: 'fara_qwen' },
      /^invalid configuration: models\.m\.identity: unknown identity "fara_qwen"; known identities: fara_qwen35, fara_qwen3vl, fara_7b \(a custom identity text needs at least 20 characters\)$/,
    ],
    [
      'a name of another profile than the declared one',
      { profile: 'fara-1.5', identity: 'fara_7b' },
      /^invalid configuration: models\.m\.identity: identity "fara_7b" is fara-7b's, not fara-1\.5's; fara-1\.5's identities: fara_qwen35, fara_qwen3vl$/,
    ],
    ['a profile that does not exist', { profile: 'gpt-5' }, /^invalid configuration: models\.m\.profile: /],
  ])('refuses %s with a one-line ConfigError', (_name, endpoint, message) => {
    expect(() => load(endpoint)).toThrow(ConfigError);
    expect(() => load(endpoint)).toThrow(message);
  });
});

describe("an endpoint's settings against a task's profile", () => {
  it.each<[string, EndpointPromptSettings, string]>([
    ['nothing set: the tasks’ default', {}, 'fara-1.5'],
    ['a registry identity: its profile', { identity: 'fara_7b' }, 'fara-7b'],
    ['a declared profile wins', { profile: 'fara-7b', identity: CUSTOM }, 'fara-7b'],
    ['a custom identity says nothing', { identity: CUSTOM }, 'fara-1.5'],
  ])('the profile checked at worker start, %s', (_name, settings, profile) => {
    expect(endpointFamily(settings)).toBe(profile);
  });

  it.each<[string, EndpointPromptSettings, 'fara-1.5' | 'fara-7b', string | undefined, string | null]>([
    ['fits', { identity: 'fara_qwen3vl' }, 'fara-1.5', undefined, null],
    ['a custom identity fits any profile', { identity: CUSTOM }, 'fara-7b', undefined, null],
    [
      "the endpoint's identity is another profile's",
      { identity: 'fara_7b' },
      'fara-1.5',
      undefined,
      `model endpoint 'm': identity "fara_7b" is fara-7b's, not fara-1.5's; fara-1.5's identities: fara_qwen35, ` +
        'fara_qwen3vl (models.m.identity)',
    ],
    ["the task's own identity replaces the endpoint's", { identity: 'fara_7b' }, 'fara-1.5', 'fara_qwen35', null],
    [
      'the endpoint declares another profile',
      { profile: 'fara-7b' },
      'fara-1.5',
      undefined,
      "model endpoint 'm' speaks fara-7b (models.m.profile); this task's profile is fara-1.5",
    ],
  ])('%s', (_name, settings, profile, taskIdentity, issue) => {
    expect(endpointFamilyIssue('m', settings, familyOf(profile), taskIdentity)).toBe(issue);
  });
});
