// What the console's pages show, read through the agent client (Temporal) and the run store (a folder or S3): the
// task list (waiting tasks first, with their question and how long they have waited) and one task's steps.
import sharp from 'sharp';
import type { AgentClient, TaskListEntry, TaskSnapshot } from '../client/client';
import { TaskNotFoundError } from '../client/client';
import { TASK_ID } from '../src/contract/task';
import type { TaskState } from '../src/contract/task';
import type { Event } from '../src/trajectory/schema';
import { parseEventId } from '../src/trajectory/ids';
import { readRunFromStore } from '../src/trajectory/reader';
import type { RunRecord } from '../src/trajectory/reader';
import { usageLine, usageTotals } from '../src/trajectory/usage';
import type { RunStore } from '../src/trajectory/store';
import { replaySummary } from '../src/viewer/lines';
import type { Marker, Size } from '../src/viewer/markers';
import { buildTrajectoryView } from '../src/viewer/model';
import type { ViewStep } from '../src/viewer/view';
import { runUsage } from './cost';
import type { CostColumn } from './cost';
import { ENCRYPTED_PLACEHOLDER } from './sealed-payloads';

export const PAGE_SIZE = 50;
/**
 * The text filter looks through this many of the newest tasks (of the chosen status). The instruction is the task's
 * Summary and memo, not a search attribute: registering a Text attribute would need an operator's change on every
 * namespace (SQL visibility allows few of them), tasks started before it would lack it, and a person supervising
 * agents looks for one among the recent few hundred. So the console filters what it fetched, and says when it stopped.
 */
export const TEXT_FILTER_SCAN = 500;
const WAITING_SHOWN = 50;

/** A task id as the task contract allows it: nothing that could name another folder. */
export { TASK_ID };

export interface WaitingRow extends TaskListEntry {
  question: { id: string; text: string; step: number } | null;
  /** When the question was asked (its step's last event in the run folder), when known. */
  askedAt: string | null;
}

export interface TaskPage {
  waiting: WaitingRow[];
  rows: (TaskListEntry & { costShown?: string | null })[];
  page: number;
  hasNext: boolean;
  /** The text filter stopped after TEXT_FILTER_SCAN tasks. */
  capped: boolean;
}

export interface ListQuery {
  status?: TaskState;
  text?: string;
  page?: number;
}

/** One page of tasks, newest first, and (on every page, unless filtered to another status) the waiting ones. */
export async function listPage(
  agent: AgentClient,
  store: RunStore,
  q: ListQuery,
  costs?: CostColumn,
): Promise<TaskPage> {
  const page = Math.max(0, Math.floor(q.page ?? 0));
  const text = q.text?.trim().toLowerCase() ?? '';
  const status = q.status ? { status: q.status } : {};
  const wanted = (page + 1) * PAGE_SIZE + 1;
  let rows: TaskListEntry[];
  let capped = false;
  if (text) {
    const scanned = await agent.list({ ...status, limit: TEXT_FILTER_SCAN });
    capped = scanned.length >= TEXT_FILTER_SCAN;
    rows = scanned.filter((r) => r.instruction.toLowerCase().includes(text) || r.id.toLowerCase().includes(text));
  } else {
    rows = await agent.list({ ...status, limit: wanted });
  }
  const waitingRows =
    !q.status || q.status === 'waiting_for_user'
      ? await agent.list({ status: 'waiting_for_user', limit: WAITING_SHOWN })
      : [];
  const waiting = await Promise.all(
    waitingRows
      .filter((r) => !text || r.instruction.toLowerCase().includes(text) || r.id.toLowerCase().includes(text))
      .map((r) => waitingRow(agent, store, r)),
  );
  waiting.sort((a, b) => (a.askedAt ?? a.started).localeCompare(b.askedAt ?? b.started));
  const waitingIds = new Set(waiting.map((w) => w.id));
  const rest = q.status === 'waiting_for_user' ? [] : rows.filter((r) => !waitingIds.has(r.id));
  const shown = rest.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  return {
    waiting,
    rows: costs ? await costs.fill(shown) : shown,
    page,
    hasNext: rest.length > (page + 1) * PAGE_SIZE,
    capped,
  };
}

async function waitingRow(agent: AgentClient, store: RunStore, row: TaskListEntry): Promise<WaitingRow> {
  const snap = await agent.status(row.id).catch(() => null);
  const sealed = snap && isSealed(snap) ? { id: '', text: ENCRYPTED_PLACEHOLDER, step: row.step ?? 0 } : null;
  const question = sealed ?? snap?.question ?? null;
  const askedAt = question ? await askedAtOf(store, row.id, question.step) : null;
  return { ...row, question, askedAt };
}

/** The time of the last event of the asking step. */
async function askedAtOf(store: RunStore, id: string, step: number): Promise<string | null> {
  try {
    const run = await readRunFromStore(store, id);
    const ofStep = run.events.filter((e) => parseEventId(e.id)?.step === step);
    return ofStep.at(-1)?.timestamp ?? null;
  } catch {
    return null;
  }
}

export interface ConsoleStep {
  number: number;
  action: string;
  summary: string;
  thoughts: string;
  url: string;
  observation: string;
  invalid: string | null;
  /** What the run folder says of the step: replayed / healed / decided, inherited from a fork's source, superseded. */
  marks: string[];
  /** Replies, messages said to the task, hand-back notes the model read with this step. */
  messages: { type: string; content: string }[];
  screenshot: string;
}

export interface TaskDetail {
  id: string;
  /** Null when Temporal no longer knows the task (its run folder remains). */
  snapshot: TaskSnapshot | null;
  instruction: string;
  environment: string;
  steps: ConsoleStep[];
  /** Messages after the last step (a reply the model has not acted on yet, a final note). */
  after: { type: string; content: string }[];
  latest: { screenshot: string; image: Size | null; marker: Marker | null; step: number } | null;
  replay: string | null;
  /** The source task id as `runId`: wire name (the console API's JSON), kept so pages and other clients read it. */
  forkOf: { runId: string; step: number } | null;
  /** The run's model calls, tokens and cost so far (src/trajectory/usage.ts), or null before its first call. */
  usage: string | null;
  /** The run folder could not be read (not written yet, or the store is unreachable). */
  runError: string | null;
  /** Its Temporal payloads are encrypted with a key this console does not have: they show as the placeholder. */
  sealed: boolean;
}

/** Every screenshot the run's events name: the only files the console serves from a run folder. */
export function screenshotsOf(events: readonly Event[]): Set<string> {
  const names = new Set<string>();
  for (const e of events) {
    if (e.type === 'observation' && e.observation_type === 'environment' && e.screenshot_path) {
      names.add(e.screenshot_path);
    }
  }
  return names;
}

function inheritedSteps(events: readonly Event[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of events) {
    const from = (e.metadata as Record<string, unknown> | undefined)?.['inherited_from'] as
      { run_id?: string; step?: number } | undefined;
    const step = parseEventId(e.id)?.step;
    if (from && step !== undefined) out.set(step, `inherited from ${from.run_id ?? '?'} step ${from.step ?? step}`);
  }
  return out;
}

function stepMarks(s: ViewStep, replayRun: boolean, inherited: Map<number, string>): string[] {
  const marks: string[] = [];
  const from = inherited.get(s.number);
  if (from) marks.push(from);
  if (replayRun && s.replay) marks.push(s.replay.how);
  if (s.approval) marks.push(s.approval.line);
  if (s.invalid) marks.push('invalid output');
  if (s.supersededDecisions.length) marks.push(`re-decided after a lost worker (${s.supersededDecisions.length})`);
  for (const m of s.userMessages) {
    if (m.type === 'handback') marks.push('handed back after a takeover');
    if (m.type === 'steer') marks.push('message from a person');
  }
  return marks;
}

export async function taskDetail(agent: AgentClient, store: RunStore, id: string): Promise<TaskDetail> {
  let snapshot: TaskSnapshot | null = null;
  try {
    snapshot = await agent.status(id);
  } catch (err) {
    if (!(err instanceof TaskNotFoundError)) throw err;
  }
  const sealed = snapshot !== null && isSealed(snapshot);
  if (snapshot && sealed) snapshot = await sealedSnapshot(agent, snapshot);
  const detail: TaskDetail = {
    id,
    snapshot,
    instruction: '',
    environment: '',
    steps: [],
    after: [],
    latest: null,
    replay: null,
    forkOf: null,
    usage: null,
    runError: null,
    sealed,
  };
  // The run folder holds what the encrypted payloads hold (thoughts, typed text, the answer): a console without the
  // key shows neither, only the status, step and cost.
  if (sealed) return { ...detail, instruction: ENCRYPTED_PLACEHOLDER, usage: await usageOf(store, id) };
  let run;
  try {
    run = await readRunFromStore(store, id);
  } catch (err) {
    if (!snapshot) throw err;
    return { ...detail, runError: (err as Error).message };
  }
  // Sizes only for the newest screenshot: the marker is drawn on it alone.
  // The request journal tells what an approval question held (its step's mark says it and the person's decision).
  const requestJournal = (await store.readText(`${id}/requests.jsonl`).catch(() => undefined)) ?? '';
  const viewed = { ...run, requestJournal };
  const first = buildTrajectoryView(viewed, () => undefined);
  const last = first.steps.at(-1);
  const lastShot = last?.screenshot || '';
  const size = lastShot ? await imageSize(store, id, lastShot) : undefined;
  const view = size ? buildTrajectoryView(viewed, (shot) => (shot === lastShot ? size : undefined)) : first;
  const inherited = inheritedSteps(run.events);
  const forkOf = (run.task.metadata as Record<string, unknown> | undefined)?.['fork_of'] as
    { run_id?: string; step?: number } | undefined;
  const newest = view.steps.at(-1);
  return {
    ...detail,
    instruction: view.instruction,
    environment: view.environment,
    steps: view.steps.map((s) => ({
      number: s.number,
      action: s.actionName,
      summary: s.summary,
      thoughts: s.thoughts,
      url: s.url,
      observation: s.observation,
      invalid: s.invalid,
      marks: stepMarks(s, view.replay !== null, inherited),
      messages: s.userMessages.map((m) => ({ type: m.type, content: m.content })),
      screenshot: s.screenshot,
    })),
    after: view.after.map((m) => ({ type: m.type, content: m.content })),
    latest: newest?.screenshot
      ? { screenshot: newest.screenshot, image: newest.image, marker: newest.marker, step: newest.number }
      : null,
    replay: view.replay ? replaySummary(view.replay) : null,
    forkOf: forkOf?.run_id ? { runId: forkOf.run_id, step: forkOf.step ?? 0 } : null,
    usage: usageSoFar(run),
  };
}

/** Whether the task's status or result came as the placeholder (this console has no key for its payloads). */
function isSealed(snap: TaskSnapshot): boolean {
  return [snap.progress, snap.result].some((v) => (v as unknown) === ENCRYPTED_PLACEHOLDER);
}

/**
 * A task this console cannot decrypt: its status and step from the search attributes (the server indexes them, so
 * they are never encrypted); its question, answer and error as the placeholder.
 */
async function sealedSnapshot(agent: AgentClient, snap: TaskSnapshot): Promise<TaskSnapshot> {
  const desc = await agent.temporal.workflow.getHandle(snap.id).describe();
  const sa = desc.searchAttributes as Record<string, unknown[] | undefined>;
  const status = String(sa.CuaStatus?.[0] ?? desc.status.name.toLowerCase()) as TaskSnapshot['status'];
  const step = typeof sa.CuaStep?.[0] === 'number' ? sa.CuaStep[0] : 0;
  return {
    ...snap,
    status,
    step,
    question: status === 'waiting_for_user' ? { id: '', text: ENCRYPTED_PLACEHOLDER, step } : null,
    answer: snap.closed ? ENCRYPTED_PLACEHOLDER : null,
    error: null,
    progress: null,
    result: null,
  };
}

async function usageOf(store: RunStore, id: string): Promise<string | null> {
  const totals = await runUsage(store, id);
  return totals && totals.calls > 0 ? usageLine(totals) : null;
}

/**
 * Whether this console has no key for the task's payloads (its memo reads as the placeholder): then its run folder
 * (screenshots, the report) is not served either.
 */
export async function sealedTask(agent: AgentClient, id: string): Promise<boolean> {
  try {
    const desc = await agent.temporal.workflow.getHandle(id).describe();
    return (desc.memo as { instruction?: unknown } | undefined)?.instruction === ENCRYPTED_PLACEHOLDER;
  } catch {
    return false;
  }
}

function usageSoFar(run: Pick<RunRecord, 'events' | 'verification'>): string | null {
  const totals = usageTotals(run.events, run.verification);
  return totals.calls > 0 ? usageLine(totals) : null;
}

async function imageSize(store: RunStore, id: string, shot: string): Promise<Size | undefined> {
  try {
    const bytes = await store.readBytes(`${id}/${shot}`);
    if (!bytes) return undefined;
    const meta = await sharp(bytes).metadata();
    return meta.width && meta.height ? { width: meta.width, height: meta.height } : undefined;
  } catch {
    return undefined;
  }
}
