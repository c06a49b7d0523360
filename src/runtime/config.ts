// Worker and client configuration: a JSON file (zod-validated) plus environment overrides (config-env.ts).
// Precedence: defaults < file (--config, CUA_CONFIG, ./cua.config.json) < environment < command-line flags.
// The larger sections have files of their own: models (config-models.ts), browser and desktop.
import { ConfigError } from '../common/config-error';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../contract/queues';
import { dataDir } from '../infra/paths';
import { UrlPolicySchema } from '../contract/url-policy';
import { ApprovalRulesSchema } from '../contract/approvals';
import { StartPolicySchema } from '../contract/start-policy';
import { parseAddress } from '../policy/control-plane';
import { EncryptionSchema } from '../codec/config';
import { NotificationsSchema } from '../notify/config';
import { isHostPattern, SECRET_NAME } from '../agent/secrets';
import { isTotpSeed, TOTP_ALGORITHMS } from '../agent/one-time-codes';
import { deriveLimits, thisMachine } from './limits';
import type { LimitName, MachineShape, WorkerLimits } from './limits';
import type { ModelEndpointResolver } from '../model/endpoint-policy';
import { DEFAULT_STORE_FAULT_WAIT_MINUTES } from '../trajectory/store-wait';
import { StoreSchema } from '../trajectory/store-config';
import type { StoreConfig } from '../trajectory/store-config';
import { TracesSchema } from '../telemetry/config';
import { BrowserSchema } from './config-browser';
import { DesktopSchema } from './config-desktop';
import { envOverrides } from './config-env';
import { EndpointSchema, ModelOverridesSchema } from './config-models';

/** A secret a task may have typed as `{{secret:NAME}}` (or `{{totp:NAME}}`): its value or env var, and its hosts. */

/** Where a Temporal server is looked for when nothing says otherwise (the dev server's default). */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
const SecretSchema = z
  .strictObject({
    value: z.string().min(1).optional(),
    env: z.string().min(1).optional(),
    hosts: z.array(z.string().refine(isHostPattern, 'a host pattern: example.com, *.example.com or host:port')).min(1),
    /** 'totp': value/env is an RFC 6238 seed (base32), typed as `{{totp:NAME}}` (src/agent/one-time-codes.ts). */
    kind: z.enum(['password', 'totp']).optional(),
    digits: z.number().int().min(6).max(10).optional(),
    period: z.number().int().min(5).max(300).optional(),
    algorithm: z.enum(TOTP_ALGORITHMS).optional(),
  })
  .refine((s) => (s.value === undefined) !== (s.env === undefined), 'give exactly one of value and env')
  .refine(
    (s) => s.kind === 'totp' || (s.digits ?? s.period ?? s.algorithm) === undefined,
    'digits, period and algorithm are for kind "totp" only',
  )
  .refine((s) => s.kind !== 'totp' || s.value === undefined || isTotpSeed(s.value), {
    message: 'a totp seed is base32 text (A-Z, 2-7) of at least 16 characters',
    path: ['value'],
  });

export const ConfigSchema = z.strictObject({
  temporal: z
    .strictObject({
      address: z.string().min(1).default(DEFAULT_TEMPORAL_ADDRESS),
      namespace: z.string().min(1).default('default'),
      apiKey: z.string().optional(),
      tls: z
        .strictObject({
          serverName: z.string().optional(),
          serverRootCACertPath: z.string().optional(),
          clientCertPath: z.string().optional(),
          clientKeyPath: z.string().optional(),
        })
        .optional(),
    })
    .default({ address: DEFAULT_TEMPORAL_ADDRESS, namespace: 'default' }),
  taskQueue: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  runsDir: z.string().min(1).optional(),
  store: StoreSchema.default({ kind: 'folder', faultWaitMinutes: DEFAULT_STORE_FAULT_WAIT_MINUTES }),
  models: z.record(z.string(), EndpointSchema).default({}),
  modelOverrides: ModelOverridesSchema.optional(),
  /** API keys an overridden model base URL may receive, by base URL (a configured endpoint's key never goes elsewhere). */
  modelKeys: z.record(z.url(), z.string().min(1)).optional(),
  secrets: z.record(z.string().regex(SECRET_NAME, 'a secret name: letters, digits, . _ -'), SecretSchema).optional(),
  browser: BrowserSchema,
  desktop: DesktopSchema,
  /**
   * What the browser may load (src/contract/url-policy.ts): schemes (default http, https; about:blank always),
   * allowFile (default off), allowHosts, denyHosts, denyPrivateAddresses (default off; turn on for hosted workers).
   * Tasks may narrow it with their own `urlPolicy`, never widen it. Absent: DEFAULT_URL_POLICY.
   */
  urlPolicy: UrlPolicySchema.optional(),
  /**
   * Requests that need a person's yes before they leave a task's browser (src/contract/approvals.ts): each rule's
   * hosts, optional methods and path glob, and label. Tasks may add rules (their input's `approvals`), never remove
   * these. Absent: none.
   */
  approvals: ApprovalRulesSchema.optional(),
  /**
   * The servers that run and watch the agent, denied to its browsers and the desktop's proxy beside those the worker
   * knows (src/runtime/control-plane.ts): `addresses` adds host:port or URLs; `reachable: true` turns the denial off.
   */
  controlPlane: z
    .strictObject({
      addresses: z
        .array(z.string().refine((a) => parseAddress(a) !== undefined, 'host:port or an http(s) URL'))
        .default([]),
      reachable: z.boolean().default(false),
    })
    .optional(),
  worker: z
    .strictObject({
      /** Absent: derived from browser.slots (src/runtime/limits.ts). */
      maxConcurrentActivities: z.number().int().min(1).optional(),
      /** Absent: derived from the machine's cores (src/runtime/limits.ts). */
      maxConcurrentWorkflowTasks: z.number().int().min(1).optional(),
    })
    .default({}),
  /**
   * The takeover endpoint (src/browser/takeover/): where a person reaches a session's browser during `cua takeover`.
   * Listening starts at the first lease. Each lease has its own token; bind beyond loopback only behind TLS.
   */
  takeover: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      /** 0: a free port, chosen when the first lease starts. */
      port: z.number().int().min(0).max(65_535).default(0),
      /** The endpoint's address as people reach it (a reverse proxy's), instead of http://host:port. */
      publicUrl: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }).optional(),
    })
    .default({ host: '127.0.0.1', port: 0 }),
  /** Evaluations this worker runs (src/eval). */
  evaluation: z
    .strictObject({
      /**
       * Folders beside the project's eval/tasks that local task sets (and answers files) may be read from; anything
       * else must come as store:KEY. Whoever starts an evaluation names the file, so a worker reads no other.
       */
      taskSetDirs: z.array(z.string().min(1)).default([]),
    })
    .default({ taskSetDirs: [] }),
  /** Payload encryption (AES-256-GCM codec); absent: payloads are stored as plain JSON. See src/codec/. */
  encryption: EncryptionSchema.optional(),
  /**
   * Budgets for tasks that set none (maxCost US dollars, maxTokens, maxMinutes of working time) and `costCap`, the
   * most any task's cost limit (or a reply raising it) may be. Reaching a budget asks the user (src/agent/budget.ts).
   */
  budget: z
    .strictObject({
      maxCost: z.number().positive().optional(),
      maxTokens: z.number().int().positive().optional(),
      maxMinutes: z.number().positive().optional(),
      costCap: z.number().positive().optional(),
    })
    .optional(),
  /** A webhook told when a task waits for a reply, is paused, fails, completes or is cancelled (src/notify/). */
  notifications: NotificationsSchema.optional(),
  /**
   * What the worker reports to monitoring tools (docs/observability.md); absent: nothing. `traces`: OpenTelemetry spans
   * of the client, the workflow, the activities, each model call and each action, exported over OTLP/HTTP (absent, and
   * no OTEL_EXPORTER_OTLP_ENDPOINT: no tracing, nothing loaded). `metrics`: a Prometheus endpoint.
   */
  telemetry: z
    .strictObject({
      traces: TracesSchema.optional(),
      /**
       * Metrics (docs/observability.md "Metrics"): the Temporal SDK's and the agent's own (steps, model calls, sessions,
       * tasks waiting for a person), on one Prometheus endpoint.
       */
      metrics: z
        .strictObject({
          /** Where to serve `/metrics` for Prometheus to scrape: host:port (e.g. 127.0.0.1:9464); env CUA_METRICS_PROMETHEUS. */
          prometheus: z
            .string()
            .regex(/^(\[[0-9a-fA-F:]+\]|[^\s:/]+):\d{1,5}$/, 'host:port, e.g. 127.0.0.1:9464')
            .optional(),
          /** How often the worker counts its queue's tasks waiting for a person in visibility (default 30 s). */
          waitingCountSeconds: z.number().min(1).max(3600).default(30),
        })
        .optional(),
    })
    .optional(),
  /** The web console (`cua console`, console/): its access token and the Temporal UI it links to. */
  console: z
    .strictObject({
      /** The console's access token (env CUA_CONSOLE_TOKEN); absent: a random one per start. Needed off loopback. */
      token: z.string().min(16, 'at least 16 characters').optional(),
      /** The Temporal Web UI the console links each task to (e.g. http://127.0.0.1:8233). */
      temporalUiUrl: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }).optional(),
    })
    .optional(),
  /** The MCP server (`cua mcp`, mcp/): its HTTP token, what its callers may answer, the console it links to. */
  mcp: z
    .strictObject({
      /** The HTTP server's bearer token (env CUA_MCP_TOKEN); absent: a random one per start. Needed off loopback. */
      token: z.string().min(16, 'at least 16 characters').optional(),
      /**
       * Whether MCP callers (agents) may answer approvals and providers' safety checks (default false: those are
       * meant for a person, who answers them in the console or with `cua reply`).
       */
      callersMayApprove: z.boolean().default(false),
      /** The web console's address, to link each task to (e.g. http://127.0.0.1:8300). */
      consoleUrl: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }).optional(),
      /**
       * What the tasks MCP callers start, fork or replay may use: model endpoints, environments, most steps, and a URL
       * policy each such task carries (src/contract/start-policy.ts). Absent: what any task may.
       */
      callers: StartPolicySchema.optional(),
    })
    .optional(),
});
type ParsedConfig = z.infer<typeof ConfigSchema>;
/** The configuration as written (cua.config.json, or an object passed to the public API): every field optional. */
export type ConfigInput = z.input<typeof ConfigSchema>;
/** The loaded configuration: every limit filled in (configured or derived), and which were derived from what. */
export type Config = Omit<ParsedConfig, 'browser' | 'worker'> & {
  runsDir: string;
  browser: ParsedConfig['browser'] & Pick<WorkerLimits, 'slots'>;
  worker: Omit<WorkerLimits, 'slots'>;
  limits: { machine: MachineShape; derived: LimitName[] };
  /**
   * Set by code only (a worker embedded with `createAgentWorker({ modelEndpoints })`), never by a file: where a task's
   * named endpoints come from instead of `models`. The key rule of src/model/endpoint-policy.ts still applies.
   */
  modelEndpointResolver?: ModelEndpointResolver;
};

/** Whether the captcha gate listens for solving messages in this worker's browser (see `browser.captchaSignals`). */
export function captchaSignalsOn(browser: Pick<Config['browser'], 'captchaSignals' | 'cdpUrl' | 'provider'>): boolean {
  return browser.captchaSignals ?? (browser.cdpUrl !== undefined || browser.provider === 'browserbase');
}

function readFileConfig(file: string | undefined, env: NodeJS.ProcessEnv): unknown {
  const candidate = file ?? env.CUA_CONFIG ?? (fs.existsSync('cua.config.json') ? 'cua.config.json' : undefined);
  if (!candidate) return {};
  let text: string;
  try {
    text = fs.readFileSync(candidate, 'utf8');
  } catch {
    throw new ConfigError(`config file ${candidate} cannot be read`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${candidate} is not valid JSON: ${(err as Error).message}`);
  }
}

/** `machine`: the machine shape unset limits are derived from (default: this machine; tests pass one). */
export function loadConfig(opts: { file?: string; env?: NodeJS.ProcessEnv; machine?: MachineShape } = {}): Config {
  const env = opts.env ?? process.env;
  return configFromObject(readFileConfig(opts.file, env), { env, machine: opts.machine });
}

/**
 * A configuration from an object shaped like cua.config.json (the public API's way: no file needed), validated the
 * same way. `env`: environment overrides to apply as the CLI does (TEMPORAL_ADDRESS, CUA_ENCRYPTION_KEYS, …); none by
 * default, so an application's object is taken as written.
 */
export function configFromObject(
  raw: unknown,
  opts: { env?: NodeJS.ProcessEnv; machine?: MachineShape | undefined } = {},
): Config {
  const env = opts.env ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError('config must be a JSON object');
  const merged = envOverrides(raw as Record<string, unknown>, env);
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${msg}`);
  }
  const { browser, worker } = parsed.data;
  const given: Partial<WorkerLimits> = {
    ...(browser.slots !== undefined ? { slots: browser.slots } : {}),
    ...worker,
  };
  const machine = opts.machine ?? thisMachine();
  const { slots, ...workerLimits } = deriveLimits(machine, given);
  const names: LimitName[] = ['slots', 'maxConcurrentActivities', 'maxConcurrentWorkflowTasks'];
  return {
    ...parsed.data,
    runsDir: path.resolve(parsed.data.runsDir ?? path.join(env.CUA_DATA_DIR ?? dataDir(), 'runs')),
    browser: { ...browser, slots },
    worker: workerLimits,
    limits: { machine, derived: names.filter((n) => given[n] === undefined) },
  };
}

export type { StoreConfig };
