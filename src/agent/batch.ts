// A model call's batch: a provider that sends several actions in one output (OpenAI's `actions[]`, Anthropic's
// tool_use blocks, Gemini's function calls) has them carried out as consecutive steps, each with its own
// observation (the run folder keeps one between two actions), and only the first step makes the call. The first
// step's action event keeps the actions still to come in `metadata.batch.pending`; each later step takes the next one
// from the step before and records the rest. A provider's check (OpenAI's pending safety check, Gemini's
// require_confirmation) holds all the call's actions behind a question: they are carried out only after the person
// confirms. What ends a batch early (an action that failed, a session restored, anything the person said) sends the
// model the page as it is instead: the family tells it which actions were not carried out.
import type { BatchedAction, ParsedOutput } from '../model/parse';
import { parseEventId } from '../trajectory/ids';
import type { Event } from '../trajectory/schema';
import { BATCH_KEY } from './history';

/** `metadata.batch` of an action event (a run-folder field). */
export interface BatchRecord {
  /** The call's actions not carried out yet, in order. */
  pending: BatchedAction[];
  /** The provider's check the pending actions wait behind (the step's action is then the question). */
  check?: { message: string; native?: unknown };
  /** This step carried out the next action of an earlier step's call (it made no call of its own). */
  continues?: true;
  /** The person confirmed the provider's check these actions waited behind. */
  confirmed?: true;
}

/** The metadata a step's action event gets for its call's batch, or nothing when the call had one action. */
export function batchMetadata(parsed: Pick<ParsedOutput, 'native' | 'then' | 'check'>): Record<string, unknown> {
  const native = parsed.native === undefined ? {} : { native_action: parsed.native };
  const pending = [...(parsed.then ?? [])];
  if (pending.length === 0 && !parsed.check) return native;
  const record: BatchRecord = { pending, ...(parsed.check ? { check: parsed.check } : {}) };
  return { ...native, [BATCH_KEY]: record };
}

/** The metadata of a step that carries out `next`, the first of an earlier call's pending actions. */
export function continuedMetadata(next: BatchedAction, rest: BatchedAction[], confirmed: boolean) {
  const record: BatchRecord = { pending: rest, continues: true, ...(confirmed ? { confirmed: true } : {}) };
  return { ...(next.native === undefined ? {} : { native_action: next.native }), [BATCH_KEY]: record };
}

/** The batch record of an action event, when it has one. */
export function batchOf(event: Extract<Event, { type: 'action' }>): BatchRecord | undefined {
  const record = (event.metadata as Record<string, unknown> | undefined)?.[BATCH_KEY] as BatchRecord | undefined;
  return record && Array.isArray(record.pending) ? record : undefined;
}

/** Words a reply to a provider's check starts with when the person confirms; anything else is no. */
const YES = /^(yes|y|yep|yeah|ok|okay|sure|confirm(ed)?|approve(d)?|go ahead|proceed|continue|do it|allow(ed)?)\b/i;
const NO = /\b(no|not|don'?t|do not|never|stop|cancel|deny|denied|refuse)\b/i;

/**
 * Whether a reply to a provider's check confirms it: it starts with a yes and says no no. Where in doubt it does not:
 * the actions stay undone, and the model reads the reply and may ask again.
 */
export function confirmsCheck(reply: string): boolean {
  const text = reply.trim();
  return YES.test(text) && !NO.test(text);
}

/** The next action a step takes from the call before it, with the rest of the batch; null: the model decides. */
export interface BatchStep {
  next: BatchedAction;
  rest: BatchedAction[];
  /** The actions waited behind a provider's check the person confirmed. */
  confirmed: boolean;
}

/** The latest generation's event of `kind` at `step` (a call suffix excluded), with that generation. */
function latestOf(events: readonly Event[], step: number, kind: 'action' | 'tool' | 'reply') {
  let found: { event: Event; generation: number } | undefined;
  for (const e of events) {
    const id = parseEventId(e.id);
    if (!id || id.step !== step || id.kind !== kind || id.call !== undefined) continue;
    if (!found || id.generation >= found.generation) found = { event: e, generation: id.generation };
  }
  return found;
}

/** Whether anything was said to the task, or happened to its session, before `step` (which ends a batch). */
function interrupted(events: readonly Event[], step: number): boolean {
  return events.some((e) => {
    const id = parseEventId(e.id);
    if (!id || id.step !== step) return false;
    return ['followup', 'feedback', 'handback', 'note', 'restored'].includes(id.kind);
  });
}

/**
 * The action step `step` (in session `generation`) takes from the step before's call, or null when the model decides
 * it: the step before left no pending actions; its check was not confirmed; or its batch ended early (its action
 * failed, the session was restored, the runtime asked something, or the person said something to the task).
 */
export function batchStep(events: readonly Event[], step: number, generation: number): BatchStep | null {
  const before = latestOf(events, step - 1, 'action');
  if (!before || before.event.type !== 'action') return null;
  const batch = batchOf(before.event);
  if (!batch || batch.pending.length === 0) return null;
  const [next, ...rest] = batch.pending;
  if (!next) return null;
  if (batch.check) {
    const reply = latestOf(events, step - 1, 'reply')?.event;
    const text = reply?.type === 'observation' && reply.observation_type === 'user_message' ? reply.content : '';
    return confirmsCheck(text) ? { next, rest, confirmed: true } : null;
  }
  const tool = latestOf(events, step - 1, 'tool')?.event;
  const failed = tool?.type === 'observation' && tool.observation_type === 'tool_output' && tool.error !== '';
  const asked = events.some((e) => {
    const id = parseEventId(e.id);
    return id?.step === step - 1 && id.kind === 'asked';
  });
  if (failed || asked || before.generation !== generation || interrupted(events, step)) return null;
  return { next, rest, confirmed: false };
}
