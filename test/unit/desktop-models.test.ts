// Specification of which API each of the desktop agent's models is called in, and of the key a provider's own API
// needs: the task's endpoint follows its declared family (a base URL of the task's own, the task's family); a named
// vision or grounding endpoint its own.
import { describe, expect, it } from 'vitest';

import { desktopModel } from '../../activities/environments/desktop-models';
import { configFromObject } from '../../src/runtime/config';
import { TaskInputSchema } from '../../src/contract/task';

const config = configFromObject({
  models: {
    default: { family: 'anthropic-computer', baseUrl: 'http://127.0.0.1:9/', model: 'claude-x', apiKey: 'k' },
    seer: { family: 'gemini-computer', baseUrl: 'http://127.0.0.1:9/', model: 'gemini-x', apiKey: 'k' },
    plain: { baseUrl: 'http://127.0.0.1:9/v1', model: 'qwen' },
    keyless: { family: 'gemini-computer', baseUrl: 'http://127.0.0.1:9/', model: 'gemini-x' },
  },
});
const task = (model: Record<string, string> = {}) =>
  TaskInputSchema.parse({
    runId: 'task-1',
    instruction: 'x',
    environment: 'desktop',
    model: { endpoint: 'default', ...model },
  });

describe('desktop models: the API each is called in', () => {
  it("calls the task's endpoint in its declared family's API, whatever family the task carries", () => {
    expect(desktopModel(config, task()).api).toBe('messages');
    expect(desktopModel(config, task({ endpoint: 'plain' })).api).toBe('chat');
  });

  it('calls a named endpoint in its own family API, or chat completions when it declares none', () => {
    expect(desktopModel(config, task(), 'seer').api).toBe('generate-content');
    expect(desktopModel(config, task(), 'plain').api).toBe('chat');
  });

  it("calls a task's own base URL in the task's family API, and refuses it the worker's key", () => {
    const own = { ...task({ baseUrl: 'http://127.0.0.1:8/', model: 'm' }), profile: 'gemini-computer' };
    expect(() => desktopModel(config, own)).toThrow(
      /model endpoint 'default' has no API key, and the desktop agent calls it in Gemini's generateContent API .*a base URL the task gives itself never gets the worker's key/,
    );
  });

  it('refuses an endpoint with no key for a provider API, naming the setting', () => {
    expect(() => desktopModel(config, task(), 'keyless')).toThrow(/set models\.keyless\.apiKey/);
  });
});
