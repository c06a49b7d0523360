// Specification of the anthropic-computer family's call: through the official SDK to the Anthropic stand-in on
// 127.0.0.1 (the key and the beta header as the stand-in's reader sees them, the endpoint's model and max tokens,
// the usage mapped, a 4xx answer not retried), and the round trip: the response read, recorded with outputText and
// replayed unchanged as the assistant message of the next request, which the stand-in accepts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_COMPUTER_FAMILY } from '../../src/families/anthropic-computer/family';
import { sdkBaseUrl } from '../../src/families/anthropic-computer/call';
import type { HistoryEntry } from '../../src/model/context';
import { ModelClient } from '../../src/model/client';
import type { ModelEndpoint } from '../../src/model/client';
import {
  anthropicContext,
  anthropicResponse,
  readAnthropicRequest,
  type AnthropicComputerTool,
  type AnthropicExpectations,
  type AnthropicRequestFacts,
  type AnthropicScriptedOutput,
} from '../../src/scripted/providers/anthropic-messages';

const SCREEN = { width: 1280, height: 800 };
/** An endpoint's settings as the worker config gives them: with the model's name beside the tool. */
const settingsOf = (tool: string) => {
  const settings = { tool, model: 'claude-test' };
  return settings;
};
const TOOLS: AnthropicComputerTool[] = ['computer_20250124', 'computer_20251124', 'computer_toolset_20260801'];
const family = ANTHROPIC_COMPUTER_FAMILY;

let shot = '';
beforeAll(async () => {
  const png = await sharp({ create: { ...SCREEN, channels: 3, background: { r: 9, g: 99, b: 199 } } })
    .png()
    .toBuffer();
  shot = `data:image/png;base64,${png.toString('base64')}`;
});

interface Seen {
  path: string;
  headers: Record<string, string | undefined>;
  body: Record<string, unknown>;
  facts: AnthropicRequestFacts;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** The stand-in on 127.0.0.1: each request read by its checker, answered with the script's next output. */
async function standIn(script: AnthropicScriptedOutput[], expectations: AnthropicExpectations[] = [], status = 200) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const index = seen.length;
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(',') : v;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const facts = readAnthropicRequest(headers, body, expectations[index]);
      seen.push({ path: req.url ?? '', headers, body, facts });
      const next = script[index];
      if (status !== 200 || !next) {
        res.writeHead(status === 200 ? 500 : status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'no' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(anthropicResponse(next, anthropicContext(facts, index))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const task: HistoryEntry = { kind: 'task', text: 'Book a table for two at Tidewater.', screenshot: 'shot' };
async function requestOf(history: HistoryEntry[], tool: AnthropicComputerTool) {
  return family.request({
    history,
    loadImage: async () => shot,
    screen: SCREEN,
    endpoint: settingsOf(tool),
    identity: undefined,
    imagesKept: undefined,
    tokenBudget: undefined,
  });
}
const script: AnthropicScriptedOutput[] = [
  {
    thoughts: 'I open the booking form.',
    actions: [{ kind: 'click', button: 'left', count: 1, x: 640, y: 400 }],
    usage: { input: 1000, output: 50, cachedInput: 200 },
  },
  { thoughts: '', actions: [], final: { kind: 'answer', text: 'Booked.' } },
];
const endpointAt = (url: string, more: Partial<ModelEndpoint> = {}): ModelEndpoint => ({
  baseUrl: `${url}/v1`,
  model: 'claude-test',
  apiKey: 'sk-ant-test',
  maxTokens: 1024,
  ...more,
});

describe('the call through the SDK', () => {
  it.each(TOOLS)('sends the key, the beta header a beta tool needs, the model and max tokens (%s)', async (tool) => {
    const { seen, url } = await standIn(script);
    const completion = await family.call!(await requestOf([task], tool), endpointAt(url), AbortSignal.timeout(10_000));
    const [request] = seen;
    expect(request?.facts.problems).toEqual([]);
    expect(request?.path).toMatch(/^\/v1\/messages/);
    expect(request?.facts).toMatchObject({ apiKey: 'sk-ant-test', tool, model: 'claude-test' });
    expect(request?.facts.betas).toEqual(
      tool === 'computer_toolset_20260801'
        ? []
        : [tool === 'computer_20250124' ? 'computer-use-2025-01-24' : 'computer-use-2025-11-24'],
    );
    expect(request?.body.max_tokens).toBe(1024);
    expect(completion).toMatchObject({
      text: 'I open the booking form.',
      reasoning: null,
      finishReason: 'tool_use',
      usage: { prompt_tokens: 1000, completion_tokens: 50, reasoning_tokens: 0, cached_tokens: 200 },
      responseModel: 'claude-test',
      responseId: 'msg_standin_0',
    });
  });

  it('sends no key and no Authorization header when the endpoint has none (never one from the environment)', async () => {
    const { seen, url } = await standIn(script);
    process.env.ANTHROPIC_API_KEY = 'sk-ant-from-env';
    try {
      const request = await requestOf([task], 'computer_toolset_20260801');
      await family.call!(request, endpointAt(url, { apiKey: undefined }), AbortSignal.timeout(10_000));
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[0]?.headers['x-api-key']).toBeUndefined();
  });

  it("goes through the model client: the endpoint's price gives the cost, a 400 is the request's fault", async () => {
    const { url } = await standIn(script);
    const client = new ModelClient(endpointAt(url, { price: { input: 3, output: 15, cachedInput: 0.3 } }));
    const request = await requestOf([task], 'computer_toolset_20260801');
    const completion = await client.completeNative((endpoint, signal) => family.call!(request, endpoint, signal));
    expect(completion.usage.cost_usd).toBeCloseTo((800 * 3 + 200 * 0.3 + 50 * 15) / 1e6, 9);
    const refusing = await standIn(script, [], 400);
    const refused = new ModelClient(endpointAt(refusing.url));
    await expect(
      refused.completeNative((endpoint, signal) => family.call!(request, endpoint, signal)),
    ).rejects.toMatchObject({ name: 'ModelRequestError', status: 400 });
    expect(refusing.seen).toHaveLength(1);
  });

  it('sends temperature only to a model that takes it (up to Opus 4.6), and max tokens by default', async () => {
    const { seen, url } = await standIn([...script, ...script]);
    const request = await requestOf([task], 'computer_20250124');
    const signal = AbortSignal.timeout(10_000);
    await family.call!(request, endpointAt(url, { model: 'claude-sonnet-4-5', temperature: 0 }), signal);
    await family.call!(
      request,
      endpointAt(url, { model: 'claude-opus-4-7', temperature: 0, maxTokens: undefined }),
      signal,
    );
    expect(seen[0]?.body).toMatchObject({ model: 'claude-sonnet-4-5', temperature: 0 });
    expect(seen[1]?.body).toMatchObject({ model: 'claude-opus-4-7', max_tokens: 16_384 });
    expect(seen[1]?.body).not.toHaveProperty('temperature');
  });

  it('takes base URLs with or without /v1', () => {
    expect(sdkBaseUrl('https://api.anthropic.com')).toBe('https://api.anthropic.com');
    expect(sdkBaseUrl('http://127.0.0.1:8080/v1/')).toBe('http://127.0.0.1:8080');
  });
});

describe('the round trip', () => {
  it.each(TOOLS)('reads the response, records it, and replays it unchanged in the next request (%s)', async (tool) => {
    const { seen, url } = await standIn(script, [{}, { tool, toolUseIds: ['toolu_standin_0_0'] }]);
    const endpoint = endpointAt(url);
    const first = await family.call!(await requestOf([task], tool), endpoint, AbortSignal.timeout(10_000));
    const output = { text: first.text, native: first.native };
    const read = { screen: SCREEN, allowed: family.allowedActions, terminateOnParseError: false };
    expect(family.read(output, read).action).toMatchObject({ action: 'left_click', coordinate: [640, 400] });
    const recorded = family.outputText!(output);
    expect(recorded).not.toContain('base64');
    const history: HistoryEntry[] = [
      task,
      { kind: 'assistant', text: recorded },
      { kind: 'observation', screenshot: 'shot', url: 'https://tidewater.test/' },
    ];
    const second = await family.call!(await requestOf(history, tool), endpoint, AbortSignal.timeout(10_000));
    expect(seen[1]?.facts.problems).toEqual([]);
    const messages = seen[1]?.body.messages as Array<{ content: unknown }>;
    expect(messages[1]?.content).toEqual((first.native as { content: unknown }).content);
    expect(family.read({ text: second.text, native: second.native }, read).action).toMatchObject({
      action: 'terminate',
      answer: 'Booked.',
    });
  });
});
