// A native family's call through the endpoint's client (ModelClient.completeNative): the cost from the endpoint's
// price, a provider SDK's 4xx refused for good (408 and 429 retried), anything else worth retrying, and the call's
// own time limit.
import { describe, expect, it } from 'vitest';

import { ModelClient, ModelRequestError, ModelTimeoutError, ModelUnavailableError } from '../../src/model/client';
import type { NativeCompletion } from '../../src/model/client';

const endpoint = { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', price: { input: 3, output: 15 } };

const done: NativeCompletion = {
  text: 'I will click.',
  native: { id: 'resp_1' },
  reasoning: null,
  finishReason: 'completed',
  usage: { prompt_tokens: 1000, completion_tokens: 100, reasoning_tokens: 20 },
  responseId: 'resp_1',
};

/** An error as the providers' SDKs throw them: an Error with the HTTP status. */
const apiError = (status: number) => Object.assign(new Error(`${status} from the provider`), { status });

describe('ModelClient.completeNative', () => {
  it('returns the completion with its cost at the endpoint price and the body as sent', async () => {
    const got = await new ModelClient(endpoint).completeNative(async (e) => ({ ...done, text: `${e.model} clicks` }));
    expect(got).toMatchObject({ text: 'm clicks', native: { id: 'resp_1' }, finishReason: 'completed' });
    expect(got.usage.cost_usd).toBeCloseTo((1000 * 3 + 100 * 15) / 1e6, 8);
    expect(got).not.toHaveProperty('responseId');
  });

  it('refuses a 4xx for good, retries 408, 429, 5xx and network errors', async () => {
    const client = new ModelClient(endpoint);
    const failing = (err: Error) => client.completeNative(async () => Promise.reject(err));
    await expect(failing(apiError(400))).rejects.toBeInstanceOf(ModelRequestError);
    await expect(failing(apiError(401))).rejects.toThrow(/rejected the request \(401\)/);
    for (const status of [408, 429, 500, 529]) {
      await expect(failing(apiError(status))).rejects.toBeInstanceOf(ModelUnavailableError);
    }
    await expect(failing(new TypeError('fetch failed'))).rejects.toBeInstanceOf(ModelUnavailableError);
    const own = new ModelRequestError('the request cannot be built', 400);
    await expect(failing(own)).rejects.toBe(own);
  });

  it('gives up after the call limit with a timeout, and passes the signal to the call', async () => {
    const client = new ModelClient({ ...endpoint, timeoutSeconds: 0.2 });
    let aborted = false;
    const hung = client.completeNative(
      (_e, signal) =>
        new Promise<NativeCompletion>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    );
    await expect(hung).rejects.toBeInstanceOf(ModelTimeoutError);
    expect(aborted).toBe(true);
  });
});
