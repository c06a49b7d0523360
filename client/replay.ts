// A replay (`cua replay <id|folder>`, issue 28): a new durable task that runs a recorded run's actions again, each
// one only after its worker has checked the live page against the recording (workflows: replayStep), with the model
// deciding from the first step that does not match. A recorded run is named by its task id (its run folder in the
// run store) or given as a folder, which is first copied into the run store under a new id: workers never read a
// path a task starter names.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TaskInput, TaskInputArgs } from '../src/contract/task';
import { FolderNotAdoptableError } from '../src/trajectory/errors';
import { importAdoptedFolder, readRecordedFolder, recordedStartUrl } from '../src/trajectory/fara-folder';
import { TASK_FILE } from '../src/trajectory/layout';
import type { Task as TaskRecord } from '../src/trajectory/schema';
import type { RunStore } from '../src/trajectory/store';
import { firstInput } from './control';
import { InvalidTaskInputError, TaskAlreadyExistsError } from './errors';
import { startTask, validateTaskInput, withCallerPolicy } from './tasks';
import type { CallerPolicy } from './tasks';
import { isFamilyName } from '../src/families/registry';

export interface ReplayOptions {
  /** Start here instead of the recording's start URL; the recording's URLs are read with this origin. */
  url?: string;
  /** End the task (end reason `replay_diverged`) at the first step that does not match, instead of asking the model. */
  strict?: boolean;
  /** The largest screenshot distance (0…1) that still matches (default 0.05). */
  maxDistance?: number;
  /** `recorded`: a recorded question gets its recorded reply; default `ask`: the person is asked again. */
  replies?: 'ask' | 'recorded';
  /** @deprecated use `replies` (the same choice under its old name; `replies` wins when both are given) */
  answers?: 'ask' | 'recorded';
  /** The model name (and base URL) the steps that do not match go to (default: the recording's). */
  model?: string;
  modelBaseUrl?: string;
  /** The replay's task id (default `<recording>-replay-<random>`). */
  id?: string;
  /** A start policy the replay must keep to (the recording's model, environment and steps), its URL policy added. */
  policy?: CallerPolicy;
}

export interface Replay {
  id: string;
  /** The recording's id in the run store (a folder's copy has a new one). */
  recording: string;
  input: TaskInput;
}

/** An id made of `base` and a tail, `base` cut to fit 128 characters. */
function idWith(base: string, tail: string): string {
  return `${base.slice(0, 128 - tail.length)}${tail}`;
}

/** The task input fields a recording's task.json gives (a run no longer known to Temporal, or a folder's copy). */
export function inputFromTaskRecord(task: TaskRecord): Omit<TaskInputArgs, 'runId'> {
  const config = task.environment_config as { start_url?: unknown; viewport?: unknown; environment?: unknown };
  const profile = (task.metadata as { profile?: unknown } | undefined)?.profile;
  const viewport = config.viewport as { width?: unknown; height?: unknown } | undefined;
  return {
    instruction: task.instruction,
    ...(typeof config.start_url === 'string' && /^https?:\/\//i.test(config.start_url)
      ? { startUrl: config.start_url }
      : {}),
    ...(typeof config.environment === 'string' ? { environment: config.environment } : {}),
    ...(typeof profile === 'string' && isFamilyName(profile) ? { profile } : {}),
    ...(typeof viewport?.width === 'number' && typeof viewport.height === 'number'
      ? { viewport: { width: viewport.width, height: viewport.height } }
      : {}),
  };
}

/**
 * Starts a replay of run `recording` (its run folder is in the run store). Its task input is the recording's first
 * input (`base`, or read from Temporal), with the replay's options; a desktop recording is refused
 * (InvalidTaskInputError): only browser runs record what a replay checks.
 */
export async function replayTask(
  client: Client,
  taskQueue: string,
  recording: string,
  opts: ReplayOptions = {},
  base?: Omit<TaskInputArgs, 'runId'>,
  /** The URL whose origin the recorded URLs have, when the input names no start URL (a Fara folder's first page). */
  recordedUrl?: string,
): Promise<Replay> {
  const first = base ?? (await firstInput(client, recording));
  if ((first.environment ?? 'browser') !== 'browser') {
    throw new InvalidTaskInputError(
      'environment',
      `a replay runs a browser recording; ${recording} ran ${first.environment}`,
    );
  }
  const { adoptOf: _a, replayOf: _r, forkOf: _f, followUp: _u, ...rest } = first as TaskInputArgs;
  const startUrl = opts.url ?? rest.startUrl;
  const origin = originChange(rest.startUrl ?? recordedUrl, opts.url);
  const replies = opts.replies ?? opts.answers;
  const replayed = validateTaskInput({
    ...rest,
    runId: opts.id ?? idWith(recording, `-replay-${randomBytes(3).toString('hex')}`),
    ...(startUrl ? { startUrl } : {}),
    model: {
      ...(rest.model ?? { endpoint: 'default' }),
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.modelBaseUrl ? { baseUrl: opts.modelBaseUrl } : {}),
    },
    replayOf: {
      runId: recording,
      ...(opts.strict ? { strict: true } : {}),
      ...(opts.maxDistance !== undefined ? { maxDistance: opts.maxDistance } : {}),
      ...(replies ? { answers: replies } : {}),
      ...(origin ? { origin } : {}),
    },
  });
  const input = withCallerPolicy(replayed, opts.policy);
  await startTask(client, taskQueue, input, { summary: `replay of ${recording}: ${input.instruction}` });
  return { id: input.runId, recording, input };
}

/** The recording's origin and the replay's (or an adoption's), when `--url` moves it to another. */
export function originChange(
  recorded: string | undefined,
  url: string | undefined,
): { from: string; to: string } | undefined {
  if (!recorded || !url) return undefined;
  try {
    const from = new URL(recorded).origin;
    const to = new URL(url).origin;
    return from === to ? undefined : { from, to };
  } catch {
    return undefined;
  }
}

/**
 * Copies a recorded run folder (ours or Fara's: its events get our ids) into `store` under a new id, then starts its
 * replay. The folder is only read. InvalidTaskInputError (one line) for a folder that is no run folder.
 */
export async function replayFolder(
  client: Client,
  taskQueue: string,
  store: RunStore,
  folder: string,
  opts: ReplayOptions = {},
): Promise<Replay> {
  let found;
  try {
    found = await readRecordedFolder(folder);
  } catch (err) {
    if (!(err instanceof FolderNotAdoptableError)) throw err;
    throw Object.assign(
      new InvalidTaskInputError('folder', err.reason, `cannot replay ${err.message.replace(/^.*?: /, '')}`),
      {
        cause: err,
      },
    );
  }
  const name =
    path
      .basename(found.dir)
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '') || 'run';
  const recording = idWith(`recorded-${name}`, `-${randomBytes(3).toString('hex')}`);
  if (await store.exists(`${recording}/${TASK_FILE}`)) throw new TaskAlreadyExistsError(recording);
  await importAdoptedFolder(found, store, recording, 'imported_from');
  const base = inputFromTaskRecord(found.run.task);
  return replayTask(client, taskQueue, recording, opts, base, recordedStartUrl(found));
}
