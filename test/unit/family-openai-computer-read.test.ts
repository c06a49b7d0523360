// Specification of how the openai-computer family reads OpenAI's responses (built by the Responses stand-in from
// scripted turns) into our actions: each action kind, a batch, a visit folded from CTRL+L / type / ENTER, a safety
// check, a text-only answer and question, the malformed kinds OpenAI sends; then its call through the official SDK
// against a node:http server on 127.0.0.1 speaking the stand-in, and the round trip of a recorded output.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentAction } from '../../src/actions/schemas';
import type { OpenAiRequestBody } from '../../src/families/openai-computer/request';
import type { ModelEndpoint } from '../../src/model/client';
import type { HistoryEntry } from '../../src/model/context';
import { EmptyOutputError, InvalidActionArgumentsError, UnknownActionError } from '../../src/model/errors';
import type { ModelOutputError } from '../../src/model/errors';
import { openAiResponse, readOpenAiRequest, splitForPreview } from '../../src/scripted/providers/openai-responses';
import type { OpenAiRequestExpectations, OpenAiRequestFacts } from '../../src/scripted/providers/openai-responses';
import type { ScreenAction, StandInOutput } from '../../src/scripted/providers/output';
import { act, click, family, read, recorded, respond, screen, shot } from './family-openai-computer.fixtures';

const actionsOf = (scripted: StandInOutput): AgentAction[] => {
  const parsed = read(respond(scripted));
  return [parsed.action, ...(parsed.then ?? []).map((b) => b.action)];
};

describe('openai-computer: read, one action kind at a time', () => {
  const cases: Array<[string, ScreenAction, AgentAction[]]> = [
    ['left click', click(700, 450), [{ action: 'left_click', coordinate: [700, 450] }]],
    [
      'right click',
      { kind: 'click', button: 'right', count: 1, x: 5, y: 6 },
      [{ action: 'right_click', coordinate: [5, 6] }],
    ],
    [
      'double click',
      { kind: 'click', button: 'left', count: 2, x: 7, y: 8 },
      [{ action: 'double_click', coordinate: [7, 8] }],
    ],
    ['move', { kind: 'move', x: 3, y: 4 }, [{ action: 'mouse_move', coordinate: [3, 4] }]],
    [
      'drag: a move to its first point, then a drag to its last',
      {
        kind: 'drag',
        path: [
          { x: 1, y: 2 },
          { x: 10, y: 20 },
          { x: 30, y: 40 },
        ],
      },
      [
        { action: 'mouse_move', coordinate: [1, 2] },
        { action: 'left_click_drag', coordinate: [30, 40] },
      ],
    ],
    ['type', { kind: 'type', text: 'hello' }, [{ action: 'type', text: 'hello' }]],
    ['keys, in OpenAI’s names', { kind: 'keys', keys: ['Control', 'a'] }, [{ action: 'key', keys: ['CTRL', 'A'] }]],
    [
      'scroll down: a move, then the wheel (our pixels are positive upward)',
      { kind: 'scroll', x: 100, y: 200, dx: 0, dy: 300 },
      [
        { action: 'mouse_move', coordinate: [100, 200] },
        { action: 'scroll', pixels: -300 },
      ],
    ],
    [
      'scroll sideways',
      { kind: 'scroll', x: 100, y: 200, dx: -120, dy: 0 },
      [
        { action: 'mouse_move', coordinate: [100, 200] },
        { action: 'hscroll', pixels: 120 },
      ],
    ],
    ['wait', { kind: 'wait', seconds: 2 }, [{ action: 'wait', time: 1 }]],
    ['screenshot: nothing, for no time', { kind: 'screenshot' }, [{ action: 'wait', time: 0 }]],
    [
      'a visit: CTRL+L, the address, ENTER folded into visit_url',
      { kind: 'navigate', url: 'https://tidewater.test/book' },
      [{ action: 'visit_url', url: 'https://tidewater.test/book' }],
    ],
    [
      'back: ALT+ARROWLEFT, which our key handler routes',
      { kind: 'back' },
      [{ action: 'key', keys: ['ALT', 'ARROWLEFT'] }],
    ],
    [
      'type at a point, then Enter',
      { kind: 'type', text: 'Lisbon', at: { x: 50, y: 60 }, pressEnter: true },
      [
        { action: 'left_click', coordinate: [50, 60] },
        { action: 'type', text: 'Lisbon' },
        { action: 'key', keys: ['ENTER'] },
      ],
    ],
  ];
  it.each(cases)('%s', (_name, action, expected) => {
    expect(actionsOf(act([action]))).toEqual(expected);
  });

  it('keeps OpenAI’s own action beside each of ours (all three behind a folded visit)', () => {
    const parsed = read(respond(act([{ kind: 'navigate', url: 'https://x.test' }])));
    expect(parsed.native).toEqual([
      { type: 'keypress', keys: ['CTRL', 'L'] },
      { type: 'type', text: 'https://x.test' },
      { type: 'keypress', keys: ['ENTER'] },
    ]);
    expect(read(respond(act([click(1, 2)]))).native).toEqual({ type: 'click', button: 'left', x: 1, y: 2 });
  });

  it('visits with the preview tool too: CTRL+L alone is nothing, a call typing a whole address visits it', () => {
    const preview = { tool: 'computer_use_preview' as const, display: screen };
    const steps = splitForPreview(act([{ kind: 'navigate', url: 'https://tidewater.test/' }]));
    const parsed = steps.map((step) => read(respond(step, preview)).action);
    expect(parsed).toEqual([
      { action: 'wait', time: 0 },
      { action: 'visit_url', url: 'https://tidewater.test/' },
      { action: 'key', keys: ['ENTER'] },
    ]);
    expect(read(respond(act([{ kind: 'type', text: 'Ada' }]), preview)).action).toEqual({
      action: 'type',
      text: 'Ada',
    });
    // The GA tool is told to batch the three: an address typed alone is typed.
    const typed = read(respond(act([{ kind: 'type', text: 'https://x.test' }]))).action;
    expect(typed).toEqual({ action: 'type', text: 'https://x.test' });
  });

  it('refuses the wheel button and held modifier keys, which our actions cannot do', () => {
    const wheel = respond(act([{ kind: 'click', button: 'middle', count: 1, x: 1, y: 2 }]));
    expect(() => read(wheel)).toThrow(InvalidActionArgumentsError);
    const held = respond(act([{ kind: 'click', button: 'left', count: 1, x: 1, y: 2, keys: ['Shift'] }]));
    expect(() => read(held)).toThrow(/holding keys/);
  });
});

describe('openai-computer: read, whole turns', () => {
  it('reads a batch: the first action now with the thoughts, the rest as `then`', () => {
    const parsed = read(respond(act([click(1, 2), { kind: 'type', text: '4' }], { thoughts: 'Fill it in.' })));
    expect(parsed).toMatchObject({
      thoughts: 'Fill it in.',
      toolCallText: '',
      action: { action: 'left_click', coordinate: [1, 2], thoughts: 'Fill it in.' },
      then: [{ action: { action: 'type', text: '4' }, native: { type: 'type', text: '4' } }],
    });
    expect(parsed.check).toBeUndefined();
  });

  it('turns a pending safety check into the person’s question, holding every action of the call', () => {
    const safetyCheck = { code: 'sensitive_domain', message: 'This is a payment page.' };
    const parsed = read(respond(act([click(1, 2), { kind: 'type', text: '4111' }], { safetyCheck })));
    expect(parsed.action).toEqual({ action: 'ask_user_question', thoughts: '', question: 'This is a payment page.' });
    expect(parsed.then?.map((b) => b.action.action)).toEqual(['left_click', 'type']);
    expect(parsed.check).toEqual({
      message: 'This is a payment page.',
      native: [expect.objectContaining({ code: 'sensitive_domain', message: 'This is a payment page.' })],
    });
    expect(family.outcome(parsed.action)).toEqual({ kind: 'ask', text: 'This is a payment page.' });
  });

  it('reads text with no call as the answer, or as a question to the person', () => {
    const done = read(respond(act([], { thoughts: 'All set.', final: { kind: 'answer', text: 'Booked for 8pm.' } })));
    expect(done.action).toEqual({ action: 'terminate', thoughts: 'All set.', answer: 'Booked for 8pm.' });
    const asked = read(respond(act([], { final: { kind: 'question', text: 'Which date?' } })));
    expect(asked.action).toEqual({ action: 'ask_user_question', thoughts: '', question: 'Which date?' });
  });

  const malformed: Array<[string, StandInOutput, new (...a: never[]) => ModelOutputError, RegExp]> = [
    [
      'an unknown action type',
      act([click(9, 8)], { malformed: 'unknown-action', thoughts: 'Select all.' }),
      UnknownActionError,
      /Unknown action "triple_click"; allowed actions: click, double_click, drag, keypress/,
    ],
    [
      'a missing coordinate',
      act([click(9, 8)], { malformed: 'missing-coordinate' }),
      InvalidActionArgumentsError,
      /field "y": missing/,
    ],
  ];
  it.each(malformed)('throws on %s, with the line the model reads', (_name, scripted, type, message) => {
    const body = respond(scripted);
    expect(() => read(body)).toThrow(type);
    let error: ModelOutputError | undefined;
    try {
      read(body);
    } catch (err) {
      error = err as ModelOutputError;
    }
    expect(error?.written).toHaveProperty('type');
    const line = family.feedback(error as ModelOutputError, screen);
    expect(line).toMatch(message);
    expect(line).toMatch(/^None of the actions of your last turn were carried out: /);
    expect(line).toMatch(/1440x900 screenshot\.$/);
    expect(line).not.toMatch(/\n/);
  });

  it('refuses a point off the screenshot and an empty output', () => {
    expect(() => read(respond(act([click(1500, 10)])))).toThrow(/outside the 1440x900 screenshot/);
    expect(() => read({ output: [] })).toThrow(EmptyOutputError);
  });
});

describe('openai-computer: outputText and the round trip', () => {
  it('records the output items as compact JSON, and a request replays them unchanged', async () => {
    const r1 = respond(act([click(1, 2), { kind: 'type', text: '4' }], { thoughts: 'Go.' }));
    const text = recorded(r1);
    expect(JSON.parse(text)).toEqual(r1.output);
    expect(text).not.toMatch(/\n/);
    const reread = family.read({ text }, { screen, allowed: family.allowedActions, terminateOnParseError: false });
    expect(reread.action).toEqual(read(r1).action);
    const history: HistoryEntry[] = [
      { kind: 'task', text: 'Book.', screenshot: 's1' },
      { kind: 'assistant', text },
      { kind: 'observation', screenshot: 's2' },
      { kind: 'assistant', text: '', continues: true },
      { kind: 'observation', screenshot: 's3' },
    ];
    const loadImage = (ref: string) => Promise.resolve(shot(ref));
    const request = await family.request({
      history,
      loadImage,
      screen,
      endpoint: undefined,
      identity: undefined,
      imagesKept: undefined,
      tokenBudget: undefined,
    });
    const body: OpenAiRequestBody = { ...(request.native as OpenAiRequestBody), model: 'gpt-5.4' };
    const sent = body.input as unknown[];
    expect(sent.slice(1, 1 + r1.output.length)).toEqual(r1.output);
    expect(readOpenAiRequest({ authorization: 'Bearer k' }, body, { replayed: r1.output }).problems).toEqual([]);
  });
});

describe('openai-computer: call through the official SDK', () => {
  let server: http.Server;
  let endpoint: ModelEndpoint;
  const seen: Array<{ url?: string; headers: Record<string, string | undefined>; facts: OpenAiRequestFacts }> = [];
  const script: StandInOutput[] = [];
  const expectations: OpenAiRequestExpectations[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
        );
        const n = seen.length;
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const facts = readOpenAiRequest(headers, body, expectations[n]);
        seen.push({ url: req.url, headers, facts });
        const ctx = {
          tool: facts.tool ?? 'computer',
          screenshot: facts.screenshot,
          display: facts.display,
          sequence: 100 + n,
          encryptedReasoning: facts.encryptedReasoning,
          model: (body as { model?: string }).model ?? '',
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(openAiResponse(script[n] as StandInOutput, ctx)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    endpoint = { baseUrl: `http://127.0.0.1:${port}/v1`, model: 'gpt-5.4', apiKey: 'sk-family-test', maxTokens: 800 };
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = async (history: HistoryEntry[]) => {
    const request = await family.request({
      history,
      loadImage: (ref) => Promise.resolve(shot(ref)),
      screen,
      endpoint: undefined,
      identity: undefined,
      imagesKept: undefined,
      tokenBudget: undefined,
    });
    if (!family.call) throw new Error('openai-computer makes its own call');
    return family.call(request, endpoint, new AbortController().signal);
  };

  it('sends the key to the endpoint only, with no OPENAI_* environment, and maps the usage', async () => {
    const before = { org: process.env.OPENAI_ORG_ID, project: process.env.OPENAI_PROJECT_ID };
    process.env.OPENAI_ORG_ID = 'org-from-env';
    process.env.OPENAI_PROJECT_ID = 'proj-from-env';
    script.push(
      act([click(700, 450)], { thoughts: 'Open it.', usage: { input: 1500, output: 40, cachedInput: 1000 } }),
    );
    const task: HistoryEntry = { kind: 'task', text: 'Book a table.', screenshot: 's1' };
    let completion;
    try {
      completion = await call([task]);
    } finally {
      process.env.OPENAI_ORG_ID = before.org;
      process.env.OPENAI_PROJECT_ID = before.project;
      if (before.org === undefined) delete process.env.OPENAI_ORG_ID;
      if (before.project === undefined) delete process.env.OPENAI_PROJECT_ID;
    }
    const first = seen[0];
    expect(first?.url).toBe('/v1/responses');
    expect(first?.facts).toMatchObject({ apiKey: 'sk-family-test', tool: 'computer', problems: [] });
    expect(first?.headers['openai-organization']).toBeUndefined();
    expect(first?.headers['openai-project']).toBeUndefined();
    expect(completion).toMatchObject({
      text: '',
      reasoning: 'Open it.',
      finishReason: 'completed',
      usage: { prompt_tokens: 1500, completion_tokens: 40, reasoning_tokens: 0, cached_tokens: 1000 },
      responseModel: 'gpt-5.4',
      responseId: 'resp_0100',
    });
    expect(
      family.read(completion, { screen, allowed: family.allowedActions, terminateOnParseError: false }).action,
    ).toEqual({ action: 'left_click', coordinate: [700, 450], thoughts: 'Open it.' });

    // The next step replays that output and answers its call; the stand-in reports no usage this time.
    expectations[1] = { replayed: (completion.native as { output: unknown[] }).output };
    script.push(act([], { final: { kind: 'answer', text: 'Booked.' } }));
    const text = family.outputText?.(completion) ?? '';
    const next = await call([
      task,
      { kind: 'assistant', text },
      { kind: 'observation', screenshot: 's2', url: 'https://t.test/' },
    ]);
    expect(seen[1]?.facts.problems).toEqual([]);
    expect(seen[1]?.facts.screenshot).toEqual(screen);
    expect(next).toMatchObject({ text: 'Booked.', usage: { estimated: true } });
    expect(next.usage.prompt_tokens).toBeGreaterThan(1500); // two screenshots at the estimate's image size
  });
});
