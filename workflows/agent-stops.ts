// When the task loop stops by itself, in one table: the model terminated with an answer, a question got no reply in
// time, the user stopped it at a budget or a loop, too many model outputs in a row were no valid action, or the step budget is used up. The loop checks the
// table before every step; the first entry that holds ends the task. Cancellation and failures are not checks: they
// arrive as errors, and the loop ends the task on them (AgentLoop.endOnError). Pure: no Temporal calls here.
import type { EndReason, TaskState, TaskInput } from '../src/contract/task';
import type { CarriedState } from './task-state';

/**
 * How the last step ended: a terminate call carried out (the model finished the task with its answer), a question
 * left without a reply in time, a budget's or a loop's question replied to with `stop`, or none of these. Never
 * recorded (the loop's own value, not in history, events or memo).
 */
export type StepEnd = 'finished' | 'no_reply' | 'budget' | 'loop' | null;

/** What the stops read. */
export interface LoopFacts {
  readonly input: TaskInput;
  readonly state: CarriedState;
  readonly stepEnd: StepEnd;
  /** The error text of the last model output that was no valid action. */
  readonly lastInvalidOutput: string;
}

export interface Stop {
  /** Whether the loop stops here. */
  when(facts: LoopFacts): boolean;
  status: TaskState;
  endReason: EndReason;
  /** The session is released first (when the task still has one: a question may have released it already). */
  release: boolean;
  /** The task's error, when the stop is a failure. */
  error?(facts: LoopFacts): string;
  /** The reason the run folder records. */
  reason(facts: LoopFacts): string | null;
}

const invalidOutputsError = (f: LoopFacts): string =>
  `${f.state.invalidReplies ?? 0} model outputs in a row were no valid action; the last: ${f.lastInvalidOutput}`;

/** In order: the step's own end before the budget (a last step that finishes completes the task). */
export const STOPS: readonly Stop[] = [
  {
    when: (f) => f.stepEnd === 'finished',
    status: 'complete',
    endReason: 'complete',
    release: true,
    reason: () => null,
  },
  {
    when: (f) => f.stepEnd === 'no_reply',
    status: 'failed',
    endReason: 'ask_timeout',
    // A question released the session (nothing to do then) or holds it (HOLD_SESSION_PATCH): closed now.
    release: true,
    error: (f) => `no reply within ${f.input.askTimeoutSeconds}s`,
    reason: () => 'ask_timeout',
  },
  {
    when: (f) => f.stepEnd === 'budget',
    status: 'failed',
    endReason: 'budget',
    release: true,
    error: () => 'stopped at its budget by the user',
    reason: () => 'budget',
  },
  {
    when: (f) => f.stepEnd === 'loop',
    status: 'failed',
    endReason: 'loop',
    release: true,
    error: () => 'stopped by the user: the agent repeated an action on an unchanged page',
    reason: () => 'loop',
  },
  {
    when: (f) => (f.state.invalidReplies ?? 0) >= f.input.maxInvalidReplies,
    status: 'failed',
    endReason: 'invalid_replies',
    release: true,
    error: invalidOutputsError,
    reason: invalidOutputsError,
  },
  {
    when: (f) => f.state.step >= f.input.maxSteps,
    status: 'max_rounds',
    endReason: 'max_rounds',
    release: true,
    reason: (f) => `step budget of ${f.input.maxSteps} used up`,
  },
];

/** The stop that holds now, if any. */
export function stopOf(facts: LoopFacts): Stop | undefined {
  return STOPS.find((stop) => stop.when(facts));
}
