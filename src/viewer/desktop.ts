// The viewer's reading of desktop runs: which environment a run folder is of, the desktop's screen size, where a
// desktop tool call acted (in screen pixels) and the one-line names of calls and steps.
//
// A desktop step has several tool calls: its action events are `step-000N-action-g<k>` for the first
// call and `…-c1`, `…-c2`, … for the later ones. Click-family calls act on a point: the resolved point is in the tool
// output's `metadata.point` (newer runs), else in its text (`Clicked at (320, 560) …`), else in the call's own x/y.
import { z } from 'zod';
import { summarizeCall } from '../desktop/agent/tools';
import type { Observation } from '../trajectory/schema';
import { DEFAULT_DESKTOP_SCREEN } from '../contract/task';
import type { EnvironmentName } from '../contract/task';

export interface ScreenPoint {
  x: number;
  y: number;
}

export interface ScreenSize {
  width: number;
  height: number;
}

/** Where a desktop call acted, in screen pixels. */
export type CallTarget = { kind: 'point'; at: ScreenPoint } | { kind: 'drag'; from: ScreenPoint; to: ScreenPoint };

/** The parts of a run the environment and screen are read from (task.json and run_state.json). */
export interface RunSettings {
  task: { environment_config: Record<string, unknown>; metadata: Record<string, unknown> };
  runState: Record<string, unknown>;
}

const CLICK_TOOLS: ReadonlySet<string> = new Set(['click', 'double_click', 'right_click']);

const ScreenSchema = z.looseObject({ width: z.number().positive(), height: z.number().positive() });
const PointSchema = z.looseObject({ x: z.number(), y: z.number() });
const NUMBER = String.raw`(-?\d+(?:\.\d+)?)`;
const CLICKED_AT = new RegExp(String.raw`\bat \(${NUMBER}, ?${NUMBER}\)`);
const DRAGGED = new RegExp(String.raw`\bfrom \(${NUMBER}, ?${NUMBER}\) to \(${NUMBER}, ?${NUMBER}\)`);

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The run's environment: task.json's environment_config, else its metadata, else the run state's input; else browser. */
export function environmentOf(run: RunSettings): EnvironmentName {
  const input = recordOf(run.runState['input']);
  const named = [run.task.environment_config['environment'], run.task.metadata['environment'], input['environment']];
  return named.find((e) => e === 'browser' || e === 'desktop') === 'desktop' ? 'desktop' : 'browser';
}

/** The desktop's screen: task.json's environment_config, else the run state's input, else the default 1280×800. */
export function screenOf(run: RunSettings): ScreenSize {
  for (const candidate of [run.task.environment_config['screen'], recordOf(run.runState['input'])['screen']]) {
    const parsed = ScreenSchema.safeParse(candidate);
    if (parsed.success) return { width: parsed.data.width, height: parsed.data.height };
  }
  return { ...DEFAULT_DESKTOP_SCREEN };
}

/** A finite number from a number or a numeric string (models write both), else undefined. */
function numberOf(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

function pointOf(x: unknown, y: unknown): ScreenPoint | null {
  const px = numberOf(x);
  const py = numberOf(y);
  return px === undefined || py === undefined ? null : { x: px, y: py };
}

function toolOutputs(observations: readonly Observation[]) {
  return observations.flatMap((o) => (o.observation_type === 'tool_output' ? [o] : []));
}

/** A click's resolved point: the tool output's metadata.point, else the point its text names, else the call's x/y. */
function clickPoint(args: Record<string, unknown>, post: readonly Observation[]): ScreenPoint | null {
  for (const o of toolOutputs(post)) {
    const recorded = PointSchema.safeParse(o.metadata['point']);
    if (recorded.success) return { x: recorded.data.x, y: recorded.data.y };
    const match = CLICKED_AT.exec(o.output);
    if (match) return pointOf(match[1], match[2]);
  }
  return pointOf(args['x'], args['y']);
}

function dragPoints(args: Record<string, unknown>, post: readonly Observation[]): CallTarget | null {
  const from = pointOf(args['from_x'], args['from_y']);
  const to = pointOf(args['to_x'], args['to_y']);
  if (from && to) return { kind: 'drag', from, to };
  for (const o of toolOutputs(post)) {
    const match = DRAGGED.exec(o.output);
    const [start, end] = match ? [pointOf(match[1], match[2]), pointOf(match[3], match[4])] : [null, null];
    if (start && end) return { kind: 'drag', from: start, to: end };
  }
  return null;
}

/**
 * Where a desktop call acted, in screen pixels: the clicked point of a click, double or right click, the start and
 * end of a drag; null for calls that act on no point (commands, keys, typing, answers) or when no point is known.
 * `post`: the observations naming the call (its tool output).
 */
export function callTarget(
  name: string,
  args: Record<string, unknown>,
  post: readonly Observation[],
): CallTarget | null {
  if (CLICK_TOOLS.has(name)) {
    const at = clickPoint(args, post);
    return at ? { kind: 'point', at } : null;
  }
  return name === 'drag' ? dragPoints(args, post) : null;
}

/** A call in one line, e.g. `click "the OK button"`, `run_command: ls -la` (thoughts left out). */
export function callSummary(name: string, args: Record<string, unknown>): string {
  const { thoughts: _t, ...rest } = args;
  return summarizeCall({ name, arguments: rest, known: true });
}

/** A step's tools in one line: `click + type_text + send_key`, repeats folded (`run_command ×2`). */
export function stepToolsSummary(names: readonly string[]): string {
  const runs: { name: string; count: number }[] = [];
  for (const name of names) {
    const last = runs.at(-1);
    if (last?.name === name) last.count++;
    else runs.push({ name, count: 1 });
  }
  return runs.map((r) => (r.count > 1 ? `${r.name} ×${r.count}` : r.name)).join(' + ');
}

/** The window list of a desktop observation's page_info without its `Windows:` label. */
export function windowsLine(pageInfo: string): string {
  return pageInfo.replace(/^\s*Windows:\s*/, '').trim();
}
