// Where a step's action comes from, behind one interface: the model; a replay's recording, while the live page still
// matches it (replay-decisions.ts); a cached task's cache (cache-decisions.ts). The last two fall back to the model.
// Deterministic.
import { log, setCurrentDetails } from '@temporalio/workflow';
import type { DecideCall, ObserveResult, SessionRef } from '../../src/contract/activities';
import { countInvalidOutput } from '../metrics';
import { addSpent } from '../task-limits';
import type { TaskContext } from './context';

/** Where this step's action comes from. */
export interface DecisionSource {
  /** The step's calls; null when the model's output was no valid action (counted; the model reads the error). */
  next(session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null>;
  /** After the step's calls are carried out: what the source keeps of the decision (the cache keeps it). */
  acted(): Promise<void>;
  /** The recorded reply to this step's question (a replay with the recorded replies), taken once. */
  takeRecordedReply(): string | null;
  /** The error text of the last model output that was no valid action (for the stops). */
  readonly lastInvalidOutput: string;
}

/** The model decides every step. */
export class ModelDecisions implements DecisionSource {
  lastInvalidOutput = '';

  constructor(private readonly ctx: TaskContext) {}

  next(_session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null> {
    return this.decide(obs);
  }

  async acted(): Promise<void> {}

  takeRecordedReply(): string | null {
    return null;
  }

  /** The model's calls for the step; null when its output was no valid action (counted; the model reads the error). */
  async decide(obs: ObserveResult): Promise<DecideCall[] | null> {
    const { state, task, input, proxies } = this.ctx;
    const ref = { runId: input.runId, step: state.step, generation: state.generation };
    // The Temporal UI's Current Details say so while the model is deciding (and, when it is slow or failing, for how
    // long); the tries and the last error are on the pending decide activity. Metadata only: replay is unchanged.
    task.modelCallSince = new Date().toISOString();
    setCurrentDetails(
      `**Step ${state.step}: waiting for the model** since ${task.modelCallSince.slice(11, 19)} UTC\n\nIts tries and the last try's error: Pending Activities (decide).`,
    );
    const decision = await proxies.model(`step ${state.step} · decide`).decide(ref);
    addSpent(state, decision.usage);
    task.modelCallSince = null;
    setCurrentDetails('');
    if (decision.kind === 'invalid') {
      // Not a failure: the error was recorded as the step's observation and the model reads it next step.
      const row = task.record(decision, obs.url);
      state.invalidReplies = (state.invalidReplies ?? 0) + 1;
      countInvalidOutput(input.environment);
      row.textObservation = (decision.text ?? '').slice(0, 300);
      log.warn('invalid model output', { step: state.step, inARow: state.invalidReplies, error: decision.text });
      this.lastInvalidOutput = decision.text ?? '';
      return null;
    }
    state.invalidReplies = 0;
    return decision.calls ?? [decision];
  }
}

/** A source that takes what it can from elsewhere (a recording, a cache) and asks the model for the rest. */
export abstract class ModelFallback implements DecisionSource {
  protected readonly model: ModelDecisions;

  constructor(protected readonly ctx: TaskContext) {
    this.model = new ModelDecisions(ctx);
  }

  get lastInvalidOutput(): string {
    return this.model.lastInvalidOutput;
  }

  abstract next(session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null>;

  async acted(): Promise<void> {}

  takeRecordedReply(): string | null {
    return null;
  }
}
