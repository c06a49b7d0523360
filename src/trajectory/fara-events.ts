// The event stream of a run folder the original (Fara) wrote, made ours for `cua adopt` (issue 28): its events get the
// deterministic ids of ids.ts by their place in the stream (the original's ids are uuids), so the chat rebuilt from
// the folder, the step table and the viewer read an adopted run as they read one of ours. Nothing else of an event
// changes: its original id stays in `metadata.original_id`, and `action_id` follows its action's new id. Pure.
import type { EventKind } from './ids';
import { eventId, parseEventId } from './ids';
import type { Action, Event, Outcome, SolverStatus } from './schema';

/** Metadata key of an adopted event whose id was made ours: the id the original gave it. */
export const ORIGINAL_ID_KEY = 'original_id';
/** Metadata key on a tool_output whose text the model reads next step (src/agent/history.ts TEXT_OBSERVATION_KEY). */
const TEXT_OBSERVATION_KEY = 'text_observation';
/** The original feeds only these actions' output back to the model as text (seed 000, 1.8); ours add memorize. */
const FED_ACTIONS: ReadonlySet<string> = new Set(['read_page_answer_question', 'pause_and_memorize_fact']);
/** The original's start page: the environment observation before step 1, right after the task message. */
const START_PAGE = /(^|\/)screenshot_0_pre\.png$/;

type Observation = Exclude<Event, Action>;

/**
 * Why a stream breaks the reader's rules (docs/architecture.md#the-run-folder-format), in one line; undefined when it
 * keeps them.
 */
export function streamProblem(events: readonly Event[]): string | undefined {
  const actions = new Set<string>();
  for (const [i, e] of events.entries()) {
    if (e.type === 'action') {
      if (events[i - 1]?.type === 'action') return `two actions in a row (${events[i - 1]?.id}, ${e.id})`;
      actions.add(e.id);
    } else if (e.action_id !== null && !actions.has(e.action_id)) {
      return `observation ${e.id} names action ${e.action_id}, which is not before it in the stream`;
    }
  }
  if (!events.some((e) => e.type === 'observation' && e.observation_type === 'user_message' && isTask(e))) {
    return 'it has no task message (a user_message of type task)';
  }
  return undefined;
}

const isTask = (e: Observation) => e.observation_type === 'user_message' && e.message_type === 'task';

/** The steps of a stream: its actions (the original's are one per step). */
export function stepsOf(events: readonly Event[]): number {
  return events.reduce((max, e) => Math.max(max, parseEventId(e.id)?.step ?? 0), 0);
}

/**
 * The question a folder waits on: none unless its status is `waiting_for_user` and no reply (critical_point_response)
 * follows its last action. The last action's `question` when it asked one (ask_user_question), else the outcome the
 * original recorded with the status (the question's text), else that action's description.
 */
export function pendingQuestion(
  events: readonly Event[],
  status: SolverStatus,
  outcome: Outcome | null,
): string | null {
  if (status !== 'waiting_for_user') return null;
  const at = events.findLastIndex((e) => e.type === 'action');
  const replied = events
    .slice(at + 1)
    .some((e) => e.type === 'observation' && e.observation_type === 'user_message' && e.message_type !== 'task');
  if (replied) return null;
  const action = events[at];
  const asked = action?.type === 'action' ? (action.content.arguments as { question?: unknown }).question : undefined;
  if (typeof asked === 'string' && asked.trim()) return asked.trim();
  if (outcome?.answer.trim()) return outcome.answer.trim();
  return action?.type === 'action' && action.action_nl_description ? action.action_nl_description : 'Please reply.';
}

/**
 * The stream with our ids, assigned by place: the task message `user-0000-task-g0`; the start page (its screenshot
 * `screenshot_0_pre.png`) `step-0000-pre-g0`; the k-th action `step-k-action-g0`, its first tool output and
 * environment observation `step-k-tool-g0` / `step-k-post-g0`; the last environment observation before it
 * `step-k-pre-g0`; a reply after step k `user-k-reply-g0`; a follow-up or retry feedback before step k its
 * `followup` / `feedback`. An event that fits none of these (or whose id would repeat) keeps its own id: the
 * history passes it by, as it passes by any id it cannot read. A stream whose ids are all ours is returned as it is.
 */
export function withOurIds(events: readonly Event[]): Event[] {
  if (events.every((e) => parseEventId(e.id))) return [...events];
  const ids = assignIds(events);
  const actionOf = new Map<string, string>();
  events.forEach((e, i) => {
    const id = ids[i];
    if (e.type === 'action' && id) actionOf.set(e.id, id);
  });
  const fedActions = new Set(
    events.flatMap((e) => (e.type === 'action' && FED_ACTIONS.has(e.action_name) ? [e.id] : [])),
  );
  return events.map((e, i) => {
    const id = ids[i] ?? e.id;
    const metadata: Record<string, unknown> = { ...(e.metadata as Record<string, unknown> | undefined) };
    if (id !== e.id) metadata[ORIGINAL_ID_KEY] = e.id;
    if (e.type === 'action') return { ...e, id, ...(id !== e.id ? { metadata } : {}) };
    const fed = e.observation_type === 'tool_output' && e.action_id !== null && fedActions.has(e.action_id);
    if (fed && metadata[TEXT_OBSERVATION_KEY] === undefined && e.output) metadata[TEXT_OBSERVATION_KEY] = e.output;
    const actionId = e.action_id === null ? null : (actionOf.get(e.action_id) ?? e.action_id);
    return { ...e, id, metadata, action_id: actionId };
  });
}

/** Our id for each event of the stream (undefined: it keeps its own). */
function assignIds(events: readonly Event[]): (string | undefined)[] {
  const taken = new Set(events.flatMap((e) => (parseEventId(e.id) ? [e.id] : [])));
  const take = (step: number, kind: EventKind): string | undefined => {
    const id = eventId({ step, kind });
    if (taken.has(id)) return undefined;
    taken.add(id);
    return id;
  };
  const lastPre = lastEnvironmentBeforeEachAction(events);
  const stepOfAction = new Map<string, number>();
  let step = 0;
  return events.map((e, i) => {
    if (parseEventId(e.id)) return undefined;
    if (e.type === 'action') {
      step += 1;
      stepOfAction.set(e.id, step);
      return take(step, 'action');
    }
    if (e.action_id !== null) {
      const of = stepOfAction.get(e.action_id);
      if (of === undefined) return undefined;
      if (e.observation_type === 'tool_output') return take(of, 'tool');
      return e.observation_type === 'environment' ? take(of, 'post') : undefined;
    }
    switch (e.observation_type) {
      case 'environment':
        if (step === 0 && START_PAGE.test(e.screenshot_path)) return take(0, 'pre');
        return lastPre.has(i) ? take(step + 1, 'pre') : undefined;
      case 'user_message':
        if (e.message_type === 'task') return take(0, 'task');
        if (e.message_type === 'critical_point_response') return step > 0 ? take(step, 'reply') : undefined;
        if (e.message_type === 'followup_task') return take(step + 1, 'followup');
        return take(step + 1, 'feedback');
      default:
        return undefined; // a note before an action: no kind of ours fits it
    }
  });
}

/** Indexes of the last environment observation (before any action, not the start page) of each stretch between actions. */
function lastEnvironmentBeforeEachAction(events: readonly Event[]): Set<number> {
  const last = new Set<number>();
  let candidate: number | undefined;
  events.forEach((e, i) => {
    if (e.type === 'action') {
      if (candidate !== undefined) last.add(candidate);
      candidate = undefined;
    } else if (e.observation_type === 'environment' && e.action_id === null && !START_PAGE.test(e.screenshot_path)) {
      candidate = i;
    }
  });
  if (candidate !== undefined) last.add(candidate);
  return last;
}
