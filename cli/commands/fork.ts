// `cua fork <id> --step N`: a new task from another's steps 1…N (api/fork.ts). The source's run folder is checked
// first through the configured store, as `cua show` reads it, so a step it did not finish or saved no page for is
// refused in one line before anything starts; when the store cannot be read here, the fork's own refusal (the fork
// fails with end reason `input`) is waited for and printed the same way.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { openRunStore } from '../../src/trajectory/open-store';
import { readForkSource } from '../../activities/fork-source';
import { agentClientFor } from '../../api/client';
import type { AgentClient } from '../../api/client';
import { TaskError } from '../../api/errors';
import { intFlag, one, parse, UsageError } from '../args';

export const FORK_USAGE =
  'npx cua fork <id> --step N [--instruction "…"] [--model NAME] [--hint "…"] [--id ID] [--json] [--config FILE]';

/** How long a fork whose source could not be checked here is watched for its start (or its refusal). */
const START_WAIT_MS = 120_000;

export async function forkCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      step: { type: 'string' },
      instruction: { type: 'string' },
      model: { type: 'string' },
      hint: { type: 'string' },
      id: { type: 'string' },
      json: { type: 'boolean' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    FORK_USAGE,
  );
  if (values.help) return (console.log(`usage: ${FORK_USAGE}`), 0);
  const source = one(positionals, 'task id', FORK_USAGE);
  const step = intFlag(values.step, 'step');
  if (step === undefined)
    throw new UsageError(`need --step N (the source's last step the fork keeps)\nusage: ${FORK_USAGE}`);
  const config = loadConfig({ file: values.config });
  const checked = await checkSource(config, source, step);
  const agent = await agentClientFor(config);
  const { id } = await agent.fork(source, {
    step,
    ...(values.instruction !== undefined ? { instruction: values.instruction } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(values.hint !== undefined ? { hint: values.hint } : {}),
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

/**
 * The source's run folder checked through the configured store: a refusal is thrown (one line); false when the store
 * cannot be read from here (then the fork's own check decides).
 */
async function checkSource(config: Config, source: string, step: number): Promise<boolean> {
  let found: Awaited<ReturnType<typeof readForkSource>>;
  try {
    found = await readForkSource(openRunStore(config), source, step);
  } catch {
    return false;
  }
  if ('refused' in found) throw new TaskError(`cannot fork ${source} at step ${step}: ${found.refused}`);
  return true;
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
