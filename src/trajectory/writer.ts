// Writing a run folder (docs/architecture.md#the-run-folder-format): task.json once, events and verification
// results appended and flushed, small JSON files replaced atomically, data_point.json as a snapshot at pauses and at
// the end (not per step).
//
// Appends are idempotent by event id. The writer keeps an index of the ids in events.jsonl, and before each append it
// reads (under the store's lock) whatever other writers added since, so two writers on the same folder — an activity
// retried in a new process while the old one lingers — never write the same event twice.
import {
  ConsecutiveActionsError,
  EventIdConflictError,
  InvalidTaskIdError,
  RunExistsError,
  UnknownActionIdError,
} from './errors';
import { parseJsonl, splitComplete } from './jsonl';
import type { ScreenshotPhase } from './layout';
import {
  DATA_POINT_FILE,
  EVENTS_FILE,
  METADATA_FILE,
  RUN_STATE_FILE,
  STATUS_FILE,
  TASK_FILE,
  VERIFICATION_FILE,
  isValidTaskId,
  screenshotName,
} from './layout';
import {
  loadEvents,
  loadMetadata,
  loadRunState,
  loadStatus,
  loadTask,
  loadVerification,
  uniqueVerifierName,
} from './reader';
import type {
  DataPoint,
  DataPointMetadata,
  Event,
  EventInput,
  Outcome,
  Task,
  TaskInput,
  VerificationResultInput,
} from './schema';
import { DataPointSchema, EventSchema, OutcomeSchema, TaskSchema, VerificationResultSchema } from './schema';
import { isTerminal } from '../contract/task-state';
import type { TaskState } from '../contract/task-state';
import { toFileStatus } from './status';
import type { RunStore } from './store';
import { LocalRunStore } from './store';
import { parseInput, parseStored } from './validate';

export interface WriterOptions {
  /** Clock for created_at / updated_at (tests pass a fixed one). */
  now?: () => Date;
}

/** A runs root: a local directory path, or any RunStore. */
export type RunsRoot = string | RunStore;

/** A task's structured output as status.json keeps it (extras `output`, `output_error`; docs/output.md). */
export interface StatusOutput {
  output: { value: unknown; partial: boolean } | null;
  error?: string;
}

type EventTag = 'action' | 'environment' | 'tool_output' | 'user_message';

const tagOf = (event: Event): EventTag => (event.type === 'action' ? 'action' : event.observation_type);
const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const countNewlines = (text: string) => text.split('\n').length - 1;

function toStore(root: RunsRoot): RunStore {
  return typeof root === 'string' ? new LocalRunStore(root) : root;
}

function checkTaskId(taskId: string): void {
  if (!isValidTaskId(taskId)) throw new InvalidTaskIdError(taskId);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fix the bytes after the last '\n' of an append-only file (call under its lock). Valid JSON that only lost its
 * newline is completed; a torn fragment is moved to `<file>.torn` and cut off, so the next append starts clean.
 */
async function repairTail(
  store: RunStore,
  key: string,
  offset: number,
  rest: Buffer,
): Promise<'completed' | 'dropped'> {
  const text = rest.toString('utf8');
  if (isJson(text)) {
    await store.appendLine(key, '');
    return 'completed';
  }
  await store.appendLine(`${key}.torn`, JSON.stringify({ offset, text, dropped_at: new Date().toISOString() }));
  await store.truncate(key, offset);
  return 'dropped';
}

export class TrajectoryWriter {
  private readonly index = new Map<string, EventTag>();
  private last: { tag: EventTag; id: string } | undefined;
  /** Bytes of events.jsonl already indexed, and the line number that follows them. */
  private offset = 0;
  private nextLine = 1;

  private constructor(
    readonly store: RunStore,
    readonly taskId: string,
    readonly task: Task,
    private readonly now: () => Date,
  ) {}

  /** Start a new run folder. Refuses (RunExistsError) when task.json is already there: resume with `open`. */
  static async create(
    root: RunsRoot,
    taskId: string,
    task: TaskInput,
    options: WriterOptions = {},
  ): Promise<TrajectoryWriter> {
    checkTaskId(taskId);
    const store = toStore(root);
    const parsed = parseInput(TaskSchema, task, 'task');
    const taskKey = `${taskId}/${TASK_FILE}`;
    if (!(await store.createExclusive(taskKey, pretty(parsed)))) throw new RunExistsError(store.describe(taskKey));
    const writer = new TrajectoryWriter(store, taskId, parsed, options.now ?? (() => new Date()));
    await writer.writeMetadata({ stats: {}, run_id: taskId, created_at: writer.now().toISOString() });
    await writer.writeStatus('running', null);
    return writer;
  }

  /** Resume an existing run folder (RunFolderNotFoundError without task.json, CorruptFileError when it is damaged). */
  static async open(root: RunsRoot, taskId: string, options: WriterOptions = {}): Promise<TrajectoryWriter> {
    checkTaskId(taskId);
    const store = toStore(root);
    const task = await loadTask(store, taskId);
    const writer = new TrajectoryWriter(store, taskId, task, options.now ?? (() => new Date()));
    await writer.completeCreation();
    await store.withLock(writer.key(EVENTS_FILE), () => writer.catchUp());
    return writer;
  }

  /** `open` when the folder has a task.json, else `create` (also when another process creates it first). */
  static async openOrCreate(
    root: RunsRoot,
    taskId: string,
    task: TaskInput,
    options: WriterOptions = {},
  ): Promise<{ writer: TrajectoryWriter; resumed: boolean }> {
    const store = toStore(root);
    if (!(await store.exists(`${taskId}/${TASK_FILE}`))) {
      try {
        return { writer: await TrajectoryWriter.create(store, taskId, task, options), resumed: false };
      } catch (error) {
        if (!(error instanceof RunExistsError)) throw error;
      }
    }
    return { writer: await TrajectoryWriter.open(store, taskId, options), resumed: true };
  }

  /** Where the run lives (the folder path for a local store). */
  get location(): string {
    return this.store.describe(this.taskId);
  }

  /**
   * Append one event unless an event with its id is already in the stream (then nothing is written: false).
   * Enforces the stream's rules: no two actions without an observation between them, and an observation's
   * action_id must name an action already in the stream.
   */
  async appendEvent(input: EventInput): Promise<boolean> {
    const event = parseInput(EventSchema, input, 'event');
    if (this.isRecorded(event)) return false;
    return this.store.withLock(this.key(EVENTS_FILE), async () => {
      await this.catchUp();
      if (this.isRecorded(event)) return false;
      this.checkOrder(event);
      const line = JSON.stringify(event);
      await this.store.appendLine(this.key(EVENTS_FILE), line);
      this.remember(event);
      this.offset += Buffer.byteLength(line) + 1;
      this.nextLine += 1;
      return true;
    });
  }

  /** Whether an event with this id is in the stream (looking at other writers' appends too). */
  async hasEvent(id: string): Promise<boolean> {
    if (this.index.has(id)) return true;
    await this.store.withLock(this.key(EVENTS_FILE), () => this.catchUp());
    return this.index.has(id);
  }

  /** All events, read from the store. */
  events(): Promise<Event[]> {
    return loadEvents(this.store, this.taskId);
  }

  /**
   * Record the run status in solver_log/status.json (file value via `toFileStatus`, precise value as `run_status`).
   * `outcome`: an answer (string or `{answer}`), null to clear, undefined to keep the previous one. `reason`: free
   * text kept as `end_detail`. `endReason`: why a terminal status was reached (e.g. `invalid_replies`, `browser`),
   * kept as `end_reason`; without it a terminal status is its own end reason. Non-terminal statuses have none.
   *
   * The original keeps only `status` and `outcome` when it rewrites status.json, so every extra is mirrored in
   * metadata.stats (`run_status`, `end_reason`, `end_detail`, `status_updated_at`), where the reader falls back to it.
   */
  async writeStatus(
    status: TaskState,
    outcome?: Outcome | string | null,
    reason?: string,
    endReason?: string,
    output?: StatusOutput,
  ): Promise<void> {
    const next = outcome === undefined ? (await loadStatus(this.store, this.taskId)).outcome : toOutcome(outcome);
    const extras = {
      run_status: status,
      end_reason: isTerminal(status) ? (endReason ?? status) : undefined,
      end_detail: reason,
      // A task with an output schema, at its end (docs/output.md): its output (null: none) and why it has none.
      ...(output ? { output: output.output, output_error: output.error } : {}),
      updated_at: this.now().toISOString(),
    };
    // JSON drops the undefined extras.
    await this.store.writeAtomic(
      this.key(STATUS_FILE),
      pretty({ status: toFileStatus(status), outcome: next, ...extras }),
    );
    const { updated_at: statusUpdatedAt, ...mirrored } = extras;
    await this.updateStats({ ...mirrored, status_updated_at: statusUpdatedAt });
  }

  /** Replace run_state.json (resume bookkeeping: session storage-state key, last URL, counters …). */
  async writeRunState(state: Record<string, unknown>): Promise<void> {
    await this.store.writeAtomic(this.key(RUN_STATE_FILE), pretty(state));
  }

  readRunState(): Promise<Record<string, unknown>> {
    return loadRunState(this.store, this.taskId);
  }

  /**
   * Append a verification result. A verifier name already used gets `_1`, `_2`, … (the stored result carries the
   * new name in `verifier_name`). Returns the name it was stored under.
   */
  async appendVerification(result: VerificationResultInput): Promise<string> {
    const parsed = parseInput(VerificationResultSchema, result, 'verification result');
    const key = this.key(VERIFICATION_FILE);
    return this.store.withLock(key, async () => {
      const bytes = await this.store.readBytes(key);
      if (bytes) {
        const { completeBytes, rest } = splitComplete(bytes);
        if (rest.length > 0) await repairTail(this.store, key, completeBytes, rest);
      }
      const taken = new Set(Object.keys(await loadVerification(this.store, this.taskId)));
      const name = uniqueVerifierName(parsed.verifier_name, taken);
      await this.store.appendLine(key, JSON.stringify({ ...parsed, verifier_name: name }));
      return name;
    });
  }

  /**
   * Assemble data_point.json from task, events, status, verification and metadata, and write it atomically.
   * Call at pauses (waiting for the user) and at the end, not per step.
   */
  async writeDataPoint(): Promise<DataPoint> {
    const events = await this.events();
    const metadata = await loadMetadata(this.store, this.taskId);
    const status = await loadStatus(this.store, this.taskId, [], metadata);
    const verification = await loadVerification(this.store, this.taskId);
    const stats = {
      ...metadata.stats,
      num_events: events.length,
      num_actions: events.filter((event) => event.type === 'action').length,
    };
    const dataPoint = DataPointSchema.parse({
      task: this.task,
      solver_log: { events, status: status.fileStatus, outcome: status.outcome },
      verification,
      metadata: { ...metadata, stats },
    });
    await this.store.writeAtomic(this.key(DATA_POINT_FILE), pretty(dataPoint));
    return dataPoint;
  }

  /** The run-relative file name of a step's screenshot, e.g. `screenshot_7_pre.png`. */
  screenshotPath(step: number, phase: ScreenshotPhase, generation = 0): string {
    return screenshotName(step, phase, generation);
  }

  /** Store a screenshot atomically; returns its run-relative path (for `screenshot_path`). */
  async saveScreenshot(step: number, phase: ScreenshotPhase, data: Uint8Array, generation = 0): Promise<string> {
    const name = this.screenshotPath(step, phase, generation);
    await this.store.writeAtomic(this.key(name), data);
    return name;
  }

  private key(file: string): string {
    return `${this.taskId}/${file}`;
  }

  /** A crash right after task.json was created leaves no metadata / status: write the defaults. */
  private async completeCreation(): Promise<void> {
    if (!(await this.store.exists(this.key(METADATA_FILE)))) {
      await this.writeMetadata({ stats: {}, run_id: this.taskId, created_at: this.now().toISOString() });
    }
    if (!(await this.store.exists(this.key(STATUS_FILE)))) await this.writeStatus('running', null);
  }

  private async writeMetadata(metadata: DataPointMetadata): Promise<void> {
    await this.store.writeAtomic(this.key(METADATA_FILE), pretty(metadata));
  }

  /** Merge keys into metadata.stats (undefined removes a key); rewrites only when something changed. */
  private async updateStats(patch: Record<string, unknown>): Promise<void> {
    await this.store.withLock(this.key(METADATA_FILE), async () => {
      const metadata = await loadMetadata(this.store, this.taskId);
      const stats: Record<string, unknown> = { ...metadata.stats };
      for (const [name, value] of Object.entries(patch)) {
        if (value === undefined) delete stats[name];
        else stats[name] = value;
      }
      if (JSON.stringify(stats) === JSON.stringify(metadata.stats)) return;
      await this.writeMetadata({ ...metadata, stats });
    });
  }

  /** True when the id is already indexed; EventIdConflictError when it was used for a different kind of event. */
  private isRecorded(event: Event): boolean {
    const tag = this.index.get(event.id);
    if (tag === undefined) return false;
    if (tag !== tagOf(event)) throw new EventIdConflictError(event.id);
    return true;
  }

  private checkOrder(event: Event): void {
    if (event.type === 'action') {
      if (this.last?.tag === 'action') throw new ConsecutiveActionsError(this.last.id, event.id);
    } else if (event.action_id !== null && this.index.get(event.action_id) !== 'action') {
      throw new UnknownActionIdError(event.id, event.action_id);
    }
  }

  private remember(event: Event): void {
    if (!this.index.has(event.id)) this.index.set(event.id, tagOf(event));
    this.last = { tag: tagOf(event), id: event.id };
  }

  /** Index what other writers appended since our last look (call under the events lock). */
  private async catchUp(): Promise<void> {
    const key = this.key(EVENTS_FILE);
    const file = this.store.describe(key);
    const chunk = (await this.store.readFrom(key, this.offset)) ?? Buffer.alloc(0);
    const { complete, completeBytes, rest } = splitComplete(chunk);
    for (const { line, value } of parseJsonl(complete, file, this.nextLine).records) {
      this.remember(parseStored(EventSchema, value, file, line));
    }
    this.offset += completeBytes;
    this.nextLine += countNewlines(complete);
    if (rest.length === 0) return;
    if ((await repairTail(this.store, key, this.offset, rest)) === 'completed') {
      this.remember(parseStored(EventSchema, JSON.parse(rest.toString('utf8')), file, this.nextLine));
      this.offset += rest.length + 1;
      this.nextLine += 1;
    }
  }
}

function toOutcome(outcome: Outcome | string | null): Outcome | null {
  if (outcome === null) return null;
  return OutcomeSchema.parse(typeof outcome === 'string' ? { answer: outcome } : outcome);
}
