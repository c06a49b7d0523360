// An adoption (`cua adopt <folder>`, issue 28): a run folder the original (Fara) wrote — waiting for a reply to its
// question, or cut off while running — is checked, copied into the run store under a new id (the source is only
// read), and continued there as a durable task: a question it waits on gets its reply with `cua reply`, the chat is
// rebuilt from its events, and the folder goes on in the same format.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TaskInput } from '../src/contract/task';
import { readAdoptableFolder, importAdoptedFolder, recordedStartUrl } from '../src/trajectory/fara-folder';
import type { AdoptableFolder } from '../src/trajectory/fara-folder';
import { TASK_FILE } from '../src/trajectory/layout';
import type { RunStore } from '../src/trajectory/store';
import { FolderNotAdoptableError } from '../src/trajectory/errors';
import { InvalidTaskInputError, TaskAlreadyExistsError } from './errors';
import { originChange } from './replay';
import { startTask, validateTaskInput } from './tasks';

/** Steps an adopted run may take after the folder's own (its budget counts the folder's steps too). */
export const ADOPTED_STEPS_DEFAULT = 30;

export interface AdoptOptions {
  /** The adopted task's id (default `adopt-<the folder's name>-<random>`). */
  id?: string;
  /** The model name at the default endpoint (default: the endpoint's). */
  model?: string;
  /** The default endpoint's base URL instead of the configured one (as `cua run --model-base-url`). */
  modelBaseUrl?: string;
  /** Steps the adopted task may take after the folder's (default 30). */
  moreSteps?: number;
  /** The model family the folder was made with (default fara-1.5; a Fara-7B run: fara-7b). */
  profile?: TaskInput['profile'];
  /**
   * The site is now here: the folder's URLs are read with this URL's origin (the folder's origin is its task's start
   * URL, else its first page that has a URL), so the page reopens on the new origin.
   */
  url?: string;
}

export interface Adopted {
  id: string;
  input: TaskInput;
  /** The folder's steps (the task's first is the next one). */
  steps: number;
  /** The question the task waits on (reply to it with `reply`); null: it goes on at once. */
  question: string | null;
}

/** The adopted task's default id: the folder's name (made a valid id, cut to fit) and 6 random hex digits. */
export function adoptId(folder: string): string {
  const tail = `-${randomBytes(3).toString('hex')}`;
  const name = path
    .basename(path.resolve(folder))
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  return `adopt-${name.slice(0, 128 - 'adopt-'.length - tail.length)}${tail}`.replace(/-+/g, '-');
}

/** The start URL the folder's task names, when it is one a task may start at. */
function startUrlOf(folder: AdoptableFolder): string | undefined {
  const url = folder.run.task.environment_config['start_url'];
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : undefined;
}

/** The folder's origin and the one `url` names, when they differ (InvalidTaskInputError when it has none to move). */
function originMove(folder: AdoptableFolder, url: string | undefined): { from: string; to: string } | undefined {
  if (url === undefined) return undefined;
  const recorded = recordedStartUrl(folder);
  if (!recorded) throw new InvalidTaskInputError('url', 'the folder records no page URL whose origin --url could move');
  return originChange(recorded, url);
}

/** The folder checked for adoption; one that cannot be adopted is InvalidTaskInputError (field `folder`, one line). */
export async function checkAdoptable(folder: string): Promise<AdoptableFolder> {
  try {
    return await readAdoptableFolder(folder);
  } catch (err) {
    if (!(err instanceof FolderNotAdoptableError)) throw err;
    const refused = new InvalidTaskInputError('folder', err.reason, err.message);
    throw Object.assign(refused, { cause: err });
  }
}

/**
 * Checks the folder (InvalidTaskInputError, one line: see checkAdoptable), copies it into `store` under the new id and starts the task
 * that continues it. TaskAlreadyExistsError when the id names a run folder in the store already.
 */
export async function adoptFolder(
  client: Client,
  taskQueue: string,
  store: RunStore,
  folder: string,
  opts: AdoptOptions = {},
): Promise<Adopted> {
  const found = await checkAdoptable(folder);
  const origin = originMove(found, opts.url);
  const startUrl = opts.url ?? startUrlOf(found);
  const input = validateTaskInput({
    runId: opts.id ?? adoptId(folder),
    instruction: found.run.task.instruction,
    ...(startUrl ? { startUrl } : {}),
    ...(opts.profile ? { profile: opts.profile } : {}),
    model: {
      endpoint: 'default',
      ...(opts.modelBaseUrl ? { baseUrl: opts.modelBaseUrl } : {}),
      ...(opts.model ? { model: opts.model } : {}),
    },
    maxSteps: Math.min(10_000, found.steps + (opts.moreSteps ?? ADOPTED_STEPS_DEFAULT)),
    adoptOf: { folder: found.dir, ...(origin ? { origin } : {}) },
  });
  if (await store.exists(`${input.runId}/${TASK_FILE}`)) throw new TaskAlreadyExistsError(input.runId);
  await importAdoptedFolder(found, store, input.runId);
  await startTask(client, taskQueue, input, { summary: `adopted from ${found.dir}: ${input.instruction}` });
  return { id: input.runId, input, steps: found.steps, question: found.question };
}
