// A person's controls over a running task (issue 26): pause and resume, say (a message the model reads next), take
// over the live browser and hand it back. Each is an Update whose validator refuses a bad or stale request in one
// line; the handlers only set state here, and the loop (agent-loop.ts) acts on it between steps, so the step under
// way always finishes first. Deterministic, like all workflow code.
import { ApplicationFailure, condition, setHandler } from '@temporalio/workflow';
import { cleanReply } from '../src/agent/reply';
import { CONTROL_REFUSED } from '../src/contract/task';
import type {
  ControlAccepted,
  HandbackInput,
  PendingQuestion,
  TaskState,
  TakeoverLease,
  TaskInput,
  TaskStatus,
} from '../src/contract/task';
import { isTerminal } from '../src/contract/task-state';
import { handbackUpdate, pauseUpdate, resumeUpdate, sayUpdate, takeoverUpdate } from './messages';

/** What the controls read of the task (AgentTask, without importing it). */
export interface ControlledTask {
  readonly input: Pick<TaskInput, 'runId' | 'environment'>;
  readonly carried: { step: number };
  status: TaskState;
  question: PendingQuestion | null;
}

/** The longest note a handback may carry (characters). */
const MAX_NOTE_CHARS = 2000;

export class TaskControl {
  /** A pause was asked for and begins after the step under way. */
  pauseRequested = false;
  /** The loop is paused (waiting for a resume). */
  paused = false;
  /** The pause is in effect: the page held or saved and the run folder says so (the pause update answers then). */
  pauseSettled = false;
  /** A takeover was asked for and begins after the step under way (or at once while paused). */
  takeoverRequested = false;
  /** The takeover under way. */
  lease: TakeoverLease | null = null;
  /** Why the last takeover could not begin (its update is refused with it). */
  takeoverError: string | null = null;
  /** The handback of the lease, once a person gave it. */
  handback: HandbackInput | null = null;
  /** Since when the task is paused or taken over. */
  since: string | null = null;
  /** Messages said to the task, not yet recorded for the model. */
  readonly says: string[] = [];
  /** The task has ended: controls waiting for their effect answer now. */
  ended = false;

  constructor(private readonly task: ControlledTask) {}

  /** Whether the loop must stop for a control before its next step. */
  get stopRequested(): boolean {
    return this.pauseRequested || this.takeoverRequested;
  }

  install(): void {
    setHandler(
      pauseUpdate,
      async () => {
        this.pauseRequested = true;
        await condition(
          () => this.pauseSettled || this.ended || (!this.pauseRequested && !this.paused) || this.lease !== null,
        );
        return this.accepted();
      },
      { validator: () => this.checkPause() },
    );
    setHandler(
      resumeUpdate,
      () => {
        this.pauseRequested = false;
        this.paused = false;
        return this.accepted();
      },
      { validator: () => this.checkResume() },
    );
    setHandler(
      sayUpdate,
      (input) => {
        this.says.push(cleanText(input?.text));
        return this.accepted();
      },
      { validator: (input) => this.checkSay(input?.text) },
    );
    setHandler(
      takeoverUpdate,
      async () => {
        this.takeoverRequested = true;
        this.takeoverError = null;
        await condition(() => this.lease !== null || this.ended || this.takeoverError !== null);
        if (this.takeoverError !== null) this.refuse(`task ${this.id} cannot be taken over: ${this.takeoverError}`);
        if (!this.lease) this.refuse(`task ${this.id} ended before the takeover began (${this.task.status})`);
        return this.lease as TakeoverLease;
      },
      { validator: () => this.checkTakeover() },
    );
    setHandler(
      handbackUpdate,
      (input) => {
        const note = input?.note === undefined ? '' : cleanText(input.note);
        this.handback = { ...(note ? { note } : {}), ...(input?.leaseId ? { leaseId: input.leaseId } : {}) };
        return this.accepted();
      },
      { validator: (input) => this.checkHandback(input) },
    );
  }

  /** The status query's part about controls. */
  view(): Partial<TaskStatus> {
    return {
      ...(this.pauseRequested ? { pausing: true } : {}),
      ...(this.since ? { controlSince: this.since } : {}),
      ...(this.lease
        ? { takeover: this.lease }
        : this.takeoverRequested
          ? { takeover: { pending: true as const } }
          : {}),
      ...(this.says.length > 0 ? { unreadMessages: this.says.length } : {}),
    };
  }

  private get id(): string {
    return this.task.input.runId;
  }

  private accepted(): ControlAccepted {
    return { accepted: true, step: this.task.carried.step, status: this.task.status };
  }

  private refuse(message: string): never {
    throw ApplicationFailure.create({ type: CONTROL_REFUSED, message, nonRetryable: true });
  }

  /** Refusals every control shares: an ended task, a task waiting for a reply, a task a person has taken over. */
  private checkRunning(what: string, opts: { takenOver?: boolean } = {}): void {
    const { status } = this.task;
    if (isTerminal(status)) this.refuse(`task ${this.id} has ended (${status}); nothing to ${what}`);
    if (status === 'waiting_for_user' || this.task.question) {
      this.refuse(`task ${this.id} is waiting for a reply: reply with \`cua reply ${this.id} "…"\` first`);
    }
    if (!opts.takenOver && (this.lease || this.takeoverRequested)) {
      this.refuse(`task ${this.id} is taken over by a person: hand it back with \`cua handback ${this.id}\` first`);
    }
  }

  private checkPause(): void {
    this.checkRunning('pause');
    if (this.paused) this.refuse(`task ${this.id} is already paused: resume it with \`cua resume ${this.id}\``);
    if (this.pauseRequested) this.refuse(`task ${this.id} is already pausing (after the step under way)`);
  }

  private checkResume(): void {
    const { status } = this.task;
    if (isTerminal(status)) this.refuse(`task ${this.id} has ended (${status}); nothing to resume`);
    if (this.lease || this.takeoverRequested) {
      this.refuse(`task ${this.id} is taken over by a person: \`cua handback ${this.id}\` resumes it`);
    }
    if (!this.paused && !this.pauseRequested) this.refuse(`task ${this.id} is not paused (status: ${status})`);
  }

  private checkSay(text: unknown): void {
    const cleaned = messageText(text);
    if (!cleaned.ok) this.refuse(`say: ${cleaned.reason}`);
    this.checkRunning('say', { takenOver: true });
  }

  private checkTakeover(): void {
    this.checkRunning('take over');
    if (this.task.input.environment !== 'browser' && this.task.input.environment !== 'desktop') {
      this.refuse(`task ${this.id} runs in '${this.task.input.environment}': a takeover is for a browser or a desktop`);
    }
  }

  private checkHandback(input: HandbackInput | undefined): void {
    const { status } = this.task;
    if (isTerminal(status)) this.refuse(`task ${this.id} has ended (${status}); nothing to hand back`);
    if (!this.lease) {
      this.refuse(
        this.takeoverRequested
          ? `task ${this.id}: the takeover has not begun yet (the step under way finishes first)`
          : `task ${this.id} is not taken over (status: ${status})`,
      );
    }
    if (this.handback) this.refuse(`task ${this.id} is being handed back already`);
    if (input?.leaseId && input.leaseId !== this.lease?.leaseId) {
      this.refuse(`stale handback: lease ${input.leaseId} is not the current lease (${this.lease?.leaseId})`);
    }
    if (input?.note !== undefined && input.note.trim() !== '') {
      const cleaned = messageText(input.note);
      if (!cleaned.ok) this.refuse(`handback note: ${cleaned.reason}`);
    }
  }
}

/** A message's or note's text, cleaned as a reply's is (non-empty, no control characters, not too long). */
function messageText(raw: unknown): { ok: true; text: string } | { ok: false; reason: string } {
  const cleaned = cleanReply(raw);
  if (!cleaned.ok) return { ok: false, reason: cleaned.reason.replace(/^reply /, '') };
  if (cleaned.text.length > MAX_NOTE_CHARS) {
    return { ok: false, reason: `text is too long (${cleaned.text.length} characters; at most ${MAX_NOTE_CHARS})` };
  }
  return cleaned;
}

/** The text of a message the validator accepted. */
function cleanText(raw: unknown): string {
  const cleaned = messageText(raw);
  return cleaned.ok ? cleaned.text : '';
}
