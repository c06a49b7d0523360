// `cua show <id|run-folder>`: the step table of a run, read from its run folder. A decision superseded after a lost
// worker is listed under its step's number, marked, above the decision that replaced it; an invalid reply is marked.
import fs from 'node:fs';
import path from 'node:path';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
import type { StepSummary } from '../../src/trajectory/steps';
import { loadConfig } from '../../worker/config';
import { one, parse } from '../args';
import { TaskError } from '../tasks';

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

const oneLine = (text: string, width: number) => text.replace(/\s+/g, ' ').trim().slice(0, width);

/** What the last column says: a superseded decision's unknown effect, an invalid reply's error, else the thoughts. */
function remark(row: StepSummary): string {
  if (row.superseded) return 'effect unknown, worker lost; re-decided below';
  if (row.invalid !== null) return `invalid reply: ${oneLine(row.invalid, 100)}`;
  return oneLine(row.thoughts, 70);
}

/** One line of the step table, e.g. `   7  (superseded) left_click   http://…   effect unknown, …`. */
export function stepLine(row: StepSummary): string {
  const action = `${row.superseded ? '(superseded) ' : ''}${row.action_name}${row.invalid !== null ? ' (invalid)' : ''}`;
  return `${String(row.step).padStart(4)}  ${action.padEnd(26)} ${row.url.slice(0, 50).padEnd(50)} ${remark(row)}`;
}

export async function showCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: 'boolean' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    SHOW_USAGE,
  );
  if (values.help) return (console.log(`usage: ${SHOW_USAGE}`), 0);
  const dir = resolveRunFolder(
    one(positionals, 'task id or run folder', SHOW_USAGE),
    loadConfig({ file: values.config }).runsDir,
  );
  const run = await readRun(dir);
  const rows = stepSummaries(run.events);
  if (values.json) {
    console.log(JSON.stringify({ dir, status: run.status, outcome: run.outcome, steps: rows, warnings: run.warnings }));
    return 0;
  }
  console.log(`${run.task.instruction}`);
  console.log(`run folder: ${dir}`);
  console.log(`status: ${run.status}${run.outcome ? ` · answer: ${run.outcome.answer}` : ''}`);
  const superseded = rows.filter((r) => r.superseded).length;
  const more = superseded ? ` (+${superseded} superseded decision${superseded === 1 ? '' : 's'})` : '';
  console.log(`steps: ${rows.length - superseded}${more}`);
  for (const r of rows) console.log(stepLine(r));
  for (const w of run.warnings) console.log(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
  return 0;
}
