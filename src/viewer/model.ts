// The trajectory viewer's view-model: a plain, pure description of a run, one row per step, with the marker to draw
// on the step's pre screenshot (where the action landed) in screenshot pixels.
//
// The action events keep only the model's coordinates, so the pixel position is recomputed here exactly as the
// dispatcher does (modelToViewport with the run's profile and viewport from task.json), then scaled from viewport
// pixels to screenshot pixels (the same numbers unless the screenshot was taken at another scale).
// A drag starts wherever the pointer was left: the viewer follows the pointer from step to step to draw it.
//
// Steps are numbered as `stepSummaries` numbers them. A decision superseded after a lost worker (its effect unknown,
// the step re-decided in a new session) is not a step of its own: it rides on the step that re-decided it. An invalid
// reply (no action could be made of it) is a step, with its error and no marker. A replay run (task.json
// `metadata.replay_of`) says of each step whether it was replayed, healed or decided by the model.
//
// A desktop run (environment `desktop`) is shown by turn: the tool calls of one turn are one step, each call with its
// own action, observation and marker, all markers drawn on the turn's screenshot. Desktop points are screen pixels
// (the tool output's resolved point), scaled to the screenshot; the browser's model-coordinate mapping is not used.
import { stepUsageLine, usageLine, usageTotals } from '../trajectory/usage';
import { z } from 'zod';
import { isFaraName } from '../actions/fara';
import { faraSpace } from '../families/fara-common/spaces';
import type { FaraName } from '../actions/fara';
import { summarizeAction } from '../agent/summary';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { NORM1000, modelToViewport, resizedPixelsSpace, scaleScroll } from '../coords/viewport';
import { smartResize } from '../image/smart-resize';
import { parseEventId } from '../trajectory/ids';
import type { RunRecord } from '../trajectory/reader';
import type { Action, Event, Observation, ToolSubCall, UserMessageType } from '../trajectory/schema';
import { buildSteps, replayMarkOf, stepSummaries } from '../trajectory/steps';
import type { ReplayMark, Step, StepSummary } from '../trajectory/steps';
import { tallyOf } from '../replay/summary';
import type { EnvironmentName } from '../contract/task';
import { callSummary, callTarget, environmentOf, screenOf, turnSummary, windowsLine } from './desktop';
import type { CallTarget } from './desktop';

export interface Point {
  x: number;
  y: number;
}

export interface Size {
  width: number;
  height: number;
}

export type ScrollDirection = 'up' | 'down' | 'left' | 'right';

/** What to draw on a screenshot, in its pixels. Arrow heads are triangles (tip first). */
export type Marker =
  | { kind: 'point'; at: Point }
  | { kind: 'drag'; from: Point | null; to: Point; head: Point[] }
  | { kind: 'scroll'; at: Point; to: Point; head: Point[]; direction: ScrollDirection };

/** How model coordinates map onto a screenshot. */
export interface Geometry {
  space: CoordinateSpace;
  viewport: Viewport;
  /** Pixel size of the screenshot the marker is drawn on. */
  image: Size;
}

export interface ViewUserMessage {
  /** A user message's type, or a note the runtime wrote for the model: `steer` (a message said to the task), `handback`
   * (a person had the browser), `in_doubt` (a lost worker's action may or may not have taken effect). */
  type: UserMessageType | 'steer' | 'handback' | 'in_doubt';
  content: string;
}

/** One tool call of a desktop turn: what was called, what came of it and where it acted. */
export interface ViewCall {
  /** Place in the turn: 0 for the first call, then 1, 2, … (the `-c<n>` suffix of its event id). */
  index: number;
  actionName: string;
  /** One line, e.g. `click "the OK button"`. */
  summary: string;
  /** The call's arguments (thoughts left out), as display text. */
  args: { name: string; value: string }[];
  /** The call's tool output (errors as `error: …` lines). */
  observation: string;
  /** Where the call clicked (a drag: where it ended) in screen pixels, null for calls without a point. */
  pixelPoint: Point | null;
  /** What to draw on the turn's screenshot, in its pixels. */
  marker: Marker | null;
}

/** One decision of the model: the action, what it saw and what came of it. For the desktop, one turn. */
export interface ViewDecision {
  /** Step number, as in `stepSummaries` (from the event id; by counting for foreign ids). */
  number: number;
  /** Session generation of the decision (0 for foreign ids). */
  generation: number;
  /** Re-decided after the worker was lost mid-step: this decision's effect is unknown. */
  superseded: boolean;
  /** The error when the model's reply could not be turned into an action, else null. */
  invalid: string | null;
  /** The action's name (a desktop turn: its first call's). */
  actionName: string;
  /** One line, e.g. `left_click (500, 200)`; a desktop turn of several calls names its tools, `click + type_text`. */
  summary: string;
  /** The action's arguments (thoughts left out), as display text (a desktop turn: its first call's). */
  args: { name: string; value: string }[];
  thoughts: string;
  url: string;
  /** The action's tool output (page answer, errors as `error: …` lines) (a desktop turn: its first call's). */
  observation: string;
  userMessages: ViewUserMessage[];
  /** Run-relative path of the screenshot the model saw ('' when none). */
  screenshot: string;
  /** The screenshot's pixel size, null when it could not be read. */
  image: Size | null;
  /** Where the action landed in viewport pixels (its `coordinate`), null for actions without one and invalid replies. */
  pixelPoint: Point | null;
  /** A desktop turn's markers are on its calls: null here. */
  marker: Marker | null;
  /** A desktop turn's tool calls in order; empty for the browser. */
  calls: ViewCall[];
  /** The desktop's window list the turn was decided on (page_info); '' for the browser. */
  windows: string;
  /** The vision model's description of the screen for a desktop turn; '' for the browser. */
  screenDescription: string;
  /** Model calls the action's tool made (read_page_answer_question's page question), from `tool_sub_calls`. */
  subCalls: ToolSubCall[];
  /** In a replay run: replayed, healed (with its recorded point) or decided by the model; null in any other run. */
  replay: ReplayMark | null;
  /** The step's model calls (its decision's and its tool's): tokens and cost, one line; '' when it made none. */
  usage: string;
}

/** `12,345` */
const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** One line about a model call the action's tool made: model, prompt size (and tokens, when known), duration. */
export function subCallLine(call: ToolSubCall): string {
  const tokens = call.messages[0]?.usage.prompt_tokens;
  const size = `${count(call.prompt_chars)} characters of prompt${tokens ? ` (${count(tokens)} tokens)` : ''}`;
  const page = call.page_chars !== undefined ? `, page text ${count(call.page_chars)} characters` : '';
  return `${call.model || 'model unknown'} · ${size}${page} · ${count(call.duration_ms)} ms`;
}

/** A step of the run: its (last) decision, with the earlier decisions it superseded. */
export interface ViewStep extends ViewDecision {
  /** Earlier decisions for this step whose worker was lost (effect unknown), oldest first; not steps of their own. */
  supersededDecisions: ViewDecision[];
}

export interface TrajectoryView {
  runId: string;
  instruction: string;
  environment: EnvironmentName;
  /** The desktop's screen size in pixels (markers' coordinate space); null for the browser. */
  screen: Size | null;
  startUrl: string;
  profile: FaraName;
  viewport: Viewport;
  status: string;
  endReason: string;
  endDetail: string;
  answer: string | null;
  verification: { name: string; score: number | null; reasoning: string }[];
  warnings: string[];
  /** The steps (desktop: turns), superseded decisions inside the step that re-decided them (not counted as steps). */
  steps: ViewStep[];
  /** User messages recorded after the last action. */
  after: ViewUserMessage[];
  /** A replay run (`cua replay`): the run it replays and how its steps came about; null for any other run. */
  replay: ViewReplay | null;
  /** The run's model calls, tokens and cost (the judge's included), one line (src/trajectory/usage.ts). */
  usage: string;
}

/** What a replay run's header says: `replay of <of>: N replayed, N healed, N decided`. */
export interface ViewReplay {
  /** The recorded run's id (task.json `metadata.replay_of.run_id`); '' for a cached run. */
  of: string;
  /** A cached run's cache (task.json `metadata.cache.name`; `cua run --cache`). */
  cache?: string;
  replayed: number;
  healed: number;
  decided: number;
}

export type ViewInput = Pick<
  RunRecord,
  | 'runId'
  | 'task'
  | 'events'
  | 'status'
  | 'outcome'
  | 'endReason'
  | 'endDetail'
  | 'verification'
  | 'warnings'
  | 'runState'
>;

export const DEFAULT_VIEWPORT: Viewport = { width: 1440, height: 900 };

const DRAG_ACTIONS: ReadonlySet<string> = new Set(['left_click_drag', 'drag']);
const SCROLL_AXES: Readonly<Record<string, 'vertical' | 'horizontal'>> = { scroll: 'vertical', hscroll: 'horizontal' };

const CoordinateArg = z.tuple([z.number(), z.number()]);
const ViewportArg = z.looseObject({ width: z.number().positive(), height: z.number().positive() });

/** The model-space `[x, y]` of an argument, when it is one. */
function coordinateOf(value: unknown): [number, number] | null {
  const parsed = CoordinateArg.safeParse(value);
  return parsed.success && parsed.data.every(Number.isFinite) ? parsed.data : null;
}

/** A model coordinate in screenshot pixels. */
export function toImagePoint(coordinate: readonly [number, number], geo: Geometry): Point {
  const p = modelToViewport(coordinate, geo.space, geo.viewport);
  return { x: (p.x * geo.image.width) / geo.viewport.width, y: (p.y * geo.image.height) / geo.viewport.height };
}

/** The arrow head at `to` of a line from `from`: a triangle, tip first. */
export function arrowHead(from: Point, to: Point, size: number): Point[] {
  const length = Math.hypot(to.x - from.x, to.y - from.y);
  if (length === 0) return [];
  const ux = (to.x - from.x) / length;
  const uy = (to.y - from.y) / length;
  const base = { x: to.x - ux * size, y: to.y - uy * size };
  const half = size * 0.6;
  return [to, { x: base.x - uy * half, y: base.y + ux * half }, { x: base.x + uy * half, y: base.y - ux * half }];
}

const headSize = (image: Size) => Math.max(14, image.width / 48);

function scrollMarker(
  axis: 'vertical' | 'horizontal',
  args: Record<string, unknown>,
  geo: Geometry,
): Extract<Marker, { kind: 'scroll' }> | null {
  const pixels = typeof args['pixels'] === 'number' ? args['pixels'] : NaN;
  if (!Number.isFinite(pixels) || Math.trunc(pixels) === 0) return null;
  const coordinate = coordinateOf(args['coordinate']);
  const at = coordinate ? toImagePoint(coordinate, geo) : { x: geo.image.width / 2, y: geo.image.height / 2 };
  // The model's positive amounts scroll up / left.
  const direction: ScrollDirection = axis === 'vertical' ? (pixels > 0 ? 'up' : 'down') : pixels > 0 ? 'left' : 'right';
  const extent = axis === 'vertical' ? geo.image.height : geo.image.width;
  const scale = axis === 'vertical' ? geo.image.height / geo.viewport.height : geo.image.width / geo.viewport.width;
  const amount = Math.abs(scaleScroll(pixels, axis, geo.space, geo.viewport)) * scale;
  const length = Math.min(Math.max(amount, extent * 0.08), extent * 0.3);
  const sign = direction === 'up' || direction === 'left' ? -1 : 1;
  const to = axis === 'vertical' ? { x: at.x, y: at.y + sign * length } : { x: at.x + sign * length, y: at.y };
  return { kind: 'scroll', at, to, head: arrowHead(at, to, headSize(geo.image)), direction };
}

/**
 * The marker for an action, in screenshot pixels, or null when it has nothing to show on the page (typing into the
 * focused element, navigation, answers …). `pointer`: where the previous pointer action left the mouse (a drag's
 * start), in screenshot pixels.
 */
export function markerFor(
  actionName: string,
  args: Record<string, unknown>,
  geo: Geometry,
  pointer: Point | null = null,
): Marker | null {
  const axis = SCROLL_AXES[actionName];
  if (axis) return scrollMarker(axis, args, geo);
  const coordinate = coordinateOf(args['coordinate']);
  if (!coordinate) return null;
  const to = toImagePoint(coordinate, geo);
  if (DRAG_ACTIONS.has(actionName)) {
    const start = coordinateOf(args['start_coordinate']);
    const from = start ? toImagePoint(start, geo) : pointer;
    return { kind: 'drag', from, to, head: from ? arrowHead(from, to, headSize(geo.image)) : [] };
  }
  // Every other action with a target point (clicks, moves, hover, Fara-7B's type-at) marks that point.
  return { kind: 'point', at: to };
}

/** Where the pointer is after a marker's action (unchanged for scrolls and actions without a marker). */
function pointerAfter(marker: Marker | null, before: Point | null): Point | null {
  if (marker?.kind === 'point' || marker?.kind === 'drag') return marker.kind === 'point' ? marker.at : marker.to;
  return before;
}

// ---------- run settings ----------

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The run's model profile: task.json metadata, else the run state's input, else Fara-1.5 (the default). */
export function profileOf(run: Pick<ViewInput, 'task' | 'runState'>): FaraName {
  const candidates = [run.task.metadata['profile'], recordOf(run.runState['input'])['profile']];
  const found = candidates.find((c): c is FaraName => typeof c === 'string' && isFaraName(c));
  return found ?? 'fara-1.5';
}

/** The run's viewport: task.json's environment_config, else the run state's input, else `fallback`. */
export function viewportOf(run: Pick<ViewInput, 'task' | 'runState'>, fallback: Viewport = DEFAULT_VIEWPORT): Viewport {
  for (const candidate of [run.task.environment_config['viewport'], recordOf(run.runState['input'])['viewport']]) {
    const parsed = ViewportArg.safeParse(candidate);
    if (parsed.success) return { width: parsed.data.width, height: parsed.data.height };
  }
  return fallback;
}

/** The run a replay run replays (task.json `metadata.replay_of.run_id`), or null for any other run. */
export function replayOfRun(run: Pick<ViewInput, 'task'>): string | null {
  const id = recordOf(run.task.metadata['replay_of'])['run_id'];
  return typeof id === 'string' && id !== '' ? id : null;
}

/** The header of a replay run: the run it replays and its steps' tally (as `cua replay` counts them); null for others. */
export function replayView(run: Pick<ViewInput, 'task' | 'events'>): ViewReplay | null {
  const of = replayOfRun(run);
  const cache = recordOf(run.task.metadata['cache'])['name'];
  if (of === null && typeof cache !== 'string') return null;
  const { replayed, healed, decided } = tallyOf(run.events);
  return { of: of ?? '', ...(of === null ? { cache: String(cache) } : {}), replayed, healed, decided };
}

/**
 * A replay run's line, `replay of <run id>: N replayed, N healed, N decided`; a cached run's,
 * `cache <name>: N from the cache, N healed, N decided`.
 */
export function replaySummary(replay: ViewReplay): string {
  if (replay.cache !== undefined) {
    return `cache ${replay.cache}: ${replay.replayed} from the cache, ${replay.healed} healed, ${replay.decided} decided`;
  }
  return `replay of ${replay.of}: ${replay.replayed} replayed, ${replay.healed} healed, ${replay.decided} decided`;
}

/** The coordinate space the profile's model speaks for this viewport. */
export function spaceOf(profile: FaraName, viewport: Viewport): CoordinateSpace {
  const p = faraSpace(profile);
  if (p.coordinateSpace === 'norm1000') return NORM1000;
  const resized = smartResize(viewport.height, viewport.width, { factor: p.resizeFactor });
  return resizedPixelsSpace(resized.width, resized.height);
}

// ---------- steps ----------

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

function displayValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(displayValue).join(', ')}]`;
  return JSON.stringify(value) ?? String(value);
}

function summaryOf(action: Action, profile: FaraName): string {
  const { thoughts: _t, ...args } = action.content.arguments;
  const candidate = { ...args, action: action.content.action };
  for (const name of [profile, profile === 'fara-1.5' ? 'fara-7b' : 'fara-1.5'] as const) {
    const parsed = faraSpace(name).actionSchema.safeParse(candidate);
    if (parsed.success) return summarizeAction(parsed.data);
  }
  return action.action_name;
}

function userMessagesOf(observations: readonly Observation[], instruction: string): ViewUserMessage[] {
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

interface DecisionContext {
  profile: FaraName;
  space: CoordinateSpace;
  viewport: Viewport;
  /** The desktop's screen (desktop runs), null for the browser. */
  screen: Size | null;
  instruction: string;
  sizeOf: (screenshot: string) => Size | undefined;
  /** A replay run: each decision says how it came about. */
  replay: boolean;
}

/** The marker and pixel point of an action; none for an invalid reply (nothing was done) or a degenerate point. */
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

/** A desktop call's target (screen pixels) as a marker on a screenshot of `image` pixels. */
function desktopMarker(target: CallTarget, screen: Size, image: Size): Marker {
  const scale = (p: Point): Point => ({
    x: (p.x * image.width) / screen.width,
    y: (p.y * image.height) / screen.height,
  });
  if (target.kind === 'point') return { kind: 'point', at: scale(target.at) };
  const from = scale(target.from);
  const to = scale(target.to);
  return { kind: 'drag', from, to, head: arrowHead(from, to, headSize(image)) };
}

/** A desktop tool call; an invalid reply acted nowhere. */
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
  };
  if (ctx.screen) {
    const call = callView(action, step, invalid, summary, ctx.screen, image ?? ctx.screen);
    return {
      ...common,
      summary: invalid ? `${action.action_name} (invalid reply)` : call.summary,
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
    summary: invalid ? `${action.action_name} (invalid reply)` : summaryOf(action, ctx.profile),
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
function decisionViews(ctx: DecisionContext, events: readonly Event[], actionSteps: readonly Step[]): ViewDecision[] {
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

/** A desktop turn's later calls join the decision of its first: one decision per turn, its calls in order. */
export function joinTurns(decisions: readonly ViewDecision[]): ViewDecision[] {
  const turns: ViewDecision[] = [];
  for (const decision of decisions) {
    const last = turns.at(-1);
    const sameTurn =
      last !== undefined &&
      last.calls.length > 0 &&
      (decision.calls[0]?.index ?? 0) > 0 &&
      last.number === decision.number &&
      last.generation === decision.generation &&
      last.superseded === decision.superseded;
    if (sameTurn) turns[turns.length - 1] = joined(last, decision);
    else turns.push(decision);
  }
  return turns;
}

function joined(turn: ViewDecision, next: ViewDecision): ViewDecision {
  const calls = [...turn.calls, ...next.calls];
  const invalid = turn.invalid ?? next.invalid;
  const tools = turnSummary(calls.map((c) => c.actionName));
  return {
    ...turn,
    invalid,
    summary: invalid === null ? tools : `${tools} (invalid reply)`,
    thoughts: [turn.thoughts, next.thoughts].filter((t) => t !== '').join('\n'),
    userMessages: [...turn.userMessages, ...next.userMessages],
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

/**
 * The view of a run. `sizeOf` gives the pixel size of a run-relative screenshot (undefined when it cannot be read);
 * markers are placed on that size, or on the viewport's when unknown.
 */
export function buildTrajectoryView(run: ViewInput, sizeOf: (screenshot: string) => Size | undefined): TrajectoryView {
  const environment = environmentOf(run);
  const screen = environment === 'desktop' ? screenOf(run) : null;
  const profile = profileOf(run);
  const viewport = screen ?? viewportOf(run);
  const instruction = run.task.instruction;
  const replay = replayView(run);
  const ctx: DecisionContext = {
    profile,
    space: spaceOf(profile, viewport),
    viewport,
    screen,
    instruction,
    sizeOf,
    replay: replay !== null,
  };
  const all = buildSteps(run.events);
  const actionSteps = all.filter((s) => s.action !== null);
  const steps = groupDecisions(joinTurns(decisionViews(ctx, run.events, actionSteps)));
  const tail = all.at(-1);
  return {
    runId: run.runId,
    instruction,
    environment,
    screen,
    startUrl: displayValue(run.task.environment_config['start_url'] ?? ''),
    profile,
    viewport,
    status: run.status,
    endReason: run.endReason ?? '',
    endDetail: run.endDetail ?? '',
    answer: run.outcome ? run.outcome.answer : null,
    verification: Object.entries(run.verification).map(([name, v]) => ({
      name,
      score: v.score,
      reasoning: v.reasoning ?? '',
    })),
    warnings: run.warnings.map((w) => `${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`),
    steps,
    after: tail && tail.action === null ? userMessagesOf(tail.pre, instruction) : [],
    replay,
    usage: usageLine(usageTotals(run.events, run.verification)),
  };
}
