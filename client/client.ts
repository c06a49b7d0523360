// `durable-cua/client`: drive agent tasks from an application — start one, follow its steps, reply to its question,
// read its result — with the same connection and payload-encryption settings as the `cua` command line, which is
// itself built on this client.
import type { Client } from '@temporalio/client';
import { ConfigError } from '../src/common/config-error';
import { configFromObject } from '../src/runtime/config';
import type { Config, ConfigInput } from '../src/runtime/config';
import { connectClient, TemporalUnreachableError } from '../src/runtime/connect';
import type { StoreWait } from '../src/trajectory/store-wait';
import { openRunStore } from '../src/trajectory/open-store';
import type { RunStore } from '../src/trajectory/store';
import { eitherFamilyName, registerFamily } from '../src/families/registry';
import type { ModelFamily } from '../src/families/family';

import {
  cancelTask,
  describeTask,
  existingTask,
  listTasks,
  newTaskId,
  querySteps,
  replyToTask,
  startTask,
  taskResult,
  validateTaskInput,
  viewTask,
  withCallerPolicy,
} from './tasks';
import type { CallerPolicy, TaskListEntry, TaskListFilter } from './tasks';
import { taskSnapshot } from './snapshot';
import type { TaskSnapshot } from './snapshot';
import { watchTask } from './watch';
import type { WatchEvent, WatchOptions } from './watch';
import type {
  ControlAccepted,
  HandbackInput,
  PendingQuestion,
  TakeoverLease,
  TaskInput,
  TaskInputArgs,
  TaskOutput,
  TaskResult,
  TaskStatus,
  StepSummary,
} from './contract';
import { continueTask, handBackTask, pauseTask, resumeTask, sayToTask, takeOverTask } from './control';
import type { FollowUpOptions } from './control';
import { branchesRecord, forkBranchesOf, forkTask } from './fork';
import type { BranchOptions, ForkOptions } from './fork';
import type { BranchesInput, BranchesRecord } from '../src/eval/branches';
import { adoptFolder } from './adopt';
import { checkUrl, narrow } from '../src/contract/url-policy';
import type { UrlPolicy } from '../src/contract/url-policy';
import {
  backfillSchedule,
  checkScheduleOptions,
  createSchedule,
  deleteSchedule,
  describeSchedule,
  listSchedules,
  pauseSchedule,
  scheduleTaskError,
  triggerSchedule,
  unpauseSchedule,
} from './schedules';
import type { ScheduleDetail, ScheduleListEntry, ScheduleOptionsIn, ScheduleRun } from './schedules';
import { InvalidScheduleError, ScheduleAlreadyExistsError, ScheduleNotFoundError } from './schedule-errors';
import { replayFolder, replayTask } from './replay';
import type { Replay, ReplayOptions } from './replay';
import type { AdoptOptions, Adopted } from './adopt';
import {
  ControlRefusedError,
  InvalidTaskInputError,
  StaleQuestionError,
  TaskAlreadyExistsError,
  TaskClosedError,
  TaskError,
  TaskFailedError,
  TaskNotFoundError,
  TaskNotWaitingError,
} from './errors';

/** A model family of the application's own: register it before starting tasks that name it (and in the worker). */
export { registerFamily };
export type { ModelFamily };

export {
  ConfigError,
  ControlRefusedError,
  InvalidScheduleError,
  InvalidTaskInputError,
  ScheduleAlreadyExistsError,
  ScheduleNotFoundError,
  StaleQuestionError,
  TaskAlreadyExistsError,
  TaskClosedError,
  TaskError,
  TaskFailedError,
  TaskNotFoundError,
  TaskNotWaitingError,
  TemporalUnreachableError,
};
export type {
  ScheduleDetail,
  ScheduleListEntry,
  ScheduleOptionsIn,
  ScheduleRun,
  BranchesRecord,
  BranchOptions,
  CallerPolicy,
  Adopted,
  AdoptOptions,
  FollowUpOptions,
  ForkOptions,
  StoreWait,
  TaskListEntry,
  TaskListFilter,
  WatchEvent,
  WatchOptions,
};

/** Where the Temporal server is: the `temporal` section of cua.config.json. */
export type TemporalSettings = NonNullable<ConfigInput['temporal']>;
/** Payload encryption: the `encryption` section of cua.config.json (keys, activeKeyId, acceptPlaintext). */
export type CodecSettings = NonNullable<ConfigInput['encryption']>;
/** OpenTelemetry: the `telemetry` section of cua.config.json (`traces: { otlpEndpoint, serviceName, headers }`). */
export type TelemetrySettings = NonNullable<ConfigInput['telemetry']>;

export interface AgentClientOptions {
  /** Default: 127.0.0.1:7233, namespace `default`, no TLS. */
  temporal?: TemporalSettings;
  /** The same keys as the workers; absent: payloads are plain JSON. */
  codec?: CodecSettings;
  /** The workers' shared task queue (default `cua-agent`). */
  taskQueue?: string;
  /**
   * Traces of what this client does (starting a task is the root span of the task's trace; docs/observability.md).
   * Default: none.
   */
  telemetry?: TelemetrySettings;
  /**
   * Environment overrides applied as the CLI applies them (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
   * CUA_TASK_QUEUE, CUA_ENCRYPTION_KEY(S), OTEL_EXPORTER_OTLP_ENDPOINT); pass `process.env` to honour them. Default:
   * none.
   */
  env?: NodeJS.ProcessEnv;
}

/** A task to start: the task input of the contract, with an optional id (default: `task-<time>-<random>`). */
export type NewTask = Omit<TaskInputArgs, 'runId'> & {
  id?: string;
  /** The model family: `profile`'s newer name (give one of the two). */
  family?: string;
};

export { taskSnapshot, taskState } from './snapshot';
export type { TaskSnapshot, TaskState } from './snapshot';

/** The task input `start` would send (defaults filled in, a new id when none is given), or InvalidTaskInputError. */
export function parseTask(task: NewTask): TaskInput {
  const { id, family, ...rest } = task;
  let profile: string | undefined;
  try {
    profile = eitherFamilyName(rest.profile, family);
  } catch (err) {
    throw new InvalidTaskInputError('family', (err as Error).message);
  }
  return validateTaskInput({ ...rest, ...(profile === undefined ? {} : { profile }), runId: id ?? newTaskId() });
}

/**
 * The task input each run of a schedule gets (its id is the schedule's name until Temporal names the run), after
 * everything a schedule can be checked for before it is created; InvalidScheduleError, one line. `urlPolicy`: the
 * workers' URL policy (config `urlPolicy`), which the start URL must pass too (else every run would fail on it).
 * `policy`: a start policy each run must keep to (as `start`'s).
 */
export function parseSchedule(
  name: string,
  task: Omit<NewTask, 'id'>,
  opts: ScheduleOptionsIn,
  urlPolicy?: UrlPolicy,
  policy?: CallerPolicy,
): TaskInput {
  checkScheduleOptions(name, opts);
  const schedule = { name, ...(opts.notifyWhen !== undefined ? { notifyWhen: opts.notifyWhen } : {}) };
  let input: TaskInput;
  try {
    input = withCallerPolicy(parseTask({ ...task, id: name, schedule }), policy);
  } catch (err) {
    throw scheduleTaskError(err);
  }
  const verdict = urlPolicy && input.startUrl ? checkUrl(narrow(urlPolicy, input.urlPolicy), input.startUrl) : null;
  if (verdict && !verdict.ok)
    throw new InvalidScheduleError('startUrl', `blocked by the URL policy: ${verdict.reason}`);
  return input;
}

export class AgentClient {
  constructor(
    /** The Temporal client underneath (with the codec), for anything this API does not cover. */
    readonly temporal: Client,
    /** The task queue tasks are started on. */
    readonly taskQueue: string,
    /** The run store the workers write to (config `store`): where `adopt` imports a folder. */
    private readonly runStore?: () => RunStore,
  ) {}

  /**
   * Validates and starts a task; InvalidTaskInputError or TaskAlreadyExistsError when it cannot. With `opts.policy`
   * the task must keep to it (config `mcp.callers` for tasks agents start) and carries its URL policy.
   */
  async start(task: NewTask, opts: { policy?: CallerPolicy } = {}): Promise<{ id: string; input: TaskInput }> {
    const input = withCallerPolicy(parseTask(task), opts.policy);
    await startTask(this.temporal, this.taskQueue, input);
    return { id: input.runId, input };
  }

  /**
   * Replies to the task's pending question. With `questionId` (the `question.id` you showed the user) a reply to a
   * question that is no longer pending is refused (StaleQuestionError) instead of replying to the next one.
   */
  async reply(id: string, text: string, opts: { questionId?: string } = {}): Promise<{ step: number }> {
    const res = await replyToTask(this.temporal, id, text, opts.questionId);
    return { step: res.step };
  }

  /** Where the task is now. */
  async status(id: string): Promise<TaskSnapshot> {
    return taskSnapshot(id, await viewTask(this.temporal, id));
  }

  /** The steps so far, one summary per decision (a desktop step: one per tool call). */
  async steps(id: string): Promise<StepSummary[]> {
    return querySteps(await existingTask(this.temporal, id));
  }

  /** Tasks, newest first, optionally only those with one status (e.g. `waiting_for_user`). */
  async list(filter: TaskListFilter = {}): Promise<TaskListEntry[]> {
    return listTasks(this.temporal, filter);
  }

  /** Pauses the task after the step under way (its page held, then saved); resolves once it is paused. */
  async pause(id: string): Promise<ControlAccepted> {
    return pauseTask(this.temporal, id);
  }

  /** Resumes a paused task where it stopped. */
  async resume(id: string): Promise<ControlAccepted> {
    return resumeTask(this.temporal, id);
  }

  /** Tells the running task something: the model reads it with its next observation. */
  async say(id: string, text: string): Promise<ControlAccepted> {
    return sayToTask(this.temporal, id, text);
  }

  /**
   * A follow-up task in a finished task's run: same id, run folder (history) and page (restored from its last step).
   * ControlRefusedError while the task runs or waits for a reply.
   */
  async continue(id: string, text: string, opts: FollowUpOptions = {}): Promise<{ id: string; input: TaskInput }> {
    return continueTask(this.temporal, id, text, opts);
  }

  /**
   * A new task from another's steps 1…`opts.step` (finished, failed or running): it decides the next step anew in the
   * page that step left, with its own instruction, model or hint if given. InvalidTaskInputError for a step that is no
   * whole number ≥ 1; a step the source did not finish or saved no page for fails the fork (end reason `input`).
   */
  async fork(sourceId: string, opts: ForkOptions): Promise<{ id: string; input: TaskInput }> {
    return forkTask(this.temporal, sourceId, opts);
  }

  /**
   * Best of N: `opts.branches` forks of `sourceId` at `opts.step`, children of one parent workflow, each scored by
   * `opts.checks` (task-set checks) or the judge when it ends; `bestOfResult(id)` names the winner. InvalidTaskInputError
   * for a step or count out of range, a bad check, or nothing to score by.
   */
  async bestOf(
    sourceId: string,
    opts: BranchOptions,
  ): Promise<{ id: string; branches: string[]; input: BranchesInput }> {
    return forkBranchesOf(this.temporal, sourceId, opts);
  }

  /** Best of N's record: each branch's state, steps and score, and the winner (live while it runs). */
  async branches(id: string): Promise<BranchesRecord> {
    return branchesRecord(this.temporal, id);
  }

  /** Waits until best of N has ended and returns its record (the winner, or why none passed). */
  async bestOfResult(id: string): Promise<BranchesRecord> {
    const handle = this.temporal.workflow.getHandle(id);
    await describeTask(handle);
    return (await handle.result()) as BranchesRecord;
  }

  /**
   * Continues a run folder the original (Fara) wrote, waiting for a reply (status waiting_for_user) or cut off while
   * running: the folder is checked (InvalidTaskInputError, one line), copied into the run store under a new id (it is
   * only read) and continued there as a task; a question it waits on gets its reply with `reply`. `opts.store`: the run
   * store to import into (default: the configuration's).
   */
  async adopt(folder: string, opts: AdoptOptions & { store?: RunStore } = {}): Promise<Adopted> {
    const { store, ...rest } = opts;
    const target = store ?? this.runStore?.();
    if (!target) throw new ConfigError('adopt needs the run store the workers write to: pass opts.store');
    return adoptFolder(this.temporal, this.taskQueue, target, folder, rest);
  }

  /**
   * Replays a recorded run: `source` is a task id (its run folder in the run store) or a run folder (copied into the
   * run store under a new id first; it is only read). Each recorded action runs again once the live page matches the
   * recording; the model decides from the first step that does not (or, `strict`, the task ends there).
   */
  async replay(source: string, opts: ReplayOptions & { store?: RunStore; folder?: boolean } = {}): Promise<Replay> {
    const { store, folder, ...rest } = opts;
    if (!folder) return replayTask(this.temporal, this.taskQueue, source, rest);
    const target = store ?? this.runStore?.();
    if (!target)
      throw new ConfigError('a replay of a folder needs the run store the workers write to: pass opts.store');
    return replayFolder(this.temporal, this.taskQueue, target, source, rest);
  }

  /** Takes over the task's live browser after the step under way: the lease says where to watch and drive it. */
  async takeover(id: string): Promise<TakeoverLease> {
    return takeOverTask(this.temporal, id);
  }

  /** Ends a takeover: the agent goes on, told how long a person had the browser, what changed, and `note`. */
  async handback(id: string, input: HandbackInput = {}): Promise<ControlAccepted> {
    return handBackTask(this.temporal, id, input);
  }

  /** Cancels a running task and waits until it has ended (browser closed, run folder kept). */
  async cancel(id: string): Promise<{ id: string; message: string }> {
    return { id, ...(await cancelTask(this.temporal, id)) };
  }

  /**
   * Waits for the task to end and returns its result — also for a task that failed (status `failed`, `endReason`
   * says why) or was cancelled. TaskFailedError when its workflow ended without a result (terminated).
   */
  async result(id: string): Promise<TaskResult> {
    return taskResult(this.temporal, id);
  }

  /**
   * The task as a stream: `step` for each new step summary (those already taken first), `status` when its status,
   * question or session queueing changes, and a last `end` with its result. Polls every `pollMs` (default 500);
   * follows continue-as-new. Break out of the loop (or abort `signal`) to stop early.
   */
  async *watch(id: string, opts: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    const handle = this.temporal.workflow.getHandle(id);
    await describeTask(handle); // an unknown id fails here, before the first event
    yield* watchTask(handle, opts);
  }

  /**
   * Creates the schedule `name`: `task` (as `start` takes it, without an id: each run's is `<name>-<scheduled time>`)
   * runs at `opts.cron` (in `opts.timezone`) or every `opts.every`; with `opts.notifyWhen` a monitor tells the
   * webhook when the output changes or the condition becomes true. InvalidScheduleError (a bad cron, time zone,
   * interval, URL, condition, …), ScheduleAlreadyExistsError. With `more.policy` each run must keep to it (as
   * `start`'s), checked here.
   */
  async createSchedule(
    name: string,
    task: Omit<NewTask, 'id'>,
    opts: ScheduleOptionsIn,
    more: { policy?: CallerPolicy } = {},
  ): Promise<ScheduleDetail> {
    const input = parseSchedule(name, task, opts, undefined, more.policy);
    return createSchedule(this.temporal, this.taskQueue, name, input, opts);
  }

  /** The schedules that start tasks, by name. */
  async listSchedules(): Promise<ScheduleListEntry[]> {
    return listSchedules(this.temporal);
  }

  /** A schedule: its next runs, its last runs with their state and output, its monitor's memory. */
  async describeSchedule(name: string): Promise<ScheduleDetail> {
    return describeSchedule(this.temporal, name);
  }

  async pauseSchedule(name: string, note?: string): Promise<void> {
    return pauseSchedule(this.temporal, name, note);
  }

  async unpauseSchedule(name: string, note?: string): Promise<void> {
    return unpauseSchedule(this.temporal, name, note);
  }

  /** Starts a run now (with overlap skip: not while one runs). */
  async triggerSchedule(name: string): Promise<void> {
    return triggerSchedule(this.temporal, name);
  }

  /** Runs the times the schedule would have run between `from` and `to` (ISO), one after another. */
  async backfillSchedule(name: string, from: string, to: string): Promise<void> {
    return backfillSchedule(this.temporal, name, from, to);
  }

  /** Deletes the schedule (runs under way go on) and stops its monitor. */
  async deleteSchedule(name: string): Promise<void> {
    return deleteSchedule(this.temporal, name);
  }

  /** Closes the connection to Temporal. */
  async close(): Promise<void> {
    await this.temporal.connection.close();
  }
}

/** A client for a loaded configuration (the CLI's way: file and environment already applied). */
export async function agentClientFor(config: Config): Promise<AgentClient> {
  return new AgentClient(await connectClient(config), config.taskQueue, () => openRunStore(config));
}

/**
 * Connects to Temporal and returns the agent client. `temporal` and `codec` take the same settings as
 * cua.config.json's `temporal` and `encryption`; ConfigError for settings that are wrong, TemporalUnreachableError
 * when the server does not answer.
 */
export async function createAgentClient(options: AgentClientOptions = {}): Promise<AgentClient> {
  const config = configFromObject(
    {
      ...(options.temporal ? { temporal: options.temporal } : {}),
      ...(options.codec ? { encryption: options.codec } : {}),
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    },
    { env: options.env ?? {} },
  );
  return agentClientFor(config);
}

export type {
  ControlAccepted,
  HandbackInput,
  PendingQuestion,
  StepSummary,
  TakeoverLease,
  TaskInput,
  TaskOutput,
  TaskResult,
  TaskStatus,
};
