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
// reply (no action could be made of it) is a step, with its error and no marker.
import { z } from 'zod';
import { getProfile, isProfileName } from '../actions/profiles';
import type { ProfileName } from '../actions/profiles';
import { summarizeAction } from '../agent/summary';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { NORM1000, modelToViewport, resizedPixelsSpace, scaleScroll } from '../coords/viewport';
import { smartResize } from '../image/smart-resize';
import type { RunRecord } from '../trajectory/reader';
import type { Action, Event, Observation, UserMessageType } from '../trajectory/schema';
import { buildSteps, stepSummaries } from '../trajectory/steps';
import type { Step, StepSummary } from '../trajectory/steps';

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
  type: UserMessageType;
  content: string;
}

/** One decision of the model: the action, what it saw and what came of it. */
export interface ViewDecision {
  /** Step number, as in `stepSummaries` (from the event id; by counting for foreign ids). */
  number: number;
  /** Session generation of the decision (0 for foreign ids). */
  generation: number;
  /** Re-decided after the worker was lost mid-step: this decision's effect is unknown. */
  superseded: boolean;
  /** The error when the model's reply could not be turned into an action, else null. */
  invalid: string | null;
  actionName: string;
  /** One line, e.g. `left_click (500, 200)`. */
  summary: string;
  /** The action's arguments (thoughts left out), as display text. */
  args: { name: string; value: string }[];
  thoughts: string;
  url: string;
  /** The action's tool output (page answer, errors as `error: …` lines). */
  observation: string;
  userMessages: ViewUserMessage[];
  /** Run-relative path of the screenshot the model saw ('' when none). */
  screenshot: string;
  /** The screenshot's pixel size, null when it could not be read. */
  image: Size | null;
  /** Where the action landed in viewport pixels (its `coordinate`), null for actions without one and invalid replies. */
  pixelPoint: Point | null;
  marker: Marker | null;
}

/** A step of the run: its (last) decision, with the earlier decisions it superseded. */
export interface ViewStep extends ViewDecision {
  /** Earlier decisions for this step whose worker was lost (effect unknown), oldest first; not steps of their own. */
  supersededDecisions: ViewDecision[];
}

export interface TrajectoryView {
  runId: string;
  instruction: string;
  startUrl: string;
  profile: ProfileName;
  viewport: Viewport;
  status: string;
  endReason: string;
  endDetail: string;
  answer: string | null;
  verification: { name: string; score: number | null; reasoning: string }[];
  warnings: string[];
  /** The steps, superseded decisions inside the step that re-decided them (not counted as steps). */
  steps: ViewStep[];
  /** User messages recorded after the last action. */
  after: ViewUserMessage[];
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
export function profileOf(run: Pick<ViewInput, 'task' | 'runState'>): ProfileName {
  const candidates = [run.task.metadata['profile'], recordOf(run.runState['input'])['profile']];
  const found = candidates.find((c): c is ProfileName => typeof c === 'string' && isProfileName(c));
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

/** The coordinate space the profile's model speaks for this viewport. */
export function spaceOf(profile: ProfileName, viewport: Viewport): CoordinateSpace {
  const p = getProfile(profile);
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

function summaryOf(action: Action, profile: ProfileName): string {
  const { thoughts: _t, ...args } = action.content.arguments;
  const candidate = { ...args, action: action.content.action };
  for (const name of [profile, profile === 'fara-1.5' ? 'fara-7b' : 'fara-1.5'] as const) {
    const parsed = getProfile(name).actionSchema.safeParse(candidate);
    if (parsed.success) return summarizeAction(parsed.data);
  }
  return action.action_name;
}

function userMessagesOf(observations: readonly Observation[], instruction: string): ViewUserMessage[] {
  return observations.flatMap((o) =>
    o.observation_type === 'user_message' && !(o.message_type === 'task' && o.content === instruction)
      ? [{ type: o.message_type, content: o.content }]
      : [],
  );
}

const isSessionRestore = (step: Step) =>
  step.pre.some((o) => o.observation_type === 'tool_output' && o.metadata['note'] === 'session_restored');

interface DecisionContext {
  profile: ProfileName;
  space: CoordinateSpace;
  viewport: Viewport;
  instruction: string;
  sizeOf: (screenshot: string) => Size | undefined;
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

function decisionView(
  ctx: DecisionContext,
  step: Step,
  action: Action,
  summary: StepSummary,
  screenshot: string,
  pointer: Point | null,
): ViewDecision {
  const image = screenshot ? (ctx.sizeOf(screenshot) ?? null) : null;
  const geo: Geometry = { space: ctx.space, viewport: ctx.viewport, image: image ?? ctx.viewport };
  const args = action.content.arguments;
  return {
    number: summary.step,
    generation: summary.generation,
    superseded: summary.superseded,
    invalid: summary.invalid,
    actionName: action.action_name,
    summary: summary.invalid === null ? summaryOf(action, ctx.profile) : `${action.action_name} (invalid reply)`,
    args: Object.entries(args)
      .filter(([name]) => name !== 'thoughts' && name !== 'action')
      .map(([name, value]) => ({ name, value: displayValue(value) })),
    thoughts: summary.thoughts,
    url: summary.url,
    observation: summary.text_observation,
    userMessages: userMessagesOf(step.pre, ctx.instruction),
    screenshot,
    image,
    ...placement(action, geo, pointer, summary.invalid !== null),
  };
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
    const view = decisionView(ctx, step, step.action, summary, shots[i] ?? '', pointer);
    // Where a superseded decision left the pointer is unknown.
    pointer = view.superseded ? null : pointerAfter(view.marker, pointer);
    return [view];
  });
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
  const profile = profileOf(run);
  const viewport = viewportOf(run);
  const instruction = run.task.instruction;
  const ctx: DecisionContext = { profile, space: spaceOf(profile, viewport), viewport, instruction, sizeOf };
  const all = buildSteps(run.events);
  const actionSteps = all.filter((s) => s.action !== null);
  const steps = groupDecisions(decisionViews(ctx, run.events, actionSteps));
  const tail = all.at(-1);
  return {
    runId: run.runId,
    instruction,
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
  };
}
