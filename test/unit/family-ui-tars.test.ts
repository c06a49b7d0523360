// Specification of the ui-tars-1.5 family (src/families/ui-tars-1.5/): the request (the trained prompt with the task,
// the screenshots kept, past outputs with their boxes re-wrapped in box tokens, replies and text observations as
// user text, a batch as one output), each UI-TARS action read into ours with its coordinates, batches, the two ends
// (finished, call_user), and malformed outputs as ModelOutputErrors with the feedback line the model reads.
import { describe, expect, it, vi } from 'vitest';

import { familyOf } from '../../src/families/registry';
import { UI_TARS_FAMILY } from '../../src/families/ui-tars-1.5/family';
import { UI_TARS_PROMPT } from '../../src/families/ui-tars-1.5/prompt';
import { withBoxTokens } from '../../src/families/ui-tars-1.5/chat';
import type { ChatMessage } from '../../src/model/client';
import type { HistoryEntry } from '../../src/model/context';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  ModelOutputError,
  UnknownActionError,
} from '../../src/model/errors';
import type { ParsedOutput } from '../../src/model/parse';

const family = UI_TARS_FAMILY;
/** A 1440x900 viewport's screenshot after smart_resize with factor 28. */
const SCREEN = { width: 1428, height: 896 };
const ALLOWED = family.allowedActions;

// The prompt as docs/provider-formats.md describes getSystemPromptV1_5('en', 'normal'), written out here as the specification.
const TRAINED_PROMPT = [
  'You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.',
  '',
  '## Output Format',
  '```',
  'Thought: ...',
  'Action: ...',
  '```',
  '',
  '## Action Space',
  '',
  "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  "right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')",
  "hotkey(key='ctrl c') # Split keys with a space and use lowercase. Also, do not use more than 3 keys in one hotkey action.",
  "type(content='xxx') # Use escape characters \\', \\\", and \\n in content part to ensure we can parse the content in normal python string format. If you want to submit your input, use \\n at the end of content.",
  "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left') # Show more information on the `direction` side.",
  'wait() # Sleep for 5s and take a screenshot to check for any changes.',
  'finished()',
  "call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.",
  '',
  '',
  '## Note',
  '- Use English in `Thought` part.',
  '- Generate a well-defined and practical strategy in the `Thought` section, summarizing your next move and its objective.',
  '',
  '## User Instruction',
  '',
].join('\n');

const TASK = 'Book a room in Lisbon for two nights.';
const loadImage = (ref: string) => Promise.resolve(`data:image/png;base64,${ref}`);
const task = (): HistoryEntry => ({ kind: 'task', text: TASK, screenshot: 's1' });
const seen = (ref: string, extra: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}): HistoryEntry => ({
  kind: 'observation',
  screenshot: ref,
  url: 'https://tidewater.test/rooms',
  ...extra,
});
const said = (text: string): HistoryEntry => ({ kind: 'assistant', text });
const continues = (): HistoryEntry => ({ kind: 'assistant', text: '', continues: true });
const CLICK = "Thought: Open the rooms.\nAction: click(start_box='(100,200)')";

async function chat(history: HistoryEntry[], imagesKept?: number): Promise<ChatMessage[]> {
  const request = await family.request({
    history,
    loadImage,
    screen: SCREEN,
    endpoint: undefined,
    identity: undefined,
    imagesKept,
    tokenBudget: undefined,
  });
  expect(request.allowed).toEqual(ALLOWED);
  expect(request.native).toBeUndefined();
  return request.messages;
}

/** A message as role and a short list of its parts: text as is, an image as `img:<ref>`. */
function shape(message: ChatMessage | undefined): string[] {
  if (!message) return [];
  if (typeof message.content === 'string') return [`${message.role}: ${message.content}`];
  const parts = (message.content ?? []) as Array<{ type: string; text?: string; image_url?: { url: string } }>;
  return parts.map((p) =>
    p.type === 'text' ? `${message.role}: ${p.text}` : `${message.role}: img:${p.image_url?.url.split(',')[1]}`,
  );
}
const shapes = (messages: ChatMessage[]) => messages.map(shape);

describe('the ui-tars-1.5 family', () => {
  it('is registered, speaks pixels of the screenshot resized by factor 28, and refuses Fara prompt settings', () => {
    expect(familyOf('ui-tars-1.5')).toBe(family);
    expect(family.coordinateSpace).toBe('resized-pixels');
    expect(family.resizeFactor).toBe(28);
    expect(family.displaySize(SCREEN)).toEqual(SCREEN);
    expect(family.identityIssue('fara-default', true)).toMatch(/own system prompt/);
  });
});

describe('the request', () => {
  it('opens with the trained prompt and the task as one user text, then the first screenshot; no system message', async () => {
    expect(UI_TARS_PROMPT).toBe(TRAINED_PROMPT);
    const messages = await chat([task()]);
    expect(messages.map((m) => m.role)).toEqual(['user', 'user']);
    expect(shapes(messages)).toEqual([[`user: ${TRAINED_PROMPT}${TASK}`], ['user: img:s1']]);
  });

  it('sends each past output with its boxes re-wrapped in box tokens, then the screenshot after it', async () => {
    const drag = "Thought: Move it.\nAction: drag(start_box='(10,20)', end_box='(30,40)')";
    const messages = await chat([task(), said(CLICK), seen('s2'), said(drag), seen('s3')]);
    expect(shapes(messages).slice(2)).toEqual([
      ["assistant: Thought: Open the rooms.\nAction: click(start_box='<|box_start|>(100,200)<|box_end|>')"],
      ['user: img:s2'],
      [
        "assistant: Thought: Move it.\nAction: drag(start_box='<|box_start|>(10,20)<|box_end|>', end_box='<|box_start|>(30,40)<|box_end|>')",
      ],
      ['user: img:s3'],
    ]);
  });

  it.each([
    ["click(start_box='(100,200)')", "click(start_box='<|box_start|>(100,200)<|box_end|>')"],
    ["click(start_box='(100, 200)')", "click(start_box='<|box_start|>(100, 200)<|box_end|>')"],
    ["click(start_box='<|box_start|>(1,2)<|box_end|>')", "click(start_box='<|box_start|>(1,2)<|box_end|>')"],
    ["click(start_box='[1,2,3,4]')", "click(start_box='<|box_start|>[1,2,3,4]<|box_end|>')"],
    ["type(content='start_box')", "type(content='start_box')"],
    ["click(point='<point>1 2</point>')", "click(point='<point>1 2</point>')"],
  ])('re-wraps %s as %s', (written, sent) => {
    expect(withBoxTokens(`Thought: t\nAction: ${written}`)).toBe(`Thought: t\nAction: ${sent}`);
  });

  it('keeps the newest three screenshots, and the words of a reply whose screenshot was dropped', async () => {
    const ask = 'Thought: Which dates?\nAction: call_user()';
    const history = [
      task(),
      said(ask),
      seen('s2', { userReply: 'From 3 to 5 May.' }),
      said(CLICK),
      seen('s3'),
      said(CLICK),
      seen('s4'),
      said(CLICK),
      seen('s5'),
    ];
    const messages = await chat(history);
    const images = shapes(messages)
      .flat()
      .filter((p) => p.includes('img:'));
    expect(images).toEqual(['user: img:s3', 'user: img:s4', 'user: img:s5']);
    expect(shapes(messages).slice(0, 4)).toEqual([
      [`user: ${TRAINED_PROMPT}${TASK}`],
      ['assistant: Thought: Which dates?\nAction: call_user()'],
      ['user: From 3 to 5 May.'],
      ["assistant: Thought: Open the rooms.\nAction: click(start_box='<|box_start|>(100,200)<|box_end|>')"],
    ]);
    expect((await chat(history, 1)).flatMap(shape).filter((p) => p.includes('img:'))).toEqual(['user: img:s5']);
  });

  it('sends a reply and the text a step left as user text before the screenshot', async () => {
    const ask = 'Thought: Which dates?\nAction: call_user()';
    const feedback = 'The action "click(" could not be read.';
    const messages = await chat([
      task(),
      said(ask),
      seen('s2', { userReply: 'From 3 to 5 May.' }),
      said('Thought: x\nAction: click('),
      seen('s3', { textObservation: feedback }),
    ]);
    expect(shapes(messages).slice(3)).toEqual([
      ['user: From 3 to 5 May.', 'user: img:s2'],
      ['assistant: Thought: x\nAction: click('],
      [`user: ${feedback}`, 'user: img:s3'],
    ]);
  });

  it('sends a reply given as an entry of its own after the output that asked, and skips an empty output', async () => {
    const ask = 'Thought: Whose name?\nAction: call_user()';
    const messages = await chat([
      task(),
      said(ask),
      { kind: 'user_reply', text: 'Ada Lovelace' },
      seen('s2'),
      said(''),
      seen('s3', { textObservation: 'Your last output was empty.' }),
    ]);
    expect(shapes(messages).slice(2)).toEqual([
      ['assistant: Thought: Whose name?\nAction: call_user()'],
      ['user: Ada Lovelace', 'user: img:s2'],
      ['user: Your last output was empty.', 'user: img:s3'],
    ]);
  });

  it('sends a batch as one output followed by the screenshot after its last action', async () => {
    const batch = "Thought: Fill it.\nAction: click(start_box='(5,6)')\n\ntype(content='Lisbon\\n')";
    const messages = await chat([task(), said(batch), seen('s2'), continues(), seen('s3')]);
    expect(shapes(messages).slice(2)).toEqual([
      [
        "assistant: Thought: Fill it.\nAction: click(start_box='<|box_start|>(5,6)<|box_end|>')\n\ntype(content='Lisbon\\n')",
      ],
      ['user: img:s3'],
    ]);
  });
});

function read(text: string, screen = SCREEN): ParsedOutput {
  return family.read({ text }, { screen, allowed: ALLOWED, terminateOnParseError: false });
}
const actionsOf = (p: ParsedOutput) => [p.action, ...(p.then ?? []).map((b) => b.action)];

describe('reading an output', () => {
  it.each<[string, string, unknown[]]>([
    ['click', "click(start_box='(197,525)')", [{ action: 'left_click', coordinate: [197, 525] }]],
    [
      'click in box tokens',
      "click(start_box='<|box_start|>(197,525)<|box_end|>')",
      [{ action: 'left_click', coordinate: [197, 525] }],
    ],
    ['click at a <point>', "click(point='<point>197 525</point>')", [{ action: 'left_click', coordinate: [197, 525] }]],
    [
      'click on a box: its centre',
      "click(start_box='[100,200,300,401]')",
      [{ action: 'left_click', coordinate: [200, 300.5] }],
    ],
    ['left_double', "left_double(start_box='(1,2)')", [{ action: 'double_click', coordinate: [1, 2] }]],
    ['right_single', "right_single(start_box='(1,2)')", [{ action: 'right_click', coordinate: [1, 2] }]],
    [
      'drag',
      "drag(start_box='(10,20)', end_box='(30,40)')",
      [
        { action: 'mouse_move', coordinate: [10, 20] },
        { action: 'left_click_drag', coordinate: [30, 40] },
      ],
    ],
    ['hotkey', "hotkey(key='ctrl c')", [{ action: 'key', keys: ['ctrl', 'c'] }]],
    ['hotkey with a plus', "hotkey(key='Ctrl+Shift+T')", [{ action: 'key', keys: ['ctrl', 'shift', 't'] }]],
    ['type', "type(content='Lisbon')", [{ action: 'type', text: 'Lisbon' }]],
    ['type and submit', "type(content='Lisbon\\n')", [{ action: 'type', text: 'Lisbon', press_enter: true }]],
    ['type with escapes', "type(content='It\\'s \"here\", ok')", [{ action: 'type', text: 'It\'s "here", ok' }]],
    ['type double-quoted with a comma', 'type(content="a, b")', [{ action: 'type', text: 'a, b' }]],
    [
      'scroll down at a point (80% of the screen height)',
      "scroll(start_box='(700,400)', direction='down')",
      [
        { action: 'mouse_move', coordinate: [700, 400] },
        { action: 'scroll', pixels: -717 },
      ],
    ],
    [
      'scroll up',
      "scroll(start_box='(1,2)', direction='up')",
      [{ action: 'mouse_move' }, { action: 'scroll', pixels: 717 }],
    ],
    [
      'scroll right',
      "scroll(start_box='(1,2)', direction='right')",
      [{ action: 'mouse_move' }, { action: 'hscroll', pixels: -1142 }],
    ],
    ['scroll left, no point', "scroll(direction='left')", [{ action: 'hscroll', pixels: 1142 }]],
    ['wait', 'wait()', [{ action: 'wait', time: 5 }]],
    ['finished', 'finished()', [{ action: 'terminate', answer: 'All done.' }]],
    [
      'finished with content',
      "finished(content='Booked room 3.')",
      [{ action: 'terminate', answer: 'Booked room 3.' }],
    ],
    ['call_user', 'call_user()', [{ action: 'ask_user_question', question: 'All done.' }]],
  ])('%s', (_case, written, expected) => {
    const parsed = read(`Thought: All done.\nAction: ${written}`);
    expect(actionsOf(parsed)).toMatchObject(expected);
    expect(parsed.thoughts).toBe('All done.');
    expect(parsed.action.thoughts).toBe('All done.');
    expect(parsed.toolCallText).toBe(written);
  });

  it('reads several actions split by blank lines as a batch; only the first carries the thought', () => {
    const parsed = read(
      "Thought: Search.\nAction: click(start_box='(5,6)')\n\ntype(content='Lisbon\\n')\n\nfinished()",
    );
    expect(parsed.action).toEqual({ action: 'left_click', thoughts: 'Search.', coordinate: [5, 6] });
    expect(parsed.then).toEqual([
      { action: { action: 'type', text: 'Lisbon', press_enter: true } },
      { action: { action: 'terminate', thoughts: 'Search.', answer: 'Search.' } },
    ]);
  });

  it.each([
    ['in a code fence', "```\nThought: Open it.\nAction: click(start_box='(5,6)')\n```"],
    ['with a full-width colon', "Thought: Open it.\nAction：click(start_box='(5,6)')"],
    ['with a reflection', "Reflection: It did not open.\nAction_Summary: Open it.\nAction: click(start_box='(5,6)')"],
    [
      'with box tokens and a space in the point',
      "Thought: Open it.\nAction: click(start_box='<|box_start|>(5, 6)<|box_end|>')",
    ],
  ])('reads an output %s', (_case, text) => {
    const parsed = read(text);
    expect(parsed.action).toEqual({ action: 'left_click', thoughts: 'Open it.', coordinate: [5, 6] });
  });

  it('drops what follows an end or a question in a batch', () => {
    const parsed = read("Thought: Ask.\nAction: call_user()\n\nclick(start_box='(5,6)')");
    expect(parsed.action).toMatchObject({ action: 'ask_user_question', question: 'Ask.' });
    expect(parsed.then).toBeUndefined();
  });

  it('means an end and a question for the loop', () => {
    expect(family.outcome(read("Thought: t\nAction: finished(content='Booked.')").action)).toEqual({
      kind: 'terminate',
      text: 'Booked.',
    });
    expect(family.outcome(read('Thought: Which dates do you want?\nAction: call_user()').action)).toEqual({
      kind: 'ask',
      text: 'Which dates do you want?',
    });
    expect(family.outcome(read("Thought: t\nAction: click(start_box='(1,1)')").action)).toEqual({
      kind: 'act',
      text: null,
    });
  });

  it('records the output as the model wrote it', () => {
    expect(family.outputText?.({ text: CLICK })).toBe(CLICK);
  });
});

describe('a malformed output', () => {
  it.each<[string, string, new (...args: never[]) => ModelOutputError, RegExp]>([
    [
      'an Action line that does not parse',
      "Thought: x\nAction: click(start_box='(1,2)'",
      ModelOutputError,
      /could not be read/,
    ],
    [
      'an unquoted box',
      'Thought: x\nAction: click(start_box=(1,2))',
      InvalidActionArgumentsError,
      /start_box argument of click/,
    ],
    ['no Action line', 'Thought: I will click the button.', ModelOutputError, /no "Action:" line/],
    ['an empty output', '  ', EmptyOutputError, /was empty/],
    [
      'an unknown action',
      "Thought: x\nAction: open_url(url='https://a.test')",
      UnknownActionError,
      /open_url is not an action/,
    ],
    [
      'a point outside the screenshot',
      "Thought: x\nAction: click(start_box='(2000,10)')",
      InvalidActionArgumentsError,
      /outside the screenshot/,
    ],
    [
      'a scroll with no direction',
      "Thought: x\nAction: scroll(start_box='(1,2)')",
      InvalidActionArgumentsError,
      /direction argument of scroll is missing/,
    ],
    ['a hotkey with no key', 'Thought: x\nAction: hotkey()', InvalidActionArgumentsError, /key argument of hotkey/],
    [
      'a drag with no end',
      "Thought: x\nAction: drag(start_box='(1,2)')",
      InvalidActionArgumentsError,
      /end_box argument of drag is missing/,
    ],
  ])('%s is fed back', (_case, text, type, feedback) => {
    let error: unknown;
    try {
      read(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(type);
    const line = family.feedback(error as ModelOutputError, SCREEN);
    expect(line).toMatch(feedback);
    expect(line).toContain('No action was taken.');
    expect(line).not.toContain('\n');
  });

  it('is read without the parser logging anything', () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      for (const text of ['Thought: x\nAction: click the button', "Thought: x\nAction: click(start_box='(1,2)'\n\n"]) {
        expect(() => read(text)).toThrow(ModelOutputError);
      }
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it('shows the expected form and the screenshot size in the feedback', () => {
    let error: unknown;
    try {
      read('Thought: Click the button.\nAction: click the button');
    } catch (err) {
      error = err;
    }
    expect((error as ModelOutputError).thoughts).toBe('Click the button.');
    expect(family.feedback(error as ModelOutputError, SCREEN)).toBe(
      'The action "click the button" could not be read. No action was taken. Write "Thought: ..." and then ' +
        '"Action: ..." with one action of the Action Space, such as click(start_box=\'<|box_start|>(x1,y1)<|box_end|>\'), ' +
        'with x1 and y1 in pixels of the 1428x896 screenshot.',
    );
  });

  it('refuses an action the step does not allow', () => {
    const allowed = ALLOWED.filter((a) => a !== 'wait');
    expect(() =>
      family.read({ text: 'Thought: x\nAction: wait()' }, { screen: SCREEN, allowed, terminateOnParseError: false }),
    ).toThrow(UnknownActionError);
  });
});
