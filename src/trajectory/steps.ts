// Steps rebuilt from the flat event stream on read (the stream is written flat so nothing is ever rewritten).
//
// Pass 1 walks the stream: an action opens a step and takes the observations with action_id null gathered since
// the previous action as its `pre`; observations naming an action are set aside. Pass 2 attaches each set-aside
// observation to the step of the action it names (`post`). One that arrived only after a later action is "late":
// it is attached both to its own step (`post` and `latePost`) and to the step in whose window it appeared
// (`lateArrivals`). An action_id naming no action, and two actions with no observation between, are errors.
import { ConsecutiveActionsError, UnknownActionIdError } from './errors';
import type { Action, EnvironmentObservation, Event, Observation, UserMessageType } from './schema';

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
  /** 1-based number of the step (counting actions). */
  step: number;
  action_name: string;
  description: string;
  thoughts: string;
  url: string;
  screenshot: string;
  /** The action's tool output text (errors as `error: …` lines). */
  text_observation: string;
  /** User messages that came before the action. */
  user_messages: { message_type: UserMessageType; content: string }[];
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

function summarise(steps: readonly Step[], index: number, action: Action, number: number): StepSummary {
  const step = steps[index];
  const thoughts = action.content.arguments['thoughts'];
  return {
    step: number,
    action_name: action.action_name,
    description: action.action_nl_description,
    thoughts: typeof thoughts === 'string' ? thoughts : '',
    url: stepUrl(steps, index),
    screenshot: stepScreenshot(steps, index),
    text_observation: step ? textObservation(step) : '',
    user_messages: (step?.pre ?? []).flatMap((o) =>
      o.observation_type === 'user_message' ? [{ message_type: o.message_type, content: o.content }] : [],
    ),
  };
}

/** One flat row per action, for tables (the CLI `show` command, the viewer). */
export function stepSummaries(events: readonly Event[]): StepSummary[] {
  const steps = buildSteps(events);
  const rows: StepSummary[] = [];
  steps.forEach((step, index) => {
    if (step.action) rows.push(summarise(steps, index, step.action, rows.length + 1));
  });
  return rows;
}
