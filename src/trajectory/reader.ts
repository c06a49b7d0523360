// Reading a run folder back: task, events, status, verification and metadata, each checked against the schema.
//
// Damage policy: a missing task.json means "not a run" (RunFolderNotFoundError); a damaged small JSON file or a damaged
// complete line of a .jsonl file is CorruptFileError naming the file (and line). A torn last line of a .jsonl file
// (a crash mid-append) is dropped and reported in `warnings`, not fatal: everything before it is intact. Missing
// status.json / metadata.json (a crash right after task.json was created) read as defaults, with a warning.
import * as path from 'node:path';

import { z } from 'zod';

import { RunFolderNotFoundError } from './errors';
import { parseJsonl } from './jsonl';
import {
  DATA_POINT_FILE,
  EVENTS_FILE,
  METADATA_FILE,
  RUN_STATE_FILE,
  STATUS_FILE,
  TASK_FILE,
  VERIFICATION_FILE,
} from './layout';
import type { DataPoint, DataPointMetadata, Event, Outcome, SolverStatus, Task, VerificationResult } from './schema';
import {
  DataPointMetadataSchema,
  DataPointSchema,
  EventSchema,
  StatusFileSchema,
  TaskSchema,
  VerificationResultSchema,
} from './schema';
import type { TaskState } from '../contract/task-state';
import { agreesWith, fileEndReason, fromFileStatus } from './status';
import type { RunStore } from './store';
import { LocalRunStore } from './store';
import { parseJsonText, parseStored } from './validate';

export interface ReadWarning {
  file: string;
  line?: number;
  message: string;
}

export interface StatusSnapshot {
  /** Our precise status (from the `run_status` extra when present). */
  status: TaskState;
  /** The value in the file (`aborted` for failed / cancelled). */
  fileStatus: SolverStatus;
  outcome: Outcome | null;
  /** Why the run ended, e.g. `cancelled` or `invalid_replies` (`timed_out` for a foreign `timed_out`), when known. */
  endReason?: string;
  /** Free-text detail of how it ended, when one was given. */
  endDetail?: string;
  /** When we last wrote the status, when known. */
  updatedAt?: string;
  /** A task with an output schema, once ended (docs/output.md): its output (null: none) and why it has none. */
  output?: { value: unknown; partial: boolean } | null;
  outputError?: string;
}

export interface RunRecord extends StatusSnapshot {
  taskId: string;
  /** Where the run lives (a folder path for a local store). */
  location: string;
  task: Task;
  events: Event[];
  verification: Record<string, VerificationResult>;
  metadata: DataPointMetadata;
  runState: Record<string, unknown>;
  warnings: ReadWarning[];
}

const RunStateSchema = z.record(z.string(), z.unknown());

const key = (taskId: string, file: string) => `${taskId}/${file}`;

async function readJsonFile(store: RunStore, taskId: string, file: string): Promise<unknown> {
  const k = key(taskId, file);
  const text = await store.readText(k);
  return text === undefined ? undefined : parseJsonText(text, store.describe(k));
}

export async function loadTask(store: RunStore, taskId: string): Promise<Task> {
  const value = await readJsonFile(store, taskId, TASK_FILE);
  if (value === undefined) throw new RunFolderNotFoundError(store.describe(key(taskId, TASK_FILE)));
  return parseStored(TaskSchema, value, store.describe(key(taskId, TASK_FILE)));
}

/** Parsed lines of a .jsonl file, with a torn tail reported in `warnings`. */
async function loadJsonl<T extends z.ZodType>(
  store: RunStore,
  taskId: string,
  file: string,
  schema: T,
  warnings: ReadWarning[],
): Promise<{ line: number; value: z.output<T> }[]> {
  const described = store.describe(key(taskId, file));
  const text = await store.readText(key(taskId, file));
  if (text === undefined) return [];
  const parsed = parseJsonl(text, described);
  if (parsed.torn) {
    const { line, bytes } = parsed.torn;
    warnings.push({ file: described, line, message: `torn last line (${bytes} bytes, crash mid-write) ignored` });
  }
  return parsed.records.map(({ line, value }) => ({ line, value: parseStored(schema, value, described, line) }));
}

/** The event stream. An id seen twice (two writers racing) keeps its first occurrence, with a warning. */
export async function loadEvents(store: RunStore, taskId: string, warnings: ReadWarning[] = []): Promise<Event[]> {
  const seen = new Set<string>();
  const events: Event[] = [];
  for (const { line, value } of await loadJsonl(store, taskId, EVENTS_FILE, EventSchema, warnings)) {
    if (seen.has(value.id)) {
      warnings.push({
        file: store.describe(key(taskId, EVENTS_FILE)),
        line,
        message: `duplicate event id ${value.id}`,
      });
      continue;
    }
    seen.add(value.id);
    events.push(value);
  }
  return events;
}

/** `name` when free, else the first free of `name_1`, `name_2`, … */
export function uniqueVerifierName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 1; ; n++) if (!taken.has(`${name}_${n}`)) return `${name}_${n}`;
}

/** verification.jsonl as the data point's map, keyed by verifier name (repeated names get `_1`, `_2`, …). */
export async function loadVerification(
  store: RunStore,
  taskId: string,
  warnings: ReadWarning[] = [],
): Promise<Record<string, VerificationResult>> {
  const map: Record<string, VerificationResult> = {};
  const taken = new Set<string>();
  for (const { value } of await loadJsonl(store, taskId, VERIFICATION_FILE, VerificationResultSchema, warnings)) {
    const name = uniqueVerifierName(value.verifier_name, taken);
    taken.add(name);
    map[name] = { ...value, verifier_name: name };
  }
  return map;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Our extras, as status.json holds them or as metadata.stats mirrors them (writer.ts). */
interface StatusExtras {
  state: unknown;
  endReason: string | undefined;
  endDetail: string | undefined;
  updatedAt: string | undefined;
  output: StatusSnapshot['output'];
  outputError: string | undefined;
}

/** The `output` extra as written (an object with `value` and `partial`, or null); undefined for anything else. */
function outputIn(value: unknown): StatusSnapshot['output'] {
  if (value === null) return null;
  const o = value as { value?: unknown; partial?: unknown } | undefined;
  return typeof o === 'object' && 'value' in o && typeof o.partial === 'boolean'
    ? { value: o.value, partial: o.partial }
    : undefined;
}

/** The extras in status.json (`updatedAtKey` = `updated_at`) or in metadata.stats (`status_updated_at`). */
function extrasIn(record: Record<string, unknown>, updatedAtKey: 'updated_at' | 'status_updated_at'): StatusExtras {
  return {
    state: record['run_status'],
    endReason: optionalString(record['end_reason']),
    endDetail: optionalString(record['end_detail']),
    updatedAt: optionalString(record[updatedAtKey]),
    output: outputIn(record['output']),
    outputError: optionalString(record['output_error']),
  };
}

/**
 * Our precise status from the file value and our extras. The extras count only when their `run_status` agrees with
 * the file value: extras from before another writer changed the status say nothing about the status it wrote.
 */
function snapshotOf(fileStatus: SolverStatus, outcome: Outcome | null, extras: StatusExtras): StatusSnapshot {
  const snapshot: StatusSnapshot = { status: fromFileStatus(fileStatus, extras.state), fileStatus, outcome };
  const agrees = agreesWith(extras.state, fileStatus);
  const endReason = agrees ? extras.endReason : fileEndReason(fileStatus);
  if (endReason !== undefined) snapshot.endReason = endReason;
  if (agrees && extras.endDetail !== undefined) snapshot.endDetail = extras.endDetail;
  if (agrees && extras.updatedAt !== undefined) snapshot.updatedAt = extras.updatedAt;
  if (agrees && extras.output !== undefined) snapshot.output = extras.output;
  if (agrees && extras.outputError !== undefined) snapshot.outputError = extras.outputError;
  return snapshot;
}

/**
 * The run status. status.json's own extras when it has them; when it has none (the original rewrote it with `status`
 * and `outcome` only), their mirror in metadata.stats: pass `metadata` when already loaded, else it is read here.
 */
export async function loadStatus(
  store: RunStore,
  taskId: string,
  warnings: ReadWarning[] = [],
  metadata?: DataPointMetadata,
): Promise<StatusSnapshot> {
  const described = store.describe(key(taskId, STATUS_FILE));
  const value = await readJsonFile(store, taskId, STATUS_FILE);
  if (value === undefined) {
    warnings.push({ file: described, message: 'missing; read as running' });
    return { status: 'running', fileStatus: 'running', outcome: null };
  }
  const file = parseStored(StatusFileSchema, value, described);
  if (file['run_status'] !== undefined) return snapshotOf(file.status, file.outcome, extrasIn(file, 'updated_at'));
  const { stats } = metadata ?? (await loadMetadata(store, taskId));
  return snapshotOf(file.status, file.outcome, extrasIn(stats, 'status_updated_at'));
}

export async function loadMetadata(
  store: RunStore,
  taskId: string,
  warnings: ReadWarning[] = [],
): Promise<DataPointMetadata> {
  const described = store.describe(key(taskId, METADATA_FILE));
  const value = await readJsonFile(store, taskId, METADATA_FILE);
  if (value === undefined) {
    warnings.push({ file: described, message: 'missing; read as empty metadata' });
    return DataPointMetadataSchema.parse({ run_id: taskId });
  }
  return parseStored(DataPointMetadataSchema, value, described);
}

export async function loadRunState(store: RunStore, taskId: string): Promise<Record<string, unknown>> {
  const value = await readJsonFile(store, taskId, RUN_STATE_FILE);
  return value === undefined ? {} : parseStored(RunStateSchema, value, store.describe(key(taskId, RUN_STATE_FILE)));
}

export async function readRunFromStore(store: RunStore, taskId: string): Promise<RunRecord> {
  const warnings: ReadWarning[] = [];
  const task = await loadTask(store, taskId);
  const events = await loadEvents(store, taskId, warnings);
  const metadata = await loadMetadata(store, taskId, warnings);
  const status = await loadStatus(store, taskId, warnings, metadata);
  const verification = await loadVerification(store, taskId, warnings);
  const runState = await loadRunState(store, taskId);
  return {
    taskId,
    location: store.describe(taskId),
    task,
    events,
    ...status,
    verification,
    metadata,
    runState,
    warnings,
  };
}

/** Read the run folder at `dir` (a local path). */
export function readRun(dir: string): Promise<RunRecord> {
  const resolved = path.resolve(dir);
  return readRunFromStore(new LocalRunStore(path.dirname(resolved)), path.basename(resolved));
}

/** Read and check `data_point.json` of the run folder at `dir`, or undefined when no snapshot was written yet. */
export async function readDataPoint(dir: string): Promise<DataPoint | undefined> {
  const resolved = path.resolve(dir);
  const store = new LocalRunStore(path.dirname(resolved));
  const taskId = path.basename(resolved);
  const value = await readJsonFile(store, taskId, DATA_POINT_FILE);
  return value === undefined
    ? undefined
    : parseStored(DataPointSchema, value, store.describe(key(taskId, DATA_POINT_FILE)));
}
