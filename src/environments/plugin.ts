// A third kind of environment, brought by an application that embeds the worker (durable-cua/worker, option
// `environments`): a remote browser service, a VNC machine, an emulator — anything that shows a screen and takes the
// browser agent's actions. A task names it in `environment`; the workflow runs it like the browser (observe, decide,
// act; a question releases it; a lost worker re-opens it elsewhere), the model gets the browser agent's prompt and
// tools, and every step is recorded in the run folder as for the browser (pre/post screenshots, tool outputs).
import type { ActionTarget } from '../actions/target';
import { ENVIRONMENT_NAME } from '../contract/task';

/** What a custom environment's session does: the browser agent's actions (ActionTarget), a screen and a location. */
export interface EnvironmentSession extends ActionTarget {
  /** A PNG of the screen, the size of the task's `viewport` (the model's coordinates are mapped into it). */
  screenshot(): Promise<Buffer>;
  /** Where the session is: a URL, or whatever stands for one (recorded as the observation's `url`). */
  url(): string;
  /** A line of context for the model beside the screenshot (default: `Current URL: <url()>`). */
  pageContext?(): Promise<string>;
  /** Frees the session (idempotent). */
  close(): Promise<void>;
}

export interface EnvironmentOpenRequest {
  /** The task's id (its run folder's name). */
  taskId: string;
  /** @deprecated use taskId (the same id; kept so environments written against `durable-cua/worker` still work). */
  runId: string;
  /** The task's start URL, or, when the session is re-opened (after a question, a lost worker), where it was. */
  url: string | null;
  /** The screen the model sees (the task's `viewport`). */
  screen: { width: number; height: number };
  /** Whether this re-opens the run's session (after a question or a lost worker) rather than starting it. */
  restore: boolean;
  /** Aborted when the activity is cancelled or times out. */
  signal: AbortSignal;
}

/**
 * A kind of environment a worker hosts beside the browser and the desktop. Every worker polling a task queue where
 * tasks name it must host it (a worker without it fails the open of such a task at once, saying so).
 */
export interface CustomEnvironment {
  /** The name tasks give in `environment`: lower-case letters, digits and dashes; not `browser` or `desktop`. */
  readonly name: string;
  /** Opens a session for a run. Throwing retries the open (up to 8 attempts); keep it idempotent per run. */
  open(request: EnvironmentOpenRequest): Promise<EnvironmentSession>;
}

/**
 * Thrown by a session whose screen is gone (a dropped connection, a machine that went away): the agent treats it as
 * a lost session, opens the environment again (`restore: true`) and observes the step anew, as for a lost worker.
 * Any other error from an action becomes text the model reads next step; from `screenshot()` or `pageContext()`
 * (a screen that cannot be shown) it also puts the session in doubt: it is closed and opened again the same way. A
 * step re-opens at most 3 times; then the task ends as an environment failure (`browser`), naming the error.
 */
export class EnvironmentSessionLostError extends Error {
  override name = 'EnvironmentSessionLostError';
}

const BUILT_IN = new Set(['browser', 'desktop']);

/** The environments by name; a bad, built-in or repeated name is a one-line error. */
export function environmentRegistry(
  environments: readonly CustomEnvironment[] = [],
): ReadonlyMap<string, CustomEnvironment> {
  const byName = new Map<string, CustomEnvironment>();
  for (const env of environments) {
    const name = String(env?.name);
    if (!ENVIRONMENT_NAME.test(name)) {
      throw new Error(`environment name '${name}': lower-case letters, digits and dashes, starting with a letter`);
    }
    if (BUILT_IN.has(name)) throw new Error(`environment name '${name}' is built in; give yours another name`);
    if (byName.has(name)) throw new Error(`environment '${name}' is given twice`);
    if (typeof env.open !== 'function') throw new Error(`environment '${name}' has no open() function`);
    byName.set(name, env);
  }
  return byName;
}

/** The sessions of custom environments a worker process holds, by session id (closed together when it stops). */
export class CustomSessions {
  readonly byId = new Map<string, { taskId: string; session: EnvironmentSession }>();

  async closeAll(): Promise<void> {
    const held = [...this.byId.values()];
    this.byId.clear();
    await Promise.all(held.map((h) => h.session.close().catch(() => undefined)));
  }
}
