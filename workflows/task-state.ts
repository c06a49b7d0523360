// The task's state inside the workflow: what a continued run carries over, the status the queries show, the reply
// update/signal and query handlers, the steps table, and the search attributes. No activities here (those are the
// loop's, in agent-loop.ts); deterministic like all workflow code.
import { ApplicationFailure, log, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { DecideCall, NotifyEvent, ObserveResult, SessionRef } from '../src/contract/activities';
import { cleanReply } from '../src/agent/reply';
import { REPLY_REFUSALS } from '../src/contract/task';
import { readApprovalReply } from '../src/agent/approvals';
import {
  COST_SEARCH_ATTRIBUTE,
  STATUS_SEARCH_ATTRIBUTE,
  STEP_SEARCH_ATTRIBUTE,
  replySignal,
  replyUpdate,
  statusQuery,
  stepsQuery,
} from './messages';
import { TaskControl } from './task-control';
import { raisedLimit, spentOf } from './task-limits';
import type { LimitsState } from './task-limits';
import { costCapError, parseLimitReply } from '../src/agent/budget';
import { countReplyRefusal } from './metrics';
import type {
  EndReason,
  PendingQuestion,
  ReplyInput,
  TaskState,
  StepSummary,
  TaskInput,
  TaskOutput,
  TaskResult,
  TaskStatus,
} from '../src/contract/task';

/** What a continued run carries over from the one before (spending and repeats: task-limits.ts). */
export interface CarriedState extends LimitsState {
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
  /** Invalid model outputs in a row (no valid action). Wire name, kept so continued runs' inputs still read. */
  invalidReplies?: number;
  /** The next step's observation, taken by the last act before continuing as new (fold-observe-into-act). */
  observed?: { step: number; generation: number; obs: ObserveResult } | null;
  /** How long the session's worker waits for an unusable run store (its store.faultWaitMinutes), once it said. */
  storeWaitMinutes?: number;
  /** Messages said to the task recorded for a step so far (each has its place among the step's messages). */
  saysAt?: { step: number; count: number };
  /** The events the starting worker's webhook wants (workflows/notify.ts); absent: none are sent. */
  notifyEvents?: NotifyEvent[];
  /** Notifications started so far (numbers their workflow ids). */
  notifications?: number;
  /** A follow-up's run (`cua continue`): the step it began at (its notifications' ids say so). */
  followUpAt?: number;
  /** Takeovers so far (numbers their leases). */
  takeovers?: number;
  /** A cached task (input.cache): steps taken from the cache (as they were, or healed) and decided by the model. */
  cached?: { hits: number; healed: number; decided: number };
  /**
   * A replay (input.replayOf): whether it still runs the recording (off after the first step that did not match),
   * the steps replayed, healed and decided by the model, and where and why it diverged.
   */
  replay?: {
    on: boolean;
    replayed: number;
    healed: number;
    decided: number;
    diverged?: { step: number; reason: string };
  };
}

const SUMMARIES_KEPT = 200;

/** The reply's text as recorded (the validator has already refused anything `cleanReply` does not accept). */
function replyText(raw: string): string {
  const cleaned = cleanReply(raw);
  return cleaned.ok ? cleaned.text : raw.trim();
}

/** The agentTask workflow's task: its state (a TaskState), question, answer, controls, handlers and carried state. */
export class AgentTask {
  readonly carried: CarriedState;
  status: TaskState = 'running';
  question: PendingQuestion | null = null;
  pendingReply: ReplyInput | null = null;
  answer: string | null = null;
  error: string | null = null;
  endReason: EndReason | null = null;
  /** A task with an output schema: its output once extracted (stages/output.ts), and why there is none. */
  output: TaskOutput | null = null;
  outputError: string | null = null;
  /** When the step's model call began (its first try), while one is under way. */
  modelCallSince: string | null = null;
  /** The decision whose act is under way; if its worker is lost, its effect is unknown and it is superseded. */
  private pendingAct: StepSummary | null = null;
  /** A person's controls: pause, resume, say, takeover, handback (task-control.ts). */
  readonly control: TaskControl;
  /** Publish the task's cost as CuaCost too (task-limits.ts LIMITS_PATCH). */
  costAttribute = false;
  /** Waiting for the lock of its saved sign-in (stages/signin.ts): which, and who holds it. */
  signinWait: TaskStatus['signinWait'] | null = null;

  constructor(
    readonly input: TaskInput,
    carried: CarriedState | undefined,
  ) {
    this.carried = carried ?? {
      step: 0,
      generation: 0,
      session: null,
      questionCount: 0,
      lastUrl: null,
      lastAction: null,
      summaries: [],
    };
    this.control = new TaskControl(this);
  }

  /** Registers the status and steps queries, the reply update and signal, and the controls' updates. */
  installHandlers(): void {
    this.control.install();
    setHandler(statusQuery, () => this.view());
    setHandler(stepsQuery, () => this.carried.summaries);
    setHandler(
      replyUpdate,
      (reply) => {
        this.pendingReply = { text: replyText(reply.text), questionId: this.question?.id };
        return { accepted: true as const, step: this.carried.step };
      },
      { validator: (reply) => this.checkReply(reply) },
    );
    setHandler(replySignal, (reply) => {
      try {
        this.checkReply(reply);
        this.pendingReply = { text: replyText(reply.text), questionId: this.question?.id };
      } catch (err) {
        log.warn('ignored reply signal', { error: String(err) });
      }
    });
  }

  view(): TaskStatus {
    const s = this.carried;
    return {
      runId: this.input.runId,
      status: this.status,
      step: s.step,
      maxSteps: this.input.maxSteps,
      question: this.question,
      lastUrl: s.lastUrl,
      lastAction: s.lastAction,
      answer: this.answer,
      error: this.error,
      endReason: this.endReason,
      sessionGeneration: s.generation,
      invalidReplies: s.invalidReplies ?? 0,
      ...(this.modelCallSince ? { modelCallSince: this.modelCallSince } : {}),
      ...(this.signinWait ? { signinWait: this.signinWait } : {}),
      ...this.control.view(),
      ...(s.spent || s.limits ? { spent: this.spentView() } : {}),
      ...(this.control.ended ? this.outputView() : {}),
    };
  }

  private spentView(): NonNullable<TaskStatus['spent']> {
    const spent = spentOf(this.carried);
    const minutes = Math.round((spent.workMs / 60_000) * 100) / 100;
    return { costUsd: spent.costUsd, tokens: spent.tokens, minutes, limits: { ...this.carried.limits } };
  }

  result(): TaskResult {
    return {
      status: this.status,
      endReason: this.endReason ?? 'complete',
      answer: this.answer,
      steps: this.carried.step,
      error: this.error,
      ...this.outputView(),
    };
  }

  /** The output fields of a task with an output schema (none without one: results read as before). */
  outputView(): Pick<TaskResult, 'output' | 'outputError'> {
    if (!this.input.outputSchema) return {};
    return { output: this.output, ...(this.outputError ? { outputError: this.outputError } : {}) };
  }

  /** Refusals are typed (REPLY_REFUSALS) so clients in any language can tell them apart without reading messages. */
  private checkReply(reply: ReplyInput): void {
    const refuse = (type: keyof typeof REPLY_REFUSALS, message: string, detail: Record<string, unknown>): never => {
      countReplyRefusal(REPLY_REFUSALS[type]);
      throw ApplicationFailure.create({ type: REPLY_REFUSALS[type], message, nonRetryable: true, details: [detail] });
    };
    if (!this.question) {
      refuse('notWaiting', `task ${this.input.runId} is not waiting for a reply (status: ${this.status})`, {
        status: this.status,
      });
    }
    const question = this.question as PendingQuestion;
    // Replied to already, its reply not recorded yet: a second reply would silently replace the first.
    if (this.pendingReply !== null) {
      refuse('stale', `stale reply: question ${question.id} has been replied to already`, {
        pendingQuestionId: question.id,
      });
    }
    const cleaned = cleanReply(reply?.text);
    if (!cleaned.ok) refuse('invalid', cleaned.reason, {});
    if (question.expects) this.checkLimitReply(question.expects, reply.text, refuse);
    // Only an explicit yes approves and only an explicit no denies: anything else is refused, the question stays.
    const approval = question.kind === 'approval' ? readApprovalReply(reply.text) : undefined;
    if (approval && !approval.ok) refuse('invalid', approval.reason, {});
    if (reply.questionId && reply.questionId !== question.id) {
      refuse('stale', `stale reply: it is for question ${reply.questionId}, the pending question is ${question.id}`, {
        pendingQuestionId: question.id,
      });
    }
  }

  /** A reply to a budget's or a loop's question: `continue`, an amount (within the worker's cost cap), or `stop`. */
  private checkLimitReply(
    expects: NonNullable<PendingQuestion['expects']>,
    text: string,
    refuse: (type: 'invalid', message: string, detail: Record<string, unknown>) => never,
  ): void {
    const parsed = parseLimitReply(text, expects);
    if (!parsed.ok) refuse('invalid', parsed.reason, {});
    const reply = parsed.ok ? parsed.reply : null;
    if (expects.kind !== 'budget' || expects.budget !== 'cost' || reply?.kind !== 'continue') return;
    const limit = raisedLimit(this.carried, expects, reply.raise);
    const error = costCapError(limit, this.carried.costCap, 'the cost limit');
    if (error) refuse('invalid', error, {});
  }

  /** Status, step (and, with LIMITS_PATCH, cost) as search attributes (when the task asked for them). */
  publish(): void {
    if (!this.input.searchAttributes) return;
    upsertSearchAttributes([
      { key: STATUS_SEARCH_ATTRIBUTE, value: this.status },
      { key: STEP_SEARCH_ATTRIBUTE, value: this.carried.step },
      ...(this.costAttribute ? [{ key: COST_SEARCH_ATTRIBUTE, value: spentOf(this.carried).costUsd }] : []),
    ]);
  }

  /** The steps query's row for a decision, added as soon as it is made (so a lost worker can mark it superseded). */
  record(call: DecideCall, url: string | null): StepSummary {
    const s = this.carried;
    s.lastAction = call.summary;
    const row: StepSummary = {
      step: s.step,
      generation: s.generation,
      action: call.actionName,
      summary: call.summary,
      thoughts: call.thoughts.slice(0, 300),
      url,
      textObservation: null,
      ...(call.kind === 'invalid' ? { invalid: (call.text ?? '').slice(0, 300) } : {}),
    };
    s.summaries.push(row);
    if (s.summaries.length > SUMMARIES_KEPT) s.summaries.splice(0, s.summaries.length - SUMMARIES_KEPT);
    return row;
  }

  actStarted(row: StepSummary): void {
    this.pendingAct = row;
  }

  actDone(): void {
    this.pendingAct = null;
  }

  /** The worker was lost during an act: its effect is unknown, so its row is superseded. */
  markSuperseded(): void {
    if (this.pendingAct) this.pendingAct.superseded = true;
    this.pendingAct = null;
  }
}
