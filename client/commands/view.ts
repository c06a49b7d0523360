// `cua view <id|run-folder>`: write a run's trajectory as one self-contained HTML page and print where it went.
import { writeTrajectoryReport } from '../../src/viewer/report';
import { loadConfig } from '../../src/runtime/config';
import { one, parse } from '../args';
import { resolveRunFolder } from './show';

export const VIEW_USAGE = 'npx cua view <id|run-folder> [--out FILE] [--config FILE]';

export async function viewCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { out: { type: 'string', short: 'o' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    VIEW_USAGE,
  );
  if (values.help) return (console.log(`usage: ${VIEW_USAGE}`), 0);
  const dir = resolveRunFolder(
    one(positionals, 'task id or run folder', VIEW_USAGE),
    loadConfig({ file: values.config }).runsDir,
  );
  const report = await writeTrajectoryReport(dir, values.out);
  console.log(report.file);
  return 0;
}
