// Steps rebuilt from the flat event stream on read (the stream is written flat so nothing is ever rewritten).
//
// Pass 1 walks the stream: an action opens a step and takes the observations with action_id null gathered since
// the previous action as its `pre`; observations naming an action are set aside. Pass 2 attaches each set-aside
// observation to the step of the action it names (`post`). One that arrived only after a later action is "late":
// it is attached both to its own step (`post` and `latePost`) and to the step in whose window it appeared
// (`lateArrivals`). An action_id naming no action, and two actions with no observation between, are errors.
//
// The flat rows (`stepSummaries`) number steps as the run folder does: from the action's event id (ours), else by
// counting. A worker lost mid-step leaves a decision whose effect is unknown; the step is re-decided in a new
// session generation under the same number, and the earlier decision is marked `superseded`, not counted again.
import { z } from 'zod';
import { ConsecutiveActionsError, UnknownActionIdError } from './errors';
import { parseEventId } from './ids';
import { ToolSubCallSchema } from './schema';
import type { Action, EnvironmentObservation, Event, Observation, ToolSubCall, UserMessageType } from './schema';

export interface Step {
  /** The step's action; null only for a trailing group of observations after the last action. */
  action: Action | null;
  /** Observations made before the action (action_id null), since the previous action. */
  pre: Observation[];
  /** Every observation naming this action, in stream order, late ones included. */
  post: Observation[];
  /** The part of `post` that arrived after a later action had already been taken. */
  latePost: Observation[];
  /** Late observations of earlier actions that arrived in this step's window (before this step's action). */
  lateArrivals: Observation[];
}

export interface BuildStepsOptions {
  /** Keep observations after the last action as a final step with no action (default true). */
  withTail?: boolean;
}

function newStep(action: Action | null, pre: Observation[]): Step {
  return { action, pre, post: [], latePost: [], lateArrivals: [] };
}

export function buildSteps(events: readonly Event[], options: BuildStepsOptions = {}): Step[] {
  const steps: Step[] = [];
  const pending: { observation: Observation; actionId: string; window: number }[] = [];
  let pre: Observation[] = [];
  let previous: Event | undefined;
  for (const event of events) {
    if (event.type === 'action') {
      if (previous?.type === 'action') throw new ConsecutiveActionsError(previous.id, event.id);
      steps.push(newStep(event, pre));
      pre = [];
    } else if (event.action_id === null) {
      pre.push(event);
    } else {
      pending.push({ observation: event, actionId: event.action_id, window: steps.length });
    }
    previous = event;
  }
  if ((options.withTail ?? true) && pre.length > 0) steps.push(newStep(null, pre));

  const stepOfAction = new Map<string, number>();
  steps.forEach((step, index) => {
    if (step.action) stepOfAction.set(step.action.id, index);
  });
  for (const { observation, actionId, window } of pending) {
    const owner = stepOfAction.get(actionId);
    if (owner === undefined) throw new UnknownActionIdError(observation.id, actionId);
    const ownerStep = steps[owner];
    if (!ownerStep) continue;
    ownerStep.post.push(observation);
    if (window > owner + 1) {
      ownerStep.latePost.push(observation);
      steps[window]?.lateArrivals.push(observation);
    }
  }
  return steps;
}

function environmentWith(observations: readonly Observation[], field: 'screenshot_path' | 'url') {
  return observations.filter(
    (o): o is EnvironmentObservation => o.observation_type === 'environment' && o[field] !== '',
  );
}

/** The step's screenshot: the first environment observation after its action, else the next step's pre one. */
export function stepScreenshot(steps: readonly Step[], index: number): string {
  const candidates = [...(steps[index]?.post ?? []), ...(steps[index + 1]?.pre ?? [])];
  return environmentWith(candidates, 'screenshot_path')[0]?.screenshot_path ?? '';
}

/** The URL the step's decision was made on: the latest one seen after the previous action. */
export function stepUrl(steps: readonly Step[], index: number): string {
  const candidates = [...(steps[index - 1]?.post ?? []), ...(steps[index]?.pre ?? [])];
  return environmentWith(candidates, 'url').at(-1)?.url ?? '';
}

export interface StepSummary {
  /** Step number: from the action's event id (our runs), else 1-based by counting decisions (foreign ids). */
  step: number;
  /** Session generation of the decision, from its event id (0 for foreign ids). */
  generation: number;
  /**
   * A later decision for the same step exists with a higher generation (or names this one in `metadata.supersedes`):
   * the worker was lost mid-step, this decision's effect is unknown, and the step was re-decided.
   */
  superseded: boolean;
  /** The error when the model's output could not be turned into an action (`metadata.invalid_reply`), else null. */
  invalid: string | null;
  action_name: string;
  /** The action's arguments as recorded, without `thoughts` (the seed's step summary carries them too). */
  arguments: Record<string, unknown>;
  description: string;
  thoughts: string;
  url: string;
  /** The step's screenshot; for a superseded decision only its own post screenshot (the next one is another session). */
  screenshot: string;
  /** The action's tool output text (errors as `error: …` lines). */
  text_observation: string;
  /** User messages that came before the action. */
  user_messages: { message_type: UserMessageType; content: string }[];
  /** Model calls the action's tool made (read_page_answer_question's page question); [] for most actions. */
  sub_calls: ToolSubCall[];
  /** A replay's step (`cua replay`) that ran the recorded action: as it was, or healed (its point moved). */
  replay?: 'replayed' | 'healed';
}

/** The marks an action event may carry in its metadata (extra fields; the original's reader ignores them). */
const ActionMarksSchema = z.looseObject({
  /** Id of the earlier action this one re-decides. */
  supersedes: z.string().nullish().catch(null),
  /** Set when the model's output could not be turned into an action. */
  invalid_reply: z
    .looseObject({ error: z.string().catch(''), error_type: z.string().catch('') })
    .nullish()
    .catch({ error: '', error_type: '' }),
  /** Set on a replay's step that ran the recorded action (`cua replay`). */
  replay: z
    .looseObject({
      how: z.enum(['replayed', 'healed']).optional().catch(undefined),
      /** A healed step's recorded point (model coordinates), before it moved to where its element is now. */
      healed_from: z.tuple([z.number(), z.number()]).optional().catch(undefined),
    })
    .nullish()
    .catch(null),
  /** Set on a question the runtime asked (no model call). */
  asked_by: z.string().nullish().catch(null),
});
type ActionMarks = z.infer<typeof ActionMarksSchema>;

function marksOf(action: Action): ActionMarks {
  const parsed = ActionMarksSchema.safeParse(action['metadata']);
  return parsed.success ? parsed.data : {};
}

/** How a step of a replay run came about (`cua replay`). */
export type ReplayMark = { how: 'replayed' } | { how: 'healed'; from: [number, number] | null } | { how: 'decided' };

/**
 * How an action of a replay run came about: the recording's action as it was (`replayed`), moved to where its
 * element is now (`healed`, with its recorded point in model coordinates), or the model's decision (`decided`: no
 * `metadata.replay`). Null for a question the runtime asked (`metadata.asked_by`), which is neither.
 */
export function replayMarkOf(action: Action): ReplayMark | null {
  const marks = marksOf(action);
  if (marks.asked_by === 'runtime') return null;
  const how = marks.replay?.how;
  if (how === 'healed') return { how, from: marks.replay?.healed_from ?? null };
  return how === 'replayed' ? { how } : { how: 'decided' };
}

/** The error text of an invalid output, or null for an ordinary action. */
function invalidOutputOf(action: Action): string | null {
  const invalid = marksOf(action).invalid_reply;
  if (!invalid) return null;
  return invalid.error || invalid.error_type || 'invalid output';
}

/** Step number and generation from one of our action ids, undefined for a foreign one. */
function ownActionId(action: Action): { step: number; generation: number } | undefined {
  const parts = parseEventId(action.id);
  return parts?.kind === 'action' ? { step: parts.step, generation: parts.generation } : undefined;
}

/** Ids of the actions re-decided later: a later action of the same step has a higher generation, or names them. */
function supersededActionIds(actions: readonly Action[]): Set<string> {
  const superseded = new Set<string>();
  const laterGeneration = new Map<number, number>();
  for (const action of [...actions].reverse()) {
    const own = ownActionId(action);
    if (own) {
      const later = laterGeneration.get(own.step);
      if (later !== undefined && later > own.generation) superseded.add(action.id);
      laterGeneration.set(own.step, Math.max(later ?? own.generation, own.generation));
    }
    const supersedes = marksOf(action).supersedes;
    if (supersedes) superseded.add(supersedes);
  }
  return superseded;
}

interface Numbered {
  step: number;
  generation: number;
  superseded: boolean;
}

/**
 * Step number, generation and superseded flag of each action, in order. Our ids carry their number; a foreign one
 * follows the previous row (the same number when that row was superseded, else the next), so a run of foreign ids
 * is numbered by counting and a run our writer continued after the original's keeps its numbers.
 */
function numberActions(actions: readonly Action[]): Numbered[] {
  const superseded = supersededActionIds(actions);
  const rows: Numbered[] = [];
  for (const action of actions) {
    const previous = rows.at(-1);
    const counted = previous ? previous.step + (previous.superseded ? 0 : 1) : 1;
    const own = ownActionId(action);
    rows.push({
      step: own?.step ?? counted,
      generation: own?.generation ?? 0,
      superseded: superseded.has(action.id),
    });
  }
  return rows;
}

function textObservation(step: Step): string {
  const lines: string[] = [];
  for (const o of step.post) {
    if (o.observation_type !== 'tool_output') continue;
    if (o.output !== '') lines.push(o.output);
    if (o.error !== '') lines.push(`error: ${o.error}`);
  }
  return lines.join('\n');
}

function summarise(steps: readonly Step[], index: number, action: Action, numbered: Numbered): StepSummary {
  const step = steps[index];
  const { thoughts, ...args } = action.content.arguments;
  // A superseded decision's effect is unknown: the next pre screenshot is of the restored session, not its result.
  const screenshot = numbered.superseded
    ? (environmentWith(step?.post ?? [], 'screenshot_path')[0]?.screenshot_path ?? '')
    : stepScreenshot(steps, index);
  const replayed = marksOf(action).replay?.how;
  return {
    ...numbered,
    ...(replayed ? { replay: replayed } : {}),
    invalid: invalidOutputOf(action),
    action_name: action.action_name,
    arguments: args,
    description: action.action_nl_description,
    thoughts: typeof thoughts === 'string' ? thoughts : '',
    url: stepUrl(steps, index),
    screenshot,
    text_observation: step ? textObservation(step) : '',
    user_messages: (step?.pre ?? []).flatMap((o) =>
      o.observation_type === 'user_message' ? [{ message_type: o.message_type, content: o.content }] : [],
    ),
    sub_calls: toolSubCallsOf(action),
  };
}

/**
 * The model calls an action's tool made: its `tool_sub_calls` entries read as ours (ToolSubCallSchema; a field
 * missing or of another type gets its default). An entry that is no object is left out; no field, no calls.
 */
export function toolSubCallsOf(action: Action): ToolSubCall[] {
  return (action.tool_sub_calls ?? []).flatMap((entry) => {
    const parsed = ToolSubCallSchema.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

/** One flat row per action (superseded decisions included, marked), for tables (the CLI `show`, the viewer). */
export function stepSummaries(events: readonly Event[]): StepSummary[] {
  const steps = buildSteps(events);
  const actions = steps.flatMap((s) => (s.action ? [s.action] : []));
  const numbers = numberActions(actions); // only a trailing step has no action, so indexes line up
  return steps.flatMap((step, index) => {
    const numbered = numbers[index];
    return step.action && numbered ? [summarise(steps, index, step.action, numbered)] : [];
  });
}
