// The metrics workflow code records (src/common/metrics.ts names them): steps and their latency, the model's invalid
// outputs, refused replies of a person. Through the SDK's workflow meter, which calls out only when the workflow is
// not replaying: a replay (a worker restart, a cache eviction) records nothing again, and recording adds no command
// to the history (no patch needed). A workflow task a dying worker ran but never completed runs again elsewhere, so
// its records may, rarely, count twice. Time is workflow time, so a step's latency leaves out the time its task
// waited for a person.
import { metricMeter } from '@temporalio/workflow';
import { METRICS } from '../src/common/metrics';

// Created at first use: the meter works only inside a workflow's context, not while the bundle loads.
const steps = () => metricMeter.createCounter(METRICS.steps, 'steps', 'Steps taken, by environment and outcome');
const stepDuration = () =>
  metricMeter.createHistogram(
    METRICS.stepDuration,
    'int',
    'ms',
    'Step latency: observe, decide and act (without waiting for a person)',
  );

/** A step's clock: started with the step, paused while the task waits for a person. */
export class StepClock {
  private readonly started = Date.now();
  private waited = 0;

  /** Runs `wait` (a wait for a person) off the clock. */
  async offClock<T>(wait: () => Promise<T>): Promise<T> {
    const since = Date.now();
    try {
      return await wait();
    } finally {
      this.waited += Date.now() - since;
    }
  }

  /** The step's working time so far (ms): since it started, less its waits for a person (budgets count it). */
  working(): number {
    return Math.max(0, Date.now() - this.started - this.waited);
  }

  /** Counts the step and records its latency. */
  done(environment: string, outcome: 'ok' | 'error' | 'cancelled'): void {
    steps().add(1, { environment, outcome });
    stepDuration().record(this.working(), { environment, outcome });
  }
}

export function countInvalidOutput(environment: string): void {
  metricMeter
    .createCounter(
      METRICS.modelInvalidOutputs,
      'replies', // the unit, part of the exported metric's identity: kept
      'Model outputs that were no valid action (told to the model as an error)',
    )
    .add(1, { environment });
}

export function countReplyRefusal(type: string): void {
  metricMeter
    .createCounter(
      METRICS.replyRefusals,
      'replies',
      "A person's replies the task refused (not waiting, stale, invalid)",
    )
    .add(1, { type });
}
