// The view's decisions, one per action event (what the model saw, did and got back, and where), and the steps they make.
//
// Steps are numbered as `stepSummaries` numbers them. A decision superseded after a lost worker (its effect unknown,
// the step re-decided in a new session) is not a step of its own: it rides on the step that re-decided it. An invalid
// output (no action could be made of it) is a step, with its error and no marker. A replay run (task.json
// `metadata.replay_of`) says of each step whether it was replayed, healed or decided by the model.
//
// A desktop run (environment `desktop`) has several tool calls per step: they are shown as one step, each call with its
// own action, observation and marker, all markers drawn on the step's screenshot. Desktop points are screen pixels
// (the tool output's resolved point), scaled to the screenshot; the browser's model-coordinate mapping is not used.
import { stepUsageLine, usageTotals } from '../trajectory/usage';
import { familyOf } from '../families/registry';
import { summarizeAction } from '../agent/summary';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { modelToViewport } from '../coords/viewport';
import { parseEventId } from '../trajectory/ids';
import type { Action, Event, Observation } from '../trajectory/schema';
import { buildSteps, replayMarkOf, stepSummaries } from '../trajectory/steps';
import type { Step, StepSummary } from '../trajectory/steps';
import { callSummary, callTarget, stepToolsSummary, windowsLine } from './desktop';
import { coordinateOf, desktopMarker, markerFor, pointerAfter } from './markers';
import type { Geometry, Marker, Point, Size } from './markers';
import { recordOf } from './run-settings';
import type { ViewApproval, ViewCall, ViewDecision, ViewStep, ViewUserMessage } from './view';

function screenshotIn(observations: readonly Observation[]): string {
  const shots = observations.flatMap((o) =>
    o.observation_type === 'environment' && o.screenshot_path !== '' ? [o.screenshot_path] : [],
  );
  return shots.at(-1) ?? '';
}

/** The screenshot the model saw at each action step: its latest pre screenshot, else the previous step's post one. */
export function preScreenshots(events: readonly Event[]): string[] {
  const steps = buildSteps(events, { withTail: false });
  return steps.map((step, i) => screenshotIn(step.pre) || screenshotIn(steps[i - 1]?.post ?? []));
}

export function displayValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(displayValue).join(', ')}]`;
  return JSON.stringify(value) ?? String(value);
}

function summaryOf(action: Action, profile: string): string {
  const { thoughts: _t, ...args } = action.content.arguments;
  const candidate = { ...args, action: action.content.action };
  for (const name of new Set([profile, 'fara-1.5', 'fara-7b'])) {
    const parsed = familyOf(name).actionSchema.safeParse({ thoughts: '', ...candidate });
    if (parsed.success) return summarizeAction(parsed.data);
  }
  return action.action_name;
}

/** The provider's own action a native family's step was read from (`metadata.native_action`), as one line. */
function nativeActionOf(action: Action): string {
  const native = (action.metadata as Record<string, unknown> | undefined)?.['native_action'];
  if (native === undefined) return '';
  const text = JSON.stringify(native) ?? '';
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

export function userMessagesOf(observations: readonly Observation[], instruction: string): ViewUserMessage[] {
  return observations.flatMap((o): ViewUserMessage[] => {
    if (o.observation_type === 'user_message') {
      if (o.message_type === 'task' && o.content === instruction) return [];
      return [{ type: o.metadata['kind'] === 'steer' ? 'steer' : o.message_type, content: o.content }];
    }
    // Notes the model read with this observation: a handback, what a lost worker left in doubt.
    if (o.observation_type !== 'tool_output' || o.action_id !== null) return [];
    if (o.metadata['note'] === 'handback') return [{ type: 'handback', content: o.output }];
    if (o.metadata['in_doubt']) return [{ type: 'in_doubt', content: o.output }];
    return [];
  });
}

const isSessionRestore = (step: Step) =>
  step.pre.some((o) => o.observation_type === 'tool_output' && o.metadata['note'] === 'session_restored');

export interface DecisionContext {
  profile: string;
  space: CoordinateSpace;
  viewport: Viewport;
  /** The desktop's screen (desktop runs), null for the browser. */
  screen: Size | null;
  instruction: string;
  sizeOf: (screenshot: string) => Size | undefined;
  /** A replay run: each decision says how it came about. */
  replay: boolean;
  /** The run's approval questions by their event id (approvals.ts). */
  approvals: ReadonlyMap<string, ViewApproval>;
}

/** The marker and pixel point of an action; none for an invalid output (nothing was done) or a degenerate point. */
function placement(
  action: Action,
  geo: Geometry,
  pointer: Point | null,
  invalid: boolean,
): { marker: Marker | null; pixelPoint: Point | null } {
  if (invalid) return { marker: null, pixelPoint: null };
  const args = action.content.arguments;
  try {
    const coordinate = coordinateOf(args['coordinate']);
    return {
      marker: markerFor(action.action_name, args, geo, pointer),
      pixelPoint: coordinate ? modelToViewport(coordinate, geo.space, geo.viewport) : null,
    };
  } catch {
    return { marker: null, pixelPoint: null }; // a degenerate coordinate: nothing to draw
  }
}

const argList = (args: Record<string, unknown>) =>
  Object.entries(args)
    .filter(([name]) => name !== 'thoughts' && name !== 'action')
    .map(([name, value]) => ({ name, value: displayValue(value) }));

/** A desktop tool call; an invalid output acted nowhere. */
function callView(
  action: Action,
  step: Step,
  invalid: boolean,
  summary: StepSummary,
  screen: Size,
  image: Size,
): ViewCall {
  const args = action.content.arguments;
  const target = invalid ? null : callTarget(action.action_name, args, step.post);
  return {
    index: parseEventId(action.id)?.call ?? 0,
    actionName: action.action_name,
    summary: callSummary(action.action_name, args),
    args: argList(args),
    observation: summary.text_observation,
    pixelPoint: target ? (target.kind === 'point' ? target.at : target.to) : null,
    marker: target ? desktopMarker(target, screen, image) : null,
  };
}

function screenDescriptionOf(action: Action): string {
  const description = recordOf(action['metadata'])['screen_description'];
  return typeof description === 'string' ? description : '';
}

function decisionView(
  ctx: DecisionContext,
  step: Step,
  action: Action,
  summary: StepSummary,
  screenshot: string,
  pointer: Point | null,
  pageInfo: string,
): ViewDecision {
  const image = screenshot ? (ctx.sizeOf(screenshot) ?? null) : null;
  const invalid = summary.invalid !== null;
  const common = {
    number: summary.step,
    generation: summary.generation,
    superseded: summary.superseded,
    invalid: summary.invalid,
    actionName: action.action_name,
    nativeAction: nativeActionOf(action),
    args: argList(action.content.arguments),
    thoughts: summary.thoughts,
    url: summary.url,
    observation: summary.text_observation,
    userMessages: userMessagesOf(step.pre, ctx.instruction),
    screenshot,
    image,
    subCalls: summary.sub_calls,
    replay: ctx.replay ? replayMarkOf(action) : null,
    usage: stepUsageLine(usageTotals([action, ...step.post])),
    approval: ctx.approvals.get(action.id) ?? null,
  };
  if (ctx.screen) {
    const call = callView(action, step, invalid, summary, ctx.screen, image ?? ctx.screen);
    return {
      ...common,
      summary: invalid ? `${action.action_name} (invalid output)` : call.summary,
      marker: null,
      pixelPoint: null,
      calls: [call],
      windows: windowsLine(pageInfo),
      screenDescription: screenDescriptionOf(action),
    };
  }
  const geo: Geometry = { space: ctx.space, viewport: ctx.viewport, image: image ?? ctx.viewport };
  return {
    ...common,
    summary: invalid ? `${action.action_name} (invalid output)` : summaryOf(action, ctx.profile),
    ...placement(action, geo, pointer, invalid),
    calls: [],
    windows: '',
    screenDescription: '',
  };
}

/** The page_info the step's decision was made on: the latest one seen after the previous action. */
function pageInfoBefore(steps: readonly Step[], index: number): string {
  const seen = [...(steps[index - 1]?.post ?? []), ...(steps[index]?.pre ?? [])].flatMap((o) =>
    o.observation_type === 'environment' && o.page_info !== '' ? [o.page_info] : [],
  );
  return seen.at(-1) ?? '';
}

/** Every decision of the run in stream order, superseded ones included, following the pointer from one to the next. */
export function decisionViews(
  ctx: DecisionContext,
  events: readonly Event[],
  actionSteps: readonly Step[],
): ViewDecision[] {
  const summaries = stepSummaries(events);
  const shots = preScreenshots(events);
  let pointer: Point | null = null;
  return actionSteps.flatMap((step, i): ViewDecision[] => {
    const summary = summaries[i];
    if (!summary || !step.action) return [];
    if (isSessionRestore(step)) pointer = null; // a new browser session starts with its pointer at the corner
    const view = decisionView(ctx, step, step.action, summary, shots[i] ?? '', pointer, pageInfoBefore(actionSteps, i));
    // Where a superseded decision left the pointer is unknown.
    pointer = view.superseded ? null : pointerAfter(view.marker, pointer);
    return [view];
  });
}

/** A desktop step's later calls join the decision of its first: one decision per step, its calls in order. */
export function joinStepCalls(decisions: readonly ViewDecision[]): ViewDecision[] {
  const joinedDecisions: ViewDecision[] = [];
  for (const decision of decisions) {
    const last = joinedDecisions.at(-1);
    const sameStep =
      last !== undefined &&
      last.calls.length > 0 &&
      (decision.calls[0]?.index ?? 0) > 0 &&
      last.number === decision.number &&
      last.generation === decision.generation &&
      last.superseded === decision.superseded;
    if (sameStep) joinedDecisions[joinedDecisions.length - 1] = joined(last, decision);
    else joinedDecisions.push(decision);
  }
  return joinedDecisions;
}

function joined(first: ViewDecision, next: ViewDecision): ViewDecision {
  const calls = [...first.calls, ...next.calls];
  const invalid = first.invalid ?? next.invalid;
  const tools = stepToolsSummary(calls.map((c) => c.actionName));
  return {
    ...first,
    invalid,
    summary: invalid === null ? tools : `${tools} (invalid output)`,
    thoughts: [first.thoughts, next.thoughts].filter((t) => t !== '').join('\n'),
    userMessages: [...first.userMessages, ...next.userMessages],
    calls,
  };
}

/** Superseded decisions go inside the next step (the one that re-decided them), not into the list of steps. */
export function groupDecisions(decisions: readonly ViewDecision[]): ViewStep[] {
  const steps: ViewStep[] = [];
  let pending: ViewDecision[] = [];
  for (const decision of decisions) {
    if (decision.superseded) {
      pending.push(decision);
    } else {
      steps.push({ ...decision, supersededDecisions: pending });
      pending = [];
    }
  }
  // Only a stray `supersedes` mark can leave some with no later step: they stay visible on the last one.
  const last = steps.at(-1);
  if (last) last.supersededDecisions.push(...pending);
  else steps.push(...pending.map((d) => ({ ...d, supersededDecisions: [] })));
  return steps;
}
