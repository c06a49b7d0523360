// Specification of the openai-computer family (src/families/openai-computer/) against the OpenAI Responses stand-in
// (src/scripted/providers/openai-responses.ts, written from the docs and the SDK's types): requests rebuilt from
// hand-built histories and checked by the stand-in's reader, responses built by the stand-in read into our actions, the
// call through the official SDK against a node:http server on 127.0.0.1, and the round trip of a recorded output.
import type { Response } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { openAiPriceOf } from '../../src/families/openai-computer/prices';
import { LEFT_OUT_PNG, OPENAI_SYSTEM_PROMPT } from '../../src/families/openai-computer/request';
import type { OpenAiRequestBody } from '../../src/families/openai-computer/request';
import { familyOf } from '../../src/families/registry';
import type { RequestInput } from '../../src/families/family';
import type { HistoryEntry } from '../../src/model/context';
import { UnknownActionError } from '../../src/model/errors';
import { readOpenAiRequest } from '../../src/scripted/providers/openai-responses';
import type { OpenAiRequestExpectations, OpenAiRequestFacts } from '../../src/scripted/providers/openai-responses';
import { act, click, family, HEADERS, recorded, respond, screen, shot } from './family-openai-computer.fixtures';

const task = (text = 'Book a table for 4.'): HistoryEntry => ({ kind: 'task', text, screenshot: 's1' });
const assistant = (body: unknown): HistoryEntry => ({ kind: 'assistant', text: recorded(body) });
const continues: HistoryEntry = { kind: 'assistant', text: '', continues: true };
const seen = (ref: string, more: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}): HistoryEntry => ({
  kind: 'observation',
  screenshot: ref,
  url: `https://tidewater.test/${ref}`,
  ...more,
});

function inputOf(history: HistoryEntry[], more: Partial<RequestInput> = {}): RequestInput {
  return {
    history,
    loadImage: (ref) => Promise.resolve(shot(ref)),
    screen,
    endpoint: undefined,
    identity: undefined,
    imagesKept: undefined,
    tokenBudget: undefined,
    ...more,
  };
}
async function bodyOf(history: HistoryEntry[], more: Partial<RequestInput> = {}): Promise<OpenAiRequestBody> {
  const request = await family.request(inputOf(history, more));
  expect(request.messages).toEqual([]);
  return { ...(request.native as OpenAiRequestBody), model: 'gpt-5.4' };
}
const check = (body: OpenAiRequestBody, expect: OpenAiRequestExpectations = {}): OpenAiRequestFacts =>
  readOpenAiRequest(HEADERS, body, expect);
type Item = Record<string, unknown>;
const items = (body: OpenAiRequestBody): Item[] => body.input as unknown as Item[];
const ofType = (body: OpenAiRequestBody, type: string): Item[] => items(body).filter((i) => i.type === type);
/** The text of the user messages after the task, in order. */
const userTexts = (body: OpenAiRequestBody): string[] =>
  items(body)
    .slice(1)
    .filter((i) => i.role === 'user')
    .flatMap((i) => (i.content as Item[]).filter((p) => p.type === 'input_text').map((p) => String(p.text)));

describe('openai-computer: the family and its registration', () => {
  it('is registered, speaks screenshot pixels at full size, and names its two tools', () => {
    expect(familyOf('openai-computer')).toBe(family);
    expect(family).toMatchObject({ coordinateSpace: 'resized-pixels', resizeFactor: 1 });
    expect(family.maxPixels).toBeUndefined();
    expect(family.tools).toEqual(['computer', 'computer_use_preview']);
    expect(family.displaySize({ width: 1440, height: 900 })).toEqual({ width: 1440, height: 900 });
  });

  it('refuses identities and prompt files in one line', async () => {
    expect(family.identityIssue('fara-default', false)).toMatch(/^identities are the Fara families'/);
    await expect(family.promptFileActions('/tmp/p.md')).rejects.toMatchObject({
      name: 'PromptFileError',
      message: expect.stringMatching(/^a prompt file is for the Fara families/),
    });
  });

  it('picks its tool from the endpoint, else the model name, else the GA tool', async () => {
    const toolOf = async (endpoint: RequestInput['endpoint']) =>
      (await bodyOf([task()], { endpoint })).tools?.[0]?.type;
    expect(await toolOf(undefined)).toBe('computer');
    expect(await toolOf({ tool: 'computer_use_preview' })).toBe('computer_use_preview');
    const byName = { model: 'computer-use-preview-2025-03-11' } as RequestInput['endpoint'];
    expect(await toolOf(byName)).toBe('computer_use_preview');
    expect(await toolOf({ model: 'tidewater-booking' } as RequestInput['endpoint'])).toBe('computer');
    expect(await toolOf({ tool: 'computer', model: 'computer-use-preview' } as RequestInput['endpoint'])).toBe(
      'computer',
    );
  });
});

describe('openai-computer: prices', () => {
  it('prices its models by name, a dated snapshot included, the longest name first; none for others', () => {
    expect(openAiPriceOf('gpt-5.4')).toEqual({ input: 2.5, cachedInput: 0.25, output: 15 });
    expect(openAiPriceOf('GPT-5.4-2026-03-05')).toEqual({ input: 2.5, cachedInput: 0.25, output: 15 });
    expect(openAiPriceOf('gpt-5.4-mini')).toEqual({ input: 0.75, cachedInput: 0.075, output: 4.5 });
    expect(openAiPriceOf('gpt-5.4-pro')).toEqual({ input: 30, output: 180 });
    expect(openAiPriceOf('gpt-5.40')).toBeUndefined();
    expect(openAiPriceOf('computer-use-preview')).toBeUndefined();
  });
});

describe('openai-computer: request', () => {
  it('opens with our prompt and the task with its screenshot, stateless (no store, encrypted reasoning)', async () => {
    const body = await bodyOf([task()]);
    expect(check(body).problems).toEqual([]);
    expect(body).toMatchObject({
      instructions: OPENAI_SYSTEM_PROMPT,
      tools: [{ type: 'computer' }],
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body).not.toHaveProperty('truncation');
    expect(items(body)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Book a table for 4.' },
          { type: 'input_image', image_url: shot('s1'), detail: 'original' },
        ],
      },
    ]);
    expect(OPENAI_SYSTEM_PROMPT).toMatch(/CTRL\+L/);
  });

  it('replays a step’s output items unchanged and answers its call with the next screenshot and the URL', async () => {
    const r1 = respond(act([click(700, 450)], { thoughts: 'Open the form.' }));
    const body = await bodyOf([task(), assistant(r1), seen('s2')]);
    expect(check(body, { replayed: r1.output }).problems).toEqual([]);
    expect(check(body).screenshot).toEqual(screen);
    expect(ofType(body, 'computer_call_output')).toEqual([
      {
        type: 'computer_call_output',
        call_id: r1.output.find((o) => o.type === 'computer_call')?.call_id,
        output: { type: 'computer_screenshot', image_url: shot('s2'), detail: 'original' },
      },
    ]);
    expect(userTexts(body)).toEqual(['Current URL: https://tidewater.test/s2']);
  });

  it('answers a batch once, with the screenshot after its last action, when every action was carried out', async () => {
    const r1 = respond(act([click(1, 2), { kind: 'type', text: '4' }, { kind: 'keys', keys: ['Enter'] }]));
    const body = await bodyOf([task(), assistant(r1), seen('s2'), continues, seen('s3'), continues, seen('s4')]);
    expect(check(body, { replayed: r1.output }).problems).toEqual([]);
    const outputs = ofType(body, 'computer_call_output');
    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.output).toMatchObject({ image_url: shot('s4') });
    expect(userTexts(body).join('\n')).not.toMatch(/not carried out/);
  });

  it('says which actions of a batch cut short were not carried out, and why', async () => {
    const r1 = respond(act([click(1, 2), { kind: 'type', text: '4' }, { kind: 'keys', keys: ['Enter'] }]));
    const failed = seen('s3', { textObservation: 'The click target is gone.' });
    const body = await bodyOf([task(), assistant(r1), seen('s2'), continues, failed]);
    expect(check(body, { replayed: r1.output }).problems).toEqual([]);
    expect(ofType(body, 'computer_call_output')[0]?.output).toMatchObject({ image_url: shot('s3') });
    expect(userTexts(body)).toEqual([
      'Current URL: https://tidewater.test/s3\nThe click target is gone.\n' +
        'These actions of your last turn were not carried out: keypress (see above).',
    ]);
  });

  it('answers a question with the person’s reply first, then the screenshot and URL', async () => {
    const r1 = respond(act([], { final: { kind: 'question', text: 'Which date?' } }));
    const body = await bodyOf([task(), assistant(r1), seen('s2', { userReply: 'June 3' })]);
    expect(check(body, { replayed: r1.output }).problems).toEqual([]);
    expect(items(body).slice(1)).toEqual([
      ...r1.output,
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'June 3' },
          { type: 'input_image', image_url: shot('s2'), detail: 'original' },
          { type: 'input_text', text: 'Current URL: https://tidewater.test/s2' },
        ],
      },
    ]);
  });

  const checked = () =>
    respond(
      act([click(5, 6), { kind: 'type', text: '4111' }], {
        safetyCheck: { code: 'sensitive_domain', message: 'This is a payment page.' },
      }),
    );

  it('acknowledges the pending checks when the person confirmed (the next step continued the call)', async () => {
    const r1 = checked();
    const pending = r1.output.flatMap((o) => (o.type === 'computer_call' ? o.pending_safety_checks : []));
    const history = [task(), assistant(r1), seen('s2', { userReply: 'yes' }), continues, seen('s3'), continues];
    const body = await bodyOf([...history, seen('s4')]);
    const facts = check(body, { replayed: r1.output, acknowledge: pending.map((c) => c.id) });
    expect(facts.problems).toEqual([]);
    expect(facts.acknowledged).toEqual(pending.map((c) => c.id));
    expect(ofType(body, 'computer_call_output')[0]).toMatchObject({
      acknowledged_safety_checks: pending,
      output: { image_url: shot('s4') },
    });
  });

  it('sends no acknowledgement and the refusal when the person declined', async () => {
    const r1 = checked();
    const body = await bodyOf([task(), assistant(r1), seen('s2', { userReply: 'No, do not pay.' })]);
    const facts = check(body, { replayed: r1.output });
    expect(facts.problems).toEqual([]);
    expect(facts.acknowledged).toEqual([]);
    expect(ofType(body, 'computer_call_output')[0]).not.toHaveProperty('acknowledged_safety_checks');
    expect(userTexts(body)).toEqual([
      'Current URL: https://tidewater.test/s2\nNone of the actions of your last turn were carried out.\n' +
        'The user declined: No, do not pay.',
    ]);
  });

  it('answers the call of an invalid output with the feedback the model reads', async () => {
    const r1 = respond(act([click(9, 8)], { malformed: 'unknown-action' }));
    const feedback = family.feedback(new UnknownActionError('triple_click', []), screen);
    const body = await bodyOf([task(), assistant(r1), seen('s2', { textObservation: feedback })]);
    expect(check(body, { replayed: r1.output }).problems).toEqual([]);
    expect(ofType(body, 'computer_call_output')).toHaveLength(1);
    expect(userTexts(body)).toEqual([`Current URL: https://tidewater.test/s2\n${feedback}`]);
  });

  it('keeps screenshots of the last imagesKept user turns, older results with a 1x1 image and a note', async () => {
    const history: HistoryEntry[] = [task()];
    const sent: Response[] = [];
    for (let s = 2; s <= 6; s++) {
      const r = respond(act([click(s, s)]));
      sent.push(r);
      history.push(assistant(r), seen(`s${s}`));
    }
    const body = await bodyOf(history, { imagesKept: 2 });
    expect(check(body, { replayed: sent.flatMap((r) => r.output) }).problems).toEqual([]);
    const images = ofType(body, 'computer_call_output').map((o) => (o.output as Item).image_url);
    expect(images).toEqual([LEFT_OUT_PNG, LEFT_OUT_PNG, LEFT_OUT_PNG, shot('s5'), shot('s6')]);
    expect((items(body)[0]?.content as Item[]).map((p) => p.type)).toEqual(['input_text']);
    expect(userTexts(body).filter((t) => t.includes('left out'))).toHaveLength(3);
  });

  it('drops reasoning at the end of an output cut short; sends a record that is no item list as text', async () => {
    const cut = [{ id: 'rs_9', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm' }] }];
    const body = await bodyOf([task(), { kind: 'assistant', text: JSON.stringify(cut) }, seen('s2')]);
    expect(check(body).problems).toEqual([]);
    expect(items(body).filter((i) => i.type === 'reasoning')).toEqual([]);
    const old = await bodyOf([task(), { kind: 'assistant', text: 'Thought: click.' }, seen('s2')]);
    expect(items(old)[1]).toEqual({ role: 'assistant', content: 'Thought: click.' });
    expect(check(old).problems).toEqual([]);
  });

  it('speaks the preview tool in the screenshot’s size, with truncation auto', async () => {
    const r1 = respond(act([click(10, 20)]), { tool: 'computer_use_preview', display: screen });
    const body = await bodyOf([task(), assistant(r1), seen('s2')], { endpoint: { tool: 'computer_use_preview' } });
    const facts = check(body, { replayed: r1.output });
    expect(facts).toMatchObject({ tool: 'computer_use_preview', display: screen, problems: [] });
    expect(body).toMatchObject({ truncation: 'auto', reasoning: { summary: 'concise' } });
  });
});
