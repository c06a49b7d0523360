// A task as the MCP tools show it (get_task, wait_for_task, start_task): its status, step, pending question and who
// may answer it, answer, end reason, cost, what it waits for, the links to follow it, and what to do next. Also the
// wait the tools share: until the task ends or stops for a person, or the time runs out.
import path from 'node:path';
import type { TaskSnapshot } from '../client/client';
import { modelWaitLine, storeWaitLine } from '../client/tasks';
import { sleep } from '../src/common/sleep';
import { runUsage } from '../console/cost';
import type { McpDeps } from './deps';

/** Question kinds meant for a person: a caller answers them only where the config allows it. */
export const PERSON_QUESTION_KINDS: readonly string[] = ['approval', 'provider_check'];

export interface TaskLinks {
  temporal_ui: string | null;
  console: string | null;
  report: string;
  run_folder: string | null;
}

export function taskLinks(deps: McpDeps, id: string): TaskLinks {
  const ns = encodeURIComponent(deps.namespace);
  const ui = deps.temporalUiUrl?.replace(/\/$/, '');
  const consoleUrl = deps.consoleUrl?.replace(/\/$/, '');
  const runFolder = deps.runsDir ? path.join(deps.runsDir, id) : null;
  const report = consoleUrl
    ? `${consoleUrl}/tasks/${encodeURIComponent(id)}/report`
    : `npx cua view ${id}${runFolder ? ` (writes ${path.join(runFolder, 'report.html')})` : ''}`;
  return {
    temporal_ui: ui ? `${ui}/namespaces/${ns}/workflows/${encodeURIComponent(id)}` : null,
    console: consoleUrl ? `${consoleUrl}/tasks/${encodeURIComponent(id)}` : null,
    report,
    run_folder: runFolder,
  };
}

/** What the task waits for besides a person, in one line each (a worker's session, the model, the run store). */
function waitLines(snap: TaskSnapshot): string[] {
  const out: string[] = [];
  if (snap.waitingForSession) out.push("waiting for a session: every worker's browsers are in use");
  if (snap.waitingForModel) out.push(modelWaitLine(snap.waitingForModel));
  if (snap.waitingForStore) out.push(storeWaitLine(snap.waitingForStore));
  return out;
}

/** What a caller should do next with a task in this state. */
function nextStep(deps: McpDeps, snap: TaskSnapshot): string {
  const q = snap.question;
  if (q && PERSON_QUESTION_KINDS.includes(q.kind ?? 'model') && !deps.callersMayApprove) {
    return 'a person must answer this (the console, or `npx cua reply`); wait_for_task to see when it goes on';
  }
  if (q) return 'answer with reply_to_task (question_id is optional), then wait_for_task';
  if (snap.closed) return 'the task has ended: read its answer; fork_task starts a new task from one of its steps';
  if (snap.status === 'paused') return 'paused: steer_task with action resume goes on';
  if (snap.status === 'taken_over') return 'a person drives its browser; wait_for_task until they hand it back';
  return 'running: wait_for_task returns when it ends or asks (at most 60 s per call)';
}

/** The task as get_task returns it. */
export async function taskView(deps: McpDeps, snap: TaskSnapshot): Promise<Record<string, unknown>> {
  const q = snap.question;
  const kind = q?.kind ?? 'model';
  return {
    id: snap.id,
    status: snap.status,
    closed: snap.closed,
    step: snap.step,
    max_steps: snap.progress?.maxSteps ?? null,
    question: q
      ? {
          id: q.id,
          text: q.text,
          kind,
          step: q.step,
          caller_may_answer: deps.callersMayApprove || !PERSON_QUESTION_KINDS.includes(kind),
        }
      : null,
    answer: snap.answer,
    ...(snap.output !== undefined ? { output: snap.output, output_error: snap.outputError ?? null } : {}),
    error: snap.error,
    end_reason: snap.endReason,
    cost_usd: await costOf(deps, snap),
    last_url: snap.progress?.lastUrl ?? null,
    last_action: snap.progress?.lastAction ?? null,
    waiting_for: waitLines(snap),
    links: taskLinks(deps, snap.id),
    next: nextStep(deps, snap),
  };
}

/** What its model calls cost so far (the status's spending, else the run folder's totals); null when unknown. */
async function costOf(deps: McpDeps, snap: TaskSnapshot): Promise<number | null> {
  if (snap.progress?.spent) return round(snap.progress.spent.costUsd);
  try {
    const totals = await runUsage(deps.store(), snap.id);
    return totals && totals.calls > totals.unpricedCalls ? round(totals.costUsd) : null;
  } catch {
    return null;
  }
}

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** The states in which an open task stops for a person. */
const STOPPED_FOR_A_PERSON: readonly string[] = ['waiting_for_user', 'paused', 'taken_over'];

/**
 * Whether a wait is over: the task has ended (its workflow closed: an ending status comes a moment before), or it
 * stops for a person (it asks, is paused or taken over).
 */
export function settled(snap: TaskSnapshot): boolean {
  return snap.closed || STOPPED_FOR_A_PERSON.includes(snap.status);
}

export interface WaitOptions {
  seconds: number;
  signal?: AbortSignal;
  /** Called after each look while it waits (not after the last). */
  onPoll?: (snap: TaskSnapshot, elapsedMs: number) => Promise<void>;
}

/** Waits until the task has settled or `seconds` have passed; returns its last snapshot. */
export async function waitForTask(deps: McpDeps, id: string, opts: WaitOptions): Promise<TaskSnapshot> {
  const started = Date.now();
  const until = started + opts.seconds * 1000;
  const agent = await deps.client();
  for (;;) {
    const snap = await agent.status(id);
    const left = until - Date.now();
    if (settled(snap) || left <= 0 || opts.signal?.aborted) return snap;
    await opts.onPoll?.(snap, Date.now() - started);
    await sleep(Math.min(deps.pollMs ?? 500, left), opts.signal);
  }
}
