// Following a task as a stream of events: each new step summary, each change of status (a question, a reply taken,
// queued for a session), and finally how it ended. Polls the workflow's `steps` and `status` queries, which is all a
// client can read without the run folder; the handle targets the workflow id, so continue-as-new is followed.
import { sleep } from '../src/common/sleep';
import type { WorkflowHandle } from '@temporalio/client';
import { statusQuery } from '../workflows/messages';
import type { StepSummary, TaskResult, TaskStatus } from '../src/contract/task';
import { closedOutcome, describeTask, isOpen, querySteps, waitsOf } from './tasks';
import type { TaskView } from './tasks';

export type WatchEvent =
  | {
      type: 'step';
      step: StepSummary;
      /** An earlier decision of this step was superseded (its worker was lost mid-step); this one counts. */
      redecided: boolean;
    }
  | {
      type: 'status';
      status: TaskStatus;
      /** Every worker's sessions were in use at the task's last attempt to open one; it starts when one frees up. */
      waitingForSession: TaskView['waitingForSession'];
      /** The step's model call is slow or being retried: which try, how long so far, the last error. */
      waitingForModel: TaskView['waitingForModel'];
      /** An activity waits for the run store (full, read-only, unreachable): since when, until when, the last error. */
      waitingForStore: TaskView['waitingForStore'];
    }
  | {
      type: 'end';
      /** Null only when the workflow ended without a task result (terminated, timed out). */
      result: TaskResult | null;
      /** The failure's message when the workflow failed or was cancelled. */
      failure: string | null;
    };

export interface WatchOptions {
  /** Milliseconds between polls (default 500). */
  pollMs?: number;
  /** Stops the watch (the iterator then ends without an `end` event). */
  signal?: AbortSignal;
}

/** A key per summary row: a desktop step has a row per tool call, a lost worker's step one row per generation. */
function rowKeys(steps: readonly StepSummary[]): string[] {
  const seen = new Map<string, number>();
  return steps.map((s) => {
    const base = `${s.step}/${s.generation ?? 0}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return `${base}/${n}`;
  });
}

/**
 * What makes a status worth an event: the run status, the question, queued or not, a model wait and its try, a store
 * wait and its kind (steps have their own events).
 */
function statusKey(
  s: TaskStatus,
  waits: Pick<TaskView, 'waitingForSession' | 'waitingForModel' | 'waitingForStore'>,
): string {
  const { waitingForSession: session, waitingForModel: model, waitingForStore: store } = waits;
  const signin = s.signinWait ? `${s.signinWait.name}:${s.signinWait.heldBy}` : null;
  return JSON.stringify([
    s.status,
    s.question?.id ?? null,
    !!session,
    s.endReason,
    model?.attempt ?? 0,
    store?.kind,
    signin,
  ]);
}

/**
 * Yields the task's steps and status changes as they happen and ends with one `end` event once the task has ended.
 * Steps already taken when the watch starts are yielded first. A query that fails for a moment (no worker yet, a
 * worker restarting) is tried again at the next poll.
 */
export async function* watchTask(handle: WorkflowHandle, opts: WatchOptions = {}): AsyncGenerator<WatchEvent> {
  const pollMs = opts.pollMs ?? 500;
  const yielded = new Set<string>();
  let lastStatus: string | undefined;
  function* newSteps(steps: readonly StepSummary[]): Generator<WatchEvent> {
    const keys = rowKeys(steps);
    for (const [i, s] of steps.entries()) {
      const key = keys[i] ?? '';
      if (yielded.has(key)) continue;
      yielded.add(key);
      const redecided = steps.some(
        (o) => o.step === s.step && o.superseded && (o.generation ?? 0) < (s.generation ?? 0),
      );
      yield { type: 'step', step: s, redecided };
    }
  }
  while (!opts.signal?.aborted) {
    const desc = await describeTask(handle);
    if (!isOpen(desc)) {
      yield* newSteps(await querySteps(handle).catch(() => []));
      yield { type: 'end', ...(await closedOutcome(handle)) };
      return;
    }
    const status = await handle.query(statusQuery).catch(() => null);
    yield* newSteps(await querySteps(handle).catch(() => []));
    if (status) {
      const waits = await waitsOf(desc, status, handle.client.options.loadedDataConverter);
      const key = statusKey(status, waits);
      if (key !== lastStatus) {
        lastStatus = key;
        yield { type: 'status', status, ...waits };
      }
    }
    await sleep(pollMs, opts.signal);
  }
}
