// `cua show <id|run-folder>`: a run as text (src/viewer/run-text.ts: its status, usage and step table), or as JSON
// with --json. The run is read from a folder path, or by id from the configured run store (config `store`: folder or
// S3). The id of a best of N parent (`cua fork --branches K`) shows its branches compared instead.
import fs from 'node:fs';
import path from 'node:path';
import { readRunFromStore } from '../../src/trajectory/reader';
import { isValidTaskId } from '../../src/trajectory/layout';
import { openRunStore } from '../../src/trajectory/open-store';
import { LocalRunStore } from '../../src/trajectory/store';
import type { RunStore } from '../../src/trajectory/store';
import type { Config } from '../../src/runtime/config';
import { stepSummaries } from '../../src/trajectory/steps';
import { usageTotals } from '../../src/trajectory/usage';
import { approvalsByStep } from '../../src/viewer/approvals';
import { replayView } from '../../src/viewer/run-settings';
import { REQUEST_JOURNAL, runTextLines } from '../../src/viewer/run-text';
import { loadConfig } from '../../src/runtime/config';
import { one, parse } from '../args';
import { TaskError } from '../../client/tasks';
import { readBranches, showBranches } from './branches';

export const SHOW_USAGE = 'npx cua show <id|run-folder> [--json] [--config FILE]';

export function resolveRunFolder(idOrPath: string, runsDir: string): string {
  const candidates = [idOrPath, path.join(runsDir, idOrPath)];
  const found = candidates.find((c) => fs.existsSync(path.join(c, 'task.json')));
  if (!found)
    throw new TaskError(
      `no run folder for '${idOrPath}' (looked in ${candidates.map((c) => path.resolve(c)).join(' and ')})`,
    );
  return path.resolve(found);
}

export interface ResolvedRun {
  store: RunStore;
  taskId: string;
  /** Where it lives: a folder path, or an s3:// URL. */
  location: string;
  /** The folder, when the run is in a local one. */
  folder?: string;
}

/**
 * A run by folder path, or by id in the configured store: a folder given as a path wins; with an S3 store, an id is
 * looked up in the bucket; otherwise under `runsDir`.
 */
export async function resolveRun(idOrPath: string, config: Pick<Config, 'store' | 'runsDir'>): Promise<ResolvedRun> {
  if (config.store.kind === 's3' && isValidTaskId(idOrPath) && !fs.existsSync(path.join(idOrPath, 'task.json'))) {
    const store = openRunStore(config);
    if (await store.exists(`${idOrPath}/task.json`)) {
      return { store, taskId: idOrPath, location: store.describe(idOrPath) };
    }
    const local = path.join(config.runsDir, idOrPath);
    if (!fs.existsSync(path.join(local, 'task.json'))) {
      throw new TaskError(`no run '${idOrPath}' (looked in ${store.describe(idOrPath)} and ${path.resolve(idOrPath)})`);
    }
  }
  const folder = resolveRunFolder(idOrPath, config.runsDir);
  const taskId = path.basename(folder);
  return { store: new LocalRunStore(path.dirname(folder)), taskId, location: folder, folder };
}

/** Best of N's record when `id` names a parent (no run folder of its own, a branches.json in the store). */
export async function bestOfIn(config: Config, id: string) {
  if (!isValidTaskId(id) || fs.existsSync(path.join(id, 'task.json'))) return undefined;
  let store: RunStore;
  try {
    store = openRunStore(config);
  } catch {
    return undefined;
  }
  const record = await readBranches(store, id);
  return record ? { store, record } : undefined;
}

export async function showCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: 'boolean' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    SHOW_USAGE,
  );
  if (values.help) return (console.log(`usage: ${SHOW_USAGE}`), 0);
  const idOrPath = one(positionals, 'task id or run folder', SHOW_USAGE);
  const config = loadConfig({ file: values.config });
  const branches = await bestOfIn(config, idOrPath);
  if (branches) return (await showBranches(branches.store, branches.record, !!values.json), 0);
  const found = await resolveRun(idOrPath, config);
  const run = await readRunFromStore(found.store, found.taskId);
  const dir = found.location;
  const journal = (await found.store.readText(`${found.taskId}/${REQUEST_JOURNAL}`).catch(() => undefined)) ?? '';
  const approvals = approvalsByStep(run.events, journal);
  const rows = stepSummaries(run.events);
  const replay = replayView(run);
  if (values.json) {
    const { status, outcome, warnings } = run;
    const usage = usageTotals(run.events, run.verification);
    const steps = rows.map((r, i) => (approvals[i] ? { ...r, approval: approvals[i] } : r));
    const output = run.output !== undefined ? { output: run.output, outputError: run.outputError ?? null } : {};
    console.log(
      JSON.stringify({ dir, status, outcome, ...output, usage, steps, warnings, ...(replay ? { replay } : {}) }),
    );
    return 0;
  }
  for (const line of runTextLines(run, journal, dir)) console.log(line);
  return 0;
}
