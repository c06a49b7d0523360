// `cua view <id|run-folder>`: write a run's trajectory as one self-contained HTML page and print where it went. A run
// in the S3 store is copied into a temp folder first (events.jsonl rebuilt in order, its screenshots) and its report
// goes to `<runsDir>/<id>/report.html` unless --out says otherwise. A best of N parent's id gives the branches
// compared (each branch's last screenshot, links to their own reports).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPORT_FILE, writeTrajectoryReport } from '../../src/viewer/report';
import { loadConfig } from '../../src/runtime/config';
import { copyRun } from '../../src/trajectory/open-store';
import { LocalRunStore } from '../../src/trajectory/store';
import { one, parse } from '../args';
import { bestOfIn, resolveRun } from './show';
import { viewBranches } from './branches';

export const VIEW_USAGE = 'npx cua view <id|run-folder> [--out FILE] [--config FILE]';

export async function viewCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { out: { type: 'string', short: 'o' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    VIEW_USAGE,
  );
  if (values.help) return (console.log(`usage: ${VIEW_USAGE}`), 0);
  const config = loadConfig({ file: values.config });
  const idOrPath = one(positionals, 'task id or run folder', VIEW_USAGE);
  const branches = await bestOfIn(config, idOrPath);
  if (branches) return (console.log(await viewBranches(config, branches.store, branches.record, values.out)), 0);
  const run = await resolveRun(idOrPath, config);
  if (run.folder) {
    console.log((await writeTrajectoryReport(run.folder, values.out)).file);
    return 0;
  }
  const temp = await fs.mkdtemp(path.join(os.tmpdir(), 'cua-view-'));
  try {
    await copyRun(run.store, run.taskId, new LocalRunStore(temp));
    const out = values.out ?? path.join(config.runsDir, run.taskId, REPORT_FILE);
    console.log((await writeTrajectoryReport(path.join(temp, run.taskId), out)).file);
  } finally {
    await fs.rm(temp, { recursive: true, force: true });
  }
  return 0;
}
