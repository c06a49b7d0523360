// The trajectory viewer's view-model: a plain description of a run, one row per step (a decision, with the
// decisions it superseded), each with the marker to draw on its screenshot. Built by model.ts, drawn by html.ts,
// printed by `cua show`, served by the console.
import type { Viewport } from '../coords/viewport';
import type { RunRecord } from '../trajectory/reader';
import type { ToolSubCall, UserMessageType } from '../trajectory/schema';
import type { ReplayMark } from '../trajectory/steps';
import type { EnvironmentName } from '../contract/task';
import type { Marker, Point, Size } from './markers';

export interface ViewUserMessage {
  /** A user message's type, or a note the runtime wrote for the model: `steer` (a message said to the task), `handback`
   * (a person had the browser), `in_doubt` (a lost worker's action may or may not have taken effect). */
  type: UserMessageType | 'steer' | 'handback' | 'in_doubt';
  content: string;
}

export type ApprovalOutcome = 'approved' | 'denied' | 'pending';

/** An approval question of the run and its outcome (approvals.ts). */
export interface ViewApproval {
  /** The held requests, e.g. `POST /checkout to shop.example (label payment)`, several joined by `; `. */
  requests: string;
  outcome: ApprovalOutcome;
  /** The person's note ('' when none). */
  note: string;
  /** One line saying all of it. */
  line: string;
}

/** One tool call of a desktop step: what was called, what came of it and where it acted. */
export interface ViewCall {
  /** Place in the step: 0 for the first call, then 1, 2, … (the `-c<n>` suffix of its event id). */
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
  /** What to draw on the step's screenshot, in its pixels. */
  marker: Marker | null;
}

/** One decision of the model: the action, what it saw and what came of it. For the desktop, one step. */
export interface ViewDecision {
  /** Step number, as in `stepSummaries` (from the event id; by counting for foreign ids). */
  number: number;
  /** Session generation of the decision (0 for foreign ids). */
  generation: number;
  /** Re-decided after the worker was lost mid-step: this decision's effect is unknown. */
  superseded: boolean;
  /** The error when the model's output could not be turned into an action, else null. */
  invalid: string | null;
  /** The action's name (a desktop step: its first call's). */
  actionName: string;
  /** One line, e.g. `left_click (500, 200)`; a desktop step of several calls names its tools, `click + type_text`. */
  summary: string;
  /** The provider's own action it was read from (a native family's step, e.g. OpenAI's `click`), as JSON; else ''. */
  nativeAction: string;
  /** The action's arguments (thoughts left out), as display text (a desktop step: its first call's). */
  args: { name: string; value: string }[];
  thoughts: string;
  url: string;
  /** The action's tool output (page answer, errors as `error: …` lines) (a desktop step: its first call's). */
  observation: string;
  userMessages: ViewUserMessage[];
  /** Run-relative path of the screenshot the model saw ('' when none). */
  screenshot: string;
  /** The screenshot's pixel size, null when it could not be read. */
  image: Size | null;
  /** Where the action landed in viewport pixels (its `coordinate`); null for actions without one, invalid outputs. */
  pixelPoint: Point | null;
  /** A desktop step's markers are on its calls: null here. */
  marker: Marker | null;
  /** A desktop step's tool calls in order; empty for the browser. */
  calls: ViewCall[];
  /** The desktop's window list the step was decided on (page_info); '' for the browser. */
  windows: string;
  /** The vision model's description of the screen for a desktop step; '' for the browser. */
  screenDescription: string;
  /** Model calls the action's tool made (read_page_answer_question's page question), from `tool_sub_calls`. */
  subCalls: ToolSubCall[];
  /** In a replay run: replayed, healed (with its recorded point) or decided by the model; null in any other run. */
  replay: ReplayMark | null;
  /** The step's model calls (its decision's and its tool's): tokens and cost, one line; '' when it made none. */
  usage: string;
  /** The runtime's question about requests an approval rule held, and how the person decided; null for other steps. */
  approval: ViewApproval | null;
}

/** A step of the run: its (last) decision, with the earlier decisions it superseded. */
export interface ViewStep extends ViewDecision {
  /** Earlier decisions for this step whose worker was lost (effect unknown), oldest first; not steps of their own. */
  supersededDecisions: ViewDecision[];
}

export interface TrajectoryView {
  taskId: string;
  instruction: string;
  environment: EnvironmentName;
  /** The desktop's screen size in pixels (markers' coordinate space); null for the browser. */
  screen: Size | null;
  startUrl: string;
  /** The model family (`profile`, its wire name). */
  profile: string;
  viewport: Viewport;
  status: string;
  endReason: string;
  endDetail: string;
  answer: string | null;
  /**
   * A task with an output schema (docs/output.md): its output's JSON, pretty (`partial` at a budget stop), or why it
   * has none; null for a task without one.
   */
  output: { json: string; partial: boolean } | { missing: string } | null;
  verification: { name: string; score: number | null; reasoning: string }[];
  warnings: string[];
  /** The steps, superseded decisions inside the step that re-decided them (not counted as steps). */
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
  | 'taskId'
  | 'task'
  | 'events'
  | 'status'
  | 'outcome'
  | 'endReason'
  | 'endDetail'
  | 'output'
  | 'outputError'
  | 'verification'
  | 'warnings'
  | 'runState'
> & {
  /** The run's request journal (requests.jsonl) as text, for what approval questions held; optional. */
  requestJournal?: string;
};
