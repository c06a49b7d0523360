// Worker and client configuration: a JSON file (zod-validated) plus environment overrides.
// Precedence: defaults < file (--config, CUA_CONFIG, ./cua.config.json) < environment < command-line flags.
import { ConfigError } from '../common/config-error';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../agent/queues';
import { dataDir } from '../infra/paths';
import { UrlPolicySchema } from '../policy/url-policy';
import { parseAddress } from '../policy/control-plane';
import { EncryptionSchema, encryptionEnvOverride } from '../codec/config';
import { NotificationsSchema, notificationsEnvOverride } from '../notify/config';
import { isHostPattern, SECRET_NAME } from '../agent/secrets';
import { isTotpSeed, TOTP_ALGORITHMS } from '../agent/one-time-codes';
import { deriveLimits, thisMachine } from './limits';
import type { LimitName, MachineShape, WorkerLimits } from './limits';
import type { ModelEndpointResolver } from '../model/endpoint-policy';
import { identityError } from '../model/identities';
import { DEFAULT_READ_PAGE_MAX_CHARS } from '../agent/page-question';
import { PROFILE_NAMES } from '../actions/profiles';
import { MAX_MODEL_TIMEOUT_SECONDS } from '../model/timeouts';
import { DEFAULT_STORE_FAULT_WAIT_MINUTES } from '../trajectory/store-wait';
import { StoreSchema } from '../trajectory/store-config';
import type { StoreConfig } from '../trajectory/store-config';
import { TracesSchema, tracesEnvOverride } from '../telemetry/config';

const EndpointSchema = z
  .strictObject({
    baseUrl: z.url(),
    model: z.string().min(1),
    apiKey: z.string().optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
    /** The longest one model call may take (default 120 s; see src/model/timeouts.ts). */
    timeoutSeconds: z.number().positive().max(MAX_MODEL_TIMEOUT_SECONDS).optional(),
    /**
     * What the endpoint's tokens cost, in US dollars per million: `input` (prompt), `output` (completion, reasoning
     * included), `cachedInput` (prompt tokens the endpoint served from its cache; default: `input`). Each model call
     * then records its cost beside its usage (`usage.cost_usd`), and totals follow.
     */
    price: z
      .strictObject({
        input: z.number().min(0),
        output: z.number().min(0),
        cachedInput: z.number().min(0).optional(),
      })
      .optional(),
    /** A system prompt file replacing ours (e.g. the model's training prompt); see src/model/prompt.ts placeholders. */
    promptFile: z.string().min(1).optional(),
    /** The sentence after each screenshot (absent: the profile's, Fara's own; see src/model/context.ts). */
    stepPrompt: z
      .string()
      .refine((s) => s.trim() !== '', 'must not be empty')
      .optional(),
    /**
     * Who the model is told it is (src/model/identities.ts): a registry name, or a text of its own of at least 20
     * characters. A task may name another registry identity of its profile (`identity`), never give a text.
     */
    identity: z.string().min(1).optional(),
    /**
     * The profile this endpoint's model speaks. Its identity and prompt file are checked against it when the worker
     * starts (absent: against the profile of a registry identity, else fara-1.5, the tasks' default), and a task of
     * another profile is refused when it starts.
     */
    profile: z.enum(PROFILE_NAMES).optional(),
  })
  .superRefine((endpoint, ctx) => {
    if (endpoint.identity === undefined) return;
    const error = identityError(endpoint.identity, { profile: endpoint.profile, custom: true });
    if (error) ctx.addIssue({ code: 'custom', path: ['identity'], message: error.message });
  });

/** Per-task model overrides (`cua run --model-base-url/--model`); absent: allowed, to any URL (never with our keys). */
const ModelOverridesSchema = z.strictObject({
  allow: z.boolean().default(true),
  /** When set, an overridden base URL must be one of these (exact, or a path under one). */
  allowedBaseUrls: z.array(z.url()).optional(),
});

/** A secret a task may have typed as `{{secret:NAME}}` (or `{{totp:NAME}}`): its value or env var, and its hosts. */
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

/**
 * Browserbase sessions for the browser (`browser.provider: "browserbase"`). The API key is the worker's, like a
 * model's: from this file or BROWSERBASE_API_KEY, sent only to `baseUrl`, never put in a task's history or a log.
 */
const BrowserbaseSchema = z.strictObject({
  apiKey: z.string().min(1).optional(),
  projectId: z.string().min(1).optional(),
  /** The sessions API (default https://api.browserbase.com); http(s). */
  baseUrl: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }).optional(),
});

/** Cross-field rules of the browser section, each with its own path and a one-line message. */
function checkBrowserProvider(
  browser: { provider: string; cdpUrl?: string | undefined; browserbase?: z.infer<typeof BrowserbaseSchema> },
  ctx: z.RefinementCtx,
): void {
  const issue = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (browser.provider !== 'browserbase') {
    if (browser.browserbase) issue(['browserbase'], "is set but browser.provider is not 'browserbase'");
    return;
  }
  if (browser.cdpUrl !== undefined) issue(['cdpUrl'], "cannot be used with browser.provider 'browserbase'");
  if (!browser.browserbase?.apiKey) {
    issue(['browserbase', 'apiKey'], "is required with browser.provider 'browserbase' (or BROWSERBASE_API_KEY)");
  }
  if (!browser.browserbase?.projectId) {
    issue(['browserbase', 'projectId'], "is required with browser.provider 'browserbase' (or BROWSERBASE_PROJECT_ID)");
  }
}

export const ConfigSchema = z.strictObject({
  temporal: z
    .strictObject({
      address: z.string().min(1).default('127.0.0.1:7233'),
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
    .default({ address: '127.0.0.1:7233', namespace: 'default' }),
  taskQueue: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  runsDir: z.string().min(1).optional(),
  store: StoreSchema.default({ kind: 'folder', faultWaitMinutes: DEFAULT_STORE_FAULT_WAIT_MINUTES }),
  models: z.record(z.string(), EndpointSchema).default({}),
  modelOverrides: ModelOverridesSchema.optional(),
  /** API keys an overridden model base URL may receive, by base URL (a configured endpoint's key never goes elsewhere). */
  modelKeys: z.record(z.url(), z.string().min(1)).optional(),
  secrets: z.record(z.string().regex(SECRET_NAME, 'a secret name: letters, digits, . _ -'), SecretSchema).optional(),
  browser: z
    .strictObject({
      executablePath: z.string().optional(),
      cdpUrl: z.string().optional(),
      /**
       * Where the browser comes from. 'chromium' (default): the worker's own, Debian's Chromium launched here, or the
       * browser at cdpUrl. 'browserbase': a Browserbase session per task session (`browserbase` below).
       */
      provider: z.enum(['chromium', 'browserbase']).default('chromium'),
      browserbase: BrowserbaseSchema.optional(),
      headless: z.boolean().default(true),
      /** Absent: derived from the machine's cores and memory (src/runtime/limits.ts). */
      maxSessions: z.number().int().min(1).max(256).optional(),
      idleTimeoutSeconds: z.number().positive().default(600),
      /**
       * A task that asks the user a question keeps its live browser this long (0: none), so a reply within it goes on
       * on the same page, nothing restored. The page is saved at the question all the same, and again when the hold
       * ends, the pool needs the place, or the worker shuts down; a held browser is not closed as idle. A desktop task
       * keeps its desktop (X session, windows, programs) as long, its home saved the same way.
       */
      holdWhileWaitingSeconds: z.number().min(0).max(86_400).default(600),
      /**
       * A request that changes something (a form post, a POST/PUT/PATCH/DELETE fetch) that was under way when a worker
       * was lost may or may not have reached its server. Off (default): sending the same request again is held back
       * and the user is asked first. On: it is sent again, and the model is told so.
       */
      resendInDoubt: z.boolean().default(false),
      /**
       * Write each journal entry of a request that changes something before the request leaves the browser, by
       * routing every request of the session through the worker (as a URL policy that restricts the web does anyway).
       * Off: entries are written from the browser's network events, which a worker killed within milliseconds of a
       * post can miss.
       */
      journalBeforeSend: z.boolean().default(false),
      singleTab: z.boolean().default(true),
      /** A download larger than this is cancelled and its partial file removed. */
      maxDownloadMiB: z.number().positive().default(100),
      /**
       * Before each operation the page gets this long to reach DOMContentLoaded; a page still loading then is stopped
       * (window.stop) and the operation goes on with what has arrived.
       */
      pageReadyTimeoutSeconds: z.number().positive().max(600).default(60),
      /**
       * The captcha gate listens to pages' console messages announcing a solve (`browserbase-solving-started` and
       * `-finished`). Absent: on for a remote browser (cdpUrl, Browserbase), which may solve captchas; off for one
       * launched here, whose gate is then always open (a page printing the messages cannot hold a task).
       */
      captchaSignals: z.boolean().optional(),
      /**
       * Milliseconds between key presses when typing a text under 100 characters (longer texts: at most 10 ms). Keys
       * are always pressed one by one, so pages reacting per key (debounced suggestions) still see every key. Absent:
       * DEFAULT_TYPING_DELAY_MS; raise it for a site that drops keys typed quickly.
       */
      typingDelayMs: z.number().min(0).max(1000).optional(),
      /**
       * Run a task's final-page probes (`finalPageProbes`, an evaluation's `page_js` checks): JavaScript the task
       * gives, in its last page, which may be a site the agent signed in to with your secrets. Off by default, so a
       * task starter cannot script such a page; turn it on (or CUA_PAGE_PROBES=1) on workers whose task starters you
       * trust. `cua eval` turns it on for the worker it starts together with its own Temporal server.
       */
      pageProbes: z.boolean().default(false),
      /** read_page_answer_question sends at most this many characters of the page's text to its model sub-call. */
      readPageMaxChars: z.number().int().min(1000).max(1_000_000).default(DEFAULT_READ_PAGE_MAX_CHARS),
      /**
       * A takeover's lease also offers raw CDP (`cdpUrl`, for `chromium.connectOverCDP`): the whole browser of this
       * worker, every task's context, with no URL policy. The operator's only; off by default (docs/SECURITY.md).
       * Only for the browser the worker launches itself.
       */
      takeoverCdp: z.boolean().default(false),
    })
    .superRefine(checkBrowserProvider)
    .default({
      provider: 'chromium',
      headless: true,
      idleTimeoutSeconds: 600,
      holdWhileWaitingSeconds: 600,
      resendInDoubt: false,
      journalBeforeSend: false,
      singleTab: true,
      maxDownloadMiB: 100,
      pageReadyTimeoutSeconds: 60,
      pageProbes: false,
      readPageMaxChars: DEFAULT_READ_PAGE_MAX_CHARS,
      takeoverCdp: false,
    }),
  /** The desktop environment (src/desktop): one Xvfb display and bubblewrap sandbox per session. */
  desktop: z
    .strictObject({
      /** At most this many desktops at once on this worker (each is an X server plus its apps). */
      maxSessions: z.number().int().min(0).max(64).default(4),
      /**
       * A desktop no activity used for this long is closed, freeing its place (one whose task ended without closing
       * it, or that a lost activity left behind); its task, if it comes back, gets a new desktop with the same home.
       */
      idleTimeoutSeconds: z.number().positive().default(600),
      /**
       * What sandboxed programs may reach. false (default): nothing — the sandbox has its own empty network namespace.
       * 'policy': the same empty namespace, and one way out: an HTTP(S) proxy (the sandbox's http_proxy & co.) that
       * applies `urlPolicy` narrowed by the task's to every connection. true: the host's network, with no policy —
       * including services on the worker's localhost.
       */
      network: z.union([z.boolean(), z.literal('policy')]).default(false),
      /** Programs started on each new desktop (in its sandbox, in the background). */
      apps: z.array(z.string().min(1)).default(['xterm']),
      /** type_text types in chunks of this many characters, with this many milliseconds between keys. */
      typingChunk: z.number().int().min(1).max(1000).default(50),
      typingDelayMs: z.number().int().min(0).max(1000).default(12),
      /** run_command's timeout when the model gives none (the seed's 5 s), and the most a call may ask for. */
      commandTimeoutSeconds: z.number().positive().default(5),
      maxCommandTimeoutSeconds: z.number().positive().default(120),
      /** A command's output keeps this many characters from its start and from its end. */
      outputHeadChars: z.number().int().min(100).default(2000),
      outputTailChars: z.number().int().min(100).default(2000),
      /** The host uid/gid a root worker runs each sandbox as (never 0); absent: DEFAULT_SANDBOX_HOST_UID (61000). */
      sandboxUid: z.number().int().min(1).max(4294967294).optional(),
      /**
       * A reply that calls no tool ends the task with its text as the answer (true, default: with native function
       * calling, plain text is the model's last word). false: it is an invalid reply the model is told about. An
       * empty reply, or one that looks like a call that could not be read, is an invalid reply either way.
       */
      endOnNoCall: z.boolean().default(true),
      /** The endpoint (a name in `models`) that describes the screen; absent: the task's endpoint. */
      visionEndpoint: z.string().min(1).optional(),
      /** The endpoint (a name in `models`) that points at an element described in words; absent: the vision one. */
      groundingEndpoint: z.string().min(1).optional(),
    })
    .default({
      maxSessions: 4,
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
    }),
  /**
   * What the browser may load (src/policy/url-policy.ts): schemes (default http, https; about:blank always),
   * allowFile (default off), allowHosts, denyHosts, denyPrivateAddresses (default off; turn on for hosted workers).
   * Tasks may narrow it with their own `urlPolicy`, never widen it. Absent: DEFAULT_URL_POLICY.
   */
  urlPolicy: UrlPolicySchema.optional(),
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
      /** Absent: derived from browser.maxSessions (src/runtime/limits.ts). */
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
});
type ParsedConfig = z.infer<typeof ConfigSchema>;
/** The configuration as written (cua.config.json, or an object passed to the public API): every field optional. */
export type ConfigInput = z.input<typeof ConfigSchema>;
/** The loaded configuration: every limit filled in (configured or derived), and which were derived from what. */
export type Config = Omit<ParsedConfig, 'browser' | 'worker'> & {
  runsDir: string;
  browser: ParsedConfig['browser'] & Pick<WorkerLimits, 'maxSessions'>;
  worker: Omit<WorkerLimits, 'maxSessions'>;
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

/** Environment overrides, applied on top of the file. */
function envOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out = structuredClone(raw) as Record<string, Record<string, unknown>>;
  const section = (k: string) => (out[k] ??= {}) as Record<string, unknown>;
  if (env.TEMPORAL_ADDRESS) section('temporal').address = env.TEMPORAL_ADDRESS;
  if (env.TEMPORAL_NAMESPACE) section('temporal').namespace = env.TEMPORAL_NAMESPACE;
  if (env.TEMPORAL_API_KEY) section('temporal').apiKey = env.TEMPORAL_API_KEY;
  if (env.CUA_TASK_QUEUE) (out as Record<string, unknown>).taskQueue = env.CUA_TASK_QUEUE;
  if (env.CUA_CONSOLE_TOKEN) section('console').token = env.CUA_CONSOLE_TOKEN;
  if (env.CUA_METRICS_PROMETHEUS) {
    const telemetry = section('telemetry');
    telemetry.metrics = { ...(telemetry.metrics as object), prometheus: env.CUA_METRICS_PROMETHEUS };
  }
  if (env.CUA_RUNS_DIR) (out as Record<string, unknown>).runsDir = env.CUA_RUNS_DIR;
  if (env.CUA_CHROMIUM) section('browser').executablePath = env.CUA_CHROMIUM;
  if (env.CUA_CDP_URL) section('browser').cdpUrl = env.CUA_CDP_URL;
  if (env.CUA_BROWSER_PROVIDER) section('browser').provider = env.CUA_BROWSER_PROVIDER;
  if (section('browser').provider === 'browserbase') {
    // Only for a Browserbase worker: another program's BROWSERBASE_* variables do not configure one that is not.
    const browserbase = (section('browser').browserbase ??= {}) as Record<string, unknown>;
    if (env.BROWSERBASE_API_KEY) browserbase.apiKey = env.BROWSERBASE_API_KEY;
    if (env.BROWSERBASE_PROJECT_ID) browserbase.projectId = env.BROWSERBASE_PROJECT_ID;
    if (env.BROWSERBASE_BASE_URL) browserbase.baseUrl = env.BROWSERBASE_BASE_URL;
  }
  if (env.CUA_MAX_SESSIONS) section('browser').maxSessions = Number(env.CUA_MAX_SESSIONS);
  if (env.CUA_HOLD_WHILE_WAITING_SECONDS) {
    section('browser').holdWhileWaitingSeconds = Number(env.CUA_HOLD_WHILE_WAITING_SECONDS);
  }
  if (env.CUA_TYPING_DELAY_MS) section('browser').typingDelayMs = Number(env.CUA_TYPING_DELAY_MS);
  if (env.CUA_PAGE_PROBES) {
    const on = /^(1|true|on|yes)$/i.test(env.CUA_PAGE_PROBES);
    if (!on && !/^(0|false|off|no)$/i.test(env.CUA_PAGE_PROBES)) {
      throw new ConfigError(`CUA_PAGE_PROBES=${env.CUA_PAGE_PROBES}: say 1 (run page probes) or 0 (do not)`);
    }
    section('browser').pageProbes = on;
  }
  if (env.CUA_MODEL_BASE_URL || env.CUA_MODEL) {
    const models = section('models') as Record<string, Record<string, unknown>>;
    const current = (models.default ??= {});
    if (env.CUA_MODEL_BASE_URL) current.baseUrl = env.CUA_MODEL_BASE_URL;
    if (env.CUA_MODEL) current.model = env.CUA_MODEL;
  }
  const models = section('models') as Record<string, Record<string, unknown>>;
  if (models.default && env.CUA_MODEL_API_KEY) models.default.apiKey = env.CUA_MODEL_API_KEY;
  else if (models.default && env.OPENAI_API_KEY) models.default.apiKey ??= env.OPENAI_API_KEY;
  const encryption = encryptionEnvOverride(out.encryption, env, (m) => new ConfigError(m));
  if (encryption) (out as Record<string, unknown>).encryption = encryption;
  const notifications = notificationsEnvOverride(out.notifications, env);
  if (notifications) (out as Record<string, unknown>).notifications = notifications;
  const traces = tracesEnvOverride(out.telemetry?.traces, env, (m) => new ConfigError(m));
  if (traces === null) delete out.telemetry?.traces;
  else if (traces) section('telemetry').traces = traces;
  return out;
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
    ...(browser.maxSessions !== undefined ? { maxSessions: browser.maxSessions } : {}),
    ...worker,
  };
  const machine = opts.machine ?? thisMachine();
  const { maxSessions, ...workerLimits } = deriveLimits(machine, given);
  const names: LimitName[] = ['maxSessions', 'maxConcurrentActivities', 'maxConcurrentWorkflowTasks'];
  return {
    ...parsed.data,
    runsDir: path.resolve(parsed.data.runsDir ?? path.join(env.CUA_DATA_DIR ?? dataDir(), 'runs')),
    browser: { ...browser, maxSessions },
    worker: workerLimits,
    limits: { machine, derived: names.filter((n) => given[n] === undefined) },
  };
}

export type { StoreConfig };
