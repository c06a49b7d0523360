// `cua schedule create NAME --cron "0 9 * * 1-5" [--timezone Europe/Lisbon] -- <cua run flags>` (or `--every 6h`),
// `list`, `describe NAME`, `pause`, `unpause`, `trigger`, `backfill NAME --from ISO --to ISO`, `delete`. Each run of a
// schedule is an ordinary task (`<name>-<scheduled time>`); `--notify-when` makes a monitor that tells the webhook
// when the output changes or a condition becomes true. What is wrong at create is refused before connecting, one line.
import { agentClientFor, InvalidScheduleError, parseSchedule } from '../../client/client';
import type { ScheduleDetail, ScheduleListEntry, ScheduleRun } from '../../client/client';
import type { OverlapPolicy } from '../../client/schedules';
import { notifyWhenOf } from '../../src/contract/condition-logic';
import { loadConfig } from '../../src/runtime/config';
import { DEFAULT_URL_POLICY } from '../../src/contract/url-policy';
import { parse, UsageError } from '../args';
import { runFlags } from './run';

export const SCHEDULE_USAGE =
  'npx cua schedule create NAME (--cron "MIN HOUR DOM MON DOW" [--timezone ZONE] | --every 6h) [--overlap POLICY]\n' +
  '         [--catchup-window 1h] [--notify-when changed|EXPR|JSON] [--paused] -- "<instruction>" [cua run flags]\n' +
  '       npx cua schedule list | describe NAME | pause NAME | unpause NAME | trigger NAME | delete NAME\n' +
  '       npx cua schedule backfill NAME --from ISO --to ISO            [--json] [--config FILE]';

const OPTIONS = {
  cron: { type: 'string' },
  every: { type: 'string' },
  timezone: { type: 'string' },
  overlap: { type: 'string' },
  'catchup-window': { type: 'string' },
  'notify-when': { type: 'string' },
  paused: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  note: { type: 'string' },
  json: { type: 'boolean' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const VERBS = ['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'backfill', 'delete'] as const;
type Verb = (typeof VERBS)[number];

export async function scheduleCommand(argv: readonly string[]): Promise<number> {
  const cut = argv.indexOf('--');
  const own = cut < 0 ? argv : argv.slice(0, cut);
  const { values, positionals } = parse(own, OPTIONS, SCHEDULE_USAGE);
  if (values.help) return (console.log(`usage: ${SCHEDULE_USAGE}`), 0);
  const [verbWord, name, extra] = positionals;
  if (!VERBS.includes(verbWord as Verb)) {
    throw new UsageError(
      `cua schedule: ${VERBS.join(', ')}${verbWord ? `, not '${verbWord}'` : ''}\nusage: ${SCHEDULE_USAGE}`,
    );
  }
  const verb = verbWord as Verb;
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'\nusage: ${SCHEDULE_USAGE}`);
  if (verb !== 'list' && !name) throw new UsageError(`cua schedule ${verb}: missing NAME\nusage: ${SCHEDULE_USAGE}`);
  if (verb !== 'create' && cut >= 0) throw new UsageError(`cua schedule ${verb} takes no task after '--'`);
  const json = !!values.json;
  const print = (text: string, data: unknown) => console.log(json ? JSON.stringify(data) : text);
  try {
    if (verb === 'create') return await create(name!, values, cut < 0 ? [] : argv.slice(cut + 1), print);
    const agent = await agentClientFor(loadConfig({ file: values.config }));
    try {
      if (verb === 'list') {
        const rows = await agent.listSchedules();
        print(listText(rows), rows);
      } else if (verb === 'describe') {
        const d = await agent.describeSchedule(name!);
        print(describeText(d), d);
      } else if (verb === 'backfill') {
        if (!values.from || !values.to) throw new UsageError('cua schedule backfill: --from ISO and --to ISO');
        await agent.backfillSchedule(name!, values.from, values.to);
        print(`schedule ${name}: backfill ${values.from} → ${values.to} started`, { name, backfill: true });
      } else {
        const act = {
          pause: 'pauseSchedule',
          unpause: 'unpauseSchedule',
          trigger: 'triggerSchedule',
          delete: 'deleteSchedule',
        } as const;
        if (verb === 'pause' || verb === 'unpause') await agent[act[verb]](name!, values.note);
        else await agent[act[verb]](name!);
        const done = { pause: 'paused', unpause: 'unpaused', trigger: 'triggered', delete: 'deleted' }[verb];
        print(`schedule ${name} ${done}`, { name, [done]: true });
      }
      return 0;
    } finally {
      await agent.close();
    }
  } catch (err) {
    // A schedule that cannot be created as asked is a usage error: one line, exit 2.
    if (err instanceof InvalidScheduleError) throw new UsageError(err.message);
    throw err;
  }
}

async function create(
  name: string,
  values: { [k in keyof typeof OPTIONS]?: string | boolean },
  runArgv: readonly string[],
  print: (text: string, data: unknown) => void,
): Promise<number> {
  if (runArgv.length === 0)
    throw new UsageError(`cua schedule create: the task goes after '--'\nusage: ${SCHEDULE_USAGE}`);
  for (const flag of ['--id', '--detach']) {
    if (runArgv.some((a) => a === flag || a.startsWith(`${flag}=`))) {
      throw new UsageError(
        `cua schedule create: ${flag} is not for a schedule (each run's id is NAME-<scheduled time>)`,
      );
    }
  }
  const flags = await runFlags([...runArgv, ...(values.config ? ['--config', String(values.config)] : [])]);
  if (!flags) throw new UsageError(`usage: ${SCHEDULE_USAGE}`);
  const str = (k: keyof typeof OPTIONS) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  let notifyWhen;
  try {
    notifyWhen = str('notify-when') === undefined ? undefined : notifyWhenOf(str('notify-when')!);
  } catch (err) {
    throw new UsageError(`invalid schedule: notify-when: ${(err as Error).message}`);
  }
  const opts = {
    ...(str('cron') !== undefined ? { cron: str('cron')! } : {}),
    ...(str('every') !== undefined ? { every: str('every')! } : {}),
    ...(str('timezone') !== undefined ? { timezone: str('timezone')! } : {}),
    ...(str('overlap') !== undefined ? { overlap: str('overlap')!.replace(/-/g, '_') as OverlapPolicy } : {}),
    ...(str('catchup-window') !== undefined ? { catchupWindow: str('catchup-window')! } : {}),
    ...(notifyWhen !== undefined ? { notifyWhen } : {}),
    ...(values.paused ? { paused: true } : {}),
  };
  const { id: _id, ...task } = flags.task;
  // Before connecting: a bad schedule is refused even with no server up, its URL also by the workers' policy.
  parseSchedule(name, task, opts, flags.config.urlPolicy ?? DEFAULT_URL_POLICY);
  const agent = await agentClientFor(flags.config);
  try {
    const d = await agent.createSchedule(name, task, opts);
    print(`schedule ${name} created\n${describeText(d)}`, d);
    return 0;
  } finally {
    await agent.close();
  }
}

const timing = (s: ScheduleListEntry) =>
  s.cron !== undefined ? `cron "${s.cron}"${s.timezone ? ` (${s.timezone})` : ' (UTC)'}` : `every ${s.every ?? '?'}`;
const short = (v: unknown, n = 100) => {
  const t = typeof v === 'string' ? v : JSON.stringify(v);
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

function listText(rows: ScheduleListEntry[]): string {
  if (rows.length === 0) return 'no schedules';
  return rows
    .map(
      (s) =>
        `${s.name.padEnd(20)} ${(s.paused ? 'paused' : 'active').padEnd(7)} ${timing(s).padEnd(34)} next ${s.nextRun ?? '—'}  ${short(s.instruction, 60)}`,
    )
    .join('\n');
}

function runLine(r: ScheduleRun): string {
  const why = r.endReason && r.endReason !== r.status ? ` (${r.endReason})` : '';
  const what = r.output
    ? `output ${short(r.output.value)}${r.output.partial ? ' (partial)' : ''}`
    : r.error
      ? `— ${short(r.error)}`
      : r.answer !== null
        ? `answer: ${short(r.answer)}`
        : '';
  return `  ${r.id}  ${r.status}${why}  ${what}`;
}

export function describeText(d: ScheduleDetail): string {
  const lines = [
    `schedule ${d.name}: ${timing(d)} · overlap ${d.overlap} · catch-up ${d.catchupWindowSeconds} s · ${d.paused ? `paused${d.note ? ` (${d.note})` : ''}` : 'active'}`,
    `task: ${short(d.instruction, 200)}`,
    ...(d.notifyWhen !== null ? [`notify when: ${short(d.notifyWhen, 200)}`] : []),
    `next runs: ${d.nextRuns.length ? d.nextRuns.join(', ') : '—'}`,
    `runs: ${d.counts.taken} taken, ${d.counts.skippedOverlap} skipped (overlap), ${d.counts.missedCatchupWindow} missed (catch-up window)`,
    ...(d.runs.length ? ['last runs:', ...d.runs.map(runLine)] : []),
  ];
  const m = d.monitor;
  if (m) {
    lines.push(
      `monitor: ${m.reports} report(s); last value ${m.last ? `${short(m.last.value)} (${m.last.taskId})` : '—'}`,
    );
    for (const n of m.notifications.slice(-5)) {
      lines.push(`  notified ${n.at} ${n.taskId}: ${short(n.old, 60)} → ${short(n.new, 60)}`);
    }
  }
  return lines.join('\n');
}
