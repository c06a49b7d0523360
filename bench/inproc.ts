// The agent loop without Temporal: the same activity functions (createActivities) called one after another in a
// plain loop, as the workflow would call them, each inside MockActivityEnvironment so it runs with an activity
// context (heartbeats, cancellation signal) — the same code, browser pool and run folder, minus the orchestration.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities/catalog';
import type { BrowserPool } from '../src/browser/pool';
import type { Config } from '../src/runtime/config';
import type { TaskState, TaskInput } from '../src/contract/task';
import type { ActTimings } from '../src/contract/activities';

/** How long each activity call of a step took (ms). */
export interface ActivityTimes {
  observe: number;
  decide: number;
  act: number;
}

export interface InProcessRun {
  /** performance.now() at the start of each step's observe, plus one entry when the last step ended. */
  stepStarts: number[];
  /** Per step (index step − 1); `act` is 0 for the last (terminate) step. */
  activityMs: ActivityTimes[];
  /** Per step (index step − 1): what its act said of where its time went (none for the last step). */
  actTimings: (ActTimings | undefined)[];
  steps: number;
  status: TaskState;
}

export async function runInProcess(config: Config, pool: BrowserPool, input: TaskInput): Promise<InProcessRun> {
  const acts = createActivities({ config, pool, sessionQueue: 'bench-in-process' });
  // A fresh context per call, as each activity attempt gets one (a shared one collects abort listeners).
  const env = {
    run: <P extends unknown[], R>(fn: (...args: P) => Promise<R>, ...args: P): Promise<R> =>
      new MockActivityEnvironment().run(fn, ...args) as Promise<R>,
  };
  const taskId = input.runId;
  await env.run(acts.startRun, input);
  const { sessionId } = await env.run(acts.openSession, {
    runId: taskId,
    generation: 0,
    restore: false,
    reason: 'start',
    step: 1,
  });
  const stepStarts: number[] = [];
  const activityMs: ActivityTimes[] = [];
  const actTimings: (ActTimings | undefined)[] = [];
  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now();
    const value = await work();
    return [value, performance.now() - t0];
  };
  let step = 0;
  let status: TaskState = 'max_rounds';
  let answer: string | null = null;
  try {
    while (step < input.maxSteps) {
      step += 1;
      stepStarts.push(performance.now());
      const ref = { runId: taskId, step, generation: 0 };
      const [, observe] = await timed(() =>
        env.run(acts.observe, { ...ref, sessionId, captchaWaitMs: input.captcha.waitSeconds * 1000 }),
      );
      const [decision, decide] = await timed(() => env.run(acts.decide, ref));
      const times = { observe, decide, act: 0 };
      activityMs.push(times);
      if (decision.kind !== 'act') {
        // A question ends the plain loop (nobody replies here); the benchmark's long scripts never ask.
        status = decision.kind === 'terminate' ? 'complete' : 'failed';
        answer = decision.text;
        break;
      }
      // As the workflow does: the act observes for the next step, whose observe then finds that observation.
      const next =
        step < input.maxSteps ? { step: step + 1, captchaWaitMs: input.captcha.waitSeconds * 1000 } : undefined;
      const [acted, actMs] = await timed(() =>
        env.run(acts.act, { ...ref, sessionId, action: decision.action, ...(next ? { next } : {}) }),
      );
      times.act = actMs;
      actTimings[step - 1] = acted.timings;
    }
    stepStarts.push(performance.now());
  } finally {
    await env.run(acts.releaseSession, { runId: taskId, sessionId, save: false });
  }
  await env.run(acts.finalize, { runId: taskId, status, answer, reason: null, steps: step });
  return { stepStarts, activityMs, actTimings, steps: step, status };
}
