// Asking the person and waiting, durably, for the reply: the model's question, the runtime's question about a resend
// in doubt or about requests approval rules hold, and a budget's or a loop's question (limits.ts). The session is held through the wait (or released, its
// page saved) and taken back with the reply; an unattended task replies to itself (autoReply, or a replay's
// recorded reply). Deterministic.
import { condition, setCurrentDetails } from '@temporalio/workflow';
import type { LimitQuestion } from '../../src/contract/task';
import { autoReplyText } from '../../src/agent/reply';
import type { PendingQuestion, QuestionKind, ReplyInput } from '../../src/contract/task';
import { notifyWaiting } from '../notify';
import type { TaskContext } from './context';
import type { DecisionSource } from './decisions';
import type { Sessions } from './sessions';

/**
 * Who asks: the model (default), the runtime about a held-back resend, the runtime about requests approval rules hold
 * (their holds' ids), or a limit (with the reply it expects).
 */
export type Asker =
  | { by: 'model'; providerCheck?: boolean }
  | { by: 'runtime' }
  | { by: 'approval'; holds: string[] }
  | { by: 'limit'; expects: LimitQuestion; call: number };

/** The question's kind, as the status shows it. */
function kindOf(asker: Asker): QuestionKind {
  if (asker.by === 'limit') return asker.expects.kind;
  if (asker.by === 'runtime') return 'in_doubt';
  if (asker.by === 'approval') return 'approval';
  return asker.providerCheck ? 'provider_check' : 'model';
}

export class Questions {
  /** The text of the last reply the task recorded. */
  lastReply = '';

  constructor(
    private readonly ctx: TaskContext,
    private readonly sessions: Sessions,
    private readonly decisions: DecisionSource,
  ) {}

  /** Asks and waits for the reply (recorded in the run folder); false if the ask timed out. */
  async ask(text: string, asker: Asker = { by: 'model' }): Promise<boolean> {
    const { state, input, task, proxies } = this.ctx;
    if (asker.by === 'runtime' || asker.by === 'approval') this.recordRuntimeQuestion(text);
    const question = this.pose(text, asker);
    const autoReply = this.autoReply(asker);
    let held = false;
    if (autoReply !== undefined) task.pendingReply = { text: autoReply, questionId: question.id };
    else {
      const waited = await this.waitForReply(question);
      if (waited === null) return false;
      held = waited;
    }
    const reply = task.pendingReply as ReplyInput | null;
    if (!reply) return false;
    const recorded = proxies.shared(`step ${state.step} · user reply`).recordReply({
      runId: input.runId,
      questionId: question.id,
      text: reply.text,
      step: state.step,
      ...(asker.by === 'limit' ? { call: asker.call } : asker.by === 'runtime' ? { settlesHeldRequests: true } : {}),
      ...(asker.by === 'approval' ? { approvalHolds: asker.holds } : {}),
    });
    this.lastReply = reply.text;
    // A held session is taken back while the reply is recorded (one round trip less before the next screenshot).
    await Promise.all([recorded, held ? this.sessions.reclaim() : undefined]);
    task.pendingReply = null;
    task.question = null;
    task.status = 'running';
    setCurrentDetails('');
    task.publish();
    await this.sessions.ensure('reply');
    return true;
  }

  /**
   * The reply nobody has to give: a replay with the recorded replies (`answers: 'recorded'`) gives the recorded
   * question its recorded reply; an unattended task (autoReply) replies to the model's questions, and stops at a
   * budget or a loop (nobody is there to decide to spend more). Undefined: a person replies.
   */
  private autoReply(asker: Asker): string | undefined {
    // An approval waits for a person: neither autoReply nor a recording's reply (another run's person) gives it.
    if (asker.by === 'approval') return undefined;
    const unattended = autoReplyText(this.ctx.input.autoReply);
    if (asker.by === 'limit') return unattended === undefined ? undefined : 'stop';
    // A provider asked for a person's confirmation: a standing approval is nobody's, so only a recorded reply answers.
    if (asker.by === 'model' && asker.providerCheck) return this.decisions.takeRecordedReply() ?? undefined;
    return this.decisions.takeRecordedReply() ?? unattended;
  }

  /** The runtime's question about a held-back resend goes into the steps table as a question of the step. */
  private recordRuntimeQuestion(text: string): void {
    this.ctx.task.record(
      {
        actionName: 'ask_user_question',
        action: {},
        thoughts: '',
        summary: `ask_user_question (runtime) "${text.slice(0, 40)}…"`,
        kind: 'ask',
        text,
      },
      this.ctx.state.lastUrl,
    );
  }

  /** The question the status query shows, numbered among the task's questions. */
  private pose(text: string, asker: Asker): PendingQuestion {
    const { state, task } = this.ctx;
    state.questionCount += 1;
    const question = {
      id: `q${state.questionCount}`,
      text,
      step: state.step,
      kind: kindOf(asker),
      ...(asker.by === 'limit' ? { expects: asker.expects } : {}),
    };
    task.question = question;
    return question;
  }

  /** Waits for a person's reply, the session held or released; null if none came in time, else whether it was held. */
  private async waitForReply(question: PendingQuestion): Promise<boolean | null> {
    const { state, input, task, proxies, patches, clock } = this.ctx;
    task.status = 'waiting_for_user';
    task.publish();
    const waiting = question.kind === 'approval' ? 'Waiting for an approval (reply yes or no)' : 'Waiting for a reply';
    setCurrentDetails(`**${waiting}** (question ${question.id}, step ${state.step})\n\n> ${question.text}`);
    await notifyWaiting(task);
    const held = await this.sessions.holdForWait('waiting for user', patches.holdOnAsk);
    await proxies.shared(`step ${state.step} · pause (waiting for user)`).pause({
      runId: input.runId,
      question: question.text,
    });
    const replied = await clock.offClock(async () =>
      input.askTimeoutSeconds
        ? await condition(() => task.pendingReply !== null, `${input.askTimeoutSeconds}s`)
        : (await condition(() => task.pendingReply !== null), true),
    );
    return replied ? held : null;
  }
}
