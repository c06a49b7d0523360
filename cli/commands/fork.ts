// `cua fork <id> --step N`: a new task from another's steps 1…N (client/fork.ts). The source's run folder is checked
// first through the configured store, as `cua show` reads it, so a step it did not finish or saved no page for is
// refused in one line before anything starts; when the store cannot be read here, the fork's own refusal (the fork
// fails with end reason `input`) is waited for and printed the same way. `--branches K` starts best of N instead
// (branches.ts follows it and prints the comparison).
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { openRunStore } from '../../src/trajectory/open-store';
import { agentClientFor } from '../../client/client';
import { checkForkSource } from '../../client/fork';
import type { AgentClient } from '../../client/client';
import { TaskError } from '../../client/errors';
import { pageProbesOf } from '../../src/eval/task-set';
import type { Check } from '../../src/eval/task-set';
import type { RunStore } from '../../src/trajectory/store';
import { intFlag, one, parse, UsageError } from '../args';
import { checksFrom, followBranches } from './branches';
import { judgeFlags } from './eval-args';

export const FORK_USAGE =
  'npx cua fork <id> --step N [--instruction "…"] [--model NAME] [--hint "…"] [--id ID] [--detach] [--json]\n' +
  '       [--config FILE]\n' +
  '       best of N: npx cua fork <id> --step N --branches K [--checks FILE [--task ID]] [--judge webjudge|rubric]\n' +
  '       [--judge-base-url URL] [--judge-model NAME] [--judge-endpoint NAME] [--model NAME]… [--hint "…"]…\n' +
  '       [--cancel-rest] [--detach]';

/** How long a fork whose source could not be checked here is watched for its start (or its refusal). */
const START_WAIT_MS = 120_000;

const FORK_OPTIONS = {
  step: { type: 'string' },
  instruction: { type: 'string' },
  model: { type: 'string', multiple: true },
  hint: { type: 'string', multiple: true },
  id: { type: 'string' },
  branches: { type: 'string' },
  checks: { type: 'string' },
  task: { type: 'string' },
  judge: { type: 'string' },
  'judge-base-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-endpoint': { type: 'string' },
  'cancel-rest': { type: 'boolean' },
  detach: { type: 'boolean' },
  json: { type: 'boolean' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function forkCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseFork(argv);
  if (values.help) return (console.log(`usage: ${FORK_USAGE}`), 0);
  const source = one(positionals, 'task id', FORK_USAGE);
  const step = intFlag(values.step, 'step');
  if (step === undefined)
    throw new UsageError(`need --step N (the source's last step the fork keeps)\nusage: ${FORK_USAGE}`);
  const config = loadConfig({ file: values.config });
  const branches = intFlag(values.branches, 'branches');
  if (branches !== undefined) return bestOfCommand(config, source, step, branches, values);
  // --detach is accepted and changes nothing: a fork returns once it has started, as `cua run --detach` does.
  for (const flag of ['checks', 'task', 'judge', 'cancel-rest'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is for best of N: give --branches K too`);
  }
  const [model, extraModel] = values.model ?? [];
  const [hint, extraHint] = values.hint ?? [];
  if (extraModel !== undefined || extraHint !== undefined) {
    throw new UsageError('one --model and one --hint per fork (several are for best of N: --branches K)');
  }
  const checked = await checkForkSource(() => openRunStore(config), source, step);
  const agent = await agentClientFor(config);
  const { id } = await agent.fork(source, {
    step,
    ...(values.instruction !== undefined ? { instruction: values.instruction } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(hint !== undefined ? { hint } : {}),
    ...(values.id !== undefined ? { id: values.id } : {}),
  });
  if (!checked) await startedOrRefused(agent, id, source, step);
  console.log(
    values.json
      ? JSON.stringify({ id, forkOf: { runId: source, step } })
      : `${id} forks ${source} at step ${step} (its page and history as that step left them) and decides step ${step + 1}; follow it with: npx cua status ${id}`,
  );
  return 0;
}

type ForkValues = ReturnType<typeof parseFork>['values'];
function parseFork(argv: readonly string[]) {
  return parse(argv, FORK_OPTIONS, FORK_USAGE);
}

/**
 * `--branches K`: starts best of N (after the same check of the source as a fork), then follows it to its end and
 * prints the comparison (or, with --detach, its ids). Exit 0 when a branch passed, 1 when none did.
 */
async function bestOfCommand(
  config: Config,
  source: string,
  step: number,
  branches: number,
  values: ForkValues,
): Promise<number> {
  const scoring = values.checks !== undefined ? checksFrom(values.checks, values.task) : undefined;
  if (values.task !== undefined && values.checks === undefined)
    throw new UsageError('--task names a task of --checks FILE');
  const judge = judgeFlags(values);
  const probes = pageProbesOf((scoring?.checks ?? []) as Check[]).length;
  if (probes > 0 && !config.browser.pageProbes) {
    console.log(
      `[best-of] ${probes} page_js check(s): workers run them only with browser.pageProbes on (CUA_PAGE_PROBES=1); ` +
        'it is off in this config, and on a worker without it those checks fail as not run',
    );
  }
  await checkForkSource(() => openRunStore(config), source, step);
  const agent = await agentClientFor(config);
  const { task: _task, ...checks } = scoring ?? { task: null };
  const started = await agent.bestOf(source, {
    step,
    branches,
    ...checks,
    ...(values.instruction !== undefined ? { instruction: values.instruction } : {}),
    ...(values.model ? { models: values.model } : {}),
    ...(values.hint ? { hints: values.hint } : {}),
    ...(judge ? { judge } : {}),
    ...(values['cancel-rest'] ? { cancelRest: true } : {}),
    ...(values.id !== undefined ? { id: values.id } : {}),
  });
  if (values.detach) {
    console.log(
      values.json
        ? JSON.stringify({ id: started.id, branches: started.branches })
        : `${started.id}: best of ${branches} forks of ${source} at step ${step} (${started.branches.join(', ')}); ` +
            `compare them with: npx cua show ${started.id}`,
    );
    return 0;
  }
  if (!values.json) console.log(`[best-of] ${started.id}: ${branches} branches (${started.branches.join(', ')})`);
  let store: RunStore | undefined;
  try {
    store = openRunStore(config);
  } catch {
    store = undefined;
  }
  const record = await followBranches(agent, store, started.id, (line) => {
    if (!values.json) console.log(line);
  });
  if (values.json) console.log(JSON.stringify(record));
  return record.winner ? 0 : 1;
}

/** Waits until the fork has taken over its source's steps; its refusal (end reason `input`) is thrown (one line). */
async function startedOrRefused(agent: AgentClient, id: string, source: string, step: number): Promise<void> {
  const until = Date.now() + START_WAIT_MS;
  while (Date.now() < until) {
    const snap = await agent.status(id);
    if (snap.closed && snap.endReason === 'input') {
      throw new TaskError(`cannot fork ${source} at step ${step}: ${snap.error ?? 'refused'}`);
    }
    if (snap.closed || snap.step >= step) return;
    await sleep(500);
  }
}
