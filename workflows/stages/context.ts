// What every stage of the task loop shares: the task's input, its carried state, its live state (status, handlers,
// steps table), the activity proxies, the step's clock, and the patches decided once per workflow run. Each stage
// (sessions, decisions, questions, limits, controls, start, ending) is a class built on this context; agent-loop.ts
// wires them. Deterministic: only @temporalio/workflow and pure modules.
import { patched, workflowInfo } from '@temporalio/workflow';
import { browserOpenQueue } from '../../src/contract/queues';
import type { TaskInput } from '../../src/contract/task';
import { DEFAULT_STORE_FAULT_WAIT_MINUTES } from '../../src/trajectory/store-wait';
import { activityProxies } from '../activity-proxies';
import type { ActivityProxies } from '../activity-proxies';
import { StepClock } from '../metrics';
import { LIMITS_PATCH } from '../task-limits';
import type { CarriedState, AgentTask } from '../task-state';

/**
 * Patch id: a browser step's last act also takes the next step's pre observation (one round trip fewer per step),
 * and a worker lost after that act recorded its post observation no longer makes the step be decided again.
 */
export const FOLD_OBSERVE_PATCH = 'fold-observe-into-act';

/**
 * Patch id: a browser task's session opens go to browserOpenQueue, which a worker polls only while its pool has a free
 * slot (instead of the shared queue, where a worker with a full pool took opens and made them wait in its own line
 * while another worker had a free slot). The id's "room" is this slot (a patch id is recorded in histories: kept).
 */
export const OPEN_QUEUE_PATCH = 'open-browser-on-room-queue';

/**
 * Patch id: a question keeps the task's session alive on its worker (holdSession: the page saved first) instead of
 * releasing it, and a reply takes it back (reclaimSession) when it is still alive, going on on the same live page; a
 * session the worker closed meanwhile (or a lost worker) is re-opened and restored as before.
 */
export const HOLD_SESSION_PATCH = 'hold-session-while-waiting';

/** The patches a run decides once, at its start (histories recorded before a patch replay without it). */
export interface Patches {
  /** A browser step's last act observes for the next step (FOLD_OBSERVE_PATCH). */
  readonly fold: boolean;
  /** Where session opens are scheduled (OPEN_QUEUE_PATCH); undefined: the workflow's queue. */
  readonly openQueue: string | undefined;
  /** A question holds the session instead of releasing it (HOLD_SESSION_PATCH). */
  readonly holdOnAsk: boolean;
  /** Budgets ask, loops are detected, CuaCost is published (LIMITS_PATCH). */
  readonly limitsOn: boolean;
}

export interface TaskContext {
  readonly input: TaskInput;
  /** What crosses continue-as-new. */
  readonly state: CarriedState;
  /** Status, question, reply, controls, steps table: what queries and handlers see. */
  readonly task: AgentTask;
  readonly proxies: ActivityProxies;
  /** This run continues an earlier one as new (its state is the task's carried state). */
  readonly continued: boolean;
  readonly patches: Patches;
  /** The desktop records every call of a step in act, stops included; the browser's decide records its stops. */
  readonly actOnStops: boolean;
  /** The step's clock for its latency metric and the budget's working time (a new one each step). */
  clock: StepClock;
}

export function taskContext(task: AgentTask, continued: boolean): TaskContext {
  const input = task.input;
  const state = task.carried;
  const browser = input.environment === 'browser';
  // The order of the patch calls is the order recorded histories have.
  const fold = browser && patched(FOLD_OBSERVE_PATCH);
  const openQueue = browser && patched(OPEN_QUEUE_PATCH) ? browserOpenQueue(workflowInfo().taskQueue) : undefined;
  const holdOnAsk = patched(HOLD_SESSION_PATCH);
  const limitsOn = patched(LIMITS_PATCH);
  task.costAttribute = limitsOn;
  return {
    input,
    state,
    task,
    // How long activities may wait for an unusable run store: what the session's worker said (the default until
    // then, and in histories from before it said so). Sizes timeouts only: a replay takes results from the history.
    proxies: activityProxies(input.timing, () => state.storeWaitMinutes ?? DEFAULT_STORE_FAULT_WAIT_MINUTES),
    continued,
    patches: { fold, openQueue, holdOnAsk, limitsOn },
    actOnStops: input.environment === 'desktop',
    clock: new StepClock(),
  };
}
