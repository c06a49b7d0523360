// Which model endpoint a task talks to, and which API key goes with it. A task may override its endpoint's base URL
// and model; a configured endpoint's key goes only to that endpoint's own base URL, so a task pointed at another
// server gets no key, or the key the worker config names for that URL (`modelKeys`). The operator can turn overrides
// off or restrict them to an allow-list. Pure: the one rule every resolution path (decide, act's page sub-call) uses.
import type { ModelEndpoint } from './client';

/** The worker config's `modelOverrides`. Absent: overrides allowed, to any URL. */
export interface ModelOverridePolicy {
  /** False refuses every override that changes a task's base URL or model. Default true. */
  allow?: boolean;
  /** When set, an overridden base URL must be one of these (exact, or under one of them as a path prefix). */
  allowedBaseUrls?: readonly string[];
}

export interface EndpointChoice {
  /** The configured endpoint's name (the task's `model.endpoint`). */
  name: string;
  /** The task's overrides (`model.baseUrl`, `model.model`). */
  baseUrl?: string | undefined;
  model?: string | undefined;
}

/** What a model-endpoint resolver is asked: a named endpoint, for one task. */
export interface ModelEndpointRequest {
  /** The endpoint's name: the task's `model.endpoint` ("default" unless it names another), or the desktop's vision or
   * grounding endpoint. */
  name: string;
  /** The task asking (its id), so a resolver may choose per task, tenant or environment. */
  taskId: string;
  /** 'browser', 'desktop', or the name of an environment the application brought. */
  environment: string;
}

/**
 * An embedding application's source of model endpoints, in place of the config's `models`: the endpoint (base URL,
 * model, key) for a name, or undefined to use the config's entry. Called at each model call, so a rotated key is
 * picked up. What it returns is a configured endpoint like any other: its key goes only to its own base URL; a task
 * that overrides the base URL gets no key (or `modelKeys`' one), and `modelOverrides` still decides what tasks may
 * override.
 */
export type ModelEndpointResolver = (request: ModelEndpointRequest) => ModelEndpoint | undefined;

export interface EndpointRules {
  /** The worker config's `models` (configured endpoints by name). */
  models: Readonly<Record<string, ModelEndpoint | undefined>>;
  overrides?: ModelOverridePolicy | undefined;
  /** Keys an overridden base URL may receive, by base URL (the worker config's `modelKeys`). */
  keys?: Readonly<Record<string, string>> | undefined;
}

/** Refused: the task overrides its model endpoint in a way the worker config does not allow. Not retryable. */
export class ModelOverrideRefused extends Error {
  constructor(
    message: string,
    /** The config setting that refused it, e.g. `modelOverrides.allowedBaseUrls`. */
    readonly setting: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** No endpoint at all: neither the config nor the task gives a base URL and a model. Not retryable. */
export class ModelEndpointMissing extends Error {
  constructor(readonly endpointName: string) {
    super(
      `no model endpoint '${endpointName}' configured: set CUA_MODEL_BASE_URL and CUA_MODEL, the worker config's models.${endpointName}, or pass --model-base-url/--model`,
    );
    this.name = new.target.name;
  }
}

interface NormalizedUrl {
  /** scheme://host[:port] (lower case, default port dropped), with any user info kept so it never matches without. */
  origin: string;
  /** The path without trailing slashes ('' for the root). */
  path: string;
  /** Query and fragment as written ('' when none). */
  rest: string;
}

function parse(url: string): NormalizedUrl | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const user = u.username || u.password ? `${u.username}:${u.password}@` : '';
  return {
    origin: `${u.protocol}//${user}${u.host}`,
    path: u.pathname.replace(/\/+$/, ''),
    rest: `${u.search}${u.hash}`,
  };
}

/**
 * A base URL compared the way this rule compares them: scheme, host, port and path, without trailing slashes
 * (`http://X:80/v1/` → `http://x/v1`). Query, fragment and user info are kept, so they never match a URL without them.
 * A string that is no URL is returned unchanged.
 */
export function normalizeBaseUrl(url: string): string {
  const p = parse(url);
  return p ? `${p.origin}${p.path}${p.rest}` : url;
}

/** True when both are the same base URL (see normalizeBaseUrl). */
export function sameBaseUrl(a: string, b: string): boolean {
  return normalizeBaseUrl(a) === normalizeBaseUrl(b);
}

/**
 * True when `url` is `allowed` or lies under it: same scheme, host and port, and a path equal to the allowed path or
 * below it at a `/` (`http://x/v1` covers `http://x/v1/chat`, not `http://x/v12` or `http://x.evil/v1`).
 */
export function baseUrlAllowed(url: string, allowed: string): boolean {
  const u = parse(url);
  const a = parse(allowed);
  if (!u || !a || u.origin !== a.origin) return false;
  if (a.rest !== '') return u.path === a.path && u.rest === a.rest;
  return u.path === a.path || u.path.startsWith(`${a.path}/`);
}

/** How a URL is named in a refusal: without user info, query or fragment. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url;
  }
}

/** The key the config names for an overridden base URL (`modelKeys`, compared normalised), if any. */
function keyFor(url: string, keys: Readonly<Record<string, string>>): string | undefined {
  const wanted = normalizeBaseUrl(url);
  for (const [keyUrl, key] of Object.entries(keys)) if (normalizeBaseUrl(keyUrl) === wanted) return key;
  return undefined;
}

/**
 * The endpoint a task's model calls go to. Throws ModelOverrideRefused (an override the config does not allow) or
 * ModelEndpointMissing (no base URL or model anywhere). The configured endpoint's `apiKey` is kept only when the
 * base URL is the configured one; any other base URL gets `keys[url]` or no key.
 */
export function resolveModelEndpoint(choice: EndpointChoice, rules: EndpointRules): ModelEndpoint {
  const configured = rules.models[choice.name];
  const policy = rules.overrides ?? {};
  const overridesUrl = choice.baseUrl !== undefined && !(configured && sameBaseUrl(choice.baseUrl, configured.baseUrl));
  const overridesModel = choice.model !== undefined && choice.model !== configured?.model;
  const refuse = (what: string, setting: string, detail = setting): never => {
    throw new ModelOverrideRefused(
      `task overrides ${what}, which the worker does not allow (config ${detail})`,
      setting,
    );
  };
  if (policy.allow === false && (overridesUrl || overridesModel)) {
    const what = overridesUrl ? `the model base URL to ${shown(choice.baseUrl ?? '')}` : `the model to ${choice.model}`;
    refuse(what, 'modelOverrides.allow', 'modelOverrides.allow is false');
  }
  if (overridesUrl && policy.allowedBaseUrls) {
    const url = choice.baseUrl ?? '';
    if (!policy.allowedBaseUrls.some((allowed) => baseUrlAllowed(url, allowed))) {
      refuse(`the model base URL to ${shown(url)}`, 'modelOverrides.allowedBaseUrls');
    }
  }
  const baseUrl = overridesUrl ? choice.baseUrl : configured?.baseUrl;
  const model = choice.model ?? configured?.model;
  if (!baseUrl || !model) throw new ModelEndpointMissing(choice.name);
  const apiKey = overridesUrl ? keyFor(baseUrl, rules.keys ?? {}) : configured?.apiKey;
  const endpoint: ModelEndpoint = { baseUrl, model };
  if (apiKey) endpoint.apiKey = apiKey;
  if (configured?.temperature !== undefined) endpoint.temperature = configured.temperature;
  if (configured?.maxTokens !== undefined) endpoint.maxTokens = configured.maxTokens;
  if (configured?.timeoutSeconds !== undefined) endpoint.timeoutSeconds = configured.timeoutSeconds;
  // The configured endpoint's price; a task that sends its calls to another base URL is not priced (unknown).
  if (configured?.price !== undefined && !overridesUrl) endpoint.price = configured.price;
  return endpoint;
}
