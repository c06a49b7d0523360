// The environment variables that override the configuration file (TEMPORAL_ADDRESS, CUA_MODEL, BROWSERBASE_API_KEY, …),
// applied to the raw object before it is validated.
import { ConfigError } from '../common/config-error';
import { encryptionEnvOverride } from '../codec/config';
import { notificationsEnvOverride } from '../notify/config';
import { tracesEnvOverride } from '../telemetry/config';

/**
 * CUA_SLOTS, or CUA_MAX_SESSIONS (its wire name, kept so existing deployments keep working): the browser's slots,
 * over the file's `slots` or `maxSessions`. Both set and different is a ConfigError.
 */
function slotsEnvOverride(browser: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const { CUA_SLOTS: slots, CUA_MAX_SESSIONS: oldName } = env;
  if (slots && oldName && slots !== oldName) {
    throw new ConfigError(`CUA_SLOTS=${slots} and CUA_MAX_SESSIONS=${oldName} (its other name) differ: set one`);
  }
  if (!slots && !oldName) return;
  delete browser.slots;
  delete browser.maxSessions;
  // The key named as the variable was, so a bad value's error names the key that matches it.
  if (slots) browser.slots = Number(slots);
  else browser.maxSessions = Number(oldName);
}

/** Environment overrides, applied on top of the file. */
/** The environment variables that hold a provider's key, for the families that speak that provider's API. */
const PROVIDER_KEY_VARIABLES: Record<string, string[]> = {
  'anthropic-computer': ['ANTHROPIC_API_KEY'],
  'gemini-computer': ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
};

export function envOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out = structuredClone(raw) as Record<string, Record<string, unknown>>;
  const section = (k: string) => (out[k] ??= {}) as Record<string, unknown>;
  if (env.TEMPORAL_ADDRESS) section('temporal').address = env.TEMPORAL_ADDRESS;
  if (env.TEMPORAL_NAMESPACE) section('temporal').namespace = env.TEMPORAL_NAMESPACE;
  if (env.TEMPORAL_API_KEY) section('temporal').apiKey = env.TEMPORAL_API_KEY;
  if (env.CUA_TASK_QUEUE) (out as Record<string, unknown>).taskQueue = env.CUA_TASK_QUEUE;
  if (env.CUA_CONSOLE_TOKEN) section('console').token = env.CUA_CONSOLE_TOKEN;
  if (env.CUA_MCP_TOKEN) section('mcp').token = env.CUA_MCP_TOKEN;
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
  slotsEnvOverride(section('browser'), env);
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
  if (env.CUA_MODEL_BASE_URL || env.CUA_MODEL || env.CUA_MODEL_FAMILY) {
    const models = section('models') as Record<string, Record<string, unknown>>;
    const current = (models.default ??= {});
    if (env.CUA_MODEL_BASE_URL) current.baseUrl = env.CUA_MODEL_BASE_URL;
    if (env.CUA_MODEL) current.model = env.CUA_MODEL;
    if (env.CUA_MODEL_FAMILY) {
      delete current.profile;
      current.family = env.CUA_MODEL_FAMILY;
    }
  }
  const models = section('models') as Record<string, Record<string, unknown>>;
  if (models.default && env.CUA_MODEL_API_KEY) models.default.apiKey = env.CUA_MODEL_API_KEY;
  else if (models.default) {
    // The provider's own variable, for the family that speaks its API (OpenAI's for any other: the endpoints are
    // OpenAI-compatible). A key in the file wins.
    const family = models.default.family ?? models.default.profile;
    const key = PROVIDER_KEY_VARIABLES[String(family)]?.map((name) => env[name]).find(Boolean) ?? env.OPENAI_API_KEY;
    if (key) models.default.apiKey ??= key;
  }
  const encryption = encryptionEnvOverride(out.encryption, env, (m) => new ConfigError(m));
  if (encryption) (out as Record<string, unknown>).encryption = encryption;
  const notifications = notificationsEnvOverride(out.notifications, env);
  if (notifications) (out as Record<string, unknown>).notifications = notifications;
  const traces = tracesEnvOverride(out.telemetry?.traces, env, (m) => new ConfigError(m));
  if (traces === null) delete out.telemetry?.traces;
  else if (traces) section('telemetry').traces = traces;
  return out;
}
