// The task set `cua eval` runs, read and filtered here before anything starts (the workers read it again), and the
// config and run store it is read with, each opened on first use (a bad task file is refused before either is read).
import path from 'node:path';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { filterTasks, TaskSetError } from '../../src/eval/task-set';
import type { EvalTask } from '../../src/eval/task-set';
import { loadTaskSetFrom, storeKeyOf } from '../../src/eval/task-source';
import { openRunStore } from '../../src/trajectory/open-store';
import { SigninStore } from '../../src/trajectory/signins';
import { S3RunStore } from '../../src/trajectory/s3-store';
import type { RunStore } from '../../src/trajectory/store';
import type { EvalArgs } from './eval-args';

type Print = (line: string) => void;

/** The config and the run store, each opened on first use (a bad task file is refused before either is read). */
export interface Surroundings {
  config(): Config;
  store(): RunStore;
  /** Closes the run store if it was opened. */
  close(): void;
}

/** The task set as read and filtered here (the workers read it again), and where its scripts are. */
export interface LoadedSet {
  taskSet: string;
  answers: string | undefined;
  tasks: EvalTask[];
  inStore: boolean;
  scriptsDir: string;
}

export function surroundings(given: Config | undefined, configFile: string | undefined): Surroundings {
  let config = given;
  let store: RunStore | undefined;
  const configOf = () => (config ??= loadConfig({ file: configFile }));
  return {
    config: configOf,
    store: () => (store ??= openRunStore(configOf())),
    close: () => closeStore(store),
  };
}

/** The task set, read and filtered; null (the error printed, the store closed) when it is bad or no task is left. */
export async function loadEvalSet(args: EvalArgs, env: Surroundings, print: Print): Promise<LoadedSet | null> {
  let taskSet: string;
  let answers: string | undefined;
  let tasks: EvalTask[];
  try {
    taskSet = sourceOf(args.file);
    answers = args.values.answers ? sourceOf(args.values.answers) : undefined;
    tasks = filterTasks(await loadTaskSetFrom({ path: taskSet, format: args.format, answers }, env.store), args.filter);
  } catch (err) {
    env.close();
    if (!(err instanceof TaskSetError)) throw err;
    print(`error: ${err.message}`);
    return null;
  }
  if (tasks.length === 0) {
    env.close();
    print('error: no task left after the filters');
    return null;
  }
  const missing = await missingSignin(tasks, env);
  if (missing) {
    env.close();
    print(`error: ${missing}`);
    return null;
  }
  const inStore = storeKeyOf(taskSet) !== null;
  // A set in the store has no folder beside it: its scripts (for {{scripted}}) are the project's, or --scripted.
  const scriptsDir = path.resolve(
    args.values.scripted ??
      (inStore ? path.join('eval', 'scripts') : path.join(path.dirname(taskSet), '..', 'scripts')),
  );
  return { taskSet, answers, tasks, inStore, scriptsDir };
}

/**
 * The first task whose sign-in is not saved, in one line; null when every named sign-in is, or when the run store's
 * sign-in index cannot be read from here (then each task fails at its start on the worker).
 */
async function missingSignin(tasks: readonly EvalTask[], env: Surroundings): Promise<string | null> {
  if (!tasks.some((t) => t.signin !== undefined)) return null;
  let saved: Set<string>;
  try {
    saved = new Set((await new SigninStore(env.store()).list()).map((s) => s.name));
  } catch {
    return null;
  }
  const task = tasks.find((t) => t.signin !== undefined && !saved.has(t.signin));
  return task ? `task ${task.id}: no saved sign-in named '${task.signin}' (see npx cua signin list)` : null;
}

/** A task set (or answers) argument as it travels: `store:KEY` as given (the key checked), a file path made absolute. */
function sourceOf(arg: string): string {
  return storeKeyOf(arg) === null ? path.resolve(arg) : arg;
}

/** An S3 store's connections closed (a folder store holds none). */
function closeStore(store: RunStore | undefined): void {
  if (store instanceof S3RunStore) store.close();
}
