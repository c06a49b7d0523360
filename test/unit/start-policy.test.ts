// A start policy (config `mcp.callers`): which models, environments and step counts the tasks of some callers may
// use, refused in one line naming the callers, and the URL policy they carry, joined with a task's own so that the
// result is never looser than either.
import { describe, expect, it } from 'vitest';
import { parseTask, InvalidTaskInputError } from '../../client/client';
import { withCallerPolicy } from '../../client/tasks';
import { applyStartPolicy, StartPolicySchema } from '../../src/contract/start-policy';
import { checkUrl, narrow, narrowBoth, WIDEST_URL_POLICY } from '../../src/contract/url-policy';
import type { TaskUrlPolicy } from '../../src/contract/url-policy';

const task = (over: Record<string, unknown> = {}) =>
  parseTask({ instruction: 'Book a hotel.', startUrl: 'https://hotels.example/', ...over });

describe('applyStartPolicy', () => {
  const policy = StartPolicySchema.parse({
    models: ['cheap', 'fast'],
    environments: ['browser'],
    maxSteps: 20,
    urlPolicy: { allowHosts: ['*.example'] },
  });

  it('lets a task within it start, carrying its URL policy', () => {
    const verdict = applyStartPolicy(policy, task({ model: { endpoint: 'fast' }, maxSteps: 20 }), 'MCP callers');
    expect(verdict).toMatchObject({ ok: true, input: { urlPolicy: { allowHosts: ['*.example'] } } });
  });

  it.each([
    [{ model: { endpoint: 'big' } }, 'model', "MCP callers may use the models cheap, fast, not 'big'"],
    [
      { model: { endpoint: 'cheap', baseUrl: 'http://gpu.internal/v1' } },
      'model',
      'MCP callers may use the configured models only, not a model by base URL',
    ],
    [
      { model: { endpoint: 'cheap' }, environment: 'desktop' },
      'environment',
      "MCP callers may use the environments browser, not 'desktop'",
    ],
    [{ model: { endpoint: 'cheap' }, maxSteps: 21 }, 'maxSteps', 'MCP callers may ask for at most 20 steps, not 21'],
  ])('refuses %j: %s', (over, field, reason) => {
    expect(applyStartPolicy(policy, task(over), 'MCP callers')).toEqual({ ok: false, field, reason });
  });

  it('with no lists, any model and environment; the default endpoint is a model like any other', () => {
    expect(applyStartPolicy({}, task(), 'x').ok).toBe(true);
    expect(applyStartPolicy({ models: ['cheap'] }, task(), 'x')).toMatchObject({ ok: false, field: 'model' });
  });

  it('is refused at config load when malformed', () => {
    expect(StartPolicySchema.safeParse({ models: [] }).success).toBe(false);
    expect(StartPolicySchema.safeParse({ urlPolicy: { allowHosts: ['not a host'] } }).success).toBe(false);
    expect(StartPolicySchema.safeParse({ modles: ['x'] }).success).toBe(false);
  });
});

describe('withCallerPolicy: the client applies it and checks the start URL again', () => {
  const callers = { rules: { urlPolicy: { allowHosts: ['hotels.example'] } }, callers: 'MCP callers' };

  it('refuses a start URL outside the URL policy in one line', () => {
    const outside = task({ startUrl: 'https://elsewhere.example/' });
    expect(() => withCallerPolicy(outside, callers)).toThrow(InvalidTaskInputError);
    expect(() => withCallerPolicy(outside, callers)).toThrow(/^invalid task: startUrl: blocked by policy/);
  });

  it("keeps a task's own narrowing and adds the callers'", () => {
    const own = task({ urlPolicy: { denyHosts: ['ads.example'], allowHosts: ['*.example'] } });
    expect(withCallerPolicy(own, callers).urlPolicy).toEqual({
      allowHosts: ['hotels.example'],
      denyHosts: ['ads.example'],
    });
    expect(withCallerPolicy(own, undefined)).toBe(own);
  });
});

describe('narrowBoth', () => {
  const urls = [
    'https://a.example/',
    'http://a.example/',
    'https://b.example/',
    'https://x.a.example/',
    'file:///etc/passwd',
  ];
  const policies: (TaskUrlPolicy | undefined)[] = [
    undefined,
    { schemes: ['https'] },
    { allowHosts: ['*.a.example', 'b.example'] },
    { allowHosts: ['a.example'] },
    { denyHosts: ['b.example'] },
    { allowFile: true },
    { allowFile: false, denyPrivateAddresses: true },
  ];

  it('allows a URL exactly when both narrowings would, one after the other', () => {
    const base = { ...WIDEST_URL_POLICY, allowFile: true };
    for (const a of policies) {
      for (const b of policies) {
        const both = narrow(base, narrowBoth(a, b));
        const oneThenOther = narrow(narrow(base, a), b);
        for (const url of urls)
          expect([a, b, url, checkUrl(both, url).ok]).toEqual([a, b, url, checkUrl(oneThenOther, url).ok]);
      }
    }
  });

  it('is undefined when neither narrows', () => {
    expect(narrowBoth(undefined, undefined)).toBeUndefined();
  });
});
