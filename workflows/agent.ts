// The task workflow's loop: observe → decide → act per step, three stops (terminate, ask, budget), durable waits for
// the user's reply, recovery from a lost worker, continue-as-new, cancellation. The same loop drives every
// environment (browser, desktop): the session activities behind the proxies pick the environment from the task.
// State and handlers live in task-state.ts, the activity proxies and their retry policies in activity-proxies.ts.
// Deterministic: only @temporalio/workflow and pure modules.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  TimeoutFailure,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { DecideCall, ObserveResult, OpenSessionInput, SessionRef } from '../src/contract/activities';
import { decideCaptchaTimeout } from '../src/agent/captcha-policy';
import { autoReplyText } from '../src/agent/reply';
import { endReasonOfFailure, FAILURE_TYPES, isFailureType, isSessionLostType } from '../src/agent/failure-types';
import { browserOpenQueue } from '../src/agent/queues';
import { DEFAULT_STORE_FAULT_WAIT_MINUTES } from '../src/trajectory/store-wait';
import { activityProxies } from './activity-proxies';
import { TaskInputSchema } from '../src/contract/task';
import type { EndReason, ReplyInput, RunStatus, TaskInput, TaskInputArgs, TaskResult } from '../src/contract/task';
import { TaskState } from './task-state';
import type { CarriedState } from './task-state';

export type { CarriedState };

const MAX_SESSION_REOPENS_PER_STEP = 3;

/**
 * Patch id: a browser step's last act also takes the next step's pre observation (one round trip fewer per step),
 * and a worker lost after that act recorded its post observation no longer makes the step be decided again.
 */
export const FOLD_OBSERVE_PATCH = 'fold-observe-into-act';

/**
 * Patch id: a browser task's session opens go to browserOpenQueue, which a worker polls only while its pool has room
 * (instead of the shared queue, where a worker with a full pool took opens and made them wait in its own line while
 * another worker had room).
 */
export const OPEN_QUEUE_PATCH = 'open-browser-on-room-queue';

/** How a step can end the loop. */
type Stop = 'complete' | 'ask_timeout' | 'invalid_replies';

/** A session activity failed in a way that means its worker (or its browser/desktop) is gone. */
function isSessionLost(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  return cause instanceof ApplicationFailure && isSessionLostType(cause.type);
}

/** An activity failed because the run store could not be used (full, unreachable, refused): see failure-types. */
function isStoreFailure(err: unknown): boolean {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) return false;
  const type = err.cause.type;
  return isFailureType(type) && FAILURE_TYPES[type] === 'run_folder';
}

function validateInput(raw: TaskInputArgs): TaskInput {
  const parsed = TaskInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
    const message = `invalid task input: ${issues}`;
    const result: TaskResult = { status: 'failed', endReason: 'input', answer: null, steps: 0, error: message };
    throw ApplicationFailure.create({ message, type: 'InvalidTaskInput', nonRetryable: true, details: [result] });
  }
  return parsed.data;
}

/** Why a failure ended the task: the failure type of the activity error, or a lost session worker. */
function endReasonOf(err: unknown, input: TaskInput): EndReason {
  if (!(err instanceof ActivityFailure)) {
    return endReasonOfFailure({ type: err instanceof ApplicationFailure ? err.type : undefined });
  }
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return endReasonOfFailure({ sessionTimeout: input.environment });
  return endReasonOfFailure({ type: cause instanceof ApplicationFailure ? cause.type : undefined });
}

export async function agentTask(raw: TaskInputArgs, carried?: CarriedState): Promise<TaskResult> {
  const input = validateInput(raw);
  const task = new TaskState(input, carried);
  const state = task.carried;
  // How long activities may wait for an unusable run store: what the session's worker said (the default until then,
  // and in histories from before it said so). Sizes timeouts only: a replay takes its results from the history.
  const { shared, opener, model, onSession } = activityProxies(
    input.timing,
    () => state.storeWaitMinutes ?? DEFAULT_STORE_FAULT_WAIT_MINUTES,
  );
  task.installHandlers();
  const envName = input.environment;
  /** The desktop records every call of a turn in act, stops included; the browser's decide records its stops. */
  const actOnStops = envName === 'desktop';
  /** Decided once per workflow (histories recorded before the patch replay without it). */
  const fold = envName === 'browser' && patched(FOLD_OBSERVE_PATCH);
  /** Likewise decided once: where session opens are scheduled (see OPEN_QUEUE_PATCH). */
  const openQueue =
    envName === 'browser' && patched(OPEN_QUEUE_PATCH) ? browserOpenQueue(workflowInfo().taskQueue) : undefined;
  /** The next step's observation, taken by the last act of the step before (see ActInput.next). */
  let observed: { step: number; generation: number; obs: ObserveResult } | null = carried?.observed ?? null;
  /** The generation of the act in flight when it is a step's last (see OpenSessionInput.lostActGeneration). */
  let lastActInFlight: number | null = null;

  /** Opens (or restores) the task's session; `stepDone`: a lost worker had finished the step (see lostActGeneration). */
  const openSession = async (
    reason: OpenSessionInput['reason'],
    lostActGeneration?: number,
  ): Promise<{ session: SessionRef; stepDone: boolean }> => {
    state.generation += reason === 'start' ? 0 : 1;
    const { stepDone, storeWaitMinutes, ...opened } = await opener(
      `step ${state.step} · open ${envName} (${reason})`,
      openQueue,
    ).openSession({
      runId: input.runId,
      generation: state.generation,
      restore: reason !== 'start',
      reason,
      step: state.step,
      ...(lostActGeneration !== undefined ? { lostActGeneration } : {}),
    });
    state.session = { ...opened, generation: state.generation };
    if (storeWaitMinutes !== undefined) state.storeWaitMinutes = storeWaitMinutes;
    state.lastUrl = opened.url;
    return { session: state.session, stepDone: stepDone === true };
  };

  /** `writesOnce`: the task ends without waiting for its run store (see ReleaseInput.writesOnce). */
  const releaseSession = async (save: boolean, writesOnce = false): Promise<void> => {
    const session = state.session;
    if (!session) return;
    state.session = null;
    try {
      await onSession(session, `step ${state.step} · release ${envName}`).releaseSession({
        runId: input.runId,
        sessionId: session.sessionId,
        save,
        ...(writesOnce ? { writesOnce } : {}),
      });
    } catch (err) {
      if (!isSessionLost(err)) throw err;
      log.warn('session already gone when releasing', { error: String(err) });
    }
  };

  const finalize = async (final: RunStatus, why: EndReason, reason: string | null): Promise<void> => {
    task.status = final;
    task.endReason = why;
    task.publish();
    const recorded = await shared(`finalize · ${final}`).finalize({
      runId: input.runId,
      status: final,
      answer: task.answer,
      reason,
      endReason: why,
      steps: state.step,
    });
    // A used-up step budget is answered with the last observation's text (histories recorded before: no result).
    if (recorded) task.answer = recorded.answer;
  };

  /** Ask the user and wait (durably) for the reply; false if the ask timed out. */
  const askUser = async (text: string): Promise<boolean> => {
    state.questionCount += 1;
    const question = { id: `q${state.questionCount}`, text, step: state.step };
    task.question = question;
    const autoReply = autoReplyText(input.autoReply);
    if (autoReply !== undefined) {
      task.pendingReply = { text: autoReply, questionId: question.id };
    } else {
      task.status = 'waiting_for_user';
      task.publish();
      setCurrentDetails(`**Waiting for a reply** (question ${question.id}, step ${state.step})\n\n> ${text}`);
      await releaseSession(true);
      await shared(`step ${state.step} · pause (waiting for user)`).pause({ runId: input.runId, question: text });
      const replied = input.askTimeoutSeconds
        ? await condition(() => task.pendingReply !== null, `${input.askTimeoutSeconds}s`)
        : (await condition(() => task.pendingReply !== null), true);
      if (!replied) return false;
    }
    const reply = task.pendingReply as ReplyInput | null;
    if (!reply) return false;
    await shared(`step ${state.step} · user reply`).recordReply({
      runId: input.runId,
      questionId: question.id,
      text: reply.text,
      step: state.step,
    });
    task.pendingReply = null;
    task.question = null;
    task.status = 'running';
    setCurrentDetails('');
    task.publish();
    if (!state.session) await openSession('reply');
    return true;
  };

  /** Carries out one call of the step's decision in the session; `final` also records the step's post screenshot. */
  const act = async (session: SessionRef, call: DecideCall, index: number, final: boolean): Promise<void> => {
    const row = task.record(call, state.lastUrl);
    task.actStarted(row);
    // Folding: the step's last act observes for the next step when there is one (the budget allows it).
    const foldHere = fold && final && call.kind === 'act';
    const next =
      foldHere && state.step < input.maxSteps ? { step: state.step + 1, captchaWaitMs: captchaWaitMs() } : null;
    lastActInFlight = foldHere ? state.generation : null;
    const acted = await onSession(session, `step ${state.step} · ${call.summary}`).act({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      sessionId: session.sessionId,
      action: call.action,
      ...(actOnStops ? { call: index, final } : {}),
      ...(next ? { next } : {}),
    });
    lastActInFlight = null;
    task.actDone();
    if (next && acted.next) observed = { step: next.step, generation: state.generation, obs: acted.next };
    state.lastUrl = acted.url;
    row.url = acted.url;
    const text = acted.textObservation ?? acted.error;
    row.textObservation = text ? text.slice(0, 300) : null;
  };

  const captchaWaitMs = (): number => (state.captchaGateOff ? 0 : input.captcha.waitSeconds * 1000);

  /** One step: observe, decide, act on each call. Returns a stop, or null to go on. */
  const runStep = async (session: SessionRef): Promise<Stop | null> => {
    const ref = { runId: input.runId, step: state.step, generation: state.generation };
    const waitMs = captchaWaitMs();
    const prior = observed?.step === state.step && observed.generation === state.generation ? observed.obs : null;
    observed = null;
    const obs =
      prior ??
      (await onSession(session, `step ${state.step} · observe`).observe({
        ...ref,
        sessionId: session.sessionId,
        captchaWaitMs: waitMs,
      }));
    state.lastUrl = obs.url;
    if (obs.captchaTimedOut) {
      state.captchaTimeouts = (state.captchaTimeouts ?? 0) + 1;
      const decision = decideCaptchaTimeout({ ...input.captcha, waitMs }, state.captchaTimeouts);
      log.warn('captcha gate timed out', { step: state.step, timeouts: state.captchaTimeouts, decision });
      if (decision === 'raise') {
        throw ApplicationFailure.nonRetryable(
          `a captcha was not solved within ${input.captcha.waitSeconds}s`,
          'CaptchaTimeout',
        );
      }
      if (decision === 'disable-gate') state.captchaGateOff = true;
    }
    // The Temporal UI's Current Details say so while the model is deciding (and, when it is slow or failing, for how
    // long); the tries and the last error are on the pending decide activity. Metadata only: replay is unchanged.
    task.modelCallSince = new Date().toISOString();
    setCurrentDetails(
      `**Step ${state.step}: waiting for the model** since ${task.modelCallSince.slice(11, 19)} UTC\n\nIts tries and the last try's error: Pending Activities (decide).`,
    );
    const decision = await model(`step ${state.step} · decide`).decide(ref);
    task.modelCallSince = null;
    setCurrentDetails('');
    if (decision.kind === 'invalid') {
      // Not a failure: the error was recorded as the step's observation and the model reads it next step.
      const row = task.record(decision, obs.url);
      state.invalidReplies = (state.invalidReplies ?? 0) + 1;
      row.textObservation = (decision.text ?? '').slice(0, 300);
      log.warn('invalid model reply', { step: state.step, inARow: state.invalidReplies, error: decision.text });
      if (state.invalidReplies < input.maxInvalidReplies) return null;
      task.error = `${state.invalidReplies} model replies in a row were no valid action; the last: ${decision.text ?? ''}`;
      return 'invalid_replies';
    }
    state.invalidReplies = 0;
    const calls = decision.calls ?? [decision];
    for (const [index, call] of calls.entries()) {
      const final = index === calls.length - 1 || call.kind !== 'act';
      if (call.kind === 'act' || actOnStops) await act(session, call, index, final);
      else task.record(call, obs.url);
      if (call.kind === 'terminate') {
        task.answer = call.text ?? '';
        return 'complete';
      }
      // Calls after a question are not run: the model decides again with the user's reply.
      if (call.kind === 'ask') return (await askUser(call.text ?? '')) ? null : 'ask_timeout';
    }
    return null;
  };

  try {
    if (!carried) {
      task.publish();
      await shared('start run').startRun(input);
    }
    const stepsAtStart = state.step;
    for (;;) {
      if (state.step >= input.maxSteps) {
        await releaseSession(false);
        await finalize('max_rounds', 'max_rounds', `step budget of ${input.maxSteps} used up`);
        break;
      }
      const ranHere = state.step - stepsAtStart;
      if (
        ranHere > 0 &&
        (workflowInfo().continueAsNewSuggested ||
          (input.continueAsNewAfterSteps !== undefined && ranHere >= input.continueAsNewAfterSteps))
      ) {
        await continueAsNew<typeof agentTask>(raw, observed ? { ...state, observed } : state);
      }
      state.step += 1;
      task.publish();
      let stop: Stop | null = null;
      for (let reopen = 0; ; reopen++) {
        const session =
          state.session ?? (await openSession(state.step === 1 && !carried ? 'start' : 'continue')).session;
        try {
          stop = await runStep(session);
          break;
        } catch (err) {
          if (!isSessionLost(err) || reopen >= MAX_SESSION_REOPENS_PER_STEP) throw err;
          state.session = null;
          observed = null;
          const lostAct = lastActInFlight;
          lastActInFlight = null;
          if (lostAct === null) {
            log.warn(`${envName} session lost; re-opening and re-observing the step`, {
              step: state.step,
              error: String(err),
            });
            task.markSuperseded();
            await openSession('worker_lost');
            continue;
          }
          // Lost during the step's last act: if it was recorded as done, the step is over and the next one starts
          // in the restored session; otherwise its effect is unknown and the step is observed and decided again.
          if ((await openSession('worker_lost', lostAct)).stepDone) {
            log.warn(`${envName} session lost after the step's last act was recorded; going on in a new session`, {
              step: state.step,
              error: String(err),
            });
            task.actDone();
            break;
          }
          log.warn(`${envName} session lost; re-opening and re-observing the step`, {
            step: state.step,
            error: String(err),
          });
          task.markSuperseded();
        }
      }
      if (stop === 'complete') {
        await releaseSession(false);
        await finalize('complete', 'complete', null);
        break;
      }
      if (stop === 'ask_timeout') {
        task.error = `no reply within ${input.askTimeoutSeconds}s`;
        await finalize('failed', 'ask_timeout', 'ask_timeout');
        break;
      }
      if (stop === 'invalid_replies') {
        await releaseSession(false);
        await finalize('failed', 'invalid_replies', task.error);
        break;
      }
    }
    return task.result();
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        // Cancelled while its run store is full or unreachable, the task ends now: what it would write is tried once.
        await releaseSession(false, true);
        await finalize('cancelled', 'cancelled', 'cancelled by user').catch((finalizeErr: unknown) => {
          if (!isStoreFailure(finalizeErr)) throw finalizeErr;
          log.warn('could not record the cancellation in the run folder', { error: String(finalizeErr) });
        });
      });
      throw err;
    }
    const message = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    task.error = message;
    const why = endReasonOf(err, input);
    await CancellationScope.nonCancellable(async () => {
      const storeDown = why === 'run_folder';
      await releaseSession(false, storeDown).catch(() => undefined);
      try {
        await finalize('failed', why, message);
      } catch (finalizeErr) {
        // The run store that ended the task may still be down: the task's result says why it ended all the same
        // (its run folder keeps the status it had; nothing recorded is lost).
        if (!storeDown || !isStoreFailure(finalizeErr)) throw finalizeErr;
        log.warn('could not record the end of the task in its run folder', { error: String(finalizeErr) });
      }
    });
    const result: TaskResult = { ...task.result(), endReason: why };
    throw ApplicationFailure.create({
      message: `task failed at step ${state.step}: ${message}`,
      type: 'TaskFailed',
      nonRetryable: true,
      details: [result],
    });
  }
}
