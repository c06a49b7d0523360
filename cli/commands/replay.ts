// `cua replay <id|folder>`: run a recorded run's actions again as a new durable task (client/replay.ts), without the model
// while the live page matches the recording, with it from the first step that does not. A folder is copied into the
// run store first (it is only read). The command follows the replay to its end and prints how its steps went, the
// model calls it made against the recording's, and the time each took.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/runtime/config';
import { readRunFromStore } from '../../src/trajectory/reader';
import { openRunStore } from '../../src/trajectory/open-store';
import { replayLines, tallyOf } from '../../src/replay/summary';
import { agentClientFor } from '../../client/client';
import { inputFromTaskRecord, replayTask } from '../../client/replay';
import type { ReplayOptions } from '../../client/replay';
import { TaskNotFoundError } from '../../client/errors';
import { one, parse, UsageError } from '../args';

export const REPLAY_USAGE =
  'npx cua replay <id|folder> [--url URL] [--strict] [--max-distance D] [--replies ask|recorded]\n' +
  '       [--model NAME] [--model-base-url URL] [--id ID] [--detach] [--json] [--config FILE]';

export async function replayCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      url: { type: 'string' },
      strict: { type: 'boolean' },
      'max-distance': { type: 'string' },
      replies: { type: 'string' },
      answers: { type: 'string' }, // the old name of --replies, still accepted
      model: { type: 'string' },
      'model-base-url': { type: 'string' },
      id: { type: 'string' },
      detach: { type: 'boolean' },
      json: { type: 'boolean' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    REPLAY_USAGE,
  );
  if (values.help) return (console.log(`usage: ${REPLAY_USAGE}`), 0);
  const source = one(positionals, 'task id or run folder', REPLAY_USAGE);
  const repliesName = values.replies !== undefined ? 'replies' : 'answers';
  const replies = values.replies ?? values.answers;
  const opts: ReplayOptions = {
    ...(values.url !== undefined ? { url: urlFlag(values.url) } : {}),
    ...(values.strict ? { strict: true } : {}),
    ...(values['max-distance'] !== undefined ? { maxDistance: distanceFlag(values['max-distance']) } : {}),
    ...(replies !== undefined ? { replies: repliesFlag(replies, repliesName) } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(values['model-base-url'] !== undefined ? { modelBaseUrl: values['model-base-url'] } : {}),
    ...(values.id !== undefined ? { id: values.id } : {}),
  };
  const config = loadConfig({ file: values.config });
  const store = openRunStore(config);
  const agent = await agentClientFor(config);
  try {
    const isFolder = fs.existsSync(path.join(source, 'task.json')) || source.includes(path.sep);
    let started;
    if (isFolder) started = await agent.replay(source, { ...opts, folder: true, store });
    else {
      try {
        started = await agent.replay(source, opts);
      } catch (err) {
        // A run Temporal no longer knows (its retention passed) is replayed from its run folder's task.json.
        if (!(err instanceof TaskNotFoundError)) throw err;
        const run = await readRunFromStore(store, source).catch(() => undefined);
        if (!run) throw err;
        started = await replayTask(agent.temporal, agent.taskQueue, source, opts, inputFromTaskRecord(run.task));
      }
    }
    const { id, recording } = started;
    if (values.detach) {
      console.log(
        values.json
          ? JSON.stringify({ id, recording })
          : `${id} replays ${recording}; follow it with: npx cua status ${id}`,
      );
      return 0;
    }
    if (!values.json) console.log(`[replay] ${id} replays ${recording}`);
    const result = await agent.result(id);
    // The run folder is complete once the result is in: the tally reads both folders from the store.
    const [own, recorded] = await Promise.all([readRunFromStore(store, id), readRunFromStore(store, recording)]);
    const mine = tallyOf(own.events);
    const theirs = tallyOf(recorded.events);
    if (values.json) {
      console.log(JSON.stringify({ id, recording, result, replay: mine, recorded: theirs }));
    } else {
      console.log(
        `[replay] ${id}: ${result.status} (${result.endReason})${result.answer ? ` · answer: ${result.answer}` : ''}`,
      );
      if (result.endReason === 'replay_diverged' && result.error) console.log(`[replay] ${result.error}`);
      for (const line of replayLines(mine, theirs)) console.log(`[replay] ${line}`);
    }
    return result.status === 'complete' ? 0 : 1;
  } finally {
    await agent.close();
  }
}

function urlFlag(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // below
  }
  throw new UsageError(`--url must be an http(s) URL, got '${value}'`);
}

function distanceFlag(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError(`--max-distance must be a number from 0 to 1, got '${value}'`);
  return n;
}

function repliesFlag(value: string, name: string): 'ask' | 'recorded' {
  if (value === 'ask' || value === 'recorded') return value;
  throw new UsageError(`--${name} must be ask or recorded, got '${value}'`);
}
