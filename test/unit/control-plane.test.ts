// The control plane out of the agent's reach, as a specification: which addresses a worker knows from its config,
// the patterns they become (every loopback name, that port only), and what the resulting policy refuses and allows.
import { describe, expect, it } from 'vitest';
import { controlPlanePatterns, denyControlPlane, parseAddress } from '../../src/policy/control-plane';
import { checkUrl, DEFAULT_URL_POLICY } from '../../src/contract/url-policy';
import { configFromObject } from '../../src/runtime/config';
import { TaskInputSchema } from '../../src/contract/task';
import { taskUrlPolicy } from '../../activities/support';
import { demoWorkerConfig } from '../../cli/commands/demo';
import {
  controlPlaneAddresses,
  controlPlaneSummary,
  withControlPlane,
  workerUrlPolicy,
} from '../../src/runtime/control-plane';

describe('parseAddress', () => {
  it.each<[string, { host: string; port: number } | undefined]>([
    ['127.0.0.1:7233', { host: '127.0.0.1', port: 7233 }],
    ['http://localhost:8233/namespaces', { host: 'localhost', port: 8233 }],
    ['https://temporal.example.com', { host: 'temporal.example.com', port: 443 }],
    ['[::1]:9464', { host: '[::1]', port: 9464 }],
    ['temporal:7233', { host: 'temporal', port: 7233 }],
    ['no port here', undefined],
    ['example.com', undefined],
  ])('%s', (text, expected) => {
    expect(parseAddress(text)).toEqual(expected);
  });
});

describe('controlPlanePatterns', () => {
  it('a loopback address is denied under every loopback name, on its port only', () => {
    expect(controlPlanePatterns(['127.0.0.1:8233'])).toEqual(['127.0.0.1:8233', 'localhost:8233', '[::1]:8233']);
    expect(controlPlanePatterns(['0.0.0.0:7233'])).toContain('127.0.0.1:7233');
  });
  it('another host is denied as itself', () => {
    expect(controlPlanePatterns(['http://ui.internal:8080', 'temporal.example.com:7233'])).toEqual([
      'ui.internal:8080',
      'temporal.example.com:7233',
    ]);
  });
});

describe('the worker policy', () => {
  const config = configFromObject({
    temporal: { address: '127.0.0.1:7233' },
    console: { temporalUiUrl: 'http://127.0.0.1:9233' },
    telemetry: { metrics: { prometheus: '127.0.0.1:9464' } },
    controlPlane: { addresses: ['mcp.internal:3001'] },
  });

  it('knows the frontend, the dev UI beside it, the console link, metrics, cua defaults and the listed ones', () => {
    expect(controlPlaneAddresses(config)).toEqual([
      '127.0.0.1:7233',
      '127.0.0.1:8233',
      'http://127.0.0.1:9233',
      '127.0.0.1:9464',
      '127.0.0.1:8300',
      '127.0.0.1:8310',
      '127.0.0.1:8888',
      '127.0.0.1:16686',
      'mcp.internal:3001',
    ]);
  });

  it.each<[string, boolean]>([
    ['http://127.0.0.1:8233/namespaces/default/workflows', false],
    ['http://localhost:8233/', false],
    ['http://[::1]:7233/', false],
    ['http://127.0.0.1:9464/metrics', false],
    ['http://localhost:8300/', false],
    ['http://127.0.0.1:8888/decode', false],
    ['http://localhost:16686/search', false],
    ['http://mcp.internal:3001/', false],
    ['http://127.0.0.1:5173/', true], // the rest of loopback stays reachable (demo site, local test sites)
    ['http://localhost:8234/', true],
    ['https://example.com/', true],
  ])('%s allowed: %s', (url, allowed) => {
    const policy = workerUrlPolicy(config);
    expect(checkUrl(policy, url).ok).toBe(allowed);
    expect(checkUrl(policy, url, 'request').ok).toBe(allowed);
  });

  it('a refusal names the rule in one line', () => {
    const verdict = checkUrl(workerUrlPolicy(config), 'http://127.0.0.1:8233/');
    expect(verdict).toEqual({ ok: false, reason: 'host 127.0.0.1:8233 is denied (denyHosts 127.0.0.1:8233)' });
  });

  it('keeps the configured denyHosts and adds what a command started', () => {
    const started = withControlPlane(configFromObject({ urlPolicy: { denyHosts: ['evil.example'] } }), [
      'http://127.0.0.1:4444',
    ]);
    const policy = workerUrlPolicy(started);
    expect(policy.denyHosts[0]).toBe('evil.example');
    expect(checkUrl(policy, 'http://localhost:4444/').ok).toBe(false);
  });

  it('reachable: true turns the denial off', () => {
    const open = configFromObject({ controlPlane: { addresses: [], reachable: true } });
    expect(workerUrlPolicy(open)).toEqual(DEFAULT_URL_POLICY);
    expect(denyControlPlane(DEFAULT_URL_POLICY, [])).toBe(DEFAULT_URL_POLICY);
  });

  it('a listed address that is none is a config error', () => {
    expect(() => configFromObject({ controlPlane: { addresses: ['nothing'] } })).toThrow(
      /host:port or an http\(s\) URL/,
    );
  });
});

describe('controlPlaneSummary', () => {
  it('names what is denied, or that it is reachable', () => {
    expect(controlPlaneSummary(configFromObject({}))).toBe(
      "control plane denied to the agent's browsers: 127.0.0.1:7233, 127.0.0.1:8233, 127.0.0.1:8300, 127.0.0.1:8310, " +
        '127.0.0.1:8888, 127.0.0.1:16686 (docs/security.md)',
    );
    expect(controlPlaneSummary(configFromObject({ controlPlane: { addresses: [], reachable: true } }))).toBe(
      'control plane: reachable by the agent (controlPlane.reachable)',
    );
  });
});

describe("a task's session (browser and desktop proxy alike)", () => {
  it('runs under the denial, and a task cannot take it away', () => {
    const config = configFromObject({});
    const input = TaskInputSchema.parse({
      runId: 'r',
      instruction: 'x',
      urlPolicy: { denyHosts: ['evil.example'] },
    });
    const policy = taskUrlPolicy(config, input);
    expect(checkUrl(policy, 'http://localhost:8233/namespaces/default/workflows').ok).toBe(false);
    expect(checkUrl(policy, 'http://evil.example/').ok).toBe(false);
    expect(checkUrl(policy, 'http://127.0.0.1:5173/').ok).toBe(true);
  });
});

describe("the demo's worker (cua demo)", () => {
  // The demo's dev server on 7233 with its UI moved to 8299 (--ui-port), its console on 8301 (8300 was taken).
  const config = demoWorkerConfig(
    configFromObject({ temporal: { address: '127.0.0.1:7233' } }),
    8301,
    'http://127.0.0.1:8299',
  );

  it.each<[string, boolean]>([
    ['http://127.0.0.1:8299/namespaces/default/workflows', false], // the Temporal UI the demo started
    ['http://localhost:8301/tasks', false], // the web console the demo started
    ['http://127.0.0.1:7233/', false], // the frontend
    ['http://127.0.0.1:8888/', false], // a codec server on its default port
    ['http://127.0.0.1:5173/', true], // the demo's own site on another loopback port
  ])('%s allowed: %s', (url, allowed) => {
    expect(checkUrl(workerUrlPolicy(config), url).ok).toBe(allowed);
  });
});
