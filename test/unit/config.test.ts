// Specification of the worker/client configuration: defaults, the JSON file, environment overrides, and errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { dataDir } from '../../src/infra/paths';
import type { Config } from '../../src/runtime/config';
import { captchaSignalsOn, loadConfig } from '../../src/runtime/config';
import { ConfigError } from '../../src/common/config-error';
import { deriveLimits, thisMachine } from '../../src/runtime/limits';
import { webhookSummary, webhookTarget } from '../../src/notify/config';
import type { MachineShape } from '../../src/runtime/limits';

let dir: string;
let counter = 0;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-config-'));
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes a config file (an object is JSON-encoded, a string written as is) and returns its path. */
function configFile(content: unknown): string {
  const file = path.join(dir, `config-${++counter}.json`);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The 2-core, 24 GiB dev box: unset limits are derived from it, not from the machine the tests run on. */
const DEV_BOX: MachineShape = { cores: 2, memoryBytes: 24 * 1024 ** 3 };

const load = (content: unknown, env: NodeJS.ProcessEnv = {}): Config =>
  loadConfig({ file: configFile(content), env, machine: DEV_BOX });

describe('loadConfig: defaults', () => {
  it('fills every default from an empty file and an empty environment', () => {
    expect(load({})).toEqual({
      temporal: { address: '127.0.0.1:7233', namespace: 'default' },
      taskQueue: 'cua-agent',
      models: {},
      browser: {
        provider: 'chromium',
        headless: true,
        slots: 4,
        idleTimeoutSeconds: 600,
        holdWhileWaitingSeconds: 600,
        resendInDoubt: false,
        journalBeforeSend: false,
        singleTab: true,
        maxDownloadMiB: 100,
        pageReadyTimeoutSeconds: 60,
        pageProbes: false,
        readPageMaxChars: 20_000,
        takeoverCdp: false,
      },
      desktop: {
        slots: 4,
        idleTimeoutSeconds: 600,
        network: false,
        apps: ['xterm'],
        typingChunk: 50,
        typingDelayMs: 12,
        commandTimeoutSeconds: 5,
        maxCommandTimeoutSeconds: 120,
        outputHeadChars: 2000,
        outputTailChars: 2000,
        endOnNoCall: true,
      },
      worker: { maxConcurrentActivities: 10, maxConcurrentWorkflowTasks: 8 },
      evaluation: { taskSetDirs: [] },
      takeover: { host: '127.0.0.1', port: 0 },
      limits: { machine: DEV_BOX, derived: ['slots', 'maxConcurrentActivities', 'maxConcurrentWorkflowTasks'] },
      runsDir: path.resolve(dataDir(), 'runs'),
      store: { kind: 'folder', faultWaitMinutes: 30 },
    });
  });

  it('derives unset limits from this machine when no machine is given', () => {
    const cfg = loadConfig({ file: configFile({}), env: {} });
    const { slots, ...worker } = deriveLimits(thisMachine());
    expect(cfg.browser.slots).toBe(slots);
    expect(cfg.worker).toEqual(worker);
    expect(cfg.limits.machine).toEqual(thisMachine());
  });

  it('fills defaults inside a partly given section', () => {
    const cfg = load({ temporal: { address: 'temporal.test:7233' }, browser: { headless: false } });
    expect(cfg.temporal).toEqual({ address: 'temporal.test:7233', namespace: 'default' });
    expect(cfg.browser).toEqual({
      provider: 'chromium',
      headless: false,
      slots: 4,
      idleTimeoutSeconds: 600,
      holdWhileWaitingSeconds: 600,
      resendInDoubt: false,
      journalBeforeSend: false,
      singleTab: true,
      maxDownloadMiB: 100,
      pageReadyTimeoutSeconds: 60,
      pageProbes: false,
      readPageMaxChars: 20_000,
      takeoverCdp: false,
    });
  });
});

describe('loadConfig: file values', () => {
  it('takes the values from the file', () => {
    const cfg = load({
      temporal: { address: 'temporal.test:7233', namespace: 'agents' },
      taskQueue: 'cua-gpu',
      runsDir: '/srv/runs',
      models: { fara: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'fara-1.5', temperature: 0, maxTokens: 512 } },
      worker: { maxConcurrentActivities: 4, maxConcurrentWorkflowTasks: 8 },
    });
    expect(cfg).toMatchObject({
      temporal: { address: 'temporal.test:7233', namespace: 'agents' },
      taskQueue: 'cua-gpu',
      runsDir: path.resolve('/srv/runs'),
      models: { fara: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'fara-1.5', temperature: 0, maxTokens: 512 } },
      worker: { maxConcurrentActivities: 4, maxConcurrentWorkflowTasks: 8 },
    });
  });

  it('configured limits are kept; only the unset ones are derived (activity slots from the configured sessions)', () => {
    const sessionsOnly = load({ browser: { maxSessions: 6 } });
    expect(sessionsOnly.browser.slots).toBe(6);
    expect(sessionsOnly.worker).toEqual({ maxConcurrentActivities: 14, maxConcurrentWorkflowTasks: 8 });
    expect(sessionsOnly.limits.derived).toEqual(['maxConcurrentActivities', 'maxConcurrentWorkflowTasks']);
    const all = load({
      browser: { maxSessions: 3 },
      worker: { maxConcurrentActivities: 5, maxConcurrentWorkflowTasks: 7 },
    });
    expect([all.browser.slots, all.worker.maxConcurrentActivities, all.worker.maxConcurrentWorkflowTasks]).toEqual([
      3, 5, 7,
    ]);
    expect(all.limits.derived).toEqual([]);
  });

  it('the typing delay is absent unless configured (the environment then uses its default)', () => {
    expect(load({}).browser.typingDelayMs).toBeUndefined();
    expect(load({ browser: { typingDelayMs: 0 } }).browser.typingDelayMs).toBe(0);
  });

  it('the page-ready wait is 60 s unless configured', () => {
    expect(load({}).browser.pageReadyTimeoutSeconds).toBe(60);
    expect(load({ browser: { pageReadyTimeoutSeconds: 0.5 } }).browser.pageReadyTimeoutSeconds).toBe(0.5);
  });

  it.each<[string, Record<string, unknown>, boolean]>([
    ['a browser launched here: off', {}, false],
    ['a remote browser over cdpUrl: on', { cdpUrl: 'http://127.0.0.1:9222' }, true],
    ['configured on for a browser launched here', { captchaSignals: true }, true],
    ['configured off for a remote browser', { cdpUrl: 'http://127.0.0.1:9222', captchaSignals: false }, false],
    ['Browserbase: on', { provider: 'browserbase', browserbase: { apiKey: 'k', projectId: 'p' } }, true],
  ])('the captcha gate listens for solving messages: %s', (_name, browser, on) => {
    expect(captchaSignalsOn(load({ browser }).browser)).toBe(on);
  });

  it("keeps an endpoint's stepPrompt as written (absent: the profile's sentence is used)", () => {
    const cfg = load({
      models: { m: { baseUrl: 'http://a.test', model: 'm', stepPrompt: 'Next screenshot. What now? ' } },
    });
    expect(cfg.models.m?.stepPrompt).toBe('Next screenshot. What now? ');
    expect(load({ models: { m: { baseUrl: 'http://a.test', model: 'm' } } }).models.m?.stepPrompt).toBeUndefined();
  });

  it("read_page_answer_question's page text cut: 20,000 characters unless configured", () => {
    expect(load({}).browser.readPageMaxChars).toBe(20_000);
    expect(load({ browser: { readPageMaxChars: 60_000 } }).browser.readPageMaxChars).toBe(60_000);
  });

  it('resolves a relative runsDir to an absolute path', () => {
    expect(load({ runsDir: 'rel/runs' }).runsDir).toBe(path.resolve('rel/runs'));
  });
});

describe('loadConfig: environment overrides', () => {
  it.each<[string, NodeJS.ProcessEnv, Record<string, unknown>]>([
    ['TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'env.test:7233' }, { temporal: { address: 'env.test:7233' } }],
    ['TEMPORAL_NAMESPACE', { TEMPORAL_NAMESPACE: 'prod' }, { temporal: { namespace: 'prod' } }],
    ['TEMPORAL_API_KEY', { TEMPORAL_API_KEY: 'tk' }, { temporal: { apiKey: 'tk' } }],
    ['CUA_TASK_QUEUE', { CUA_TASK_QUEUE: 'q2' }, { taskQueue: 'q2' }],
    ['CUA_RUNS_DIR', { CUA_RUNS_DIR: '/tmp/env-runs' }, { runsDir: path.resolve('/tmp/env-runs') }],
    ['CUA_CHROMIUM', { CUA_CHROMIUM: '/opt/chromium' }, { browser: { executablePath: '/opt/chromium' } }],
    ['CUA_CDP_URL', { CUA_CDP_URL: 'http://127.0.0.1:9222' }, { browser: { cdpUrl: 'http://127.0.0.1:9222' } }],
    [
      'CUA_MAX_SESSIONS (a number; activity slots follow it)',
      { CUA_MAX_SESSIONS: '16' },
      { browser: { slots: 16 }, worker: { maxConcurrentActivities: 34 } },
    ],
    ['CUA_TYPING_DELAY_MS (a number)', { CUA_TYPING_DELAY_MS: '100' }, { browser: { typingDelayMs: 100 } }],
    [
      'CUA_BROWSER_PROVIDER with the BROWSERBASE_ variables',
      {
        CUA_BROWSER_PROVIDER: 'browserbase',
        BROWSERBASE_API_KEY: 'bb_key',
        BROWSERBASE_PROJECT_ID: 'proj',
        BROWSERBASE_BASE_URL: 'http://127.0.0.1:4000',
      },
      {
        browser: {
          provider: 'browserbase',
          browserbase: { apiKey: 'bb_key', projectId: 'proj', baseUrl: 'http://127.0.0.1:4000' },
        },
      },
    ],
    ['CUA_PAGE_PROBES=1 turns page probes on', { CUA_PAGE_PROBES: '1' }, { browser: { pageProbes: true } }],
    ['CUA_PAGE_PROBES=off keeps them off', { CUA_PAGE_PROBES: 'off' }, { browser: { pageProbes: false } }],
    [
      'CUA_MODEL_BASE_URL + CUA_MODEL create models.default',
      { CUA_MODEL_BASE_URL: 'http://127.0.0.1:8000/v1', CUA_MODEL: 'fara-7b' },
      { models: { default: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'fara-7b' } } },
    ],
    [
      'CUA_MODEL_API_KEY sets the default model key',
      { CUA_MODEL_BASE_URL: 'http://m.test/v1', CUA_MODEL: 'm', CUA_MODEL_API_KEY: 'sk-cua' },
      { models: { default: { baseUrl: 'http://m.test/v1', model: 'm', apiKey: 'sk-cua' } } },
    ],
    [
      'OPENAI_API_KEY is the fallback key',
      { CUA_MODEL_BASE_URL: 'http://m.test/v1', CUA_MODEL: 'm', OPENAI_API_KEY: 'sk-openai' },
      { models: { default: { apiKey: 'sk-openai' } } },
    ],
    [
      'CUA_MODEL_API_KEY wins over OPENAI_API_KEY',
      { CUA_MODEL_BASE_URL: 'http://m.test/v1', CUA_MODEL: 'm', CUA_MODEL_API_KEY: 'a', OPENAI_API_KEY: 'b' },
      { models: { default: { apiKey: 'a' } } },
    ],
  ])('%s', (_name, env, expected) => {
    expect(load({}, env)).toMatchObject(expected);
  });

  it('the environment wins over the file', () => {
    const cfg = load(
      { temporal: { address: 'file.test:7233', namespace: 'file-ns' }, taskQueue: 'file-q' },
      { TEMPORAL_ADDRESS: 'env.test:7233', CUA_TASK_QUEUE: 'env-q' },
    );
    expect(cfg.temporal).toEqual({ address: 'env.test:7233', namespace: 'file-ns' });
    expect(cfg.taskQueue).toBe('env-q');
  });

  it('metrics are off unless configured; CUA_METRICS_PROMETHEUS sets the endpoint; a bad address is one line', () => {
    expect(load({}).telemetry).toBeUndefined();
    expect(
      load({ telemetry: { metrics: { waitingCountSeconds: 5 } } }, { CUA_METRICS_PROMETHEUS: '0.0.0.0:9464' })
        .telemetry,
    ).toEqual({ metrics: { prometheus: '0.0.0.0:9464', waitingCountSeconds: 5 } });
    expect(load({}, { CUA_METRICS_PROMETHEUS: '[::1]:9464' }).telemetry?.metrics?.waitingCountSeconds).toBe(30);
    expect(() => load({ telemetry: { metrics: { prometheus: 'http://host:9464' } } })).toThrow(
      'invalid configuration: telemetry.metrics.prometheus: host:port, e.g. 127.0.0.1:9464',
    );
  });

  it('CUA_PAGE_PROBES wins over the file, and a value that is not a yes or a no is refused in one line', () => {
    expect(load({ browser: { pageProbes: true } }, { CUA_PAGE_PROBES: '0' }).browser.pageProbes).toBe(false);
    expect(() => load({}, { CUA_PAGE_PROBES: 'maybe' })).toThrow(
      'CUA_PAGE_PROBES=maybe: say 1 (run page probes) or 0 (do not)',
    );
  });

  it("the BROWSERBASE_ variables fill in or replace the file's browserbase section, only for a Browserbase worker", () => {
    const file = { browser: { provider: 'browserbase', browserbase: { apiKey: 'file-key', projectId: 'file-proj' } } };
    expect(load(file, { BROWSERBASE_API_KEY: 'env-key' }).browser.browserbase).toEqual({
      apiKey: 'env-key',
      projectId: 'file-proj',
    });
    const chromium = load({}, { BROWSERBASE_API_KEY: 'k', BROWSERBASE_PROJECT_ID: 'p' }).browser;
    expect(chromium.provider).toBe('chromium');
    expect(chromium.browserbase).toBeUndefined();
  });

  it('CUA_MAX_SESSIONS and CUA_TYPING_DELAY_MS win over the file', () => {
    const cfg = load(
      { browser: { maxSessions: 2, typingDelayMs: 5 } },
      { CUA_MAX_SESSIONS: '9', CUA_TYPING_DELAY_MS: '50' },
    );
    expect(cfg.browser).toMatchObject({ slots: 9, typingDelayMs: 50 });
  });

  it('CUA_MODEL overrides only the model of a models.default given in the file', () => {
    const cfg = load(
      { models: { default: { baseUrl: 'http://file.test/v1', model: 'file-model', temperature: 0.2 } } },
      { CUA_MODEL: 'env-model' },
    );
    expect(cfg.models.default).toEqual({ baseUrl: 'http://file.test/v1', model: 'env-model', temperature: 0.2 });
  });

  it('an API key without a default model creates no model', () => {
    expect(load({}, { CUA_MODEL_API_KEY: 'sk', OPENAI_API_KEY: 'sk2' }).models).toEqual({});
  });

  it('an explicit environment object is used instead of process.env', () => {
    const saved = process.env.TEMPORAL_ADDRESS;
    process.env.TEMPORAL_ADDRESS = 'process.test:7233';
    try {
      expect(load({}, {}).temporal.address).toBe('127.0.0.1:7233');
    } finally {
      if (saved === undefined) delete process.env.TEMPORAL_ADDRESS;
      else process.env.TEMPORAL_ADDRESS = saved;
    }
  });
});

describe('loadConfig: errors', () => {
  it('a file that is not JSON → ConfigError naming the file', () => {
    const file = configFile('{ "taskQueue": ');
    const run = () => loadConfig({ file, env: {} });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(file);
    expect(run).toThrow(/not valid JSON/);
  });

  it('a missing file → ConfigError naming the file', () => {
    const file = path.join(dir, 'does-not-exist.json');
    expect(() => loadConfig({ file, env: {} })).toThrow(new RegExp(`${file.replace(/[.]/g, '\\.')} cannot be read`));
  });

  it.each<[string, unknown, NodeJS.ProcessEnv, RegExp]>([
    ['a JSON array', [], {}, /config must be a JSON object/],
    ['an unknown top-level key', { colour: 'blue' }, {}, /\(root\): Unrecognized key: "colour"/],
    ['an unknown nested key', { temporal: { adress: 'x' } }, {}, /temporal: Unrecognized key: "adress"/],
    ['an unknown model key', { models: { m: { baseUrl: 'http://a.test', model: 'm', k: 1 } } }, {}, /models\.m: .*"k"/],
    ['a bad model URL in the file', { models: { m: { baseUrl: 'not a url', model: 'm' } } }, {}, /models\.m\.baseUrl/],
    [
      'a bad model URL from the environment',
      {},
      { CUA_MODEL_BASE_URL: 'nope', CUA_MODEL: 'm' },
      /models\.default\.baseUrl/,
    ],
    ['CUA_MODEL without a base URL', {}, { CUA_MODEL: 'm' }, /models\.default\.baseUrl/],
    ['CUA_MODEL_BASE_URL without a model', {}, { CUA_MODEL_BASE_URL: 'http://m.test/v1' }, /models\.default\.model/],
    ['a non-numeric CUA_MAX_SESSIONS', {}, { CUA_MAX_SESSIONS: 'many' }, /browser\.maxSessions/],
    ['a non-numeric CUA_TYPING_DELAY_MS', {}, { CUA_TYPING_DELAY_MS: 'fast' }, /browser\.typingDelayMs/],
    ['a negative typing delay', { browser: { typingDelayMs: -1 } }, {}, /browser\.typingDelayMs/],
    ['a zero page-ready wait', { browser: { pageReadyTimeoutSeconds: 0 } }, {}, /browser\.pageReadyTimeoutSeconds/],
    ['a page-ready wait of an hour', { browser: { pageReadyTimeoutSeconds: 3600 } }, {}, /pageReadyTimeoutSeconds/],
    ['an unknown browser provider', { browser: { provider: 'firefox' } }, {}, /browser\.provider: Invalid option/],
    [
      'Browserbase without a key or project',
      { browser: { provider: 'browserbase' } },
      {},
      /browser\.browserbase\.apiKey: is required with browser\.provider 'browserbase' \(or BROWSERBASE_API_KEY\); browser\.browserbase\.projectId: is required/,
    ],
    [
      'Browserbase without a project (key from the environment)',
      { browser: { provider: 'browserbase' } },
      { BROWSERBASE_API_KEY: 'k' },
      /browser\.browserbase\.projectId: is required with browser\.provider 'browserbase' \(or BROWSERBASE_PROJECT_ID\)$/,
    ],
    [
      'Browserbase and cdpUrl',
      {
        browser: {
          provider: 'browserbase',
          cdpUrl: 'http://127.0.0.1:9222',
          browserbase: { apiKey: 'k', projectId: 'p' },
        },
      },
      {},
      /browser\.cdpUrl: cannot be used with browser\.provider 'browserbase'/,
    ],
    [
      'a browserbase section for a Chromium worker',
      { browser: { browserbase: { apiKey: 'k', projectId: 'p' } } },
      {},
      /browser\.browserbase: is set but browser\.provider is not 'browserbase'/,
    ],
    [
      'a Browserbase base URL that is not http(s)',
      { browser: { provider: 'browserbase', browserbase: { apiKey: 'k', projectId: 'p', baseUrl: 'ftp://bb.test' } } },
      {},
      /browser\.browserbase\.baseUrl: an http\(s\) URL/,
    ],
    [
      'an unknown browserbase key',
      { browser: { provider: 'browserbase', browserbase: { apiKey: 'k', projectId: 'p', region: 'eu' } } },
      {},
      /browser\.browserbase: Unrecognized key: "region"/,
    ],
    ['captchaSignals that is not a boolean', { browser: { captchaSignals: 'yes' } }, {}, /browser\.captchaSignals/],
    ['a page-ready wait in words', { browser: { pageReadyTimeoutSeconds: '60s' } }, {}, /pageReadyTimeoutSeconds/],
    ['zero activity slots', { worker: { maxConcurrentActivities: 0 } }, {}, /worker\.maxConcurrentActivities/],
    [
      'a temperature out of range',
      { models: { m: { baseUrl: 'http://a.test', model: 'm', temperature: 3 } } },
      {},
      /models\.m\.temperature/,
    ],
    [
      'a model call limit past what fetch waits for',
      { models: { m: { baseUrl: 'http://a.test', model: 'm', timeoutSeconds: 301 } } },
      {},
      /models\.m\.timeoutSeconds: .*<=300/,
    ],
    [
      'a model call limit of zero',
      { models: { m: { baseUrl: 'http://a.test', model: 'm', timeoutSeconds: 0 } } },
      {},
      /models\.m\.timeoutSeconds/,
    ],
    ['a negative store fault wait', { store: { kind: 'folder', faultWaitMinutes: -1 } }, {}, /store\.faultWaitMinutes/],
    [
      'a store fault wait longer than a night',
      { store: { kind: 's3', bucket: 'b', faultWaitMinutes: 721 } },
      {},
      /store\.faultWaitMinutes: .*<=720/,
    ],
    ['an empty task queue', { taskQueue: '' }, {}, /taskQueue/],
    ['a desktop endOnNoCall that is no boolean', { desktop: { endOnNoCall: 'yes' } }, {}, /desktop\.endOnNoCall/],
    ['a zero desktop idle timeout', { desktop: { idleTimeoutSeconds: 0 } }, {}, /desktop\.idleTimeoutSeconds/],
    ['a desktop idle timeout in words', { desktop: { idleTimeoutSeconds: '10m' } }, {}, /desktop\.idleTimeoutSeconds/],
    ['a takeover port out of range', { takeover: { port: 70_000 } }, {}, /takeover\.port/],
    [
      'a takeover publicUrl that is no http(s) URL',
      { takeover: { publicUrl: 'ftp://x.test' } },
      {},
      /takeover\.publicUrl/,
    ],
    ['a takeoverCdp that is no boolean', { browser: { takeoverCdp: 'on' } }, {}, /browser\.takeoverCdp/],
    ['a page text cut under 1000', { browser: { readPageMaxChars: 500 } }, {}, /browser\.readPageMaxChars: Too small/],
    [
      'a page text cut that is no whole number',
      { browser: { readPageMaxChars: 2e4 + 0.5 } },
      {},
      /browser\.readPageMaxChars/,
    ],
    [
      'a blank stepPrompt',
      { models: { m: { baseUrl: 'http://a.test', model: 'm', stepPrompt: '  ' } } },
      {},
      /models\.m\.stepPrompt: must not be empty/,
    ],
  ])('%s → ConfigError', (_name, content, env, message) => {
    const run = () => load(content, env);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });

  it('an error in the browserbase section does not quote the API key', () => {
    const run = () =>
      load({ browser: { provider: 'browserbase', browserbase: { apiKey: 'bb_live_secret', projectId: 7 } } });
    expect(run).toThrow(/browser\.browserbase\.projectId/);
    expect(run).not.toThrow(/bb_live_secret/);
  });

  it.each([
    [{ kind: 'folder' }, 30],
    [{ kind: 'folder', faultWaitMinutes: 0 }, 0],
    [{ kind: 'folder', faultWaitMinutes: 0.2 }, 0.2],
    [{ kind: 's3', bucket: 'b' }, 30],
    [{ kind: 's3', bucket: 'b', faultWaitMinutes: 480 }, 480],
  ])('store %j waits %d minutes for a full or unreachable store', (store, minutes) => {
    expect(load({ store }).store.faultWaitMinutes).toBe(minutes);
  });

  it('ConfigError carries its class name', () => {
    expect(new ConfigError('x').name).toBe('ConfigError');
  });
});

describe('loadConfig: the environment object passed in is the only environment read', () => {
  it('finds the config file through CUA_CONFIG in that object', () => {
    const file = configFile({ taskQueue: 'from-cua-config' });
    expect(loadConfig({ env: { CUA_CONFIG: file } }).taskQueue).toBe('from-cua-config');
  });

  it('puts the runs folder under CUA_DATA_DIR from that object', () => {
    expect(load({}, { CUA_DATA_DIR: '/elsewhere' }).runsDir).toBe(path.resolve('/elsewhere/runs'));
  });

  it.each([
    [{ CUA_MODEL_API_KEY: 'env-key' }, 'env-key'],
    [{ OPENAI_API_KEY: 'openai-key' }, 'file-key'],
  ])('with %o the default model key is %s (CUA_MODEL_API_KEY beats the file, OPENAI_API_KEY does not)', (env, key) => {
    const config = load(
      { models: { default: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: 'file-key' } } },
      env,
    );
    expect(config.models.default?.apiKey).toBe(key);
  });
});

describe('loadConfig: notifications (the webhook)', () => {
  const URL_ = 'https://hooks.example/cua';
  const SECRET = 'sixteen-chars-ok';

  it('is absent unless configured; a webhook gets every event and a 10 s timeout by default', () => {
    expect(load({}).notifications).toBeUndefined();
    expect(load({ notifications: { webhook: { url: URL_, secret: SECRET } } }).notifications).toEqual({
      webhook: {
        url: URL_,
        secret: SECRET,
        events: ['waiting', 'paused', 'failed', 'completed', 'cancelled', 'monitor_changed'],
        timeoutSeconds: 10,
      },
    });
  });

  it.each<[string, unknown, NodeJS.ProcessEnv, Record<string, unknown>]>([
    [
      'CUA_WEBHOOK_URL and CUA_WEBHOOK_SECRET make one',
      {},
      { CUA_WEBHOOK_URL: URL_, CUA_WEBHOOK_SECRET: SECRET },
      { url: URL_, secret: SECRET },
    ],
    [
      "CUA_WEBHOOK_URL replaces the file's URL, keeping its secretEnv and events",
      { notifications: { webhook: { url: 'https://old.example/', secretEnv: 'HOOK_KEY', events: ['failed'] } } },
      { CUA_WEBHOOK_URL: URL_ },
      { url: URL_, secretEnv: 'HOOK_KEY', events: ['failed'] },
    ],
    [
      "CUA_WEBHOOK_SECRET replaces the file's secretEnv",
      { notifications: { webhook: { url: URL_, secretEnv: 'HOOK_KEY' } } },
      { CUA_WEBHOOK_SECRET: SECRET },
      { url: URL_, secret: SECRET },
    ],
  ])('%s', (_name, file, env, webhook) => {
    const got = load(file, env).notifications?.webhook;
    expect(got).toMatchObject(webhook);
    if (!('secretEnv' in webhook)) expect(got).not.toHaveProperty('secretEnv');
  });

  it('CUA_WEBHOOK_SECRET alone turns no webhook on', () => {
    expect(load({}, { CUA_WEBHOOK_SECRET: SECRET }).notifications).toBeUndefined();
  });

  it.each<[string, unknown, NodeJS.ProcessEnv, RegExp]>([
    ['a webhook without a secret', { notifications: { webhook: { url: URL_ } } }, {}, /exactly one of secret and/],
    [
      'CUA_WEBHOOK_URL without a secret',
      {},
      { CUA_WEBHOOK_URL: URL_ },
      /notifications\.webhook: give exactly one of secret and secretEnv \(or set CUA_WEBHOOK_SECRET\)/,
    ],
    [
      'both a secret and a secretEnv',
      { notifications: { webhook: { url: URL_, secret: SECRET, secretEnv: 'K' } } },
      {},
      /notifications\.webhook: give exactly one/,
    ],
    [
      'a short secret',
      { notifications: { webhook: { url: URL_, secret: 'short' } } },
      {},
      /notifications\.webhook\.secret: at least 16 characters/,
    ],
    [
      'a URL that is not http(s)',
      { notifications: { webhook: { url: 'ftp://hooks.example/', secret: SECRET } } },
      {},
      /notifications\.webhook\.url: an http\(s\) URL/,
    ],
    ['a bad CUA_WEBHOOK_URL', {}, { CUA_WEBHOOK_URL: 'hooks', CUA_WEBHOOK_SECRET: SECRET }, /webhook\.url/],
    [
      'an unknown event',
      { notifications: { webhook: { url: URL_, secret: SECRET, events: ['started'] } } },
      {},
      /notifications\.webhook\.events\.0: Invalid option/,
    ],
    [
      'no events',
      { notifications: { webhook: { url: URL_, secret: SECRET, events: [] } } },
      {},
      /notifications\.webhook\.events/,
    ],
    [
      'a timeout over a minute',
      { notifications: { webhook: { url: URL_, secret: SECRET, timeoutSeconds: 61 } } },
      {},
      /notifications\.webhook\.timeoutSeconds: .*<=60/,
    ],
    [
      'an unknown key',
      { notifications: { webhook: { url: URL_, secret: SECRET, retries: 3 } } },
      {},
      /notifications\.webhook: Unrecognized key: "retries"/,
    ],
  ])('%s → ConfigError', (_name, content, env, message) => {
    const run = () => load(content, env);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });

  it('an error in the section does not quote the secret', () => {
    const run = () => load({ notifications: { webhook: { url: 'nope', secret: 'too-short-1' } } });
    expect(run).toThrow(/webhook\.url/);
    expect(run).not.toThrow(/too-short-1/);
  });
});

describe('webhookTarget: the secret resolved when the worker starts', () => {
  const section = (webhook: Record<string, unknown>) =>
    load({ notifications: { webhook: { url: 'https://hooks.example/', ...webhook } } }).notifications;

  it('none without a webhook', () => {
    expect(webhookTarget(undefined, {})).toBeUndefined();
    expect(webhookTarget({}, {})).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, NodeJS.ProcessEnv]>([
    ['from the file', { secret: 'sixteen-chars-ok' }, {}],
    ['from its environment variable', { secretEnv: 'HOOK_KEY' }, { HOOK_KEY: 'sixteen-chars-ok' }],
  ])('takes the secret %s', (_name, webhook, env) => {
    expect(webhookTarget(section(webhook), env)).toEqual({
      url: 'https://hooks.example/',
      secret: 'sixteen-chars-ok',
      events: ['waiting', 'paused', 'failed', 'completed', 'cancelled', 'monitor_changed'],
      timeoutMs: 10_000,
    });
  });

  it.each<[string, NodeJS.ProcessEnv, RegExp]>([
    ['an unset variable', {}, /notifications\.webhook\.secretEnv: the environment variable HOOK_KEY is not set/],
    ['a short value', { HOOK_KEY: 'tiny-val' }, /the value of HOOK_KEY is shorter than 16 characters/],
  ])('refuses %s (ConfigError, one line, no value quoted)', (_name, env, message) => {
    const run = () => webhookTarget(section({ secretEnv: 'HOOK_KEY' }), env);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
    expect(run).not.toThrow(/tiny-val/);
  });

  it("the worker's start line names the webhook's origin, not its path (which may be a credential)", () => {
    const target = webhookTarget(section({ secret: 'sixteen-chars-ok', url: 'https://hooks.example/T0/B1/xyz' }), {});
    expect(webhookSummary(target!)).toBe(
      'notifications: webhook https://hooks.example for waiting, paused, failed, completed, cancelled, monitor_changed',
    );
  });
});
