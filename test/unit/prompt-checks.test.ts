// Specification of the worker-start check of prompt files: read and rendered for the endpoint's profile, a file that
// cannot serve stops the start in one line naming both action lists; one that narrows the actions is said in one line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { faraSpace } from '../../src/families/fara-common/spaces';
import { ConfigError } from '../../src/common/config-error';
import { configFromObject } from '../../src/runtime/config';
import { checkPromptFiles } from '../../src/runtime/prompt-checks';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-prompt-checks-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const FARA15 = faraSpace('fara-1.5').allowedActions;
const FARA7B = faraSpace('fara-7b').allowedActions;

function promptFile(text: string): string {
  const file = path.join(dir, `p-${Math.random().toString(36).slice(2)}.txt`);
  fs.writeFileSync(file, text);
  return file;
}

const models = (endpoint: Record<string, unknown>) =>
  configFromObject({ models: { fara: { baseUrl: 'http://gpu.test/v1', model: 'm', ...endpoint } } }).models;
const withEnum = (actions: readonly string[]) => `My prompt.\n{"enum": ${JSON.stringify(actions)}}\n`;

describe('checkPromptFiles', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['no prompt file: nothing to say', {}, []],
    ['a file with {tools}: the profile’s own list, nothing to say', { promptFile: promptFile('Mine.\n{tools}') }, []],
    ['the full list written out', { promptFile: promptFile(withEnum(FARA15)) }, []],
    [
      'fewer actions: one line saying which the model may no longer use',
      { promptFile: promptFile(withEnum(['left_click', 'type', 'terminate'])) },
      [
        `models.fara.promptFile: the prompt offers 3 of fara-1.5's 18 actions, and the model may use only those ` +
          `(left out: ${FARA15.filter((a) => !['left_click', 'type', 'terminate'].includes(a)).join(', ')})`,
      ],
    ],
    [
      'no list at all: one line saying the profile’s actions stand',
      { promptFile: promptFile('Words only.') },
      [`models.fara.promptFile: the prompt lists no "enum" of actions; the model may use all 18 of fara-1.5's`],
    ],
    ["checked against the identity's profile", { identity: 'fara_7b', promptFile: promptFile(withEnum(FARA7B)) }, []],
  ])('%s', async (_name, endpoint, lines) => {
    expect(await checkPromptFiles(models(endpoint))).toEqual(lines);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'an action the runtime lacks',
      { promptFile: promptFile(withEnum(['left_click', 'fly_to'])) },
      `models.fara.promptFile: the prompt offers fly_to, which fara-1.5 lacks (fara-1.5's actions: ${FARA15.join(', ')})`,
    ],
    [
      'a Fara-1.5 action on a fara-7b endpoint',
      { profile: 'fara-7b', promptFile: promptFile(withEnum(['left_click', 'double_click'])) },
      `models.fara.promptFile: the prompt offers double_click, which fara-7b lacks (fara-7b's actions: ${FARA7B.join(', ')})`,
    ],
    [
      'a file that is not there',
      { promptFile: path.join(dir, 'missing.txt') },
      `models.fara.promptFile: Prompt file not found: ${path.join(dir, 'missing.txt')}`,
    ],
  ])('%s stops the start with a one-line ConfigError', async (_name, endpoint, message) => {
    const check = checkPromptFiles(models(endpoint));
    await expect(check).rejects.toBeInstanceOf(ConfigError);
    await expect(check).rejects.toThrow(message);
    expect(message).not.toContain('\n');
  });
});
