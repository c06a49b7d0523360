// `cua reply | status | list | cancel`: talk to running tasks through Temporal.
import { readRunFromStore } from '../../src/trajectory/reader';
import { openRunStore } from '../../src/trajectory/open-store';
import { dollars, usageLine, usageTotals } from '../../src/trajectory/usage';
import type { UsageTotals } from '../../src/trajectory/usage';
import type { Config } from '../../src/runtime/config';
import { loadConfig } from '../../src/runtime/config';
import { TASK_STATES } from '../../src/contract/task';
import type { TaskState, TaskStatus } from '../../src/contract/task';
import { agentClientFor } from '../../client/client';
import { budgetLine } from '../../src/agent/budget';
import { outputLine } from '../../src/agent/output-extract';
import { one, parse, UsageError } from '../args';
import { modelWaitLine, storeWaitLine } from '../../client/tasks';

const common = {
  json: { type: 'boolean' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const REPLY_USAGE = 'npx cua reply <id> "<text>" [--question QID] [--config FILE]';
export async function replyCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...common, question: { type: 'string' } }, REPLY_USAGE);
  if (values.help) return (console.log(`usage: ${REPLY_USAGE}`), 0);
  const [id, ...rest] = positionals;
  const text = rest.join(' ');
  if (!id || !text.trim()) throw new UsageError(`need a task id and a non-empty reply\nusage: ${REPLY_USAGE}`);
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const res = await agent.reply(id, text, values.question ? { questionId: values.question } : {});
  console.log(values.json ? JSON.stringify({ id, ...res }) : `reply delivered to ${id} (question at step ${res.step})`);
  return 0;
}

export const STATUS_USAGE = 'npx cua status <id> [--json] [--config FILE]';
export async function statusCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, common, STATUS_USAGE);
  if (values.help) return (console.log(`usage: ${STATUS_USAGE}`), 0);
  const id = one(positionals, 'task id', STATUS_USAGE);
  const config = loadConfig({ file: values.config });
  const agent = await agentClientFor(config);
  const state = await agent.status(id);
  const usage = await usageIn(config, id);
  const view = {
    status: state.progress,
    workflowStatus: state.workflowStatus,
    result: state.result,
    failure: state.failure,
    waitingForSession: state.waitingForSession,
    waitingForModel: state.waitingForModel,
    waitingForStore: state.waitingForStore,
  };
  if (values.json) {
    console.log(JSON.stringify({ id, ...view, ...(usage ? { usage } : {}) }));
    return 0;
  }
  if (view.status) {
    const s = view.status;
    console.log(`${id}: ${s.status} · step ${s.step}/${s.maxSteps}`);
    if (view.waitingForSession) {
      const w = view.waitingForSession;
      console.log(
        `  waiting for a session: every worker's slots are taken (attempt ${w.attempts}` +
          `${w.since ? `, since ${w.since}` : ''}); it starts when one frees up`,
      );
    }
    if (view.waitingForModel) console.log(`  ${modelWaitLine(view.waitingForModel)}`);
    if (view.waitingForStore) console.log(`  ${storeWaitLine(view.waitingForStore)}`);
    if (s.lastUrl) console.log(`  url:         ${s.lastUrl}`);
    if (s.lastAction) console.log(`  last action: ${s.lastAction}`);
    if (s.invalidReplies) console.log(`  invalid model outputs in a row: ${s.invalidReplies}`);
    if (s.question) console.log(`  question:    ${s.question.text}  (reply: npx cua reply ${id} "<text>")`);
    const budget = s.spent ? budgetLine(s.spent.limits, { ...s.spent, workMs: s.spent.minutes * 60_000 }) : '';
    if (budget) console.log(`  budget:      ${budget}`);
    for (const line of controlLines(id, s)) console.log(`  ${line}`);
  } else if (view.result) {
    const r = view.result;
    const why = r.endReason && r.endReason !== r.status ? ` (${r.endReason})` : '';
    console.log(`${id}: ${r.status}${why} after ${r.steps} step(s)`);
    if (r.answer !== null) console.log(`  answer: ${r.answer}`);
    const output = outputLine(r.output, r.outputError);
    if (output) console.log(`  ${output}`);
    if (r.error) console.log(`  error:  ${r.error}`);
  } else {
    console.log(`${id}: ${view.workflowStatus.toLowerCase()}${view.failure ? ` — ${view.failure}` : ''}`);
  }
  if (usage) console.log(`  usage: ${usageLine(usage)}`);
  return 0;
}

/** The task's model usage so far, from its run folder in the configured store; undefined when it cannot be read here. */
async function usageIn(config: Config, id: string): Promise<UsageTotals | undefined> {
  try {
    const run = await readRunFromStore(openRunStore(config), id);
    return usageTotals(run.events, run.verification);
  } catch {
    return undefined;
  }
}

export const LIST_USAGE = `npx cua list [--status ${TASK_STATES.join('|')}] [--limit N] [--sort cost] [--json] [--config FILE]`;
export async function listCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...common, status: { type: 'string' }, limit: { type: 'string' }, sort: { type: 'string' } },
    LIST_USAGE,
  );
  if (values.help) return (console.log(`usage: ${LIST_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${LIST_USAGE}`);
  if (values.status && !(TASK_STATES as readonly string[]).includes(values.status)) {
    throw new UsageError(`--status must be one of ${TASK_STATES.join(', ')}; got '${values.status}'`);
  }
  if (values.sort !== undefined && values.sort !== 'cost') {
    throw new UsageError(`--sort must be cost; got '${values.sort}'`);
  }
  const limit = values.limit ? Number(values.limit) : 50;
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const rows = await agent.list({
    ...(values.status ? { status: values.status as TaskState } : {}),
    ...(values.sort ? { sort: 'cost' as const } : {}),
    limit,
  });
  if (values.json) {
    console.log(JSON.stringify(rows));
  } else if (!rows.length) {
    console.log('no tasks');
  } else {
    for (const r of rows) {
      const instr = r.instruction.length > 60 ? `${r.instruction.slice(0, 57)}...` : r.instruction;
      const cost = (r.cost === null ? '-' : dollars(r.cost)).padStart(8);
      console.log(
        `${r.id.padEnd(36)} ${r.status.padEnd(17)} step ${String(r.step ?? '-').padStart(3)} ${cost}  ${instr}`,
      );
    }
  }
  return 0;
}

export const CANCEL_USAGE = 'npx cua cancel <id> [--config FILE]';
export async function cancelCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, common, CANCEL_USAGE);
  if (values.help) return (console.log(`usage: ${CANCEL_USAGE}`), 0);
  const id = one(positionals, 'task id', CANCEL_USAGE);
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const { message } = await agent.cancel(id);
  console.log(values.json ? JSON.stringify({ id, status: 'cancelled' }) : `task ${id} cancelled (${message})`);
  return 0;
}

/** What `cua status` says of a person's controls: a pause, a takeover, messages the model has not read yet. */
export function controlLines(id: string, s: TaskStatus): string[] {
  const since = s.controlSince ? ` since ${s.controlSince.slice(0, 19).replace('T', ' ')} UTC` : '';
  const lines: string[] = [];
  if (s.pausing) lines.push('pausing:     after the step under way');
  if (s.status === 'paused') lines.push(`paused${since}; resume: npx cua resume ${id}`);
  if (s.takeover && 'pending' in s.takeover) lines.push('taking over: after the step under way');
  else if (s.takeover) {
    lines.push(`taken over${since} (lease ${s.takeover.leaseId}): ${s.takeover.url}`);
    lines.push(`hand back:   npx cua handback ${id} "<what you did>"`);
  }
  if (s.unreadMessages) lines.push(`messages:    ${s.unreadMessages} not read by the model yet`);
  if (s.signinWait) lines.push(signinWaitLine(s.signinWait));
  return lines;
}

/** A task in line for its saved sign-in: which, and who holds it. */
export function signinWaitLine(wait: NonNullable<TaskStatus['signinWait']>): string {
  return `waiting for sign-in ${wait.name}, held by ${wait.heldBy === null ? 'another task' : `task ${wait.heldBy}`}`;
}
