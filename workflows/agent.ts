// The task workflow: observe → decide → act per step, three stops (terminate, ask, budget), durable
// waits for the user's reply, recovery from a lost worker, continue-as-new, cancellation.
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
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/catalog';
import { decideCaptchaTimeout } from '../src/agent/captcha-policy';
import { endReasonOfFailure } from '../src/agent/end-reason';
import { cleanReply } from '../src/agent/reply';
import type { DecideResult, SessionRef } from '../activities/types';
import {
  STATUS_SEARCH_ATTRIBUTE,
  STEP_SEARCH_ATTRIBUTE,
  TaskInputSchema,
  replySignal,
  replyUpdate,
  statusQuery,
  stepsQuery,
} from './contract';
import type {
  EndReason,
  PendingQuestion,
  ReplyInput,
  RunStatus,
  StepSummary,
  TaskInput,
  TaskInputArgs,
  TaskResult,
  TaskStatus,
} from './contract';

/** What a continued run carries over from the one before. */
export interface CarriedState {
  step: number;
  generation: number;
  session: SessionRef | null;
  questionCount: number;
  lastUrl: string | null;
  lastAction: string | null;
  summaries: StepSummary[];
  /** Captcha gate timeouts so far, and whether the gate was switched off after too many. */
  captchaTimeouts?: number;
  captchaGateOff?: boolean;
  /** Model replies in a row that were no valid action. */
  invalidReplies?: number;
}

const MAX_SESSION_REOPENS_PER_STEP = 3;

/** How a step can end the loop. */
type Stop = 'complete' | 'ask_timeout' | 'invalid_replies';
const SUMMARIES_KEPT = 200;

/** A session activity failed in a way that means its worker (or browser) is gone. */
function isSessionLost(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  return (
    cause instanceof ApplicationFailure &&
    ['UnknownSessionError', 'BrowserClosedError', 'PageRecoveryError'].includes(cause.type ?? '')
  );
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

/** The reply's text as recorded (the validator has already refused anything `cleanReply` does not accept). */
function replyText(raw: string): string {
  const cleaned = cleanReply(raw);
  return cleaned.ok ? cleaned.text : raw.trim();
}

/** Why a failure ended the task: the failure type of the activity error, or a lost browser worker. */
function endReasonOf(err: unknown): EndReason {
  if (!(err instanceof ActivityFailure)) {
    return endReasonOfFailure({ type: err instanceof ApplicationFailure ? err.type : undefined });
  }
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return endReasonOfFailure({ sessionTimeout: true });
  return endReasonOfFailure({ type: cause instanceof ApplicationFailure ? cause.type : undefined });
}

export async function agentTask(raw: TaskInputArgs, carried?: CarriedState): Promise<TaskResult> {
  const input = validateInput(raw);
  const t = input.timing;

  const shared = (summary: string) =>
    proxyActivities<Activities>({
      startToCloseTimeout: '2 minutes',
      retry: { initialInterval: '1s', maximumAttempts: 5 },
      summary,
    });
  // Opening a browser waits out full pools (any worker with room may take it); a start page that cannot load fails.
  const opener = (summary: string) =>
    proxyActivities<Activities>({
      startToCloseTimeout: '2 minutes',
      retry: {
        initialInterval: '1s',
        backoffCoefficient: 2,
        maximumInterval: '15s',
        maximumAttempts: 40,
        nonRetryableErrorTypes: ['NavigationError', 'InvalidRunIdError', 'RunNotFoundError'],
      },
      summary,
    });
  const model = (summary: string) =>
    proxyActivities<Activities>({
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: `${t.heartbeatSeconds}s`,
      retry: {
        initialInterval: `${t.modelRetryInitialSeconds}s`,
        maximumInterval: `${t.modelRetryMaxSeconds}s`,
        backoffCoefficient: 2,
        maximumAttempts: t.modelRetryAttempts,
        nonRetryableErrorTypes: ['ModelRequestError', 'InvalidTaskInput', 'RunFolderError'],
      },
      summary,
    });
  const onSession = (ref: SessionRef, summary: string) =>
    proxyActivities<Activities>({
      taskQueue: ref.taskQueue,
      scheduleToStartTimeout: `${t.sessionScheduleToStartSeconds}s`,
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: `${t.heartbeatSeconds}s`,
      // One attempt: a failed observe/act means the session is in doubt; the loop re-opens and re-observes.
      retry: { maximumAttempts: 1 },
      summary,
    });

  const state: CarriedState = carried ?? {
    step: 0,
    generation: 0,
    session: null,
    questionCount: 0,
    lastUrl: null,
    lastAction: null,
    summaries: [],
  };
  let status: RunStatus = 'running';
  let question: PendingQuestion | null = null;
  let pendingReply: ReplyInput | null = null;
  let answer: string | null = null;
  let error: string | null = null;
  let endReason: EndReason | null = null;

  const statusView = (): TaskStatus => ({
    runId: input.runId,
    status,
    step: state.step,
    maxSteps: input.maxSteps,
    question,
    lastUrl: state.lastUrl,
    lastAction: state.lastAction,
    answer,
    error,
    endReason,
    sessionGeneration: state.generation,
    invalidReplies: state.invalidReplies ?? 0,
  });

  const checkReply = (reply: ReplyInput): void => {
    if (!question) throw new Error(`task ${input.runId} is not waiting for a reply (status: ${status})`);
    const cleaned = cleanReply(reply?.text);
    if (!cleaned.ok) throw new Error(cleaned.reason);
    if (reply.questionId && reply.questionId !== question.id) {
      throw new Error(`stale reply: it answers question ${reply.questionId}, the pending question is ${question.id}`);
    }
  };
  setHandler(statusQuery, statusView);
  setHandler(stepsQuery, () => state.summaries);
  setHandler(
    replyUpdate,
    (reply) => {
      pendingReply = { text: replyText(reply.text), questionId: question?.id };
      return { accepted: true as const, step: state.step };
    },
    { validator: checkReply },
  );
  setHandler(replySignal, (reply) => {
    try {
      checkReply(reply);
      pendingReply = { text: replyText(reply.text), questionId: question?.id };
    } catch (err) {
      log.warn('ignored reply signal', { error: String(err) });
    }
  });

  const publish = (): void => {
    if (!input.searchAttributes) return;
    upsertSearchAttributes([
      { key: STATUS_SEARCH_ATTRIBUTE, value: status },
      { key: STEP_SEARCH_ATTRIBUTE, value: state.step },
    ]);
  };

  const openSession = async (reason: 'start' | 'reply' | 'worker_lost' | 'continue'): Promise<SessionRef> => {
    state.generation += reason === 'start' ? 0 : 1;
    const opened = await opener(`step ${state.step} · open browser (${reason})`).openSession({
      runId: input.runId,
      generation: state.generation,
      restore: reason !== 'start',
      reason,
      step: state.step,
    });
    state.session = { ...opened, generation: state.generation };
    state.lastUrl = opened.url;
    return state.session;
  };

  const releaseSession = async (save: boolean): Promise<void> => {
    const session = state.session;
    if (!session) return;
    state.session = null;
    try {
      await onSession(session, `step ${state.step} · release browser`).releaseSession({
        runId: input.runId,
        sessionId: session.sessionId,
        save,
      });
    } catch (err) {
      if (!isSessionLost(err)) throw err;
      log.warn('session already gone when releasing', { error: String(err) });
    }
  };

  const finalize = async (final: RunStatus, why: EndReason, reason: string | null): Promise<void> => {
    status = final;
    endReason = why;
    publish();
    await shared(`finalize · ${final}`).finalize({
      runId: input.runId,
      status: final,
      answer,
      reason,
      endReason: why,
      steps: state.step,
    });
  };

  /** Ask the user and wait (durably) for the reply; false if the ask timed out. */
  const askUser = async (text: string): Promise<boolean> => {
    state.questionCount += 1;
    question = { id: `q${state.questionCount}`, text, step: state.step };
    if (input.autoReply) {
      pendingReply = { text: input.autoReply, questionId: question.id };
    } else {
      status = 'waiting_for_user';
      publish();
      setCurrentDetails(`**Waiting for a reply** (question ${question.id}, step ${state.step})\n\n> ${text}`);
      await releaseSession(true);
      await shared(`step ${state.step} · pause (waiting for user)`).pause({ runId: input.runId, question: text });
      const replied = input.askTimeoutSeconds
        ? await condition(() => pendingReply !== null, `${input.askTimeoutSeconds}s`)
        : (await condition(() => pendingReply !== null), true);
      if (!replied) return false;
    }
    const reply = pendingReply as ReplyInput | null;
    if (!reply) return false;
    await shared(`step ${state.step} · user reply`).recordReply({
      runId: input.runId,
      questionId: question.id,
      text: reply.text,
      step: state.step,
    });
    pendingReply = null;
    question = null;
    status = 'running';
    setCurrentDetails('');
    publish();
    if (!state.session) await openSession('reply');
    return true;
  };

  /** The steps query's row for a decision, added as soon as it is made (so a lost worker can mark it superseded). */
  const record = (decision: DecideResult, url: string | null): StepSummary => {
    state.lastAction = decision.summary;
    const row: StepSummary = {
      step: state.step,
      generation: state.generation,
      action: decision.actionName,
      summary: decision.summary,
      thoughts: decision.thoughts.slice(0, 300),
      url,
      textObservation: null,
      ...(decision.kind === 'invalid' ? { invalid: (decision.text ?? '').slice(0, 300) } : {}),
    };
    state.summaries.push(row);
    if (state.summaries.length > SUMMARIES_KEPT) state.summaries.splice(0, state.summaries.length - SUMMARIES_KEPT);
    return row;
  };

  /** The decision whose act is under way; if its worker is lost, its effect is unknown and it is superseded. */
  let pendingAct: StepSummary | null = null;
  const markSuperseded = (): void => {
    if (pendingAct) pendingAct.superseded = true;
    pendingAct = null;
  };

  /** One step: observe, decide, act. Returns a stop, or null to go on. */
  const runStep = async (session: SessionRef): Promise<Stop | null> => {
    const ref = { runId: input.runId, step: state.step, generation: state.generation };
    const captchaWaitMs = state.captchaGateOff ? 0 : input.captcha.waitSeconds * 1000;
    const obs = await onSession(session, `step ${state.step} · observe`).observe({
      ...ref,
      sessionId: session.sessionId,
      captchaWaitMs,
    });
    state.lastUrl = obs.url;
    if (obs.captchaTimedOut) {
      state.captchaTimeouts = (state.captchaTimeouts ?? 0) + 1;
      const decision = decideCaptchaTimeout({ ...input.captcha, waitMs: captchaWaitMs }, state.captchaTimeouts);
      log.warn('captcha gate timed out', { step: state.step, timeouts: state.captchaTimeouts, decision });
      if (decision === 'raise') {
        throw ApplicationFailure.nonRetryable(
          `a captcha was not solved within ${input.captcha.waitSeconds}s`,
          'CaptchaTimeout',
        );
      }
      if (decision === 'disable-gate') state.captchaGateOff = true;
    }
    const decision = await model(`step ${state.step} · decide`).decide(ref);
    const row = record(decision, obs.url);
    if (decision.kind === 'invalid') {
      // Not a failure: the error was recorded as the step's observation and the model reads it next step.
      state.invalidReplies = (state.invalidReplies ?? 0) + 1;
      row.textObservation = (decision.text ?? '').slice(0, 300);
      log.warn('invalid model reply', { step: state.step, inARow: state.invalidReplies, error: decision.text });
      if (state.invalidReplies < input.maxInvalidReplies) return null;
      error = `${state.invalidReplies} model replies in a row were no valid action; the last: ${decision.text ?? ''}`;
      return 'invalid_replies';
    }
    state.invalidReplies = 0;
    if (decision.kind === 'terminate') {
      answer = decision.text ?? '';
      return 'complete';
    }
    if (decision.kind === 'ask') {
      return (await askUser(decision.text ?? '')) ? null : 'ask_timeout';
    }
    pendingAct = row;
    const acted = await onSession(session, `step ${state.step} · ${decision.summary}`).act({
      ...ref,
      sessionId: session.sessionId,
      action: decision.action,
    });
    pendingAct = null;
    state.lastUrl = acted.url;
    row.url = acted.url;
    const text = acted.textObservation ?? acted.error;
    row.textObservation = text ? text.slice(0, 300) : null;
    return null;
  };

  try {
    if (!carried) {
      publish();
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
        await continueAsNew<typeof agentTask>(raw, state);
      }
      state.step += 1;
      publish();
      let stop: Stop | null = null;
      for (let reopen = 0; ; reopen++) {
        const session =
          state.session ??
          (await openSession(reopen > 0 ? 'worker_lost' : state.step === 1 && !carried ? 'start' : 'continue'));
        try {
          stop = await runStep(session);
          break;
        } catch (err) {
          if (!isSessionLost(err) || reopen >= MAX_SESSION_REOPENS_PER_STEP) throw err;
          log.warn('browser session lost; re-opening and re-observing the step', {
            step: state.step,
            error: String(err),
          });
          markSuperseded();
          state.session = null;
        }
      }
      if (stop === 'complete') {
        await releaseSession(false);
        await finalize('complete', 'complete', null);
        break;
      }
      if (stop === 'ask_timeout') {
        error = `no reply within ${input.askTimeoutSeconds}s`;
        await finalize('failed', 'ask_timeout', 'ask_timeout');
        break;
      }
      if (stop === 'invalid_replies') {
        await releaseSession(false);
        await finalize('failed', 'invalid_replies', error);
        break;
      }
    }
    return { status, endReason: endReason ?? 'complete', answer, steps: state.step, error };
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        await releaseSession(false);
        await finalize('cancelled', 'cancelled', 'cancelled by user');
      });
      throw err;
    }
    const message = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    error = message;
    const why = endReasonOf(err);
    await CancellationScope.nonCancellable(async () => {
      await releaseSession(false).catch(() => undefined);
      await finalize('failed', why, message);
    });
    const result: TaskResult = { status, endReason: why, answer, steps: state.step, error };
    throw ApplicationFailure.create({
      message: `task failed at step ${state.step}: ${message}`,
      type: 'TaskFailed',
      nonRetryable: true,
      details: [result],
    });
  }
}
