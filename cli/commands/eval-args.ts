// `cua eval`'s command line: its usage, its flags, and the flags checked into an evaluation's settings before the
// config or the task set is read (a bad flag is a UsageError). `cua fork` reads the `--judge…` flags the same way.
import { JUDGE_KINDS } from '../../src/eval/judge';
import type { JudgeSettings } from '../../src/eval/judge';
import { TASK_SET_FORMATS } from '../../src/eval/task-set';
import type { TaskFilter, TaskSetFormat } from '../../src/eval/task-set';
import { familyFlag, intFlag, parse, UsageError } from '../args';

export const EVAL_USAGE =
  'npx cua eval <tasks.jsonl|store:KEY> [--concurrency N] [--trials K] [--out DIR] [--filter ID-PATTERN] [--tag TAG]\n' +
  '       [--level LEVEL] [--first N] [--format local|webvoyager|mind2web] [--answers FILE|store:KEY] [--id EVAL-ID]\n' +
  '       [--max-retries N] [--max-steps N] [--model-base-url URL] [--model NAME] [--site NAME=URL]…\n' +
  '       [--judge auto|webjudge|rubric|none] [--judge-base-url URL] [--judge-model NAME] [--judge-endpoint NAME]\n' +
  '       [--family NAME] [--cache NAME] [--scripted DIR] [--embedded] [--ui-url URL] [--detach] [--config FILE]\n' +
  '       npx cua eval compare <A/eval-results.json> <B/eval-results.json>';

const OPTIONS = {
  concurrency: { type: 'string' },
  trials: { type: 'string' },
  out: { type: 'string', short: 'o' },
  filter: { type: 'string' },
  tag: { type: 'string' },
  level: { type: 'string' },
  first: { type: 'string' },
  format: { type: 'string' },
  answers: { type: 'string' },
  id: { type: 'string' },
  'max-retries': { type: 'string' },
  'max-steps': { type: 'string' },
  'model-base-url': { type: 'string' },
  model: { type: 'string' },
  site: { type: 'string', multiple: true },
  scripted: { type: 'string' },
  judge: { type: 'string' },
  'judge-base-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-endpoint': { type: 'string' },
  embedded: { type: 'boolean' },
  'ui-url': { type: 'string' },
  detach: { type: 'boolean' },
  cache: { type: 'string' },
  family: { type: 'string' },
  profile: { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type EvalValues = ReturnType<typeof parse<typeof OPTIONS>>['values'];

/** The command line, checked: all of it is refused or accepted before the config or the task set is read. */
export interface EvalArgs {
  values: EvalValues;
  file: string;
  format: TaskSetFormat | undefined;
  filter: TaskFilter;
  judge: JudgeSettings | undefined;
  /** The --site URLs; those of the services this command starts for the other placeholders are added as they start. */
  sites: Record<string, string>;
  /** The tasks' model family (`--family`); absent: the default endpoint's declared one, else each task's own. */
  family?: string;
}

function siteFlags(values: string[] | undefined): Record<string, string> {
  const sites: Record<string, string> = {};
  for (const v of values ?? []) {
    const m = /^([A-Za-z0-9_-]+)=(https?:\/\/.+)$/.exec(v);
    if (!m?.[1] || !m[2]) throw new UsageError(`--site wants NAME=http(s)://…, got '${v}'`);
    sites[m[1]] = m[2];
  }
  return sites;
}

/** The command line as an evaluation's settings, or null for --help; a bad flag or argument is a UsageError. */
export function parseEvalArgs(argv: readonly string[]): EvalArgs | null {
  const { values, positionals } = parse(argv, OPTIONS, EVAL_USAGE);
  if (values.help) return null;
  const [file, extra] = positionals;
  if (!file) throw new UsageError(`missing the task set (a file or store:KEY)\nusage: ${EVAL_USAGE}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'\nusage: ${EVAL_USAGE}`);
  const format = values.format as TaskSetFormat | undefined;
  if (format !== undefined && !TASK_SET_FORMATS.includes(format)) {
    throw new UsageError(`--format must be one of ${TASK_SET_FORMATS.join(', ')}, got '${format}'`);
  }
  const filter: TaskFilter = {
    ...(values.filter ? { id: values.filter } : {}),
    ...(values.tag ? { tag: values.tag } : {}),
    ...(values.level ? { level: values.level } : {}),
    ...(values.first ? { first: intFlag(values.first, 'first') } : {}),
  };
  const judge = judgeFlags(values);
  const sites = siteFlags(values.site);
  const family = familyFlag(values);
  return { values, file, format, filter, judge, sites, ...(family ? { family } : {}) };
}

/** The `--judge…` flags as the evaluation's judge settings (undefined: none given, the default `auto`). */
export function judgeFlags(values: {
  judge?: string;
  'judge-base-url'?: string;
  'judge-model'?: string;
  'judge-endpoint'?: string;
}): JudgeSettings | undefined {
  const kind = values.judge;
  if (kind !== undefined && kind !== 'auto' && !(JUDGE_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--judge must be one of auto, ${JUDGE_KINDS.join(', ')}, got '${kind}'`);
  }
  const settings: JudgeSettings = {
    ...(kind ? { kind: kind as JudgeSettings['kind'] } : {}),
    ...(values['judge-base-url'] ? { baseUrl: values['judge-base-url'] } : {}),
    ...(values['judge-model'] ? { model: values['judge-model'] } : {}),
    ...(values['judge-endpoint'] ? { endpoint: values['judge-endpoint'] } : {}),
  };
  return Object.keys(settings).length ? settings : undefined;
}
