// Specification of carrying out parsed actions on a browser target (a recording fake), and of action summaries.
import { describe, expect, it } from 'vitest';

import type { AgentAction } from '../../src/actions/schemas';
import type { ActionTarget } from '../../src/actions/target';
import type { DispatchContext, DispatchResult } from '../../src/agent/dispatch';
import { dispatchAction } from '../../src/agent/dispatch';
import { OBSERVATIONS } from '../../src/agent/observations';
import { summarizeAction } from '../../src/agent/summary';
import type { CoordinateSpace } from '../../src/coords/viewport';
import { NORM1000, resizedPixelsSpace } from '../../src/coords/viewport';

type Call = [method: string, ...args: unknown[]];

const VIEWPORT = { width: 1440, height: 900 };
const FARA7B_SPACE = resizedPixelsSpace(1428, 896);
const PAGE_TEXT = '# Louvre\nOpen 9am to 6pm, closed Tuesdays.';
const BING = (q: string) => `https://www.bing.com/search?q=${q}&FORM=QBLH`;

/** A target that records every call; `fail` makes the named method throw the given value. */
function fakeTarget(fail: Partial<Record<keyof ActionTarget, unknown>> = {}): { target: ActionTarget; calls: Call[] } {
  const calls: Call[] = [];
  const record =
    (name: keyof ActionTarget, result: unknown = undefined) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      if (name in fail) throw fail[name];
      return result;
    };
  const target: ActionTarget = {
    leftClick: record('leftClick'),
    doubleClick: record('doubleClick'),
    tripleClick: record('tripleClick'),
    rightClick: record('rightClick'),
    mouseMove: record('mouseMove'),
    leftClickDrag: record('leftClickDrag'),
    type: record('type'),
    keys: record('keys'),
    scroll: record('scroll'),
    visitUrl: record('visitUrl'),
    historyBack: record('historyBack'),
    wait: record('wait'),
    pageMarkdown: record('pageMarkdown', PAGE_TEXT) as () => Promise<string>,
  };
  return { target, calls };
}

interface Setup {
  space?: CoordinateSpace;
  fail?: Partial<Record<keyof ActionTarget, unknown>>;
  answer?: (question: string, pageText: string) => Promise<string>;
  searchTemplate?: string;
}

function setup(opts: Setup = {}) {
  const { target, calls } = fakeTarget(opts.fail);
  const questions: [string, string][] = [];
  const ctx: DispatchContext = {
    target,
    space: opts.space ?? NORM1000,
    viewport: VIEWPORT,
    answerFromPage:
      opts.answer ??
      (async (question, pageText) => {
        questions.push([question, pageText]);
        return 'Open 9am to 6pm.';
      }),
    ...(opts.searchTemplate ? { searchTemplate: opts.searchTemplate } : {}),
  };
  return { ctx, calls, questions };
}

class NamedError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

describe('dispatchAction: target calls', () => {
  it.each<[string, AgentAction, CoordinateSpace, Call[]]>([
    // Fara-1.5: 1000×1000 model space on a 1440×900 viewport.
    ['left_click centre', { action: 'left_click', coordinate: [500, 500] }, NORM1000, [['leftClick', 720, 450]]],
    ['double_click', { action: 'double_click', coordinate: [250, 750] }, NORM1000, [['doubleClick', 360, 675]]],
    ['triple_click', { action: 'triple_click', coordinate: [1000, 0] }, NORM1000, [['tripleClick', 1440, 0]]],
    ['right_click', { action: 'right_click', coordinate: [100, 200] }, NORM1000, [['rightClick', 144, 180]]],
    ['mouse_move', { action: 'mouse_move', coordinate: [500, 340] }, NORM1000, [['mouseMove', 720, 306]]],
    [
      'left_click_drag',
      { action: 'left_click_drag', coordinate: [750, 250] },
      NORM1000,
      [['leftClickDrag', 1080, 225]],
    ],
    [
      'type + Enter',
      { action: 'type', text: 'hello', press_enter: true },
      NORM1000,
      [['type', 'hello', { pressEnter: true, deleteExistingText: false }]],
    ],
    [
      'type, clearing the field',
      { action: 'type', text: 'x', delete_existing_text: true },
      NORM1000,
      [['type', 'x', { pressEnter: false, deleteExistingText: true }]],
    ],
    [
      'type at a coordinate (clicks there first)',
      { action: 'type', text: 'paris', coordinate: [500, 500] },
      NORM1000,
      [['type', 'paris', { pressEnter: false, deleteExistingText: false, at: { x: 720, y: 450 } }]],
    ],
    ['key chord', { action: 'key', keys: ['Control', 'a'] }, NORM1000, [['keys', ['Control', 'a']]]],
    // Model positive = up/left; wheel positive = down/right; norm1000 amounts are thousandths of the viewport.
    ['scroll up 500', { action: 'scroll', pixels: 500 }, NORM1000, [['scroll', 0, -450]]],
    ['scroll down 1000', { action: 'scroll', pixels: -1000 }, NORM1000, [['scroll', 0, 900]]],
    ['hscroll left 500', { action: 'hscroll', pixels: 500 }, NORM1000, [['scroll', -720, 0]]],
    ['hscroll right 250', { action: 'hscroll', pixels: -250 }, NORM1000, [['scroll', 360, 0]]],
    [
      'visit_url full URL',
      { action: 'visit_url', url: 'https://a.test/x' },
      NORM1000,
      [['visitUrl', 'https://a.test/x']],
    ],
    ['visit_url bare host', { action: 'visit_url', url: 'a.test/x' }, NORM1000, [['visitUrl', 'https://a.test/x']]],
    [
      'visit_url plain words → search',
      { action: 'visit_url', url: 'louvre opening hours' },
      NORM1000,
      [['visitUrl', BING('louvre+opening+hours')]],
    ],
    ['history_back', { action: 'history_back' }, NORM1000, [['historyBack']]],
    ['web_search', { action: 'web_search', query: 'cheap flights' }, NORM1000, [['visitUrl', BING('cheap+flights')]]],
    ['wait', { action: 'wait', time: 3 }, NORM1000, [['wait', 3]]],
    [
      'read_page_answer_question',
      { action: 'read_page_answer_question', question: 'When?' },
      NORM1000,
      [['pageMarkdown']],
    ],
    ['pause_and_memorize_fact: no browser call', { action: 'pause_and_memorize_fact', fact: 'f' }, NORM1000, []],
    ['ask_user_question: no browser call', { action: 'ask_user_question', question: 'Which?' }, NORM1000, []],
    ['terminate: no browser call', { action: 'terminate', answer: 'done' }, NORM1000, []],
    // Fara-7B: pixels of the 1428×896 resized screenshot on a 1440×900 viewport.
    ['7b left_click', { action: 'left_click', coordinate: [714, 448] }, FARA7B_SPACE, [['leftClick', 720, 450]]],
    ['7b mouse_move', { action: 'mouse_move', coordinate: [357, 224] }, FARA7B_SPACE, [['mouseMove', 360, 225]]],
    [
      '7b type at a coordinate',
      { action: 'type', text: 'paris', coordinate: [357, 224], press_enter: true },
      FARA7B_SPACE,
      [['type', 'paris', { pressEnter: true, deleteExistingText: false, at: { x: 360, y: 225 } }]],
    ],
    [
      '7b type without a coordinate',
      { action: 'type', text: 'paris' },
      FARA7B_SPACE,
      [['type', 'paris', { pressEnter: false, deleteExistingText: false }]],
    ],
    ['7b scroll passes the amount through', { action: 'scroll', pixels: 3 }, FARA7B_SPACE, [['scroll', 0, -3]]],
    ['7b terminate status', { action: 'terminate', status: 'success' }, FARA7B_SPACE, []],
  ])('%s', async (_name, action, space, expected) => {
    const { ctx, calls } = setup({ space });
    await dispatchAction(action, ctx);
    expect(calls).toEqual(expected);
  });

  it('uses the configured search template for visit_url words and web_search', async () => {
    const { ctx, calls } = setup({ searchTemplate: 'https://search.test/?q={query}' });
    await dispatchAction({ action: 'visit_url', url: 'a b' }, ctx);
    await dispatchAction({ action: 'web_search', query: "rock 'n' roll" }, ctx);
    expect(calls).toEqual([
      ['visitUrl', 'https://search.test/?q=a+b'],
      ['visitUrl', 'https://search.test/?q=rock+%27n%27+roll'],
    ]);
  });
});

describe('dispatchAction: the text fed back (observations.ts)', () => {
  // In the seeds' voice, with the numbers the browser used: viewport pixels after conversion, one decimal.
  const quiet = (output: string): DispatchResult => ({ output, error: null, textObservation: null });
  const fed = (output: string): DispatchResult => ({ output, error: null, textObservation: output });

  it.each<[string, AgentAction, CoordinateSpace, DispatchResult]>([
    // The seed's worked example: [500, 340] in 1000×1000 on a 1440×900 viewport.
    [
      'left_click',
      { action: 'left_click', coordinate: [500, 340] },
      NORM1000,
      quiet('I clicked at coordinates (720.0, 306.0).'),
    ],
    [
      'double_click',
      { action: 'double_click', coordinate: [250, 750] },
      NORM1000,
      quiet('I double-clicked at coordinates (360.0, 675.0).'),
    ],
    [
      'triple_click',
      { action: 'triple_click', coordinate: [1000, 0] },
      NORM1000,
      quiet('I triple-clicked at coordinates (1440.0, 0.0).'),
    ],
    [
      'right_click',
      { action: 'right_click', coordinate: [100, 200] },
      NORM1000,
      quiet('I right-clicked at coordinates (144.0, 180.0).'),
    ],
    [
      'mouse_move',
      { action: 'mouse_move', coordinate: [500, 340] },
      NORM1000,
      quiet('I moved the mouse to coordinates (720.0, 306.0).'),
    ],
    [
      'left_click_drag',
      { action: 'left_click_drag', coordinate: [750, 250] },
      NORM1000,
      quiet('I dragged the mouse to coordinates (1080.0, 225.0).'),
    ],
    ['type', { action: 'type', text: 'hello' }, NORM1000, quiet("I typed 'hello'.")],
    [
      'type + Enter',
      { action: 'type', text: 'hello', press_enter: true },
      NORM1000,
      quiet("I typed 'hello' and pressed Enter."),
    ],
    [
      'type, clearing the field',
      { action: 'type', text: 'x', delete_existing_text: true },
      NORM1000,
      quiet("I cleared the existing text and typed 'x'."),
    ],
    [
      'type at a coordinate (clicked first)',
      { action: 'type', text: 'paris', coordinate: [500, 500] },
      NORM1000,
      quiet("I clicked at coordinates (720.0, 450.0) and typed 'paris'."),
    ],
    [
      'type at a coordinate, clearing, with Enter',
      { action: 'type', text: 'paris', coordinate: [500, 500], delete_existing_text: true, press_enter: true },
      NORM1000,
      quiet("I clicked at coordinates (720.0, 450.0), cleared the existing text, typed 'paris' and pressed Enter."),
    ],
    ['key chord', { action: 'key', keys: ['Control', 'a'] }, NORM1000, quiet('I pressed Control+a.')],
    // The seed notes the asymmetry: scroll reports its direction only, hscroll its (converted) amount.
    ['scroll up', { action: 'scroll', pixels: 500 }, NORM1000, quiet('I scrolled up')],
    ['scroll down', { action: 'scroll', pixels: -1000 }, NORM1000, quiet('I scrolled down')],
    ['hscroll left', { action: 'hscroll', pixels: 500 }, NORM1000, quiet('I scrolled left 720 pixels')],
    ['hscroll right', { action: 'hscroll', pixels: -250 }, NORM1000, quiet('I scrolled right 360 pixels')],
    ['hscroll by one pixel', { action: 'hscroll', pixels: -1 }, NORM1000, quiet('I scrolled right 1 pixel')],
    [
      'visit_url reports the address opened',
      { action: 'visit_url', url: 'a.test/x' },
      NORM1000,
      quiet('I visited https://a.test/x'),
    ],
    ['history_back', { action: 'history_back' }, NORM1000, quiet('I went back to the previous page.')],
    [
      'web_search',
      { action: 'web_search', query: 'cheap flights' },
      NORM1000,
      quiet("I searched the web for 'cheap flights'."),
    ],
    ['wait', { action: 'wait', time: 3 }, NORM1000, quiet('I waited 3 seconds.')],
    ['wait one second', { action: 'wait', time: 1 }, NORM1000, quiet('I waited 1 second.')],
    // The original remembers a fact only through this text in the history: it is fed back.
    [
      'memorize',
      { action: 'pause_and_memorize_fact', fact: 'open 9-5' },
      NORM1000,
      fed('I memorized the following fact: open 9-5'),
    ],
    [
      'ask_user_question outputs the question',
      { action: 'ask_user_question', question: 'Which store?' },
      NORM1000,
      quiet('Which store?'),
    ],
    ['terminate (1.5) outputs the answer', { action: 'terminate', answer: '9am' }, NORM1000, quiet('9am')],
    // Fara-7B: pixels of the 1428×896 screenshot; the text reports viewport pixels.
    [
      '7b left_click',
      { action: 'left_click', coordinate: [714, 448] },
      FARA7B_SPACE,
      quiet('I clicked at coordinates (720.0, 450.0).'),
    ],
    [
      '7b left_click, a fraction of a pixel',
      { action: 'left_click', coordinate: [100, 100] },
      FARA7B_SPACE,
      quiet('I clicked at coordinates (100.8, 100.4).'),
    ],
    [
      '7b type at a coordinate',
      { action: 'type', text: 'paris', coordinate: [357, 224], press_enter: true },
      FARA7B_SPACE,
      quiet("I clicked at coordinates (360.0, 225.0), typed 'paris' and pressed Enter."),
    ],
    ['7b scroll', { action: 'scroll', pixels: -3 }, FARA7B_SPACE, quiet('I scrolled down')],
    [
      '7b terminate outputs the status',
      { action: 'terminate', status: 'failure' },
      FARA7B_SPACE,
      quiet('Task ended: failure'),
    ],
  ])('%s', async (_name, action, space, expected) => {
    const { ctx } = setup({ space });
    expect(await dispatchAction(action, ctx)).toEqual(expected);
  });

  describe('a back that loaded the previous page from the record (a restored session) says so, and is fed back', () => {
    const B = 'https://shop.test/b';
    const NOTE =
      "The browser's own history was lost when the session was restored; loaded the previous page from the record: " +
      `${B} (a fresh GET: what was typed there is not restored).`;
    const outcome = { settle: { ms: 5 }, loadedFromRecord: B };
    it.each<[string, AgentAction, Partial<ActionTarget>, DispatchResult]>([
      [
        'history_back',
        { action: 'history_back' },
        { historyBack: async () => outcome },
        fed(`I went back to the previous page. ${NOTE}`),
      ],
      [
        'the Alt+Left chord',
        { action: 'key', keys: ['Alt', 'ArrowLeft'] },
        { keys: async () => outcome },
        fed(`I pressed Alt+ArrowLeft. ${NOTE}`),
      ],
      [
        "the browser's own back (an outcome without a recorded URL)",
        { action: 'history_back' },
        { historyBack: async () => ({ settle: { ms: 5 } }) },
        quiet('I went back to the previous page.'),
      ],
      [
        "a custom environment's back (a Playwright response)",
        { action: 'history_back' },
        { historyBack: async () => null },
        quiet('I went back to the previous page.'),
      ],
    ])('%s', async (_name, action, methods, expected) => {
      const { ctx } = setup();
      expect(await dispatchAction(action, { ...ctx, target: { ...ctx.target, ...methods } })).toEqual(expected);
    });
  });

  it('feeds back only the page answer and the memorized fact (failures aside)', () => {
    const fedActions = Object.entries(OBSERVATIONS)
      .filter(([, entry]) => entry.textObservation)
      .map(([name]) => name);
    expect(fedActions.sort()).toEqual(['pause_and_memorize_fact', 'read_page_answer_question']);
  });
});

describe('dispatchAction: answers and failures', () => {
  it('read_page_answer_question asks the sub-model with the question and the page text', async () => {
    const { ctx, questions } = setup();
    const result = await dispatchAction({ action: 'read_page_answer_question', question: 'When is it open?' }, ctx);
    expect(questions).toEqual([['When is it open?', PAGE_TEXT]]);
    expect(result).toEqual({ output: 'Open 9am to 6pm.', error: null, textObservation: 'Open 9am to 6pm.' });
  });

  it('a failing visit_url becomes an error and a text observation naming the URL, without throwing', async () => {
    const { ctx } = setup({ fail: { visitUrl: new Error('net::ERR_NAME_NOT_RESOLVED\n    at goto') } });
    const result = await dispatchAction({ action: 'visit_url', url: 'nope.invalid' }, ctx);
    expect(result.error).toBe('Error: net::ERR_NAME_NOT_RESOLVED');
    expect(result.textObservation).toContain('https://nope.invalid');
    expect(result.textObservation).toContain('net::ERR_NAME_NOT_RESOLVED');
    expect(result.output).toBe('Visit nope.invalid');
  });

  it.each<[string, AgentAction, Partial<Record<keyof ActionTarget, unknown>>, string]>([
    [
      'a click on a detached element (first line of the message only)',
      { action: 'left_click', coordinate: [500, 500] },
      { leftClick: new Error('element is detached\n  at Page.click') },
      'Error: element is detached',
    ],
    [
      'a typed error keeps its name',
      { action: 'key', keys: ['F13'] },
      { keys: new NamedError('KeyError', 'F13?') },
      'KeyError: F13?',
    ],
    ['a thrown string', { action: 'history_back' }, { historyBack: 'no history' }, 'no history'],
    [
      'a failing web_search',
      { action: 'web_search', query: 'q' },
      { visitUrl: new Error('timeout') },
      'Error: timeout',
    ],
    [
      'a failing page read',
      { action: 'read_page_answer_question', question: 'Q?' },
      { pageMarkdown: new Error('no body') },
      'Error: no body',
    ],
  ])('a generic error becomes "The action failed: ...": %s', async (_name, action, fail, message) => {
    const { ctx } = setup({ fail });
    const result = await dispatchAction(action, ctx);
    expect(result.error).toBe(message);
    expect(result.textObservation).toBe(`The action failed: ${message}`);
  });

  it('a failing sub-model call becomes "The action failed: ..."', async () => {
    const { ctx } = setup({ answer: async () => Promise.reject(new Error('model down')) });
    const result = await dispatchAction({ action: 'read_page_answer_question', question: 'Q?' }, ctx);
    expect(result).toMatchObject({
      error: 'Error: model down',
      textObservation: 'The action failed: Error: model down',
    });
  });

  it.each<[string, AgentAction, keyof ActionTarget]>(
    ['BrowserClosedError', 'UnknownSessionError', 'PageRecoveryError'].flatMap(
      (name) =>
        [
          [name, { action: 'left_click', coordinate: [1, 2] }, 'leftClick'],
          [name, { action: 'type', text: 'x' }, 'type'],
          [name, { action: 'read_page_answer_question', question: 'Q?' }, 'pageMarkdown'],
          [name, { action: 'web_search', query: 'q' }, 'visitUrl'],
        ] as [string, AgentAction, keyof ActionTarget][],
    ),
  )('a session error %s is rethrown (%j via %s)', async (name, action, method) => {
    const { ctx } = setup({ fail: { [method]: new NamedError(name, 'session gone') } });
    await expect(dispatchAction(action, ctx)).rejects.toMatchObject({ name, message: 'session gone' });
  });

  it.each(['BrowserClosedError', 'UnknownSessionError', 'PageRecoveryError'])(
    'a session error %s from visit_url is rethrown',
    async (name) => {
      const { ctx } = setup({ fail: { visitUrl: new NamedError(name, 'session gone') } });
      await expect(dispatchAction({ action: 'visit_url', url: 'https://a.test/' }, ctx)).rejects.toMatchObject({
        name,
      });
    },
  );
});

describe('dispatchAction: the hook before the action (the element record)', () => {
  it('gets the action in viewport pixels before the target is called', async () => {
    const { ctx, calls } = setup();
    const seen: [AgentAction, number][] = [];
    const result = await dispatchAction(
      { action: 'left_click', coordinate: [500, 500] },
      { ...ctx, beforeAction: async (done) => void seen.push([done, calls.length]) },
    );
    expect(seen).toEqual([[{ action: 'left_click', coordinate: [720, 450] }, 0]]);
    expect(calls).toEqual([['leftClick', 720, 450]]);
    expect(result.error).toBeNull();
  });

  it('never fails the action', async () => {
    const { ctx, calls } = setup();
    const result = await dispatchAction(
      { action: 'type', text: 'hi' },
      { ...ctx, beforeAction: () => Promise.reject(new Error('page gone')) },
    );
    expect(calls).toHaveLength(1);
    expect(result.error).toBeNull();
  });
});

describe('summarizeAction', () => {
  it.each<[AgentAction, string]>([
    [{ action: 'left_click', coordinate: [500, 340] }, 'left_click (500, 340)'],
    [{ action: 'double_click', coordinate: [499.6, 10.2] }, 'double_click (500, 10)'],
    [{ action: 'right_click', coordinate: [1, 2] }, 'right_click (1, 2)'],
    [{ action: 'triple_click', coordinate: [3, 4] }, 'triple_click (3, 4)'],
    [{ action: 'mouse_move', coordinate: [5, 6] }, 'mouse_move (5, 6)'],
    [{ action: 'left_click_drag', coordinate: [7, 8] }, 'left_click_drag (7, 8)'],
    [{ action: 'type', text: 'hello' }, 'type "hello"'],
    [{ action: 'type', text: 'hello', coordinate: [100, 200] }, 'type "hello" (100, 200)'],
    [{ action: 'type', text: 'a\n   b' }, 'type "a b"'],
    [{ action: 'type', text: 'x'.repeat(50) }, `type "${'x'.repeat(39)}…"`],
    [{ action: 'key', keys: ['Control', 'Shift', 't'] }, 'key Control+Shift+t'],
    [{ action: 'scroll', pixels: -300 }, 'scroll -300'],
    [{ action: 'hscroll', pixels: 200 }, 'hscroll 200'],
    [{ action: 'visit_url', url: 'https://a.test/' }, 'visit_url https://a.test/'],
    [{ action: 'visit_url', url: `https://a.test/${'p'.repeat(80)}` }, `visit_url https://a.test/${'p'.repeat(44)}…`],
    [{ action: 'web_search', query: 'cheap flights' }, 'web_search "cheap flights"'],
    [{ action: 'history_back' }, 'history_back'],
    [{ action: 'read_page_answer_question', question: 'When?' }, 'read_page_answer_question "When?"'],
    [{ action: 'ask_user_question', question: 'Which?' }, 'ask_user_question "Which?"'],
    [{ action: 'pause_and_memorize_fact', fact: 'open 9-5' }, 'memorize "open 9-5"'],
    [{ action: 'wait', time: 2 }, 'wait 2s'],
    [{ action: 'terminate', answer: 'It opens at 9.' }, 'terminate "It opens at 9."'],
    [{ action: 'terminate', status: 'success' }, 'terminate success'],
  ])('%j → %s', (action, expected) => {
    expect(summarizeAction(action)).toBe(expected);
  });
});
