// Specification of rebuilding the model's history (and the memorised facts, the last URL, the URLs before a restored
// page) from run-folder events.
import { describe, expect, it } from 'vitest';

import { buildChatMessages } from '../../src/model/context';
import type { HistoryEntry } from '../../src/model/context';
import {
  HistoryError,
  earlierUrls,
  historyForStep,
  lastObservationText,
  lastUrl,
  memorizedFacts,
} from '../../src/agent/history';
import {
  actionEvent,
  postObservation,
  preObservation,
  retryFeedback,
  runtimeQuestion,
  sessionRestored,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import { screenshotName } from '../../src/trajectory/layout';
import type { Event } from '../../src/trajectory/schema';

const T = { timestamp: '2026-07-20T10:00:00Z' };
const gen = (generation: number, metadata: Record<string, unknown> = {}) => ({ ...T, generation, metadata });

const shot = (step: number, g = 0) => screenshotName(step, 'pre', g);
const url = (step: number, g = 0) => `https://shop.test/step${step}/g${g}`;
const raw = (step: number, g = 0) => `Thoughts for step ${step} g${g}.\n<tool_call>{"step": ${step}}</tool_call>`;
const aid = (step: number, g = 0) => eventId({ step, kind: 'action', generation: g });

const TASK = taskMessage('Find the opening hours', T);

function pre(step: number, g = 0, page = { screenshot_path: shot(step, g), url: url(step, g) }): Event {
  return preObservation(step, page, gen(g));
}

function act(step: number, g = 0, name = 'left_click', args: Record<string, unknown> = { coordinate: [500, 340] }) {
  const message = {
    raw_response: raw(step, g),
    reasoning: '',
    finish_reason: 'stop',
    usage: { prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 },
  };
  return actionEvent(
    step,
    { action_name: name, content: { action: name, arguments: args }, llm_conversation: { messages: [message] } },
    gen(g),
  );
}

function tool(step: number, g = 0, textObservation?: string): Event {
  const metadata = textObservation === undefined ? {} : { text_observation: textObservation };
  return toolOutput(step, aid(step, g), { output: 'done' }, gen(g, metadata));
}

function post(step: number, g = 0, page = { screenshot_path: screenshotName(step, 'post', g), url: url(step, g) }) {
  return postObservation(step, aid(step, g), page, gen(g));
}

/** A complete step in one session generation: pre, action, tool output, post. */
function step(n: number, opts: { g?: number; text?: string } = {}): Event[] {
  const g = opts.g ?? 0;
  return [pre(n, g), act(n, g), tool(n, g, opts.text), post(n, g)];
}

const obs = (n: number, g = 0, extra: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}): HistoryEntry => ({
  kind: 'observation',
  screenshot: shot(n, g),
  url: url(n, g),
  ...extra,
});
const said = (n: number, g = 0): HistoryEntry => ({ kind: 'assistant', text: raw(n, g) });
const taskEntry: HistoryEntry = { kind: 'task', text: 'Find the opening hours' };
/** The first user message: the task with step 1's screenshot (of generation g), as the original opens its chat. */
const first = (g = 0): HistoryEntry => ({ ...taskEntry, screenshot: shot(1, g) });

describe('historyForStep', () => {
  it.each<[string, Event[], number, number, HistoryEntry[]]>([
    [
      'first step: one message, the task with the first screenshot (no URL, no step sentence)',
      [TASK, pre(1)],
      1,
      0,
      [first()],
    ],
    ['first step re-decided in generation 1: its screenshot', [TASK, pre(1, 0), pre(1, 1)], 1, 1, [first(1)]],
    [
      'each earlier step gives one observation and one assistant message, in order',
      [TASK, ...step(1), ...step(2), pre(3)],
      3,
      0,
      [first(), said(1), obs(2), said(2), obs(3)],
    ],
    [
      're-decided step: only the final generation counts (its pre and its raw response)',
      [TASK, pre(1, 0), act(1, 0), sessionRestored(1, 'restored', gen(1)), ...step(1, { g: 1 }), pre(2)],
      2,
      0,
      [first(1), said(1, 1), obs(2)],
    ],
    [
      'the current step uses the pre observation of the requested generation (1)',
      [TASK, ...step(1), pre(2, 0), sessionRestored(2, 'restored', gen(1)), pre(2, 1)],
      2,
      1,
      [first(), said(1), obs(2, 1)],
    ],
    [
      'the current step uses the pre observation of the requested generation (0)',
      [TASK, ...step(1), pre(2, 0), pre(2, 1)],
      2,
      0,
      [first(), said(1), obs(2, 0)],
    ],
    [
      "step N-1's text observation becomes step N's textObservation (current step)",
      [TASK, ...step(1, { text: 'Open 9am to 5pm.' }), pre(2)],
      2,
      0,
      [first(), said(1), obs(2, 0, { textObservation: 'Open 9am to 5pm.' })],
    ],
    [
      "step N-1's text observation becomes step N's textObservation (earlier step)",
      [TASK, ...step(1, { text: 'Open 9am to 5pm.' }), ...step(2), pre(3)],
      3,
      0,
      [first(), said(1), obs(2, 0, { textObservation: 'Open 9am to 5pm.' }), said(2), obs(3)],
    ],
    [
      "an abandoned generation's text observation is not carried over",
      [TASK, pre(1, 0), act(1, 0), tool(1, 0, 'stale answer'), ...step(1, { g: 1 }), pre(2)],
      2,
      0,
      [first(1), said(1, 1), obs(2)],
    ],
    [
      "the final generation's text observation is carried over",
      [TASK, pre(1, 0), act(1, 0), tool(1, 0, 'stale'), ...step(1, { g: 1, text: 'fresh' }), pre(2)],
      2,
      0,
      [first(1), said(1, 1), obs(2, 0, { textObservation: 'fresh' })],
    ],
    [
      'an empty text observation is left out',
      [TASK, ...step(1, { text: '' }), pre(2)],
      2,
      0,
      [first(), said(1), obs(2)],
    ],
    [
      "a reply recorded at step N-1 becomes step N's userReply (current step)",
      [TASK, pre(1), act(1, 0, 'ask_user_question', { question: 'Which store?' }), userReply(1, 'Downtown', T), pre(2)],
      2,
      0,
      [first(), said(1), obs(2, 0, { userReply: 'Downtown' })],
    ],
    [
      "a reply recorded at step N-1 becomes step N's userReply (earlier step)",
      [TASK, pre(1), act(1), userReply(1, 'Downtown', T), ...step(2), pre(3)],
      3,
      0,
      [first(), said(1), obs(2, 0, { userReply: 'Downtown' }), said(2), obs(3)],
    ],
    [
      'no screenshot and no URL: the keys are left out',
      [TASK, ...step(1), pre(2, 0, { screenshot_path: '', url: '' })],
      2,
      0,
      [first(), said(1), { kind: 'observation' }],
    ],
    [
      'a first step without a screenshot: the task alone',
      [TASK, pre(1, 0, { screenshot_path: '', url: '' })],
      1,
      0,
      [taskEntry],
    ],
    [
      'events with foreign ids (uuids of the original) are ignored',
      [TASK, { ...pre(1), id: 'b1a7e3c0-uuid' }, pre(1)],
      1,
      0,
      [first()],
    ],
  ])('%s', (_name, events, stepNo, generation, expected) => {
    expect(historyForStep(events, stepNo, generation)).toEqual(expected);
  });

  it('a re-decided step yields exactly one assistant message, with the final text', () => {
    const events = [TASK, pre(1, 0), act(1, 0), ...step(1, { g: 1 }), pre(2)];
    const assistant = historyForStep(events, 2, 0).filter((t) => t.kind === 'assistant');
    expect(assistant).toEqual([{ kind: 'assistant', text: raw(1, 1) }]);
  });

  it.each<[string, Event[], number, number, RegExp]>([
    ['no task message', [pre(1)], 1, 0, /no task message/],
    ['no pre observation for the current step', [TASK], 1, 0, /step 1 has no observation for session generation 0/],
    ['current pre only in another generation', [TASK, pre(1, 0)], 1, 1, /step 1 .*generation 1/],
    ['an earlier step without an action', [TASK, pre(1), pre(2)], 2, 0, /step 1 has no recorded action/],
  ])('throws HistoryError: %s', (_name, events, stepNo, generation, message) => {
    const run = () => historyForStep(events, stepNo, generation);
    expect(run).toThrow(HistoryError);
    expect(run).toThrow(message);
  });

  it('a restored session that says what is in doubt: the model reads it with that observation only', () => {
    const note =
      'The browser session was lost. Your last action, left_click (500, 340), may or may not have taken effect.';
    const restored = sessionRestored(2, note, gen(1, { in_doubt: { action: 'left_click (500, 340)' } }));
    const plain = sessionRestored(2, 'The browser session was lost and restored.', gen(2));
    const events = [TASK, ...step(1, { text: 'page text' }), pre(2, 0), act(2, 0), restored, pre(2, 1)];
    expect(historyForStep(events, 2, 1).at(-1)).toEqual(obs(2, 1, { textObservation: `${note}\n\npage text` }));
    // A note with nothing in doubt is not read; a later step does not read the earlier note again.
    expect(historyForStep([...events, act(2, 1), plain, pre(2, 2)], 2, 2).at(-1)).toEqual(
      obs(2, 2, { textObservation: 'page text' }),
    );
    expect(historyForStep([...events, ...step(2, { g: 1 }).slice(1), pre(3)], 3, 0).at(-1)).toEqual(obs(3));
    // Lost during step 1: the note goes with the task's message.
    const atOne = [TASK, pre(1, 0), act(1, 0), sessionRestored(1, note, gen(1, { in_doubt: {} })), pre(1, 1)];
    expect(historyForStep(atOne, 1, 1)).toEqual([
      { ...taskEntry, text: `Find the opening hours\n\n${note}`, screenshot: shot(1, 1) },
    ]);
  });

  it("the runtime's question is read with the user's reply to it; it is no step of the model's", () => {
    const question = 'A request … may already have been received. Should it be sent again?';
    const events = [
      TASK,
      ...step(1),
      runtimeQuestion(1, question, gen(0)),
      userReply(1, 'No, I will check.', T),
      pre(2),
    ];
    const entries = historyForStep(events, 2, 0);
    expect(entries.filter((t) => t.kind === 'assistant')).toEqual([said(1)]);
    expect(entries.at(-1)).toEqual(
      obs(2, 0, { userReply: `The runtime asked me: ${question}\nMy reply: No, I will check.` }),
    );
  });

  it('a decided approval is read with the reply: what happens to the request', () => {
    const question = 'The agent is about to send POST /checkout to shop.example (label: payment). …';
    const reply = (metadata: Record<string, unknown>) => userReply(1, 'No: too expensive', { ...T, metadata });
    const events = (r: ReturnType<typeof reply>) => [TASK, ...step(1), runtimeQuestion(1, question, gen(0)), r, pre(2)];
    const denied = reply({ approval: { decision: 'denied', note: 'too expensive' } });
    expect(historyForStep(events(denied), 2, 0).at(-1)).toEqual(
      obs(2, 0, {
        userReply:
          `The runtime asked me: ${question}\nMy reply: No: too expensive\n` +
          'The person said no: too expensive. The request was not sent; do not send it again.',
      }),
    );
    const approved = reply({ approval: { decision: 'approved', note: '' } });
    expect(JSON.stringify(historyForStep(events(approved), 2, 0).at(-1))).toMatch(/it will go through, once/);
  });

  it("a fork's hint (retry feedback) is read with its step's observation, after what the user said", () => {
    const events = [
      TASK,
      ...step(1, { text: 'page text' }),
      ...step(2),
      retryFeedback(3, 'Use the second form.', { ...T, metadata: { kind: 'hint' } }),
      pre(3),
    ];
    expect(historyForStep(events, 3, 0).at(-1)).toEqual(
      obs(3, 0, { userReply: 'Hint from the user: Use the second form.' }),
    );
    // Later steps read the hint where it was given, once.
    const later = historyForStep([...events, act(3), tool(3), post(3), pre(4)], 4, 0);
    expect(later.filter((t) => t.kind === 'observation' && t.userReply)).toHaveLength(1);
  });

  it('HistoryError carries its class name', () => {
    expect(new HistoryError('x').name).toBe('HistoryError');
  });
});

describe('the chat rebuilt from the run folder', () => {
  const chat = (events: Event[], stepNo: number) =>
    buildChatMessages(historyForStep(events, stepNo, 0), {
      systemPrompt: 'S',
      loadImage: async (ref) => `data:${ref}`,
    });
  const image = (ref: string) => ({ type: 'image_url', image_url: { url: `data:${ref}` } });
  const text = (t: string) => ({ type: 'text', text: t });
  const SENTENCE = 'Here is the next screenshot. Think about what to do next.';

  it('opens with one user message, the first screenshot and the task; a later step ends with the Fara sentence', async () => {
    expect(await chat([TASK, pre(1)], 1)).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: [image(shot(1)), text('Find the opening hours')] },
    ]);
    expect(await chat([TASK, ...step(1), pre(2)], 2)).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: [image(shot(1)), text('Find the opening hours')] },
      { role: 'assistant', content: raw(1) },
      { role: 'user', content: [image(shot(2)), text(`Current URL: ${url(2)}\n${SENTENCE}`)] },
    ]);
  });

  it.each<[string, Event[], string]>([
    ['plain: URL and the sentence', [TASK, ...step(1), pre(2)], `Current URL: ${url(2)}\n${SENTENCE}`],
    [
      'after a text observation: URL, the observation, the sentence',
      [TASK, ...step(1, { text: 'Open 9am to 5pm.' }), pre(2)],
      `Current URL: ${url(2)}\nOpen 9am to 5pm.\n${SENTENCE}`,
    ],
    [
      "after a reply: URL and the user's own words",
      [TASK, pre(1), act(1, 0, 'ask_user_question', { question: 'Which store?' }), userReply(1, 'Downtown', T), pre(2)],
      `Current URL: ${url(2)}\nDowntown`,
    ],
  ])('the current step message, %s', async (_name, events, expected) => {
    const last = (await chat(events, 2)).at(-1);
    expect(last).toEqual({ role: 'user', content: [image(shot(2)), text(expected)] });
  });
});

describe('memorizedFacts', () => {
  const memo = (n: number, fact: string, g = 0) => act(n, g, 'pause_and_memorize_fact', { fact });
  it.each<[string, Event[], string[]]>([
    ['none', [TASK, ...step(1)], []],
    ['in step order', [TASK, memo(1, 'open 9-5'), act(2), memo(3, 'closed Sundays')], ['open 9-5', 'closed Sundays']],
    ['sorted by step, not event order', [TASK, memo(3, 'third'), memo(1, 'first')], ['first', 'third']],
    ['final generation wins', [TASK, memo(1, 'old', 0), memo(1, 'new', 1)], ['new']],
    ['abandoned memorize does not count', [TASK, memo(1, 'old', 0), act(1, 1)], []],
    ['a non-string fact is skipped', [TASK, act(1, 0, 'pause_and_memorize_fact', { fact: 42 })], []],
  ])('%s', (_name, events, expected) => {
    expect(memorizedFacts(events)).toEqual(expected);
  });
});

describe('lastUrl', () => {
  it.each<[string, Event[], string | null]>([
    ['no observations', [TASK], null],
    ['the only pre', [TASK, pre(1)], url(1)],
    [
      'the newest environment observation, post included',
      [TASK, pre(1), act(1), post(1, 0, { screenshot_path: 'p.png', url: 'https://after.test/' })],
      'https://after.test/',
    ],
    [
      'observations without a URL are skipped',
      [TASK, pre(1), act(1), post(1, 0, { screenshot_path: 'p.png', url: '' })],
      url(1),
    ],
  ])('%s', (_name, events, expected) => {
    expect(lastUrl(events)).toBe(expected);
  });
});

describe("earlierUrls (what `back` walks past a restored tab's own history)", () => {
  const A = 'https://shop.test/a';
  const B = 'https://shop.test/b';
  const C = 'https://shop.test/c';
  /** One step per URL shown in turn: the pre sees it, the post sees the next one. */
  const visits = (...urls: string[]): Event[] =>
    urls.slice(0, -1).flatMap((u, i) => {
      const n = i + 1;
      const next = urls[i + 1] ?? u;
      return [
        pre(n, 0, { screenshot_path: shot(n), url: u }),
        act(n),
        post(n, 0, { screenshot_path: 'p.png', url: next }),
      ];
    });
  it.each<[string, Event[], string, string[]]>([
    ['no observations', [TASK], C, []],
    ['A → B → C, restored at C: newest last', [TASK, ...visits(A, B, C)], C, [A, B]],
    ['a page shown over several steps counts once', [TASK, ...visits(A, B, B, B, C)], C, [A, B]],
    ['a page shown again is where it was last shown (no swinging)', [TASK, ...visits(A, B, A, B, C)], C, [A, B]],
    ['the restored page itself is left out, wherever it was', [TASK, ...visits(C, A, C, B, C)], C, [A, B]],
    [
      'only web pages: a blank, a data: notice and an empty URL are skipped',
      [TASK, ...visits('about:blank', A, 'data:text/html,saved', B, C), pre(9, 0, { screenshot_path: 'x', url: '' })],
      C,
      [A, B],
    ],
    [
      'a retried step (another generation) counts as shown',
      [TASK, pre(1, 0, { screenshot_path: 'a', url: A }), pre(1, 1, { screenshot_path: 'b', url: B })],
      C,
      [A, B],
    ],
  ])('%s', (_name, events, current, expected) => {
    expect(earlierUrls(events, current)).toEqual(expected);
  });
});

describe('lastObservationText (the answer of a run whose step budget ran out)', () => {
  const out = (n: number, result: { output: string; error?: string }, metadata: Record<string, unknown> = {}) =>
    toolOutput(n, aid(n), result, gen(0, metadata));
  it.each<[string, Event[], string | null]>([
    ['no step yet', [TASK, pre(1)], null],
    [
      "the last step's tool output",
      [TASK, ...step(1), pre(2), act(2), out(2, { output: 'I scrolled down' })],
      'I scrolled down',
    ],
    [
      'its text observation when it has one (a page answer)',
      [TASK, ...step(1), out(1, { output: 'Open 9-5.' }, { text_observation: 'Open 9-5.' })],
      'Open 9-5.',
    ],
    [
      'a failed action: the text the model read',
      [
        TASK,
        pre(1),
        act(1),
        out(1, { output: 'left_click(500, 340)', error: 'boom' }, { text_observation: 'The action failed: boom' }),
      ],
      'The action failed: boom',
    ],
    [
      'an invalid output: its error',
      [TASK, pre(1), act(1), out(1, { output: '', error: 'Your output had no tool call.' })],
      'Your output had no tool call.',
    ],
    [
      "a restored session's note does not count",
      [TASK, ...step(1, { text: 'fed' }), sessionRestored(2, 'The browser session was lost and restored.', gen(1))],
      'fed',
    ],
    ['an action that left no text', [TASK, pre(1), act(1), out(1, { output: '' })], null],
  ])('%s', (_name, events, expected) => {
    expect(lastObservationText(events)).toBe(expected);
  });
});
