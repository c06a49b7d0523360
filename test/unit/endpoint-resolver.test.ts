// Specification of an embedding application's model-endpoint resolver (createAgentWorker's `modelEndpoints`): it
// stands in for the config's `models`, and what it returns obeys the same key rule as a configured endpoint.
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { endpointFor } from '../../activities/support';
import type { ModelEndpointRequest, ModelEndpointResolver } from '../../src/model/endpoint-policy';
import { configFromObject } from '../../src/runtime/config';
import type { ConfigInput } from '../../src/runtime/config';
import { TaskInputSchema } from '../../src/contract/task';
import type { TaskInputArgs } from '../../src/contract/task';

const VAULT = { baseUrl: 'https://tenant-a.example/v1', model: 'fara', apiKey: 'sk-tenant-a' };

function setup(resolver: ModelEndpointResolver, config: ConfigInput = {}) {
  const asked: ModelEndpointRequest[] = [];
  const cfg = {
    ...configFromObject(config),
    modelEndpointResolver: (r: ModelEndpointRequest) => (asked.push(r), resolver(r)),
  };
  const endpoint = (model: TaskInputArgs['model'] = { endpoint: 'default' }, named?: string) => {
    const input = TaskInputSchema.parse({ runId: 'tenant-a-1', instruction: 'x', model });
    return endpointFor(cfg, input, named).endpoint;
  };
  return { asked, endpoint };
}

describe('a model-endpoint resolver', () => {
  it('supplies the endpoint and its key for the task, asked with the name and the task', () => {
    const { asked, endpoint } = setup(() => VAULT);
    expect(endpoint()).toMatchObject(VAULT);
    expect(asked).toEqual([{ name: 'default', taskId: 'tenant-a-1', environment: 'browser' }]);
  });

  it("never sends its key to a task's overridden base URL", () => {
    const { endpoint } = setup(() => VAULT);
    const overridden = endpoint({ endpoint: 'default', baseUrl: 'http://elsewhere.example/v1' });
    expect(overridden).toMatchObject({ baseUrl: 'http://elsewhere.example/v1', model: 'fara' });
    expect(overridden.apiKey).toBeUndefined();
    // The same URL written differently is the same endpoint: the key stays.
    expect(endpoint({ endpoint: 'default', baseUrl: 'https://TENANT-A.example:443/v1/' }).apiKey).toBe('sk-tenant-a');
  });

  it("keeps the operator's override policy", () => {
    const { endpoint } = setup(() => VAULT, { modelOverrides: { allow: false } });
    expect(() => endpoint({ endpoint: 'default', model: 'other' })).toThrow(ApplicationFailure);
    expect(() => endpoint({ endpoint: 'default', model: 'other' })).toThrow(/modelOverrides\.allow is false/);
  });

  it("falls back to the config's endpoint when it returns nothing, and answers for named endpoints too", () => {
    const { endpoint } = setup(
      (r) => (r.name === 'grounder' ? { baseUrl: 'http://g/v1', model: 'uitars' } : undefined),
      {
        models: { default: { baseUrl: 'http://configured/v1', model: 'fara', apiKey: 'sk-config' } },
      },
    );
    expect(endpoint()).toMatchObject({ baseUrl: 'http://configured/v1', apiKey: 'sk-config' });
    expect(endpoint(undefined, 'grounder')).toEqual({ baseUrl: 'http://g/v1', model: 'uitars' });
  });
});
