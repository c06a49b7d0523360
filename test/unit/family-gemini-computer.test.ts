// Specification of the gemini-computer family's requests and call (src/families/gemini-computer/): the conversation
// rebuilt from hand-built histories (a step, a batch continued and cut short, a question and its reply, a safety
// decision confirmed and declined, an invalid output, more steps than screenshots kept), each checked by the Gemini
// stand-in's request reader (src/scripted/providers/gemini-generate.ts); the round trip of a model turn; and the call
// through `@google/genai` against a local server answering with the stand-in's halves.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Content, Part } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { usageOf } from '../../src/families/gemini-computer/call';
import { GEMINI_COMPUTER_FAMILY, GEMINI_SYSTEM_PROMPT } from '../../src/families/gemini-computer/family';
import type { HistoryEntry } from '../../src/model/context';
import type { ModelEndpoint } from '../../src/model/client';
import { geminiResponse, readGeminiRequest } from '../../src/scripted/providers/gemini-generate';
import type { GeminiExpect, GeminiResponseContext } from '../../src/scripted/providers/gemini-generate';
import type { ScreenAction, StandInOutput } from '../../src/scripted/providers/output';

const family = GEMINI_COMPUTER_FAMILY;
const SCREEN = { width: 1440, height: 900 };
const KEY = { 'x-goog-api-key': 'fake-key' };
const URL_ = 'https://tidewater.test/rooms';

/** A PNG header of the screen's size followed by the ref, so a test can tell which screenshot went where. */
function shot(ref: string): string {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'ascii');
  ihdr.writeUInt32BE(SCREEN.width, 8);
  ihdr.writeUInt32BE(SCREEN.height, 12);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, ihdr, Buffer.from(`#${ref}`)]).toString('base64');
}
const refOf = (data: string | undefined): string | undefined =>
  data === undefined ? undefined : Buffer.from(data, 'base64').toString('latin1').split('#')[1];

const loadImage = (ref: string) => Promise.resolve(`data:image/png;base64,${shot(ref)}`);

/** The recorded text of a stand-in response (what outputText records and the next requests replay). */
function recordedAs(actions: ScreenAction[], extra: Partial<StandInOutput> = {}, set: '2.5' | '3' = '2.5'): string {
  const ctx: GeminiResponseContext = { screenshot: SCREEN, functionSet: set };
  return family.outputText!({ text: '', native: geminiResponse({ thoughts: '', actions, ...extra }, ctx) });
}

const task = (): HistoryEntry => ({ kind: 'task', text: 'Book a room in Lisbon.', screenshot: 's1' });
const seen = (ref: string, extra: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}): HistoryEntry => ({
  kind: 'observation',
  screenshot: ref,
  url: URL_,
  ...extra,
});
const said = (text: string): HistoryEntry => ({ kind: 'assistant', text });
const continues = (): HistoryEntry => ({ kind: 'assistant', text: '', continues: true });

const P = { x: 720, y: 450 };
const click: ScreenAction = { kind: 'click', button: 'left', count: 1, ...P };
const typeAt: ScreenAction = { kind: 'type', text: 'Lisbon', at: P, pressEnter: true };
const scrollDown: ScreenAction = { kind: 'scroll', ...P, dx: 0, dy: 450 };

const NO_SETTINGS = { endpoint: undefined, identity: undefined, imagesKept: undefined, tokenBudget: undefined };

interface Built {
  body: { contents: Content[]; systemInstruction: Content; tools: unknown[] };
  problems: string[];
  acknowledged: string[];
}

async function build(history: HistoryEntry[], expect: GeminiExpect = {}, extra = {}): Promise<Built> {
  const request = await family.request({
    history,
    loadImage,
    screen: SCREEN,
    endpoint: undefined,
    identity: undefined,
    imagesKept: undefined,
    tokenBudget: undefined,
    ...extra,
  });
  const facts = readGeminiRequest(KEY, request.native, expect);
  return { body: request.native as Built['body'], problems: facts.problems, acknowledged: facts.acknowledged };
}

const responses = (content: Content | undefined) =>
  (content?.parts ?? []).flatMap((p) => (p.functionResponse ? [p.functionResponse] : []));
const textsOf = (content: Content | undefined) => (content?.parts ?? []).flatMap((p) => (p.text ? [p.text] : []));
const last = (b: Built) => b.body.contents.at(-1);

describe('the request', () => {
  it('opens with our system prompt, the computer_use tool and the task with its screenshot', async () => {
    const b = await build([task()]);
    expect(b.problems).toEqual([]);
    expect(b.body.systemInstruction).toEqual({ parts: [{ text: GEMINI_SYSTEM_PROMPT }] });
    expect(b.body.tools).toEqual([
      {
        computerUse: {
          environment: 'ENVIRONMENT_BROWSER',
          excludedPredefinedFunctions: ['middle_click', 'mouse_down', 'mouse_up', 'key_down', 'key_up'],
        },
      },
    ]);
    expect(b.body.contents).toHaveLength(1);
    expect(textsOf(b.body.contents[0])).toEqual(['Book a room in Lisbon.']);
    expect(refOf(b.body.contents[0]?.parts?.[1]?.inlineData?.data)).toBe('s1');
  });

  it('excludes nothing of the 2.5 set (models.<name>.tool)', async () => {
    const b = await build([task()], {}, { endpoint: { tool: '2.5' } });
    expect(b.body.tools).toEqual([{ computerUse: { environment: 'ENVIRONMENT_BROWSER' } }]);
  });

  it('replays a step’s model turn as sent and answers its call with the URL and the next screenshot', async () => {
    const recorded = recordedAs([click], { thoughts: 'Open the rooms.' });
    const b = await build([task(), said(recorded), seen('s2')]);
    expect(b.problems).toEqual([]);
    expect(b.body.contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(b.body.contents[1]).toEqual((JSON.parse(recorded) as { content: Content }).content);
    const [answer] = responses(last(b));
    expect(answer).toMatchObject({ name: 'click_at', response: { url: URL_ } });
    expect(refOf(answer?.parts?.[0]?.inlineData?.data)).toBe('s2');
  });

  it('answers each call of a batch with the screenshot after its own last action', async () => {
    // scroll_at becomes two of our actions (move, scroll): steps 1 and 2; type_text_at is step 3.
    const recorded = recordedAs([scrollDown, typeAt]);
    const b = await build([task(), said(recorded), seen('s2'), continues(), seen('s3'), continues(), seen('s4')]);
    expect(b.problems).toEqual([]);
    const answers = responses(last(b));
    expect(answers.map((a) => a.name)).toEqual(['scroll_at', 'type_text_at']);
    expect(answers.map((a) => refOf(a.parts?.[0]?.inlineData?.data))).toEqual(['s3', 's4']);
    expect(answers.every((a) => a.response?.error === undefined)).toBe(true);
  });

  it('says which calls of a batch cut short were not carried out, and why', async () => {
    const recorded = recordedAs([click, typeAt]);
    const b = await build([task(), said(recorded), seen('s2', { textObservation: 'The click failed: no element.' })]);
    expect(b.problems).toEqual([]);
    const [first, second] = responses(last(b));
    expect(first?.response).toEqual({ url: URL_, output: 'The click failed: no element.' });
    expect(second?.response).toEqual({
      url: URL_,
      error: 'Not carried out: the batch stopped before it: The click failed: no element.',
    });
    expect(refOf(second?.parts?.[0]?.inlineData?.data)).toBe('s2');
  });

  it('answers a question with the person’s reply first, then the screenshot and the URL', async () => {
    const recorded = recordedAs([], { final: { kind: 'question', text: 'Which date?' } });
    const b = await build([task(), said(recorded), seen('s2', { userReply: 'June 3' })]);
    expect(b.problems).toEqual([]);
    const parts = last(b)?.parts ?? [];
    expect(parts[0]).toEqual({ text: 'June 3' });
    expect(refOf(parts[1]?.inlineData?.data)).toBe('s2');
    expect(parts[2]).toEqual({ text: `Current URL: ${URL_}` });
  });

  const check = { code: 'sensitive_domain', message: 'Submit the booking?' };

  it('acknowledges a confirmed safety decision on its call’s response', async () => {
    const recorded = recordedAs([click, { kind: 'wait', seconds: 5 }], { safetyCheck: check });
    // Step 1 asked; steps 2 and 3 carried out the two calls.
    const history = [task(), said(recorded), seen('s2', { userReply: 'yes' }), continues(), seen('s3'), continues()];
    const b = await build([...history, seen('s4')], { safetyAcknowledgement: true });
    expect(b.problems).toEqual([]);
    expect(b.acknowledged).toEqual(['click_at']);
    const answers = responses(last(b));
    expect(answers[0]?.response).toEqual({ url: URL_, safety_acknowledgement: 'true' });
    expect(answers[1]?.response).toEqual({ url: URL_ });
    expect(answers.map((a) => refOf(a.parts?.[0]?.inlineData?.data))).toEqual(['s3', 's4']);
    expect(textsOf(last(b))).toEqual([]);
  });

  it('sends a declined safety decision unacknowledged, with the reply as a refusal', async () => {
    const recorded = recordedAs([click], { safetyCheck: check });
    const b = await build([task(), said(recorded), seen('s2', { userReply: 'No, do not book.' })]);
    expect(b.problems).toEqual([]);
    expect(b.acknowledged).toEqual([]);
    const [answer] = responses(last(b));
    expect(answer?.response).toEqual({ url: URL_, error: 'Not carried out: the user declined to confirm it' });
    expect(textsOf(last(b))).toEqual(['The user declined: No, do not book.']);
  });

  it('replays a MALFORMED_FUNCTION_CALL turn and feeds back the line the model reads', async () => {
    const recorded = recordedAs([click], { malformed: 'malformed-function-call' }, '3');
    const line = 'Your function call was malformed and could not be carried out.';
    const b = await build([task(), said(recorded), seen('s2', { textObservation: line })]);
    expect(b.problems).toEqual([]);
    expect(b.body.contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(textsOf(b.body.contents[1])[0]).toMatch(/Malformed function call/);
    expect(textsOf(last(b))).toEqual([line, `Current URL: ${URL_}`]);
  });

  it('answers the calls of an output it could not read, with the feedback', async () => {
    const native = {
      candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'middle_click' } }] } }],
    };
    const recorded = family.outputText!({ text: '', native });
    const line = 'middle_click cannot be carried out here.';
    const b = await build([task(), said(recorded), seen('s2', { textObservation: line })]);
    expect(b.problems).toEqual([]);
    expect(responses(last(b))[0]?.response).toEqual({ url: URL_, error: `Not carried out: ${line}` });
  });

  it('keeps the screenshots of the newest imagesKept user turns, older results keep their text', async () => {
    const history: HistoryEntry[] = [task()];
    for (let s = 2; s <= 6; s++) history.push(said(recordedAs([click])), seen(`s${s}`));
    const loaded: string[] = [];
    const counting = (ref: string) => (loaded.push(ref), loadImage(ref));
    const b = await build(history, {}, { imagesKept: 2, loadImage: counting });
    expect(loaded).toEqual(['s5', 's6']); // an older screenshot is not even loaded
    expect(b.problems).toEqual([]);
    const users = b.body.contents.filter((c) => c.role === 'user');
    const images = users.map((c) =>
      (c.parts ?? []).some((p: Part) => p.inlineData || p.functionResponse?.parts?.length),
    );
    expect(images).toEqual([false, false, false, false, true, true]);
    expect(responses(users[1])[0]?.response).toEqual({ url: URL_ });
    expect(users[0]?.parts).toEqual([{ text: 'Book a room in Lisbon.' }]);
  });

  it('round trip: read → outputText → the next request carries the model turn unchanged', async () => {
    const native = geminiResponse(
      { thoughts: 'Type the city.', actions: [typeAt] },
      { screenshot: SCREEN, functionSet: '3', callIds: true },
    );
    const parts = native.candidates?.[0]?.content?.parts ?? [];
    parts[0] = { ...parts[0], thoughtSignature: 'c2lnbmF0dXJl' };
    const output = { text: '', native };
    expect(
      family.read(output, { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false }),
    ).toMatchObject({ action: { action: 'left_click' }, then: [{ action: { action: 'type' } }] });
    const b = await build([task(), said(family.outputText!(output)), seen('s2'), continues(), seen('s3')]);
    expect(b.problems).toEqual([]);
    expect(b.body.contents[1]).toEqual(native.candidates?.[0]?.content);
    expect(responses(last(b)).map((a) => a.id)).toEqual(['standin-response-1', 'standin-response-2']);
  });
});

describe('a task driven against the stand-in, step by step', () => {
  it('runs a batch, a confirmed check, a question and the answer, every request well formed', async () => {
    const script: StandInOutput[] = [
      { thoughts: 'Pick the room and type the city.', actions: [click, typeAt] },
      { thoughts: 'Book it.', actions: [click], safetyCheck: { code: 'sensitive_domain', message: 'Book it?' } },
      { thoughts: '', actions: [], final: { kind: 'question', text: 'Which date?' } },
      { thoughts: '', actions: [], final: { kind: 'answer', text: 'Booked for June 3.' } },
    ];
    const history: HistoryEntry[] = [task()];
    let shots = 1;
    const next = (extra: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}) => seen(`s${++shots}`, extra);
    let expectAck = false;
    const done: string[] = [];
    for (let call = 0; call < script.length; call++) {
      const request = await family.request({ ...NO_SETTINGS, history, loadImage, screen: SCREEN });
      const facts = readGeminiRequest(KEY, request.native, { safetyAcknowledgement: expectAck });
      expect(facts.problems).toEqual([]);
      const contents = (request.native as Built['body']).contents;
      expect(contents.filter((c) => c.role === 'user').length - 1).toBe(call); // the stand-in's turn count
      const ctx = { screenshot: facts.screenshot, functionSet: '3' as const, callIds: true, responseId: `r${call}` };
      const output = { text: '', native: geminiResponse(script[call]!, ctx) };
      const parsed = family.read(output, { screen: SCREEN, allowed: request.allowed, terminateOnParseError: false });
      history.push(said(family.outputText!(output)));
      const outcome = family.outcome(parsed.action);
      done.push(outcome.kind === 'act' ? parsed.action.action : `${outcome.kind}: ${outcome.text}`);
      if (outcome.kind === 'terminate') break;
      history.push(next(outcome.kind === 'ask' ? { userReply: parsed.check ? 'yes' : 'June 3' } : {}));
      for (const batched of parsed.then ?? []) {
        done.push(batched.action.action);
        history.push(continues(), next());
      }
      expectAck = !!parsed.check;
    }
    expect(done).toEqual([
      'left_click', 'left_click', 'type', 'ask: Book it?', 'left_click', 'ask: Which date?', 'terminate: Booked for June 3.',
    ]); // prettier-ignore
  });
});

describe('the call through @google/genai', () => {
  let server: http.Server;
  let baseUrl = '';
  const seenRequests: { url: string; key: string | undefined; problems: string[]; body: unknown }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const body: unknown = JSON.parse(raw);
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]),
        );
        if (req.url?.includes('refused-model')) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 400, message: 'Invalid argument', status: 'INVALID_ARGUMENT' } }));
          return;
        }
        const facts = readGeminiRequest(headers, body);
        seenRequests.push({ url: req.url ?? '', key: headers['x-goog-api-key'], problems: facts.problems, body });
        const out = { thoughts: 'Click.', actions: [click], usage: { input: 1200, output: 40, cachedInput: 300 } };
        const reply = geminiResponse(out, { screenshot: facts.screenshot, functionSet: '3', responseId: 'r-1' });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const endpoint = (extra: Partial<ModelEndpoint> = {}): ModelEndpoint => ({
    baseUrl,
    model: 'gemini-3.5-flash',
    apiKey: 'fake-key',
    ...extra,
  });

  it('sends the request to /v1beta/models/{model}:generateContent with the key, and maps the usage', async () => {
    const request = await family.request({
      history: [task()],
      loadImage,
      screen: SCREEN,
      endpoint: undefined,
      identity: undefined,
      imagesKept: undefined,
      tokenBudget: undefined,
    });
    const completion = await family.call!(request, endpoint({ maxTokens: 512 }), new AbortController().signal);
    const sent = seenRequests.at(-1);
    expect(sent?.url).toBe('/v1beta/models/gemini-3.5-flash:generateContent');
    expect(sent?.key).toBe('fake-key');
    expect(sent?.problems).toEqual([]);
    expect(sent?.body).toMatchObject({
      generationConfig: { maxOutputTokens: 512 },
      systemInstruction: { parts: [{ text: GEMINI_SYSTEM_PROMPT }] },
      tools: [
        {
          computerUse: {
            environment: 'ENVIRONMENT_BROWSER',
            excludedPredefinedFunctions: ['middle_click', 'mouse_down', 'mouse_up', 'key_down', 'key_up'],
          },
        },
      ],
    });
    expect(sent?.body).not.toHaveProperty('generationConfig.temperature');
    expect(completion.usage).toEqual({
      prompt_tokens: 1200,
      completion_tokens: 40,
      reasoning_tokens: 0,
      cached_tokens: 300,
    });
    expect(completion).toMatchObject({
      text: 'Click.',
      finishReason: 'STOP',
      responseModel: 'gemini-3.5-flash',
      responseId: 'r-1',
    });
    const parsed = family.read(
      { text: completion.text, native: completion.native },
      { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false },
    );
    expect(parsed.action).toMatchObject({ action: 'left_click', coordinate: [500, 500] });
  });

  it('takes a base URL given with /v1beta, and never a key from the environment', async () => {
    const request = await family.request({
      history: [task()],
      loadImage,
      screen: SCREEN,
      endpoint: undefined,
      identity: undefined,
      imagesKept: undefined,
      tokenBudget: undefined,
    });
    const saved = process.env.GEMINI_API_KEY;
    process.env.GEMINI_API_KEY = 'from-the-environment';
    try {
      const keyless = endpoint({ baseUrl: `${baseUrl}/v1beta/`, apiKey: undefined, temperature: 0.2 });
      await family.call!(request, keyless, new AbortController().signal);
    } finally {
      if (saved === undefined) delete process.env.GEMINI_API_KEY;
      else process.env.GEMINI_API_KEY = saved;
    }
    const sent = seenRequests.at(-1);
    expect(sent?.url).toBe('/v1beta/models/gemini-3.5-flash:generateContent');
    expect(sent?.key ?? '').toBe('');
    expect(sent?.body).toMatchObject({ generationConfig: { temperature: 0.2 } });
  });

  it('sends function responses with their screenshots and the acknowledgement through the SDK unchanged', async () => {
    const recorded = recordedAs([click], { safetyCheck: { code: 'sensitive_domain', message: 'Book it?' } });
    const history = [task(), said(recorded), seen('s2', { userReply: 'yes' }), continues(), seen('s3')];
    const request = await family.request({ ...NO_SETTINGS, history, loadImage, screen: SCREEN });
    await family.call!(request, endpoint(), new AbortController().signal);
    const sent = seenRequests.at(-1)?.body as Built['body'];
    expect(sent.contents).toEqual((request.native as Built['body']).contents);
    expect(readGeminiRequest(KEY, sent, { safetyAcknowledgement: true }).problems).toEqual([]);
  });

  it('lets a 400 through with its status (the client classifies it as the request’s fault)', async () => {
    const request = await family.request({
      history: [task()],
      loadImage,
      screen: SCREEN,
      endpoint: undefined,
      identity: undefined,
      imagesKept: undefined,
      tokenBudget: undefined,
    });
    const call = family.call!(request, endpoint({ model: 'refused-model' }), new AbortController().signal);
    await expect(call).rejects.toMatchObject({ status: 400 });
  });
});

describe('usage', () => {
  const body = { systemInstruction: { parts: [{ text: 'x'.repeat(400) }] }, contents: [], tools: [] };

  it('counts thought tokens as output and tool-use prompt tokens as input', () => {
    const usage = {
      promptTokenCount: 1000,
      toolUsePromptTokenCount: 50,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 80,
    };
    expect(usageOf(usage, body, '')).toEqual({ prompt_tokens: 1050, completion_tokens: 100, reasoning_tokens: 80 });
  });

  it('estimates, and says so, when the response reports none', () => {
    const withImage = {
      ...body,
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }],
    };
    const usage = usageOf(undefined, withImage, 'x'.repeat(40));
    expect(usage).toMatchObject({ completion_tokens: 11, reasoning_tokens: 0, estimated: true });
    expect(usage.prompt_tokens).toBeGreaterThan(1500);
  });
});
