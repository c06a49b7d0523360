// Specification of the action space: the exact actions per profile, strict schemas, agreement between the tool
// schema shown to the model and the zod validators, descriptions and target points.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { actionPoint } from '../../src/actions/point';
import { describeAction } from '../../src/actions/describe';
import { exampleActions } from '../../src/actions/examples';
import { FARA_NAMES, isFaraName } from '../../src/actions/fara';
import { faraSpace } from '../../src/families/fara-common/spaces';
import type { FaraName } from '../../src/actions/fara';
import { fara15ActionSchema, fara7bActionSchema } from '../../src/actions/schemas';
import type { AgentAction } from '../../src/actions/schemas';
import { allowedActionsOf } from '../../src/actions/tool-schema';

const FARA15_ACTIONS = [
  'key',
  'type',
  'mouse_move',
  'left_click',
  'left_click_drag',
  'right_click',
  'double_click',
  'triple_click',
  'scroll',
  'hscroll',
  'visit_url',
  'history_back',
  'web_search',
  'read_page_answer_question',
  'pause_and_memorize_fact',
  'ask_user_question',
  'wait',
  'terminate',
];

const FARA7B_ACTIONS = [
  'key',
  'type',
  'mouse_move',
  'left_click',
  'scroll',
  'visit_url',
  'web_search',
  'history_back',
  'pause_and_memorize_fact',
  'wait',
  'terminate',
];

const UNIONS = { 'fara-1.5': fara15ActionSchema, 'fara-7b': fara7bActionSchema } as const;

/** Argument names (besides `action` and `thoughts`) of every zod option of a profile. */
function zodParams(name: FaraName): Map<string, z.ZodType> {
  const params = new Map<string, z.ZodType>();
  for (const option of UNIONS[name].options) {
    for (const [key, field] of Object.entries(option.shape as Record<string, z.ZodType>)) {
      if (key !== 'action' && key !== 'thoughts') params.set(key, field);
    }
  }
  return params;
}

/** Whether the profile's union has a member for this discriminator (whatever the other arguments). */
function recognises(name: FaraName, action: string): boolean {
  const issues = faraSpace(name).actionSchema.safeParse({ action }).error?.issues ?? [];
  return !issues.some((i) => i.code === 'invalid_union');
}

describe('profiles', () => {
  it.each([
    ['fara-1.5', FARA15_ACTIONS, 18],
    ['fara-7b', FARA7B_ACTIONS, 11],
  ] as const)('%s allows exactly its listed actions', (name, actions, count) => {
    const profile = faraSpace(name);
    expect(profile.name).toBe(name);
    expect(profile.allowedActions).toHaveLength(count);
    expect(profile.allowedActions).toEqual(actions);
  });

  it.each([
    ['fara-1.5', 'norm1000', 32],
    ['fara-7b', 'resized-pixels', 28],
  ] as const)('%s speaks %s and resizes with factor %d', (name, space, factor) => {
    const profile = faraSpace(name);
    expect(profile.coordinateSpace).toBe(space);
    expect(profile.resizeFactor).toBe(factor);
  });

  it.each([
    ['fara-1.5', true],
    ['fara-7b', true],
    ['fara-2', false],
    ['FARA-1.5', false],
    ['', false],
  ])('isFaraName(%j) is %s', (s, expected) => {
    expect(isFaraName(s)).toBe(expected);
  });

  it('lists every profile name once', () => {
    expect([...FARA_NAMES].sort()).toEqual(['fara-1.5', 'fara-7b']);
  });

  it.each([
    [
      { width: 1440, height: 896 },
      { width: 1000, height: 1000 },
      { width: 1440, height: 896 },
    ],
    [
      { width: 1288, height: 728 },
      { width: 1000, height: 1000 },
      { width: 1288, height: 728 },
    ],
  ])('display size for screenshot %j: fara-1.5 %j, fara-7b %j', (screen, fara15, fara7b) => {
    expect(faraSpace('fara-1.5').displaySize(screen)).toEqual(fara15);
    expect(faraSpace('fara-7b').displaySize(screen)).toEqual(fara7b);
  });
});

describe.each(FARA_NAMES)('tool schema <-> zod agreement (%s)', (name) => {
  const profile = faraSpace(name);
  const tool = profile.toolSchema;
  const properties = tool.function.parameters.properties;

  it('derives the allowed actions from the tool schema enum', () => {
    expect(profile.allowedActions).toEqual(properties.action.enum);
    expect(allowedActionsOf(profile.toolSchemaFor({ width: 800, height: 600 }))).toEqual(profile.allowedActions);
  });

  it('has a zod schema for every enum value, and an enum value for every zod schema', () => {
    const zodActions = UNIONS[name].options.map((o) => o.shape.action.value);
    expect([...zodActions].sort()).toEqual([...properties.action.enum].sort());
    for (const action of properties.action.enum) expect(recognises(name, action), action).toBe(true);
    expect(recognises(name, 'fly_to_moon')).toBe(false);
  });

  it('declares every zod argument as a tool property of the same JSON type, and nothing else', () => {
    const params = zodParams(name);
    expect(
      Object.keys(properties)
        .filter((k) => k !== 'action')
        .sort(),
    ).toEqual([...params.keys()].sort());
    for (const [key, field] of params) {
      const json = z.toJSONSchema(field) as { type: string; enum?: string[] };
      expect(properties[key]?.type, key).toBe(json.type);
      expect(properties[key]?.enum, key).toEqual(json.enum);
    }
  });

  it('requires only `action` and describes every property and every action', () => {
    expect(tool.function.parameters.required).toEqual(['action']);
    for (const [key, property] of Object.entries(properties)) expect(property.description, key).not.toBe('');
    for (const action of profile.allowedActions) expect(properties.action.description).toContain(`\`${action}\``);
    for (const option of UNIONS[name].options) expect(option.description).toBeTruthy();
  });

  it('names each action that needs an argument in that argument description', () => {
    for (const option of UNIONS[name].options) {
      for (const key of Object.keys(option.shape)) {
        if (key === 'action' || key === 'thoughts') continue;
        if (profile.hiddenArguments[option.shape.action.value]?.includes(key)) continue;
        expect(properties[key]?.description).toContain(`\`action=${option.shape.action.value}\``);
      }
    }
  });

  it('mentions in argument descriptions only actions of this profile', () => {
    const mentioned = JSON.stringify(properties).match(/`action=(\w+)`/g) ?? [];
    for (const m of mentioned) expect(profile.allowedActions).toContain(m.slice('`action='.length, -1));
  });
});

describe('tool schema screen resolution', () => {
  it.each([
    ['fara-1.5', { width: 1440, height: 896 }, '1000x1000'],
    ['fara-1.5', { width: 800, height: 600 }, '1000x1000'],
    ['fara-7b', { width: 1428, height: 896 }, '1428x896'],
    ['fara-7b', { width: 812, height: 588 }, '812x588'],
  ] as const)('%s with screenshot %j states %s', (name, screen, resolution) => {
    const description = faraSpace(name).toolSchemaFor(screen).function.description;
    expect(description).toContain(`resolution is ${resolution}`);
  });
});

describe.each(FARA_NAMES)('strict action schemas (%s)', (name) => {
  const profile = faraSpace(name);
  const examples: AgentAction[] = exampleActions(name);

  it('has one example per action', () => {
    expect(examples.map((a) => a.action).sort()).toEqual([...profile.allowedActions].sort());
  });

  it.each(examples)('accepts $action', (action) => {
    expect(profile.actionSchema.parse(action)).toEqual(action);
  });

  it.each(examples)('accepts thoughts on $action', (action) => {
    expect(profile.actionSchema.safeParse({ ...action, thoughts: 'because' }).success).toBe(true);
  });

  it.each(examples)('rejects an extra key on $action', (action) => {
    const result = profile.actionSchema.safeParse({ ...action, bogus: 1 });
    expect(result.success).toBe(false);
  });

  it.each(examples)('rejects a non-string thoughts on $action', (action) => {
    expect(profile.actionSchema.safeParse({ ...action, thoughts: 3 }).success).toBe(false);
  });
});

describe('argument validation', () => {
  it.each([
    ['fara-1.5', { action: 'left_click' }],
    ['fara-1.5', { action: 'left_click', coordinate: [1] }],
    ['fara-1.5', { action: 'left_click', coordinate: [1, 2, 3] }],
    ['fara-1.5', { action: 'left_click', coordinate: ['1', '2'] }],
    ['fara-1.5', { action: 'left_click', x: 1, y: 2 }],
    ['fara-1.5', { action: 'key', keys: [] }],
    ['fara-1.5', { action: 'key', keys: 'Enter' }],
    ['fara-1.5', { action: 'type' }],
    ['fara-1.5', { action: 'scroll', pixels: '100' }],
    ['fara-1.5', { action: 'visit_url', url: '' }],
    ['fara-1.5', { action: 'wait', time: -1 }],
    ['fara-1.5', { action: 'terminate' }],
    ['fara-1.5', { action: 'terminate', status: 'success' }],
    ['fara-1.5', { action: 'ask_user_question', question: '' }],
    ['fara-1.5', { action: 'history_back', url: 'x' }],
    ['fara-7b', { action: 'terminate', answer: 'done' }],
    ['fara-7b', { action: 'terminate', status: 'done' }],
    ['fara-7b', { action: 'double_click', coordinate: [1, 2] }],
    ['fara-7b', { action: 'ask_user_question', question: 'why?' }],
    ['fara-7b', { action: 'hscroll', pixels: 1 }],
  ] as const)('%s rejects %j', (name, value) => {
    expect(faraSpace(name).actionSchema.safeParse(value).success).toBe(false);
  });

  it("accepts a coordinate on Fara-1.5's type (clicked first) without showing it in Fara-1.5's prompt", () => {
    const fara15 = faraSpace('fara-1.5');
    expect(fara15.actionSchema.safeParse({ action: 'type', text: 'a', coordinate: [1, 2] }).success).toBe(true);
    const coordinate = fara15.toolSchema.function.parameters.properties.coordinate;
    expect(coordinate?.description).not.toContain('`action=type`');
    expect(faraSpace('fara-7b').toolSchema.function.parameters.properties.coordinate?.description).toContain(
      '`action=type`',
    );
  });

  it.each([
    ['fara-1.5', { action: 'type', text: '' }],
    ['fara-1.5', { action: 'type', text: 'x', press_enter: true, delete_existing_text: false }],
    ['fara-1.5', { action: 'left_click', coordinate: [500.5, 0] }],
    ['fara-1.5', { action: 'terminate', answer: '' }],
    ['fara-7b', { action: 'type', text: 'x', coordinate: [5, 6] }],
    ['fara-7b', { action: 'terminate', status: 'failure' }],
    ['fara-7b', { action: 'wait', time: 0 }],
  ] as const)('%s accepts %j', (name, value) => {
    expect(faraSpace(name).actionSchema.safeParse(value).success).toBe(true);
  });
});

describe('describeAction', () => {
  it.each<[AgentAction, string]>([
    [{ action: 'left_click', coordinate: [500, 340] }, 'Click at (500, 340)'],
    [{ action: 'double_click', coordinate: [1, 2] }, 'Double-click at (1, 2)'],
    [{ action: 'right_click', coordinate: [1, 2] }, 'Right-click at (1, 2)'],
    [{ action: 'triple_click', coordinate: [1.5, 2] }, 'Triple-click at (1.5, 2)'],
    [{ action: 'mouse_move', coordinate: [3, 4] }, 'Move the mouse to (3, 4)'],
    [{ action: 'left_click_drag', coordinate: [7, 8] }, 'Drag to (7, 8)'],
    [{ action: 'type', text: 'hello', press_enter: true }, "Type 'hello' and press Enter"],
    [{ action: 'type', text: 'hello' }, "Type 'hello'"],
    [{ action: 'type', text: 'x', delete_existing_text: true }, "Clear the field and type 'x'"],
    [{ action: 'type', text: 'x', coordinate: [9, 9] }, "Type 'x' at (9, 9)"],
    [{ action: 'key', keys: ['Control', 'a'] }, 'Press Control+a'],
    [{ action: 'scroll', pixels: 300 }, 'Scroll up 300 pixels'],
    [{ action: 'scroll', pixels: -1 }, 'Scroll down 1 pixel'],
    [{ action: 'hscroll', pixels: 200 }, 'Scroll left 200 pixels'],
    [{ action: 'hscroll', pixels: -200 }, 'Scroll right 200 pixels'],
    [{ action: 'visit_url', url: 'https://a.b/' }, 'Visit https://a.b/'],
    [{ action: 'history_back' }, 'Go back'],
    [{ action: 'web_search', query: 'cats' }, "Search the web for 'cats'"],
    [{ action: 'read_page_answer_question', question: 'Price?' }, "Read the page to answer 'Price?'"],
    [{ action: 'pause_and_memorize_fact', fact: 'A is 3' }, "Memorize 'A is 3'"],
    [{ action: 'ask_user_question', question: 'Which day?' }, "Ask the user 'Which day?'"],
    [{ action: 'wait', time: 1 }, 'Wait 1 second'],
    [{ action: 'wait', time: 2.5 }, 'Wait 2.5 seconds'],
    [{ action: 'terminate', answer: '42' }, "Finish with the answer '42'"],
    [{ action: 'terminate', status: 'failure' }, 'Finish (failure)'],
  ])('%j -> %s', (action, expected) => {
    expect(describeAction(action)).toBe(expected);
  });

  it('cuts long text when asked', () => {
    expect(describeAction({ action: 'type', text: 'abcdefgh' }, { maxTextLength: 3 })).toBe("Type 'abc…'");
  });

  it.each(FARA_NAMES)('describes every %s example', (name) => {
    for (const action of exampleActions(name)) expect(describeAction(action)).not.toBe('');
  });
});

describe('actionPoint', () => {
  it.each<[AgentAction, { x: number; y: number } | undefined]>([
    [
      { action: 'left_click', coordinate: [500, 340] },
      { x: 500, y: 340 },
    ],
    [
      { action: 'left_click_drag', coordinate: [880, 410] },
      { x: 880, y: 410 },
    ],
    [
      { action: 'mouse_move', coordinate: [0, 1000] },
      { x: 0, y: 1000 },
    ],
    [
      { action: 'type', text: 'a', coordinate: [5, 6] },
      { x: 5, y: 6 },
    ],
    [{ action: 'type', text: 'a' }, undefined],
    [{ action: 'scroll', pixels: 10 }, undefined],
    [{ action: 'terminate', answer: 'x' }, undefined],
  ])('%j -> %j', (action, expected) => {
    expect(actionPoint(action)).toEqual(expected);
  });
});
