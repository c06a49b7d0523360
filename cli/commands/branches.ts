// Best of N on the command line: `cua fork <id> --step N --branches K` (start it, follow it, print the comparison),
// and the comparison `cua show` and `cua view` give for a parent's id. The parent's record is read from the run
// store (`<id>/branches.json`, rewritten as branches end), the branches' steps and tokens from their run folders.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { BRANCHES_FILE } from '../../src/eval/branches';
import type { BranchesRecord } from '../../src/eval/branches';
import { loadTaskSet, TaskSetError } from '../../src/eval/task-set';
import type { EvalTask } from '../../src/eval/task-set';
import type { Config } from '../../src/runtime/config';
import { readRunFromStore } from '../../src/trajectory/reader';
import { isValidTaskId } from '../../src/trajectory/layout';
import type { RunStore } from '../../src/trajectory/store';
import { branchesHtml, branchesLines, branchStats } from '../../src/viewer/branches';
import type { BranchStats } from '../../src/viewer/branches';
import { REPORT_FILE, writeTrajectoryReport } from '../../src/viewer/report';
import type { AgentClient } from '../../client/client';
import type { BranchOptions } from '../../client/fork';
import { UsageError } from '../args';

/** Best of N's record in the store, or undefined when `id` names none. */
export async function readBranches(store: RunStore, id: string): Promise<BranchesRecord | undefined> {
  if (!isValidTaskId(id)) return undefined;
  const text = await store.readText(`${id}/${BRANCHES_FILE}`).catch(() => undefined);
  if (text === undefined) return undefined;
  return JSON.parse(text) as BranchesRecord;
}

/** Each branch's stats from its run folder (a branch without a readable folder yet has none). */
export async function statsOf(store: RunStore, record: BranchesRecord): Promise<Map<string, BranchStats>> {
  const out = new Map<string, BranchStats>();
  for (const b of record.branches) {
    try {
      out.set(b.runId, branchStats((await readRunFromStore(store, b.runId)).events));
    } catch {
      // not started yet, or its folder is unreadable: shown as unknown
    }
  }
  return out;
}

/** The comparison's lines for `cua show` (and `--json`'s object). */
export async function showBranches(store: RunStore, record: BranchesRecord, json: boolean): Promise<void> {
  const stats = await statsOf(store, record);
  if (json) {
    const branches = record.branches.map((b) => ({ ...b, stats: stats.get(b.runId) ?? null }));
    console.log(JSON.stringify({ ...record, branches }));
    return;
  }
  for (const line of branchesLines(record, stats)) console.log(line);
}

/**
 * `cua view <parent id>`: the comparison as one HTML page (each branch's last screenshot in it); with the folder
 * store, each branch's own report is written too and linked. Returns the page's path.
 */
export async function viewBranches(config: Config, store: RunStore, record: BranchesRecord, out?: string) {
  const stats = await statsOf(store, record);
  const shots = new Map<string, string>();
  const local = config.store.kind !== 's3';
  const reports = new Set<string>();
  for (const b of record.branches) {
    const shot = stats.get(b.runId)?.lastScreenshot;
    const png = shot ? await store.readBytes(`${b.runId}/${shot}`).catch(() => undefined) : undefined;
    if (png) {
      const webp = await sharp(png).resize({ width: 640, withoutEnlargement: true }).webp({ quality: 75 }).toBuffer();
      shots.set(b.runId, `data:image/webp;base64,${webp.toString('base64')}`);
    }
    if (local && stats.has(b.runId)) {
      await writeTrajectoryReport(path.join(config.runsDir, b.runId)).then(
        () => reports.add(b.runId),
        () => undefined,
      );
    }
  }
  const file = path.resolve(out ?? path.join(config.runsDir, record.id, REPORT_FILE));
  const rel = (taskId: string) => path.relative(path.dirname(file), path.join(config.runsDir, taskId, REPORT_FILE));
  const html = branchesHtml(record, stats, shots, (taskId) => (reports.has(taskId) ? rel(taskId) : null));
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, html);
  return file;
}

/** The scoring part of `--checks FILE`: a JSON array of checks, or a task-set file (its only task, or `--task ID`). */
export function checksFrom(
  file: string,
  setTaskId: string | undefined,
): Pick<BranchOptions, 'checks' | 'taskJudge' | 'referenceAnswer'> & { task: string | null } {
  let tasks: EvalTask[];
  try {
    tasks = loadTaskSet(file, { format: 'local' });
  } catch (err) {
    const array = parseArray(file);
    if (array !== undefined) {
      if (setTaskId !== undefined)
        throw new UsageError(`--task ${setTaskId}: ${file} is a list of checks, not a task set`);
      return { checks: array, task: null };
    }
    throw err instanceof TaskSetError ? new UsageError(`--checks: ${err.message}`) : err;
  }
  const task = setTaskId === undefined ? tasks[0] : tasks.find((t) => t.id === setTaskId);
  if (!task) throw new UsageError(`--checks: ${file} has no task '${setTaskId ?? ''}'`);
  if (setTaskId === undefined && tasks.length > 1) {
    const ids = tasks.slice(0, 8).map((t) => t.id);
    throw new UsageError(
      `--checks: ${file} has ${tasks.length} tasks: name one with --task ID (${ids.join(', ')}${tasks.length > 8 ? ', …' : ''})`,
    );
  }
  const judge = task.judge
    ? {
        kind: task.judge.kind,
        ...(task.judge.rubric.length ? { rubric: task.judge.rubric } : {}),
        ...(task.judge.model
          ? {
              model: {
                ...(task.judge.model.endpoint ? { endpoint: task.judge.model.endpoint } : {}),
                ...(task.judge.model.baseUrl ? { base_url: task.judge.model.baseUrl } : {}),
                ...(task.judge.model.model ? { model: task.judge.model.model } : {}),
              },
            }
          : {}),
      }
    : undefined;
  return {
    checks: task.checks,
    ...(judge ? { taskJudge: judge } : {}),
    ...(task.referenceAnswer !== null ? { referenceAnswer: task.referenceAnswer } : {}),
    task: task.id,
  };
}

/** The file's JSON array (a list of checks), or undefined when it holds none. */
function parseArray(file: string): unknown[] | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Follows best of N until it ends: a line as each branch ends or is scored, then the comparison. Returns the record
 * it ended with.
 */
export async function followBranches(
  agent: AgentClient,
  store: RunStore | undefined,
  id: string,
  print: (line: string) => void,
): Promise<BranchesRecord> {
  const seen = new Map<string, string>();
  for (;;) {
    const record = await agent.branches(id);
    for (const b of record.branches) {
      const key = `${b.state}:${b.score}`;
      if (seen.get(b.runId) === key) continue;
      if (seen.has(b.runId) || b.state !== 'running') {
        const score = b.score === null ? '' : ` · score ${b.score}`;
        print(
          `[best-of] branch ${b.index} ${b.state}${b.endReason ? ` (${b.endReason}, ${b.steps} steps)` : ''}${score}`,
        );
      }
      seen.set(b.runId, key);
    }
    if (record.state === 'done') {
      const stats = store ? await statsOf(store, record) : new Map<string, BranchStats>();
      for (const line of branchesLines(record, stats)) print(line);
      return record;
    }
    await sleep(1000);
  }
}
