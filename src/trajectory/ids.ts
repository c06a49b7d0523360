// Deterministic event ids: one id per (scope, step, kind, generation), so a retried write is recognised as the same
// event and skipped, while a genuinely new event (a re-observation after a lost session) gets a new id.
//
// Format: `<scope>-<step, 4 digits>-<kind>-g<generation>`, e.g. `step-0007-pre-g0`, `user-0003-reply-g0`.
//
// Kinds written by the agent loop (scope `step` unless noted):
//   task      (scope user, step 0) the task instruction, a user_message of type `task`
//   followup  (scope user) a follow-up task from the user, user_message `followup_task`; with a call suffix
//             (`-c1`, `-c2`, …) a message said to the running task (`cua say`, metadata.kind "steer")
//   reply     (scope user) the user's answer to ask_user_question at that step, user_message `critical_point_response`
//   restored  a session_restored note (tool_output, action_id null) before a re-observation
//   feedback  retry feedback to the model (user_message `retry_feedback`), e.g. after a parse failure
//   pre       environment observation before the step's action (pre screenshot, URL, page info); at step 0 the
//             start page, the run's first environment observation, before step 1 (screenshot_0_pre.png)
//   action    the action the model chose
//   tool      the action's text result (tool_output, action_id = the action)
//   post      environment observation after the action (post screenshot, action_id = the action)
//   handback  a note that a person took over the browser and handed it back, before the next step's observation
//             (tool_output, action_id null, metadata.note "handback")
//   note      a note from the runtime the model reads before the next step's observation (tool_output, action_id
//             null; metadata.note "loop": it repeated an action on an unchanged page)
//   asked     a question the runtime asks the user after the step's action (an ask_user_question action with
//             metadata.asked_by "runtime", no model call): a resend of a request in doubt was held back; with a call
//             suffix a budget's or a loop's question, and its reply (`reply` with the same suffix)
//   output    a task's structured output, after its last step (tool_output, action_id null, metadata.note
//             "output"): the extraction's model calls (metadata.tool_sub_calls), the output or why it has none; the
//             model never reads it
//   monitor   after a scheduled run ended: its schedule's monitor notified about it (tool_output, action_id null,
//             metadata.note "monitor", with the delivery id and the old and new values)
//
// A desktop step may run several tool calls: the second and later calls' `action` and `tool` events carry
// the call's place in the step as a suffix, `-c<call>` (e.g. `step-0003-action-g0-c1`); the first call's ids have
// none, so they read as the browser's.
//
// `generation` is the session generation (or attempt) of the step: it starts at 0 and goes up each time the
// browser session is lost and restored mid-step, so the re-observed `pre` and re-decided `action` are new events.

export const EVENT_KINDS = [
  'task',
  'followup',
  'reply',
  'restored',
  'feedback',
  'pre',
  'action',
  'tool',
  'post',
  'asked',
  'handback',
  'note',
  'output',
  'monitor',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

const USER_KINDS: ReadonlySet<EventKind> = new Set<EventKind>(['task', 'followup', 'reply']);

export interface EventIdParts {
  step: number;
  kind: EventKind;
  /** Session generation / attempt; 0 when omitted. */
  generation?: number;
  /** A tool call's place in its desktop step; 0 (no suffix) when omitted. */
  call?: number;
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a whole number ≥ 0, got ${value}`);
}

export function eventScope(kind: EventKind): 'user' | 'step' {
  return USER_KINDS.has(kind) ? 'user' : 'step';
}

export function eventId({ step, kind, generation = 0, call = 0 }: EventIdParts): string {
  checkCount('step', step);
  checkCount('generation', generation);
  checkCount('call', call);
  const suffix = call > 0 ? `-c${call}` : '';
  return `${eventScope(kind)}-${String(step).padStart(4, '0')}-${kind}-g${generation}${suffix}`;
}

const ID_PATTERN = /^(user|step)-(\d{4,})-([a-z]+)-g(\d+)(?:-c(\d+))?$/;

/** The parts of an id made by `eventId`, or undefined for any other id (e.g. uuids from the original). */
export function parseEventId(id: string): (Required<Omit<EventIdParts, 'call'>> & { call?: number }) | undefined {
  const match = ID_PATTERN.exec(id);
  if (!match) return undefined;
  const [, scope, step, kind, generation, call] = match;
  if (!isEventKind(kind) || eventScope(kind) !== scope) return undefined;
  return { step: Number(step), kind, generation: Number(generation), ...(call ? { call: Number(call) } : {}) };
}

export function isEventKind(value: unknown): value is EventKind {
  return typeof value === 'string' && (EVENT_KINDS as readonly string[]).includes(value);
}
