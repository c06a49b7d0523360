// The one interface every environment's driver implements: what the session activities (session.ts) and the decide
// activity (decide.ts) do in an environment, behind the choice of which one (table.ts). The workflow never knows
// which driver it talks to.
import type { TaskInput } from '../../src/contract/task';
import type {
  ActInput,
  ActResult,
  DecideResult,
  HoldSessionInput,
  HoldSessionResult,
  ObserveInput,
  ObserveResult,
  OpenSessionInput,
  OpenSessionResult,
  ReclaimSessionResult,
  ReleaseInput,
  ReplayStepInput,
  ReplayStepResult,
  StartTakeoverResult,
  EndTakeoverResult,
  StepRef,
  TakeoverRef,
} from '../../src/contract/activities';
import type { ActivityDeps, RunFiles } from '../support';

/** What a driver's open gives back; the session router adds the worker's store wait. */
export type OpenedSession = Omit<OpenSessionResult, 'storeWaitMinutes'>;

export interface EnvironmentDriver {
  /**
   * How this driver's session ids begin: observe, act and release find their driver by it (table.ts). The browser's
   * is '' (its ids are the pool's UUIDs): it takes every id no longer prefix claims.
   */
  readonly sessionPrefix: string;
  /** Opens a session for the run in this worker (a retry, a re-open after a lost worker or a pause, included). */
  open(req: OpenSessionInput, input: TaskInput): Promise<OpenedSession>;
  /** The step's pre observation (recorded once: a retry answers from the record). */
  observe(req: ObserveInput): Promise<ObserveResult>;
  /** Carries out one call of the step's decision in the session and records it (exactly once). */
  act(req: ActInput): Promise<ActResult>;
  /** Closes the session, with what this environment keeps for a later one (`save`) or records at the end. */
  release(req: ReleaseInput): Promise<void>;
  /**
   * Optional: keeps the session alive while its task waits for a reply, after saving what release with `save` would.
   * A driver without it has its session released (saved) instead.
   */
  hold?(req: HoldSessionInput): Promise<HoldSessionResult>;
  /** With `hold`: the reply came; whether the held session is still alive (a driver without it: never). */
  reclaim?(req: HoldSessionInput): Promise<ReclaimSessionResult>;
  /**
   * Optional: lends the session to a person (a takeover lease on this worker's endpoint). A driver without it cannot
   * be taken over (startTakeover fails, not retried).
   */
  takeover?(req: TakeoverRef): Promise<StartTakeoverResult>;
  /** With `takeover`: the person hands the session back; what they did. */
  endTakeover?(req: TakeoverRef): Promise<EndTakeoverResult>;
  /** Optional: a replay's step (input.replayOf) checked against the live page; a driver without it cannot replay. */
  replayStep?(req: ReplayStepInput, input: TaskInput): Promise<ReplayStepResult>;
  /** Optional: a cached task's step (input.cache) from its action cache; a driver without it keeps no cache. */
  cacheStep?(req: ReplayStepInput, input: TaskInput): Promise<ReplayStepResult>;
  /** The decide activity's part: the step's model request(s), built for this environment, parsed and recorded. */
  decide(req: StepRef, input: TaskInput): Promise<DecideResult>;
}

/**
 * What endTakeover answers for a lease this worker does not hold (the worker that granted it was lost, and the
 * session re-opened here): no inputs known, and the session as it is now (`shown`) for both before and after.
 */
export function leaseLost(shown: { url: string; title: string }): EndTakeoverResult {
  const now = new Date().toISOString();
  const { url, title } = shown;
  return {
    startedAt: now,
    endedAt: now,
    inputs: 0,
    urlBefore: url,
    urlAfter: url,
    titleBefore: title,
    titleAfter: title,
    leaseLost: true,
  };
}

/** A driver, built once per activities object from the worker's dependencies and run files. */
export type DriverFactory = (deps: ActivityDeps, files: RunFiles) => EnvironmentDriver;
