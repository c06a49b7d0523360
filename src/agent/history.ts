// Rebuilding the model's history for one step from the run folder's event stream. This is what lets any
// process resume a run: the events hold what the model saw and said; nothing lives only in memory.
import { APPROVAL_KEY, approvalOutcomeText } from './approvals';
import type { HistoryEntry } from '../model/context';
import { parseEventId } from '../trajectory/ids';
import type { Event } from '../trajectory/schema';

/** Metadata key on a tool_output that carries the text fed into the next step's prompt. */
export const TEXT_OBSERVATION_KEY = 'text_observation';
/** Metadata key on a tool_output whose action's resend was held back: the question the runtime asks the user. */
export const RUNTIME_QUESTION_KEY = 'runtime_question';
/**
 * Metadata key on a session_restored note of an adopted run (`cua adopt`): the URL its page was reopened at (the
 * folder kept no page state). The model reads the note with that step's observation, as it reads a note of doubt.
 */
export const PAGE_REOPENED_KEY = 'page_reopened';

type EnvironmentEvent = Extract<Event, { observation_type: 'environment' }>;

interface StepEvents {
  pre: Map<number, EnvironmentEvent>;
  action: Map<number, Extract<Event, { type: 'action' }>>;
  tool: Map<number, Extract<Event, { observation_type: 'tool_output' }>>;
  reply?: string;
  /** The runtime's question after the step's action (a held-back resend), when it asked one. */
  asked?: string;
  /**
   * Per generation: a restored session's note that says what is in doubt, or that an adopted run's page was reopened
   * (the model reads it with that observation).
   */
  doubt: Map<number, string>;
  /** A follow-up task given before this step (`cua continue`). */
  followUp?: string;
  /** Messages said to the task before this step (`cua say`), and notes of handbacks, in order. */
  said: string[];
  /** Retry feedback for this step (a fork's hint: `cua fork --hint`). */
  feedback?: string;
}

export class HistoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

function index(events: readonly Event[]): { task: string | null; steps: Map<number, StepEvents> } {
  let task: string | null = null;
  const steps = new Map<number, StepEvents>();
  const get = (s: number) => {
    let entry = steps.get(s);
    if (!entry)
      steps.set(s, (entry = { pre: new Map(), action: new Map(), tool: new Map(), doubt: new Map(), said: [] }));
    return entry;
  };
  for (const e of events) {
    const id = parseEventId(e.id);
    if (!id) continue;
    if (e.type === 'action' && id.kind === 'action') get(id.step).action.set(id.generation, e);
    // A budget's or a loop's question and its reply (a call suffix) are between the user and the runtime.
    else if (id.call !== undefined && (id.kind === 'asked' || id.kind === 'reply')) continue;
    else if (e.type === 'action' && id.kind === 'asked') get(id.step).asked = askedQuestion(e);
    else if (e.type === 'observation') {
      if (e.observation_type === 'environment' && id.kind === 'pre') get(id.step).pre.set(id.generation, e);
      else if (e.observation_type === 'tool_output' && id.kind === 'tool') get(id.step).tool.set(id.generation, e);
      else if (e.observation_type === 'user_message' && id.kind === 'task') task = e.content;
      else if (e.observation_type === 'user_message' && id.kind === 'reply') get(id.step).reply = replyRead(e);
      else if (e.observation_type === 'tool_output' && id.kind === 'restored' && readsNote(e.metadata)) {
        get(id.step).doubt.set(id.generation, e.output);
      } else if (e.observation_type === 'user_message' && id.kind === 'followup') {
        if (e.metadata['kind'] === 'steer') get(id.step).said.push(`The user says: ${e.content}`);
        else get(id.step).followUp = e.content;
      } else if (e.observation_type === 'tool_output' && (id.kind === 'handback' || id.kind === 'note')) {
        get(id.step).said.push(e.output);
      } else if (e.observation_type === 'user_message' && id.kind === 'feedback') get(id.step).feedback = e.content;
    }
  }
  return { task, steps };
}

/** A reply as the model reads it: a decided approval's says what happens to the request (src/agent/approvals.ts). */
function replyRead(e: { content: string; metadata: Record<string, unknown> }): string {
  const approval = e.metadata[APPROVAL_KEY] as { decision?: unknown; note?: unknown } | undefined;
  if (approval?.decision !== 'approved' && approval?.decision !== 'denied') return e.content;
  return `${e.content}\n${approvalOutcomeText(approval.decision, typeof approval.note === 'string' ? approval.note : '')}`;
}

/** A session_restored note the model reads: one that says what is in doubt, or that an adopted run's page was reopened. */
const readsNote = (metadata: Record<string, unknown>) => !!metadata['in_doubt'] || PAGE_REOPENED_KEY in metadata;

function latest<T>(m: Map<number, T>): [number, T] | undefined {
  const g = Math.max(...m.keys());
  const v = m.get(g);
  return v === undefined ? undefined : [g, v];
}

function rawResponse(action: Extract<Event, { type: 'action' }>): string {
  const first = action.llm_conversation?.messages?.[0] as { raw_response?: unknown } | undefined;
  return typeof first?.raw_response === 'string' ? first.raw_response : '';
}

/** Metadata key on an action event: the model call's batch it belongs to (src/agent/batch.ts). */
export const BATCH_KEY = 'batch';

/** Whether a step's action was the next action of an earlier step's model call (no call of its own). */
function continuesCall(action: Extract<Event, { type: 'action' }>): boolean {
  const batch = (action.metadata as Record<string, unknown> | undefined)?.[BATCH_KEY] as { continues?: unknown };
  return batch?.continues === true;
}

function askedQuestion(action: Extract<Event, { type: 'action' }>): string {
  const question = (action.content.arguments as { question?: unknown } | undefined)?.question;
  return typeof question === 'string' ? question : '';
}

/**
 * The carry-over from step s into step s+1: the text observation of its action and the user's reply (to the runtime's
 * question, the question with it: the model did not ask it).
 */
function carry(s: StepEvents | undefined): { textObservation?: string; userReply?: string } {
  if (!s) return {};
  const finalAction = latest(s.action);
  const tool = finalAction ? s.tool.get(finalAction[0]) : undefined;
  const text = tool?.metadata?.[TEXT_OBSERVATION_KEY];
  const reply = s.reply && s.asked ? `The runtime asked me: ${s.asked}\nMy reply: ${s.reply}` : s.reply;
  return {
    ...(typeof text === 'string' && text ? { textObservation: text } : {}),
    ...(reply ? { userReply: reply } : {}),
  };
}

/**
 * What the user told the task before a step, the model reads with its observation (kept like a reply): a follow-up
 * task, then messages said to it and notes of handbacks, in order, then retry feedback (a fork's hint).
 */
function toldBefore(s: StepEvents | undefined): string {
  if (!s) return '';
  const followUp = s.followUp ? `New task from the user: ${s.followUp}` : '';
  const hint = s.feedback ? `Hint from the user: ${s.feedback}` : '';
  return [followUp, ...s.said, hint].filter(Boolean).join('\n\n');
}

/** A step's observation with what a restored session's note says is in doubt, before anything else it carries. */
function withDoubt<T extends { textObservation?: string; userReply?: string }>(seen: T, doubt: string | undefined): T {
  if (!doubt) return seen;
  if (seen.userReply) return { ...seen, userReply: `${seen.userReply}\n\n${doubt}` };
  return { ...seen, textObservation: seen.textObservation ? `${doubt}\n\n${seen.textObservation}` : doubt };
}

/** What the model saw at a step: its screenshot (as `screenshot`) and the page URL, when they were recorded. */
function seenAt(pre: EnvironmentEvent | undefined): { screenshot?: string; url?: string } {
  return {
    ...(pre?.screenshot_path ? { screenshot: pre.screenshot_path } : {}),
    ...(pre?.url ? { url: pre.url } : {}),
  };
}

/**
 * The history for deciding `step` in session `generation`: the task together with the first step's screenshot (one
 * user message, as the original opens its chat: no URL line, no step sentence), the model's output for it, then for
 * each later step its observation and output (the final generation only), the current step's observation last.
 */
export function historyForStep(events: readonly Event[], step: number, generation: number): HistoryEntry[] {
  const { task, steps } = index(events);
  if (task === null) throw new HistoryError('the run has no task message (user-0000-task-g0)');
  const observed = (s: number, pre: EnvironmentEvent | undefined, doubt?: string): HistoryEntry => {
    const { screenshot } = seenAt(pre);
    const told = toldBefore(steps.get(s));
    if (s === 1) {
      const text = [task, told, doubt].filter(Boolean).join('\n\n');
      return { kind: 'task', text, ...(screenshot ? { screenshot } : {}) };
    }
    const seen = { kind: 'observation' as const, ...seenAt(pre), ...carry(steps.get(s - 1)) };
    return withDoubt(told ? { ...seen, userReply: [seen.userReply, told].filter(Boolean).join('\n\n') } : seen, doubt);
  };
  const history: HistoryEntry[] = [];
  for (let s = 1; s < step; s++) {
    const ev = steps.get(s);
    const action = ev && ev.action.size ? latest(ev.action) : undefined;
    if (!ev || !action) throw new HistoryError(`step ${s} has no recorded action`);
    history.push(observed(s, ev.pre.get(action[0]) ?? latest(ev.pre)?.[1]));
    history.push(
      continuesCall(action[1])
        ? { kind: 'assistant', text: '', continues: true }
        : { kind: 'assistant', text: rawResponse(action[1]) },
    );
  }
  const current = steps.get(step)?.pre.get(generation);
  if (!current) throw new HistoryError(`step ${step} has no observation for session generation ${generation}`);
  history.push(observed(step, current, steps.get(step)?.doubt.get(generation)));
  return history;
}

/** Facts memorised so far (pause_and_memorize_fact), in order, final generations only. */
export function memorizedFacts(events: readonly Event[]): string[] {
  const { steps } = index(events);
  const facts: string[] = [];
  for (const s of [...steps.keys()].sort((a, b) => a - b)) {
    const action = latest(steps.get(s)?.action ?? new Map());
    const args = action?.[1].content.arguments as { fact?: unknown } | undefined;
    if (action?.[1].action_name === 'pause_and_memorize_fact' && typeof args?.fact === 'string') facts.push(args.fact);
  }
  return facts;
}

/**
 * The text the last step's action left (the original's answer when its step budget runs out): its text observation
 * (a page answer, a failure the model read), else its tool output, else its error; null when no action left text.
 * Notes of restored sessions (no action_id) do not count.
 */
export function lastObservationText(events: readonly Event[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type !== 'observation' || e.observation_type !== 'tool_output' || e.action_id === null) continue;
    const fed = e.metadata[TEXT_OBSERVATION_KEY];
    return (typeof fed === 'string' && fed !== '' ? fed : e.output || e.error) || null;
  }
  return null;
}

/** The URL of the newest environment observation, for restoring a session. */
export function lastUrl(events: readonly Event[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'observation' && e.observation_type === 'environment' && e.url) return e.url;
  }
  return null;
}

/**
 * The web pages the run showed before `current` (a restored session's page), for `back` past the restored tab's own
 * history: the environment observations' URLs in order, each kept at its newest showing only, without `current`, and
 * only http(s) ones (a blank or notice page is nothing to go back to); newest last.
 */
export function earlierUrls(events: readonly Event[], current: string): string[] {
  const newestFirst: string[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type !== 'observation' || e.observation_type !== 'environment' || !e.url) continue;
    if (e.url !== current && /^https?:/i.test(e.url) && !newestFirst.includes(e.url)) newestFirst.push(e.url);
  }
  return newestFirst.reverse();
}
