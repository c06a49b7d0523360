// Specification of the system prompt: byte-exact golden files per profile, its three-part structure, the tool
// schema inside <tools>, identities, prompt-file overrides and their placeholders.
//
// Golden files: test/fixtures/golden/system-prompt-<profile>.txt. After an intended prompt change, regenerate them
// with `UPDATE_GOLDEN=1 npx vitest run test/unit/prompt.test.ts` and review the diff. Each profile's prompt is built
// for the screenshot size the runtime computes from the default viewport (1428×896 for Fara-7B, 1440×896 for Fara-1.5).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FARA_NAMES } from '../../src/actions/fara';
import { faraSpace } from '../../src/families/fara-common/spaces';
import type { FaraSpace, FaraName } from '../../src/actions/fara';
import type { ScreenSize } from '../../src/actions/tool-schema';
import { smartResize } from '../../src/image/smart-resize';
import {
  IdentityProfileError,
  PromptActionsError,
  PromptFileError,
  UnknownIdentityError,
} from '../../src/model/errors';
import { DEFAULT_IDENTITY, IDENTITIES, identityError, resolveIdentity } from '../../src/model/identities';
import {
  CRITICAL_POINTS,
  allowedActionsInPrompt,
  buildSystemPrompt,
  loadPromptOverride,
  promptActions,
} from '../../src/model/prompt';
import { TaskInputSchema } from '../../src/contract/task';

/** The viewport a task gets by default. */
const VIEWPORT = TaskInputSchema.shape.viewport.parse(undefined);

/** The screenshot size the runtime computes for a profile (activities/support.ts screenOf): smart_resize of the viewport. */
function screenOf(name: FaraName): ScreenSize {
  const { width, height } = smartResize(VIEWPORT.height, VIEWPORT.width, { factor: faraSpace(name).resizeFactor });
  return { width, height };
}

const GOLDEN_DIR = join(__dirname, '..', 'fixtures', 'golden');

describe('screenshot size of the default viewport', () => {
  it.each([
    ['fara-1.5', { width: 1440, height: 896 }],
    ['fara-7b', { width: 1428, height: 896 }],
  ] as const)('%s: %j', (name, screen) => {
    expect(screenOf(name)).toEqual(screen);
  });
});

describe.each(FARA_NAMES)('golden system prompt (%s)', (name) => {
  it('matches the golden file byte for byte', async () => {
    const prompt = buildSystemPrompt({ family: faraSpace(name), screen: screenOf(name) });
    const file = join(GOLDEN_DIR, `system-prompt-${name}.txt`);
    if (process.env.UPDATE_GOLDEN === '1') {
      await mkdir(GOLDEN_DIR, { recursive: true });
      await writeFile(file, prompt, 'utf8');
    }
    expect(prompt).toBe(await readFile(file, 'utf8'));
  });
});

/** The JSON between <tools> and </tools>. */
function toolsJson(prompt: string): unknown {
  const match = /<tools>\n(.*)\n<\/tools>/s.exec(prompt);
  if (!match?.[1]) throw new Error('no <tools> block');
  return JSON.parse(match[1]);
}

describe.each(FARA_NAMES)('prompt structure (%s)', (name) => {
  const profile = faraSpace(name);
  const screen = screenOf(name);
  const prompt = buildSystemPrompt({ family: profile, screen });

  it('is identity, critical points, then the function-call format', () => {
    const identity = resolveIdentity(name);
    expect(prompt.startsWith(`${identity}\n\n${CRITICAL_POINTS[name]}\n\n`)).toBe(true);
    expect(prompt.indexOf('<tools>')).toBeGreaterThan(prompt.indexOf(CRITICAL_POINTS[name]));
    expect(
      prompt.endsWith('<tool_call>\n{"name": <function-name>, "arguments": <arguments-object>}\n</tool_call>'),
    ).toBe(true);
  });

  it('shows exactly the profile tool schema inside <tools>', () => {
    expect(toolsJson(prompt)).toEqual(profile.toolSchemaFor(screen));
  });

  it('offers exactly the allowed actions', () => {
    expect(allowedActionsInPrompt(prompt)).toEqual(profile.allowedActions);
  });

  it('is the same text when rebuilt with the same inputs', () => {
    expect(buildSystemPrompt({ family: profile, screen: { ...screen } })).toBe(prompt);
  });
});

describe('declared screen resolution', () => {
  it.each([
    ['fara-1.5', { width: 1440, height: 896 }, '1000x1000'],
    ['fara-1.5', { width: 1288, height: 728 }, '1000x1000'],
    ['fara-7b', { width: 1428, height: 896 }, '1428x896'],
    ['fara-7b', { width: 1288, height: 728 }, '1288x728'],
  ] as const)('%s with screenshot %j says %s', (name, screen, resolution) => {
    const prompt = buildSystemPrompt({ family: faraSpace(name), screen });
    expect(prompt).toContain(`The screen resolution is ${resolution};`);
  });
});

describe('identities', () => {
  it.each(FARA_NAMES)('the default identity of %s belongs to it', (name) => {
    expect(IDENTITIES[DEFAULT_IDENTITY[name]]?.family).toBe(name);
  });

  it('picks a registered identity by key', () => {
    const prompt = buildSystemPrompt({
      family: faraSpace('fara-1.5'),
      screen: screenOf('fara-1.5'),
      identity: 'fara_qwen3vl',
    });
    expect(prompt.startsWith(IDENTITIES.fara_qwen3vl?.text ?? '<missing>')).toBe(true);
    expect(prompt).toContain('Qwen3-VL-8B-Instruct');
  });

  it('takes a long unknown string as a custom identity text', () => {
    const custom = 'You are a careful browsing assistant.';
    const prompt = buildSystemPrompt({ family: faraSpace('fara-7b'), screen: screenOf('fara-7b'), identity: custom });
    expect(prompt.startsWith(`${custom}\n\n`)).toBe(true);
  });

  it.each([
    ['fara-1.5', 'fara_qwen99', UnknownIdentityError],
    ['fara-1.5', 'fara_7b', IdentityProfileError],
    ['fara-7b', 'fara_qwen35', IdentityProfileError],
  ] as const)('%s rejects identity %s', (name, identity, type) => {
    expect(() => resolveIdentity(name, identity)).toThrow(type);
  });

  it('lists the known identities of the profile in the error', () => {
    expect(() => resolveIdentity('fara-1.5', 'nope')).toThrow(/fara_qwen35, fara_qwen3vl/);
  });

  const CUSTOM = 'You are a careful browsing assistant.';
  it.each<[string, string, Parameters<typeof identityError>[1], string | null]>([
    ['a name of the profile', 'fara_qwen3vl', { family: 'fara-1.5', custom: false }, null],
    ['any profile’s name when none is given', 'fara_7b', { custom: true }, null],
    [
      "another profile's name",
      'fara_7b',
      { family: 'fara-1.5', custom: true },
      `identity "fara_7b" is fara-7b's, not fara-1.5's; fara-1.5's identities: fara_qwen35, fara_qwen3vl`,
    ],
    ['a custom text where custom texts are allowed', CUSTOM, { family: 'fara-7b', custom: true }, null],
    [
      'a custom text where only names are (a task)',
      CUSTOM,
      { family: 'fara-7b', custom: false },
      'unknown identity "You are a careful browsing assistant."; known identities: fara_7b; a custom identity text ' +
        'can be set only in the worker config (models.<name>.identity)',
    ],
    [
      'a short unknown text (a mistyped name)',
      'fara_qwen36',
      { custom: true },
      'unknown identity "fara_qwen36"; known identities: fara_qwen35, fara_qwen3vl, fara_7b (a custom identity ' +
        'text needs at least 20 characters)',
    ],
  ])('identityError: %s', (_name, identity, rules, message) => {
    expect(identityError(identity, rules)?.message ?? null).toBe(message);
  });
});

describe('override text', () => {
  it('replaces every placeholder and leaves other braces alone', () => {
    const profile = faraSpace('fara-7b');
    const override =
      'Screen {screen_width}x{screen_height}. Actions: {allowed_actions}.\n{identity}\n---\n{critical_points}\n' +
      '<tools>\n{tools}\n</tools>\n{"name": <function-name>} {unknown} {tools}';
    const prompt = buildSystemPrompt({ family: profile, screen: { width: 812, height: 588 }, override });
    expect(prompt.startsWith(`Screen 812x588. Actions: ${profile.allowedActions.join(', ')}.\n`)).toBe(true);
    expect(prompt).toContain(resolveIdentity('fara-7b'));
    expect(prompt).toContain(CRITICAL_POINTS['fara-7b']);
    expect(toolsJson(prompt)).toEqual(profile.toolSchemaFor({ width: 812, height: 588 }));
    expect(prompt).toContain('{"name": <function-name>} {unknown} {"type": "function"');
    expect(prompt).not.toMatch(/\{(tools|screen_width|screen_height|allowed_actions|identity|critical_points)\}/);
  });

  it('uses a text without placeholders exactly as given', () => {
    const override = 'Exactly this.\n\n{"enum": ["left_click"]}';
    expect(buildSystemPrompt({ family: faraSpace('fara-1.5'), screen: screenOf('fara-1.5'), override })).toBe(override);
  });

  it('speaks 1000x1000 for fara-1.5 whatever the screenshot', () => {
    const override = '{screen_width}x{screen_height}';
    expect(buildSystemPrompt({ family: faraSpace('fara-1.5'), screen: screenOf('fara-7b'), override })).toBe(
      '1000x1000',
    );
  });
});

describe('loadPromptOverride', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cua-prompt-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['plain text', 'Hello {tools}', 'Hello {tools}'],
    ['one final newline dropped', 'Line 1\nLine 2\n', 'Line 1\nLine 2'],
    ['one final CRLF dropped', 'Line\r\n', 'Line'],
    ['only one final newline dropped', 'Text\n\n', 'Text\n'],
    ['inner whitespace kept', '  lead\n\ntrail  ', '  lead\n\ntrail  '],
  ])('reads %s', async (_case, content, expected) => {
    const file = join(dir, 'prompt.txt');
    await writeFile(file, content, 'utf8');
    await expect(loadPromptOverride(file)).resolves.toBe(expected);
  });

  it.each([
    ['a missing file', async () => join(dir, 'absent.txt'), 'missing', /not found/],
    [
      'a directory',
      async () => {
        const sub = join(dir, 'sub');
        await mkdir(sub, { recursive: true });
        return sub;
      },
      'not-a-file',
      /not a regular file/,
    ],
    [
      'an empty file',
      async () => {
        await writeFile(join(dir, 'empty.txt'), '');
        return join(dir, 'empty.txt');
      },
      'empty',
      /empty/,
    ],
    [
      'a whitespace-only file',
      async () => {
        await writeFile(join(dir, 'blank.txt'), ' \n\t\n');
        return join(dir, 'blank.txt');
      },
      'empty',
      /empty/,
    ],
  ] as const)('rejects %s with a PromptFileError', async (_case, makePath, reason, message) => {
    const path = await makePath();
    const error: unknown = await loadPromptOverride(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptFileError);
    expect((error as PromptFileError).name).toBe('PromptFileError');
    expect((error as PromptFileError).reason).toBe(reason);
    expect((error as PromptFileError).message).toMatch(message);
    expect((error as PromptFileError).message).toContain(path);
  });
});

describe('allowedActionsInPrompt', () => {
  it.each([
    ['{"enum": ["a", "b"]}', ['a', 'b']],
    ['no enum here', undefined],
    ['"enum": [broken', undefined],
  ])('%s -> %j', (text, expected) => {
    expect(allowedActionsInPrompt(text)).toEqual(expected);
  });
});

describe('the actions a prompt offers (the prompt is the whitelist)', () => {
  const FARA15: FaraSpace = faraSpace('fara-1.5');
  const FARA7B: FaraSpace = faraSpace('fara-7b');
  const withEnum = (actions: string[]) => `A prompt of my own.\n{"enum": ${JSON.stringify(actions)}}`;

  it.each(FARA_NAMES)('the built-in prompt of %s offers exactly its actions', (name) => {
    const profile = faraSpace(name);
    const prompt = buildSystemPrompt({ family: profile, screen: screenOf(name) });
    expect(promptActions(prompt, profile)).toEqual({ allowed: profile.allowedActions, left: [], listed: true });
  });

  it('a prompt that offers fewer narrows the allowed set, in its order', () => {
    expect(promptActions(withEnum(['terminate', 'left_click', 'type']), FARA15)).toEqual({
      allowed: ['terminate', 'left_click', 'type'],
      left: FARA15.allowedActions.filter((a) => !['terminate', 'left_click', 'type'].includes(a)),
      listed: true,
    });
  });

  it('a prompt with no "enum" list leaves the profile\'s actions', () => {
    expect(promptActions('Just words.', FARA7B)).toEqual({ allowed: FARA7B.allowedActions, left: [], listed: false });
  });

  it.each<[string, string[], FaraSpace, string]>([
    [
      'an action no profile has',
      ['left_click', 'fly_to'],
      FARA15,
      `the prompt offers fly_to, which fara-1.5 lacks (fara-1.5's actions: ${FARA15.allowedActions.join(', ')})`,
    ],
    [
      'a Fara-1.5 action for fara-7b',
      ['left_click', 'double_click'],
      FARA7B,
      `the prompt offers double_click, which fara-7b lacks (fara-7b's actions: ${FARA7B.allowedActions.join(', ')})`,
    ],
  ])('%s is a PromptActionsError naming both sides', (_name, actions, profile, message) => {
    expect(() => promptActions(withEnum(actions), profile)).toThrow(PromptActionsError);
    expect(() => promptActions(withEnum(actions), profile)).toThrow(message);
  });
});
