// Specification of the model-family registry and its names: the built-in Fara families, a family registered at
// runtime, the checks a starting task gets (its family and identity), and the newer names accepted beside the old
// ones (`family` beside `profile`: the client's NewTask, `--family`, `models.<name>.family`; a family's `outputText`
// beside the old `replyText`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTask } from '../../client/client';
import { familyFlag } from '../../cli/args';
import { FARA15_FAMILY } from '../../src/families/fara-1.5/family';
import { outputTextOf } from '../../src/families/family';
import type { ModelFamily } from '../../src/families/family';
import {
  eitherFamilyName,
  familyIssue,
  familyNames,
  familyOf,
  isFamilyName,
  registerFamily,
  UnknownFamilyError,
} from '../../src/families/registry';
import { loadConfig } from '../../src/runtime/config';

describe('the registry', () => {
  it('knows Fara-1.5 and Fara-7B, with their coordinate spaces and screenshot sizes', () => {
    expect(familyNames().slice(0, 2)).toEqual(['fara-1.5', 'fara-7b']);
    expect(familyOf('fara-1.5')).toMatchObject({ coordinateSpace: 'norm1000', resizeFactor: 32 });
    expect(familyOf('fara-7b')).toMatchObject({ coordinateSpace: 'resized-pixels', resizeFactor: 28 });
    expect(familyOf('fara-7b').displaySize({ width: 1428, height: 896 })).toEqual({ width: 1428, height: 896 });
    expect(familyOf('fara-1.5').displaySize({ width: 1440, height: 896 })).toEqual({ width: 1000, height: 1000 });
  });

  it('refuses an unknown name in one line naming the known ones', () => {
    expect(() => familyOf('gpt-5')).toThrow(UnknownFamilyError);
    expect(() => familyOf('gpt-5')).toThrow(/^unknown model family 'gpt-5' \(known: fara-1\.5, fara-7b/);
  });

  it('adds a family at runtime, once per name', () => {
    const family: ModelFamily = { ...FARA15_FAMILY, name: 'unit-copy' };
    registerFamily(family);
    registerFamily(family); // the same object again: nothing happens
    expect(familyOf('unit-copy')).toBe(family);
    expect(isFamilyName('unit-copy')).toBe(true);
    expect(() => registerFamily({ ...family })).toThrow("a model family named 'unit-copy' is already registered");
  });

  it('maps a question to the person: Fara-1.5 asks, both end with terminate', () => {
    const fara15 = familyOf('fara-1.5');
    expect(fara15.outcome({ action: 'ask_user_question', question: 'Which date?' })).toEqual({
      kind: 'ask',
      text: 'Which date?',
    });
    expect(familyOf('fara-7b').outcome({ action: 'terminate', status: 'success' })).toEqual({
      kind: 'terminate',
      text: 'Task ended: success',
    });
    expect(fara15.outcome({ action: 'left_click', coordinate: [1, 2] })).toEqual({ kind: 'act', text: null });
  });
});

describe('a starting task: its family and identity', () => {
  it.each<[string, Parameters<typeof familyIssue>[0], ReturnType<typeof familyIssue>]>([
    ['a known family', { profile: 'fara-7b', identity: 'fara_7b' }, null],
    ['a desktop task (no family)', { profile: 'nope', environment: 'desktop' }, null],
    [
      'an unknown family',
      { profile: 'nope' },
      { field: 'profile', reason: expect.stringMatching(/^unknown model family 'nope' \(known: fara-1\.5, fara-7b/) },
    ],
    [
      "another family's identity",
      { profile: 'fara-1.5', identity: 'fara_7b' },
      { field: 'identity', reason: expect.stringMatching(/^identity "fara_7b" is fara-7b's, not fara-1\.5's/) },
    ],
  ])('%s', (_name, task, issue) => {
    expect(familyIssue(task)).toEqual(issue);
  });
});

describe('the newer name beside the old one', () => {
  it('eitherFamilyName takes one of them, refuses two that differ', () => {
    expect(eitherFamilyName(undefined, undefined)).toBeUndefined();
    expect(eitherFamilyName('fara-7b', undefined)).toBe('fara-7b');
    expect(eitherFamilyName(undefined, 'fara-7b')).toBe('fara-7b');
    expect(eitherFamilyName('fara-7b', 'fara-7b')).toBe('fara-7b');
    expect(() => eitherFamilyName('fara-1.5', 'fara-7b')).toThrow("family 'fara-7b' and profile 'fara-1.5' differ");
  });

  it("the client's NewTask: family sets TaskInput.profile; an unknown one is InvalidTaskInputError", () => {
    expect(parseTask({ instruction: 'x', family: 'fara-7b' }).profile).toBe('fara-7b');
    expect(parseTask({ instruction: 'x' }).profile).toBe('fara-1.5');
    expect(() => parseTask({ instruction: 'x', family: 'gpt-5' })).toThrow(
      /^invalid task: profile: unknown model family 'gpt-5'/,
    );
    expect(() => parseTask({ instruction: 'x', family: 'fara-7b', profile: 'fara-1.5' })).toThrow(
      /^invalid task: family: /,
    );
  });

  it("a family's outputText, else its old replyText, else Fara's text with native calls written out", () => {
    const output = { text: 'Click.', toolCalls: [{ name: 'computer_use', arguments: '{"action":"wait"}' }] };
    const own: ModelFamily = { ...FARA15_FAMILY, outputText: (o) => `own: ${o.text}` };
    const old: ModelFamily = { ...FARA15_FAMILY, outputText: undefined, replyText: (o) => `old: ${o.text}` };
    const none: ModelFamily = { ...FARA15_FAMILY, outputText: undefined };
    expect(outputTextOf(own, output)).toBe('own: Click.');
    expect(outputTextOf(old, output)).toBe('old: Click.');
    expect(outputTextOf(none, output)).toBe(
      'Click.\n<tool_call>\n{"name": "computer_use", "arguments": {"action":"wait"}}\n</tool_call>',
    );
  });

  it('--family beside --profile', () => {
    expect(familyFlag({ family: 'fara-7b' })).toBe('fara-7b');
    expect(familyFlag({ profile: 'fara-7b' })).toBe('fara-7b');
    expect(familyFlag({})).toBeUndefined();
    expect(() => familyFlag({ family: 'gpt-4' })).toThrow(/^--family must be one of fara-1\.5, fara-7b/);
    expect(() => familyFlag({ profile: 'gpt-4' })).toThrow(/^--profile must be one of fara-1\.5, fara-7b/);
    expect(() => familyFlag({ family: 'fara-7b', profile: 'fara-1.5' })).toThrow(/differ: give one/);
  });

  describe('models.<name>.family beside .profile', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-families-'));
    const load = (endpoint: Record<string, unknown>) => {
      const file = path.join(dir, `c-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({ models: { m: { baseUrl: 'http://a.test/v1', model: 'm', ...endpoint } } }),
      );
      return loadConfig({ file, env: {} }).models.m;
    };

    it('is read as .profile (the key the worker uses), its identity checked against it', () => {
      expect(load({ family: 'fara-7b', identity: 'fara_7b' })).toMatchObject({ profile: 'fara-7b' });
      expect(load({ family: 'fara-7b' })).not.toHaveProperty('family');
      expect(() => load({ family: 'fara-7b', identity: 'fara_qwen35' })).toThrow(/models\.m\.identity: /);
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      ['an unknown family', { family: 'gpt-5' }, /models\.m\.family: unknown model family 'gpt-5'/],
      ['an unknown profile', { profile: 'gpt-5' }, /models\.m\.profile: unknown model family 'gpt-5'/],
      ['both, differing', { family: 'fara-7b', profile: 'fara-1.5' }, /models\.m\.family: is fara-7b but profile/],
    ])('refuses %s', (_name, endpoint, message) => {
      expect(() => load(endpoint)).toThrow(message);
    });
  });
});
