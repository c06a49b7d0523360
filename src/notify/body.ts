// The JSON body of a webhook notification, built from what the workflow knows (NotifyInput). Pure. Field names are
// snake_case like the run folder's files; a field that does not apply to the event is left out.
import type { NotifyEvent, NotifyInput } from '../contract/activities';
import type { EndReason, QuestionKind, TaskState } from '../contract/task';

/** The instruction is cut to this many characters (the run folder has it whole). */
export const INSTRUCTION_CHARS = 200;

export interface WebhookBody {
  event: NotifyEvent;
  /** The same on every retry of this notification: a receiver drops a repeat by it. */
  delivery_id: string;
  task_id: string;
  status: TaskState;
  step: number;
  /** The pending question (event waiting), its id, and the command that replies to it. */
  question?: string;
  question_id?: string;
  /** Who asks and why: `model`, or the runtime's `approval`, `in_doubt`, `budget`, `loop`, `provider_check`. */
  question_kind?: QuestionKind;
  reply_command?: string;
  answer?: string;
  error?: string;
  end_reason?: EndReason;
  /** An ended task with an output schema: its output's value (null: none came), whether partial, and why none. */
  output?: unknown;
  output_partial?: boolean;
  output_error?: string;
  /** `monitor_changed`: the schedule, its condition, the value before and now, and the run the old value came from. */
  schedule?: string;
  condition?: string;
  old_value?: unknown;
  new_value?: unknown;
  previous_task_id?: string | null;
  /** When the event happened (ISO 8601); the X-Cua-Timestamp header says when this request was sent. */
  at: string;
  instruction: string;
}

/** The command that replies to the question, to paste into a shell (task ids are shell-safe: letters, digits, . _ -). */
export function replyCommand(taskId: string, questionId: string): string {
  return `npx cua reply ${taskId} "<your reply>" --question ${questionId}`;
}

function cut(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
}

export function webhookBody(n: NotifyInput): WebhookBody {
  return {
    event: n.event,
    delivery_id: n.deliveryId,
    task_id: n.taskId,
    status: n.status,
    step: n.step,
    ...(n.question
      ? {
          question: n.question.text,
          question_id: n.question.id,
          ...(n.question.kind ? { question_kind: n.question.kind } : {}),
          reply_command: replyCommand(n.taskId, n.question.id),
        }
      : {}),
    ...(n.answer !== undefined ? { answer: n.answer } : {}),
    ...(n.error !== undefined ? { error: n.error } : {}),
    ...(n.endReason !== undefined ? { end_reason: n.endReason } : {}),
    ...(n.output !== undefined
      ? {
          output: n.output?.value ?? null,
          ...(n.output ? { output_partial: n.output.partial } : {}),
          ...(n.outputError ? { output_error: n.outputError } : {}),
        }
      : {}),
    ...(n.monitor
      ? {
          schedule: n.monitor.schedule,
          condition: n.monitor.condition,
          old_value: n.monitor.old,
          new_value: n.monitor.new,
          previous_task_id: n.monitor.previousTaskId,
        }
      : {}),
    at: n.at,
    instruction: cut(n.instruction, INSTRUCTION_CHARS),
  };
}
