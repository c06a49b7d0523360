// A whole task through the openai-computer family, the way the agent loop drives it, against the OpenAI Responses
// stand-in on 127.0.0.1: each model call's request rebuilt from the history and sent with the official SDK, read into
// our actions, a batch carried out as steps that continue the call, a safety check confirmed and one declined, an
// invalid output fed back, a question answered, and the answer. The stand-in checks every request: every earlier output
// item replayed unchanged, each call answered, the acknowledgement after the yes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentAction } from '../../src/actions/schemas';
import type { ModelEndpoint } from '../../src/model/client';
import type { HistoryEntry } from '../../src/model/context';
import { ModelOutputError } from '../../src/model/errors';
import type { ParsedOutput } from '../../src/model/parse';
import { openAiResponse, readOpenAiRequest } from '../../src/scripted/providers/openai-responses';
import type { OpenAiRequestExpectations, OpenAiRequestFacts } from '../../src/scripted/providers/openai-responses';
import type { StandInOutput } from '../../src/scripted/providers/output';
import { act, click, family, screen, shot } from './family-openai-computer.fixtures';

const SCRIPT: StandInOutput[] = [
  act([{ kind: 'navigate', url: 'https://tidewater.test/book' }, click(700, 450)], { thoughts: 'Open the booking.' }),
  act([click(5, 6), { kind: 'type', text: 'Ada Lovelace' }], {
    safetyCheck: { code: 'sensitive_domain', message: 'This page takes personal data. Go on?' },
  }),
  act([click(9, 8)], { malformed: 'unknown-action' }),
  act([], { final: { kind: 'question', text: 'Which time do you want?' } }),
  act([click(30, 40)], { safetyCheck: { code: 'irrelevant_domain', message: 'This site is not the task’s. Go on?' } }),
  act([], { thoughts: 'Done.', final: { kind: 'answer', text: 'Booked for 8pm.' } }),
];
/** The person's replies, in order: to the first check, the question, the second check. */
const REPLIES = ['yes', '8pm', 'No, stay on Tidewater.'];

describe('openai-computer: a whole task against the stand-in', () => {
  let server: http.Server;
  let endpoint: ModelEndpoint;
  const facts: OpenAiRequestFacts[] = [];
  const expectations: OpenAiRequestExpectations[] = [];
  const sentOutputs: unknown[] = [];
  const bodies: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
        );
        const n = facts.length;
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        const read = readOpenAiRequest(headers, JSON.parse(bodies[n] ?? ''), {
          ...expectations[n],
          replayed: [...sentOutputs],
        });
        facts.push(read);
        const ctx = { tool: read.tool ?? 'computer', screenshot: read.screenshot, sequence: n + 1 };
        const body = openAiResponse(SCRIPT[n] as StandInOutput, {
          ...ctx,
          encryptedReasoning: read.encryptedReasoning,
        });
        sentOutputs.push(...(body as { output: unknown[] }).output);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    endpoint = { baseUrl: `http://127.0.0.1:${port}/v1`, model: 'gpt-5.4', apiKey: 'sk-loop' };
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('books the table: every request well formed, the yes acknowledged, the no and the feedback read', async () => {
    const history: HistoryEntry[] = [{ kind: 'task', text: 'Book a table at Tidewater.', screenshot: 's1' }];
    const done: AgentAction[] = [];
    const replies = [...REPLIES];
    let shots = 1;
    const observe = (more: Partial<Extract<HistoryEntry, { kind: 'observation' }>> = {}): void => {
      shots += 1;
      history.push({ kind: 'observation', screenshot: `s${shots}`, url: 'https://tidewater.test/book', ...more });
    };
    let answer: string | null = null;
    for (let call = 0; call < SCRIPT.length && answer === null; call++) {
      const request = await family.request({
        history,
        loadImage: (ref) => Promise.resolve(shot(ref)),
        screen,
        endpoint: undefined,
        identity: undefined,
        imagesKept: undefined,
        tokenBudget: undefined,
      });
      const completion = await family.call!(request, endpoint, new AbortController().signal);
      history.push({ kind: 'assistant', text: family.outputText!(completion) });
      let parsed: ParsedOutput;
      try {
        parsed = family.read(completion, { screen, allowed: request.allowed, terminateOnParseError: false });
      } catch (err) {
        if (!(err instanceof ModelOutputError)) throw err;
        observe({ textObservation: family.feedback(err, screen) });
        continue;
      }
      const outcome = family.outcome(parsed.action);
      if (outcome.kind === 'terminate') answer = outcome.text;
      else if (outcome.kind === 'ask') {
        const reply = replies.shift() ?? '';
        observe({ userReply: reply });
        if (parsed.check && reply === 'yes') {
          expectations[call + 1] = { acknowledge: (parsed.check.native as Array<{ id: string }>).map((c) => c.id) };
          for (const next of parsed.then ?? []) {
            done.push(next.action);
            history.push({ kind: 'assistant', text: '', continues: true });
            observe();
          }
        }
      } else {
        done.push(parsed.action);
        observe();
        for (const next of parsed.then ?? []) {
          done.push(next.action);
          history.push({ kind: 'assistant', text: '', continues: true });
          observe();
        }
      }
    }
    expect(answer).toBe('Booked for 8pm.');
    expect(facts.map((f) => f.problems)).toEqual(SCRIPT.map(() => []));
    expect(facts[2]?.acknowledged).toEqual(['cs_0002']);
    expect(facts.map((f) => f.acknowledged.length)).toEqual([0, 0, 1, 0, 0, 0]);
    expect(done.map((a) => a.action)).toEqual(['visit_url', 'left_click', 'left_click', 'type']);
    expect(bodies[3]).toContain('Unknown action \\"triple_click\\"');
    expect(bodies[4]).toContain('{"type":"input_text","text":"8pm"}');
    expect(bodies[5]).toContain('The user declined: No, stay on Tidewater.');
    expect(done[0]).toMatchObject({ url: 'https://tidewater.test/book', thoughts: 'Open the booking.' });
  });
});
