// What the activities share: the run folder of each task (a cached writer, the task's input), heartbeats (with the
// details a client reads: in line for a session, waiting for the run store), the model endpoint of a task (with the
// key policy), and failures Temporal must not retry.
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { familyOf, isFamilyName } from '../src/families/registry';
import { resolveSecrets } from '../src/agent/secrets';
import type { SecretResolution } from '../src/agent/secrets';
import type { BrowserEnvironment } from '../src/browser/environment';
import { focusedFrameUrl } from '../src/browser/focused-frame';
import type { BrowserPool } from '../src/browser/pool';
import type { DesktopPool } from '../src/desktop';
import type { CustomEnvironment, CustomSessions } from '../src/environments/plugin';
import { smartResize } from '../src/image/smart-resize';
import { ModelClient, ModelRequestError } from '../src/model/client';
import type { ChatMessage, CompleteOptions, NativeCall } from '../src/model/client';
import { ModelEndpointMissing, ModelOverrideRefused, resolveModelEndpoint } from '../src/model/endpoint-policy';
import { TrajectoryWriter } from '../src/trajectory/writer';
import { RunStoreUnavailableError } from '../src/trajectory/errors';
import { LocalRunStore } from '../src/trajectory/store';
import type { RunStore } from '../src/trajectory/store';
import type { StoreWaitHooks } from '../src/trajectory/store-faults';
import { STORE_WAIT_DETAIL } from '../src/trajectory/store-wait';
import type { StoreWait } from '../src/trajectory/store-wait';
import type { Config } from '../src/runtime/config';
import type { TaskInput } from '../src/contract/task';
import type { ObserveResult, StepRef } from '../src/contract/activities';
import { eventId } from '../src/trajectory/ids';
import { sleep } from '../src/common/sleep';
import { narrow } from '../src/contract/url-policy';
import { workerUrlPolicy } from '../src/runtime/control-plane';
import type { UrlPolicy } from '../src/contract/url-policy';

export interface ActivityDeps {
  config: Config;
  pool: BrowserPool;
  /** The desktops this worker can open (absent: no desktop support here; desktop tasks fail to open). */
  desktops?: DesktopPool;
  /** Environments the application brought (src/environments/plugin.ts), by name; tasks name them in `environment`. */
  environments?: ReadonlyMap<string, CustomEnvironment>;
  /** Where their open sessions are held (the worker closes them when it stops); default: per activities object. */
  customSessions?: CustomSessions;
  /** This worker process's own task queue (session-pinned activities go there). */
  sessionQueue: string;
  log?: (line: string) => void;
  /**
   * Test hook (fault injection): awaited at named points of a step, e.g. to hold an activity there while a test
   * kills the worker. `observe` (before the screenshot), `decide` (before the model call), `act` (after the action
   * ran in the browser, before it is recorded).
   */
  checkpoint?: (point: 'observe' | 'decide' | 'act', req: StepRef) => Promise<void>;
}

/** The running activity's context, or undefined outside an activity (tests, benchmarks). */
function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Per running activity: when it started, the details it heartbeats, and the run-store wait under way (if any). */
interface Beat {
  startedAt: number;
  details: unknown;
  storeWait: StoreWait | null;
  /** A withHeartbeat timer runs (asActivity's, around the whole activity): an inner one would only beat twice. */
  ticking: boolean;
}
const beats = new WeakMap<Context, Beat>();

function beatOf(ctx: Context): Beat {
  let beat = beats.get(ctx);
  if (!beat) {
    beat = { startedAt: Date.now(), details: undefined, storeWait: null, ticking: false };
    beats.set(ctx, beat);
  }
  return beat;
}

/** One heartbeat with the activity's current details: a run-store wait while there is one, else its own. */
function beat(ctx: Context): void {
  const b = beatOf(ctx);
  ctx.heartbeat(b.storeWait ? { [STORE_WAIT_DETAIL]: b.storeWait } : b.details);
}

/**
 * Calls heartbeat every second while `work` runs, so a slow page or model is not taken for a dead worker. The first
 * call comes after a second, not at once: most activities (an act, an observation) end sooner and send none. The
 * SDK sends at most one per 0.8 × the heartbeat timeout; calling more often keeps one ready at each of its ticks, so
 * a busy event loop does not delay what the server sees.
 */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const ctx = currentContext();
  if (!ctx) return work();
  const b = beatOf(ctx);
  if (b.ticking) return work(); // already beating every second
  b.ticking = true;
  const timer = setInterval(() => beat(ctx), 1000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    b.ticking = false;
  }
}

/**
 * The shell every activity runs in: it heartbeats all along (so any activity may have a heartbeat timeout, and a
 * wait for the run store is no silence), and a run store that could not be used is final: it already waited out
 * store.faultWaitMinutes (or was refused: no bucket, credentials), so Temporal must not retry it into another wait.
 */
export function asActivity<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    const ctx = currentContext();
    if (ctx) beatOf(ctx).startedAt = Date.now();
    try {
      return await withHeartbeat(() => fn(...args));
    } catch (err) {
      if (err instanceof RunStoreUnavailableError) nonRetryable(err);
      throw err;
    }
  };
}

/** Time an activity keeps back from a store wait, to fail with the store's reason before its own timeout. */
const STORE_WAIT_MARGIN_MS = 20_000;
const storeWaitOff = new AsyncLocalStorage<boolean>();

/** Runs `work` with store operations tried once, not waited for (recording the end of a task the store ended). */
export function withoutStoreWait<T>(work: () => Promise<T>): Promise<T> {
  return storeWaitOff.run(true, work);
}

/**
 * How the worker's run store waits inside an activity (src/trajectory/store-faults.ts): no longer than the activity
 * has left before its start-to-close timeout, stopped by its cancellation, and heartbeating the wait, which the
 * client's status() and `cua status` read from the pending activity (and the Temporal UI shows as its details).
 */
export const storeWaitHooks: StoreWaitHooks = {
  limitMs(configured) {
    if (storeWaitOff.getStore()) return 0;
    const ctx = currentContext();
    if (!ctx) return configured;
    const timeout = ctx.info.startToCloseTimeoutMs;
    if (!timeout) return configured;
    const left = beatOf(ctx).startedAt + timeout - Date.now() - STORE_WAIT_MARGIN_MS;
    return Math.max(0, Math.min(configured, left));
  },
  signal: () => activitySignal(),
  onWait(wait) {
    const ctx = currentContext();
    if (!ctx) return;
    beatOf(ctx).storeWait = wait;
    beat(ctx);
  },
};

/** A debug line in the worker's log (the Temporal activity logger; shown with CUA_LOG_LEVEL=DEBUG). */
export function debugLog(message: string, attrs: Record<string, unknown> = {}): void {
  currentContext()?.log.debug(message, attrs);
}

export function nonRetryable(err: unknown, type?: string): never {
  const e = err instanceof Error ? err : new Error(String(err));
  throw ApplicationFailure.create({ message: e.message, type: type ?? e.name, nonRetryable: true, cause: e });
}

/** This activity's attempt number (1 for the first; 1 outside an activity). */
export function activityAttempt(): number {
  return currentContext()?.info.attempt ?? 1;
}

/** How long the activity waited to start: from its first schedule (retries included) to now (0 outside one). */
export function activityWaitedMs(): number {
  const info = currentContext()?.info;
  return info ? Date.now() - info.scheduledTimestampMs : 0;
}

/**
 * Records heartbeat details the server shows on the pending activity (a client reads them, e.g. "in line"); the
 * periodic heartbeats repeat them.
 */
export function heartbeatDetails(details: unknown): void {
  const ctx = currentContext();
  if (!ctx) return;
  beatOf(ctx).details = details;
  beat(ctx);
}

/** Aborted when this activity is cancelled (its workflow, a timeout, the worker shutting down); undefined outside one. */
export function activitySignal(): AbortSignal | undefined {
  return currentContext()?.cancellationSignal;
}

/**
 * activitySignal, and also aborted `marginMs` before the activity's start-to-close timeout (counted from this call, at
 * its start): work that retries by itself stops while there is time to clean up, instead of being timed out by the
 * server (which this worker hears of only through heartbeats) and going on unseen.
 */
export function activityDeadlineSignal(marginMs: number): AbortSignal | undefined {
  const ctx = currentContext();
  if (!ctx) return undefined;
  const left = ctx.info.startToCloseTimeoutMs - marginMs;
  return left > 0 ? AbortSignal.any([ctx.cancellationSignal, AbortSignal.timeout(left)]) : ctx.cancellationSignal;
}

/**
 * The run folders this worker touches: one cached writer per run (it reads only what other writers appended), in the
 * configured store (config `store`: the folder under `runsDir` by default, or a shared S3 bucket). `dir` is the run's
 * local folder all the same: what is not in the store yet (browser storage state, downloads, the desktop's home
 * directory) stays there.
 */
export class RunFiles {
  private readonly writers = new Map<string, Promise<TrajectoryWriter>>();

  constructor(
    readonly runsDir: string,
    readonly store: RunStore = new LocalRunStore(runsDir),
  ) {}

  dir(taskId: string): string {
    return path.join(this.runsDir, taskId);
  }

  /** A file of the run from the store (e.g. a screenshot, by its run-relative path), or undefined when absent. */
  readBytes(taskId: string, file: string): Promise<Buffer | undefined> {
    return this.store.readBytes(`${taskId}/${file}`);
  }

  writer(taskId: string): Promise<TrajectoryWriter> {
    let w = this.writers.get(taskId);
    if (!w) {
      w = TrajectoryWriter.open(this.store, taskId);
      w.catch(() => this.writers.delete(taskId));
      this.writers.set(taskId, w);
      if (this.writers.size > 256) this.writers.delete(this.writers.keys().next().value as string);
    }
    return w;
  }

  adopt(taskId: string, writer: TrajectoryWriter): void {
    this.writers.set(taskId, Promise.resolve(writer));
  }

  forget(taskId: string): void {
    this.writers.delete(taskId);
  }

  /** The task's validated input, kept in run_state.json by startRun. */
  async input(taskId: string): Promise<TaskInput> {
    const state = await (await this.writer(taskId)).readRunState();
    return state.input as TaskInput;
  }
}

/** The URL policy a task's session runs under: the worker's (its control plane denied), narrowed by the task's own (never widened). */
export function taskUrlPolicy(config: Config, input: TaskInput): UrlPolicy {
  return narrow(workerUrlPolicy(config), input.urlPolicy);
}

/** A step's pre observation as recorded (a retried observe answers from it), or undefined. */
export async function recordedPre(w: TrajectoryWriter, step: StepRef): Promise<ObserveResult | undefined> {
  const id = eventId({ step: step.step, kind: 'pre', generation: step.generation });
  if (!(await w.hasEvent(id))) return undefined;
  const e = (await w.events()).find((x) => x.id === id);
  if (e?.type !== 'observation' || e.observation_type !== 'environment') return undefined;
  return { url: e.url ?? '', screenshot: e.screenshot_path ?? '', captchaTimedOut: false };
}

/** The task's model family and the size its screenshots are resized to. */
export function screenOf(input: TaskInput) {
  const family = familyOf(input.profile);
  const { width, height } = smartResize(input.viewport.height, input.viewport.width, {
    factor: family.resizeFactor,
    ...(family.maxPixels ? { maxPixels: family.maxPixels } : {}),
  });
  return { family, resized: { width, height } };
}

/**
 * The model endpoint of a task: the worker's configured endpoint with the task's overrides, under the one rule of
 * src/model/endpoint-policy.ts (a configured key goes only to its own base URL; overrides may be refused). Every
 * model call of a task (decide, act's page sub-call) gets its client here. A refusal is a one-line, non-retryable
 * `ModelOverrideRefused`; no endpoint at all a non-retryable `ModelRequestError`.
 */
export function endpointFor(config: Config, input: TaskInput, named?: string): ModelClient {
  // A named endpoint (the desktop's vision or grounding one) is the worker's own: the task's overrides are not for it.
  const choice = named
    ? { name: named }
    : { name: input.model.endpoint, baseUrl: input.model.baseUrl, model: input.model.model };
  try {
    // An embedding application's resolver stands in for `models` (for this name only); the same rule then applies.
    const resolved = config.modelEndpointResolver?.({
      name: choice.name,
      taskId: input.runId,
      environment: input.environment,
    });
    const models = resolved ? { ...config.models, [choice.name]: resolved } : config.models;
    const endpoint = resolveModelEndpoint(choice, { models, overrides: config.modelOverrides, keys: config.modelKeys });
    // No price configured: the endpoint's family (a named one's own, else the task's) may know its provider's list
    // price for the model.
    const familyName = endpointFamily(config, input, named);
    const family = endpoint.price || !familyName || !isFamilyName(familyName) ? undefined : familyOf(familyName);
    const listed = family?.priceOf?.(endpoint.model);
    return new ModelClient(listed ? { ...endpoint, price: listed } : endpoint);
  } catch (err) {
    if (err instanceof ModelOverrideRefused) nonRetryable(err);
    if (err instanceof ModelEndpointMissing) nonRetryable(err, 'ModelRequestError');
    throw err;
  }
}

/**
 * The family an endpoint's model speaks: a named endpoint's declared one (undefined: none declared); for the task's
 * endpoint, the one it declares (a browser task's family must match it), else, and always for a base URL the task
 * gives itself, the task's.
 */
export function endpointFamily(config: Config, input: TaskInput, named?: string): string | undefined {
  if (named) return config.models[named]?.profile;
  return input.model.baseUrl ? input.profile : (config.models[input.model.endpoint]?.profile ?? input.profile);
}

/**
 * The act activity's secret resolver: `{{secret:NAME}}` placeholders of a `type` text become the worker's values
 * (config `secrets`; `env` ones from this process's environment), only on a page (or focused frame) whose host the
 * secret lists; `{{totp:NAME}}` becomes the current one-time code (waiting for the next one in a code's last 3 seconds).
 * Nothing here logs or returns a value except as the text to type.
 */
export function secretResolver(
  config: Config,
  env: BrowserEnvironment | { url(): string },
  clock: { now(): number; sleep(ms: number): Promise<void> } = { now: Date.now, sleep },
): (text: string) => Promise<SecretResolution> {
  // A browser: the frame the keyboard types into; an application's own environment: the location it reports.
  const pageUrl = async () => ('page' in env ? await focusedFrameUrl(env.page) : env.url());
  return async (text) => {
    const now = clock.now();
    const resolved = resolveSecrets(text, {
      secrets: config.secrets ?? {},
      env: process.env,
      pageUrl: await pageUrl(),
      now,
    });
    // A one-time code in its period's last seconds: the next one was computed; type it once its period begins.
    if (resolved.ok && resolved.waitMs > 0) await clock.sleep(resolved.waitMs);
    // From now on nothing leaves this browser context with a typed value for a host the secret is not bound to.
    if (resolved.ok && 'egress' in env) await env.egress.arm(resolved.typed);
    return resolved;
  };
}

/** One model call with heartbeats; a request the endpoint refused (400-class) is not retried. */
/** A native family's call (its provider's own API, through the endpoint's client): heartbeating, cancellable. */
export async function callNative(client: ModelClient, call: NativeCall) {
  try {
    return await withHeartbeat(() => client.completeNative(call, { signal: activitySignal() }));
  } catch (err) {
    if (err instanceof ModelRequestError) nonRetryable(err);
    throw err;
  }
}

export async function callModel(
  client: ModelClient,
  messages: ChatMessage[],
  headers?: Record<string, string>,
  extra: Pick<CompleteOptions, 'tools' | 'toolChoice'> = {},
) {
  try {
    return await withHeartbeat(() => client.complete(messages, { ...extra, headers, signal: activitySignal() }));
  } catch (err) {
    if (err instanceof ModelRequestError) nonRetryable(err);
    throw err;
  }
}
