// `cua show <id|run-folder>`: the step table of a run, read from its run folder.
import fs from 'node:fs';
import path from 'node:path';
import { readRun } from '../../src/trajectory/reader';
import { stepSummaries } from '../../src/trajectory/steps';
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
  for (const r of rows) {
    const thoughts = (r.thoughts ?? '').replace(/\s+/g, ' ').slice(0, 70);
    console.log(
      `${String(r.step).padStart(4)}  ${(r.action_name ?? '-').padEnd(26)} ${(r.url ?? '').slice(0, 50).padEnd(50)} ${thoughts}`,
    );
  }
  for (const w of run.warnings) console.log(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
  return 0;
}
