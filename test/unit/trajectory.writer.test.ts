// Specification of the run folder writer: layout, create vs resume, idempotent appends, atomic files, statuses,
// verification naming, snapshots and screenshots.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  ConsecutiveActionsError,
  CorruptFileError,
  EventIdConflictError,
  InvalidRecordError,
  InvalidTaskIdError,
  RunExistsError,
  RunFolderNotFoundError,
  UnknownActionIdError,
} from '../../src/trajectory/errors';
import { actionEvent, postObservation, preObservation, taskMessage, toolOutput } from '../../src/trajectory/events';
import { readDataPoint, readRun } from '../../src/trajectory/reader';
import type { TaskState } from '../../src/contract/task-state';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { FAILURE_TYPES } from '../../src/agent/failure-types';

const task = { task_id: 'task-1', instruction: 'Find the opening hours' };
const T = '2026-07-20T10:00:00.000Z';
const clock = () => new Date(T);

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'trajectory-writer-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const runDir = (taskId = 'run-1') => path.join(root, taskId);
const readJson = async (file: string): Promise<unknown> => JSON.parse(await fs.readFile(file, 'utf8'));
const eventLines = async (taskId = 'run-1') =>
  (await fs.readFile(path.join(runDir(taskId), 'solver_log/events.jsonl'), 'utf8')).split('\n').filter(Boolean);

/** Every file under dir, relative, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** status.json's fields beyond the two the original keeps (`status`, `outcome`), named as metadata.stats names them. */
function beyondStatusAndOutcome(file: Record<string, unknown>): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(file)) {
    if (name !== 'status' && name !== 'outcome') extras[name === 'updated_at' ? 'status_updated_at' : name] = value;
  }
  return extras;
}

/** One step: pre, action, tool output, post. */
async function writeStep(writer: TrajectoryWriter, step: number): Promise<void> {
  const stamp = { timestamp: T };
  await writer.appendEvent(preObservation(step, { screenshot_path: writer.screenshotPath(step, 'pre') }, stamp));
  const action = actionEvent(step, { action_name: 'left_click', content: { action: 'left_click' } }, stamp);
  await writer.appendEvent(action);
  await writer.appendEvent(toolOutput(step, action.id, { output: 'clicked' }, stamp));
  await writer.appendEvent(postObservation(step, action.id, { screenshot_path: writer.screenshotPath(step, 'post') }));
}

describe('create and open', () => {
  it('creates task.json, metadata.json and status.json (running)', async () => {
    await TrajectoryWriter.create(root, 'run-1', task, { now: clock });
    expect(await listFiles(runDir())).toEqual(['metadata.json', 'solver_log/status.json', 'task.json']);
    expect(await readJson(path.join(runDir(), 'task.json'))).toMatchObject(task);
    expect(await readJson(path.join(runDir(), 'metadata.json'))).toEqual({
      stats: { run_status: 'running', status_updated_at: T },
      run_id: 'run-1',
      created_at: T,
    });
    expect(await readJson(path.join(runDir(), 'solver_log/status.json'))).toMatchObject({
      status: 'running',
      outcome: null,
      run_status: 'running',
    });
  });

  it('refuses to create over an existing task.json', async () => {
    await TrajectoryWriter.create(root, 'run-1', task);
    await expect(TrajectoryWriter.create(root, 'run-1', { ...task, instruction: 'other' })).rejects.toThrow(
      RunExistsError,
    );
    expect(await readJson(path.join(runDir(), 'task.json'))).toMatchObject(task);
  });

  it('resumes: open reads the task and sees the events already written', async () => {
    const first = await TrajectoryWriter.create(root, 'run-1', task);
    await first.appendEvent(taskMessage(task.instruction, { timestamp: T }));
    await writeStep(first, 1);
    const resumed = await TrajectoryWriter.open(root, 'run-1');
    expect(resumed.task).toMatchObject(task);
    expect(await resumed.hasEvent('step-0001-action-g0')).toBe(true);
    expect(await resumed.appendEvent(taskMessage(task.instruction))).toBe(false);
    expect(await eventLines()).toHaveLength(5);
  });

  it('openOrCreate creates once, then resumes', async () => {
    expect((await TrajectoryWriter.openOrCreate(root, 'run-1', task)).resumed).toBe(false);
    expect((await TrajectoryWriter.openOrCreate(root, 'run-1', task)).resumed).toBe(true);
  });

  it('open without task.json is RunFolderNotFoundError naming the file', async () => {
    await expect(TrajectoryWriter.open(root, 'missing')).rejects.toThrow(RunFolderNotFoundError);
    await expect(TrajectoryWriter.open(root, 'missing')).rejects.toThrow(/missing[/\\]task\.json/);
  });

  it('the run-folder errors keep the failure types in histories (RunNotFoundError, InvalidRunIdError)', async () => {
    const missing = await TrajectoryWriter.open(root, 'missing').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(RunFolderNotFoundError);
    expect((missing as Error).name).toBe('RunNotFoundError');
    const invalid = await TrajectoryWriter.open(root, '..').catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(InvalidTaskIdError);
    expect((invalid as Error).name).toBe('InvalidRunIdError');
    expect(FAILURE_TYPES).toMatchObject({ RunNotFoundError: 'run_folder', InvalidRunIdError: 'input' });
  });

  it('open with a damaged task.json is CorruptFileError naming the file', async () => {
    await fs.mkdir(runDir());
    await fs.writeFile(path.join(runDir(), 'task.json'), '{"task_id": "t", "instr');
    await expect(TrajectoryWriter.open(root, 'run-1')).rejects.toThrow(CorruptFileError);
    await fs.writeFile(path.join(runDir(), 'task.json'), '{"task_id": "t"}');
    await expect(TrajectoryWriter.open(root, 'run-1')).rejects.toThrow(/task\.json: instruction/);
  });

  it('open after a crash right after task.json restores metadata and status', async () => {
    await fs.mkdir(runDir());
    await fs.writeFile(path.join(runDir(), 'task.json'), JSON.stringify(task));
    await TrajectoryWriter.open(root, 'run-1');
    expect(await listFiles(runDir())).toEqual(['metadata.json', 'solver_log/status.json', 'task.json']);
  });

  it.each(['', '.', '..', 'a/b', 'a\\b', 'run 1'])('rejects task id %j', async (taskId) => {
    await expect(TrajectoryWriter.create(root, taskId, task)).rejects.toThrow(InvalidTaskIdError);
  });

  it('rejects an invalid task before writing anything', async () => {
    await expect(TrajectoryWriter.create(root, 'run-1', { instruction: 'x' } as never)).rejects.toThrow(
      InvalidRecordError,
    );
    await expect(fs.stat(runDir())).rejects.toThrow();
  });
});

describe('appendEvent', () => {
  it('writes one line per event and skips an id already written', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    expect(await writer.appendEvent(taskMessage('go', { timestamp: T }))).toBe(true);
    expect(await writer.appendEvent(taskMessage('go', { timestamp: '2026-07-21T00:00:00Z' }))).toBe(false);
    expect(await eventLines()).toEqual([JSON.stringify(taskMessage('go', { timestamp: T }))]);
  });

  it('is idempotent across two writer instances on the same folder', async () => {
    const a = await TrajectoryWriter.create(root, 'run-1', task);
    const b = await TrajectoryWriter.open(root, 'run-1');
    expect(await a.appendEvent(preObservation(1, {}, { timestamp: T }))).toBe(true);
    expect(await b.appendEvent(preObservation(1, {}, { timestamp: T }))).toBe(false); // b never saw it in memory
    expect(await b.appendEvent(actionEvent(1, { action_name: 'wait', content: { action: 'wait' } }))).toBe(true);
    expect(await a.appendEvent(actionEvent(1, { action_name: 'wait', content: { action: 'wait' } }))).toBe(false);
    expect(await eventLines()).toHaveLength(2);
  });

  it('stays correct when two instances append the same events concurrently', async () => {
    const a = await TrajectoryWriter.create(root, 'run-1', task);
    const b = await TrajectoryWriter.open(root, 'run-1');
    const events = Array.from({ length: 10 }, (_, i) => preObservation(i, {}, { timestamp: T }));
    const results = await Promise.all(events.flatMap((e) => [a.appendEvent(e), b.appendEvent(e)]));
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(new Set(await eventLines()).size).toBe(10);
    expect(await eventLines()).toHaveLength(10);
  });

  it('a re-observation in a new generation is a new event', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    expect(await writer.appendEvent(preObservation(7, {}, { generation: 0 }))).toBe(true);
    expect(await writer.appendEvent(preObservation(7, {}, { generation: 1 }))).toBe(true);
    expect(await eventLines()).toHaveLength(2);
  });

  it('refuses two actions with no observation between them', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writer.appendEvent(preObservation(1, {}));
    await writer.appendEvent(actionEvent(1, { action_name: 'wait', content: { action: 'wait' } }));
    await expect(
      writer.appendEvent(actionEvent(2, { action_name: 'wait', content: { action: 'wait' } })),
    ).rejects.toThrow(ConsecutiveActionsError);
  });

  it('refuses an observation naming an action not in the stream', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await expect(writer.appendEvent(toolOutput(1, 'step-0001-action-g0', { output: 'x' }))).rejects.toThrow(
      UnknownActionIdError,
    );
  });

  it('refuses an id reused for a different kind of event', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writer.appendEvent(preObservation(1, {}));
    const clash = { ...toolOutput(1, 'x', { output: 'x' }), id: 'step-0001-pre-g0', action_id: null };
    await expect(writer.appendEvent(clash)).rejects.toThrow(EventIdConflictError);
  });

  it('refuses an event that does not match the schema', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await expect(writer.appendEvent({ type: 'action', id: 'a' } as never)).rejects.toThrow(InvalidRecordError);
  });

  it('repairs a torn last line before appending, keeping the fragment aside', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writer.appendEvent(preObservation(1, {}, { timestamp: T }));
    await fs.appendFile(path.join(runDir(), 'solver_log/events.jsonl'), '{"type":"action","id":"step-00');
    const resumed = await TrajectoryWriter.open(root, 'run-1');
    await resumed.appendEvent(actionEvent(1, { action_name: 'wait', content: { action: 'wait' } }));
    expect(await eventLines()).toHaveLength(2);
    expect((await readRun(runDir())).warnings).toEqual([]);
    const torn = await fs.readFile(path.join(runDir(), 'solver_log/events.jsonl.torn'), 'utf8');
    expect(JSON.parse(torn)).toMatchObject({ text: '{"type":"action","id":"step-00' });
  });

  it('completes a last line that lost only its newline', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await fs.appendFile(path.join(runDir(), 'solver_log/events.jsonl'), JSON.stringify(preObservation(1, {})));
    expect(await writer.appendEvent(preObservation(1, {}))).toBe(false);
    expect(await writer.appendEvent(preObservation(2, {}))).toBe(true);
    expect(await eventLines()).toHaveLength(2);
  });
});

describe('small files', () => {
  it('atomic writes leave no temp or lock files behind', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writeStep(writer, 1);
    await writer.writeRunState({ last_url: 'http://127.0.0.1/' });
    await writer.writeStatus('waiting_for_user', null, 'Where from?');
    await writer.appendVerification({ verifier_name: 'v' });
    await writer.saveScreenshot(1, 'pre', Buffer.from([1, 2, 3]));
    await writer.writeDataPoint();
    expect(await listFiles(runDir())).toEqual([
      'data_point.json',
      'metadata.json',
      'run_state.json',
      'screenshot_1_pre.png',
      'solver_log/events.jsonl',
      'solver_log/status.json',
      'task.json',
      'verification.jsonl',
    ]);
  });

  it('run_state.json round-trips', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    expect(await writer.readRunState()).toEqual({});
    await writer.writeRunState({ step: 3, session: { generation: 1 } });
    expect(await writer.readRunState()).toEqual({ step: 3, session: { generation: 1 } });
  });
});

describe('writeStatus', () => {
  it.each<[TaskState, string]>([
    ['complete', 'complete'],
    ['max_rounds', 'max_rounds'],
    ['failed', 'aborted'],
    ['cancelled', 'aborted'],
  ])('a run ending %s is written as %s with the precise reason kept', async (status, file) => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writer.writeStatus(status, 'the answer', 'why it ended');
    expect(await readJson(path.join(runDir(), 'solver_log/status.json'))).toMatchObject({
      status: file,
      outcome: { answer: 'the answer' },
      run_status: status,
      end_reason: status,
      end_detail: 'why it ended',
    });
    expect(await readJson(path.join(runDir(), 'metadata.json'))).toMatchObject({
      stats: { run_status: status, end_reason: status, end_detail: 'why it ended' },
    });
    const run = await readRun(runDir());
    expect(run).toMatchObject({ status, fileStatus: file, endReason: status, endDetail: 'why it ended' });
  });

  it('keeps the previous outcome when none is given, and clears the end reason when the run goes on', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task, { now: clock });
    await writer.writeStatus('complete', { answer: '42' });
    await writer.writeStatus('running');
    const run = await readRun(runDir());
    expect(run.status).toBe('running');
    expect(run.outcome).toEqual({ answer: '42' });
    expect(run.metadata.stats).toEqual({ run_status: 'running', status_updated_at: T });
  });

  it.each<[TaskState, string]>([
    ['failed', 'invalid_replies'],
    ['failed', 'model_endpoint'],
    ['failed', 'browser'],
    ['failed', 'ask_timeout'],
    ['cancelled', 'cancelled'],
    ['complete', 'complete'],
    ['max_rounds', 'max_rounds'],
  ])('a run ending %s with the end reason %s keeps that reason', async (status, endReason) => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writer.writeStatus(status, null, 'detail', endReason);
    expect(await readJson(path.join(runDir(), 'solver_log/status.json'))).toMatchObject({
      run_status: status,
      end_reason: endReason,
    });
    expect(await readJson(path.join(runDir(), 'metadata.json'))).toMatchObject({
      stats: { run_status: status, end_reason: endReason, end_detail: 'detail' },
    });
    expect(await readRun(runDir())).toMatchObject({ status, endReason, endDetail: 'detail' });
  });

  it.each<TaskState>(['running', 'waiting_for_user'])('a run that goes on (%s) has no end reason', async (status) => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    await writer.writeStatus(status, null, undefined, 'browser');
    const file = await readJson(path.join(runDir(), 'solver_log/status.json'));
    expect(file).not.toHaveProperty('end_reason');
    expect((await readRun(runDir())).metadata.stats).not.toHaveProperty('end_reason');
  });

  it('mirrors every extra of status.json in metadata.stats (the original rewrites status.json without them)', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task, { now: clock });
    const calls: Parameters<TrajectoryWriter['writeStatus']>[] = [
      ['running', null],
      ['waiting_for_user', 'Which city?', 'asked the user'],
      ['running'],
      ['failed', null, 'three unparseable replies', 'invalid_replies'],
      ['complete', '42'],
    ];
    for (const call of calls) {
      await writer.writeStatus(...call);
      const file = (await readJson(path.join(runDir(), 'solver_log/status.json'))) as Record<string, unknown>;
      const { stats } = (await readJson(path.join(runDir(), 'metadata.json'))) as { stats: Record<string, unknown> };
      expect(stats).toEqual(beyondStatusAndOutcome(file));
      expect(stats['run_status']).toBe(call[0]);
    }
  });
});

describe('appendVerification', () => {
  it('renames repeated verifier names name_1, name_2, …', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    const names = [];
    for (const score of [1, 0, 0.5]) names.push(await writer.appendVerification({ verifier_name: 'judge', score }));
    names.push(await writer.appendVerification({ verifier_name: 'other', score: 1 }));
    expect(names).toEqual(['judge', 'judge_1', 'judge_2', 'other']);
    const run = await readRun(runDir());
    expect(Object.keys(run.verification)).toEqual(['judge', 'judge_1', 'judge_2', 'other']);
    expect(run.verification['judge_1']).toMatchObject({ verifier_name: 'judge_1', score: 0, result_type: 'base' });
  });

  it('also across two writer instances', async () => {
    const a = await TrajectoryWriter.create(root, 'run-1', task);
    const b = await TrajectoryWriter.open(root, 'run-1');
    expect(
      await Promise.all([a.appendVerification({ verifier_name: 'v' }), b.appendVerification({ verifier_name: 'v' })]),
    ).toEqual(expect.arrayContaining(['v', 'v_1']));
  });
});

describe('writeDataPoint', () => {
  it('assembles task, events, status, verification and metadata into a loadable snapshot', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task, { now: clock });
    await writer.appendEvent(taskMessage(task.instruction));
    await writeStep(writer, 1);
    await writer.appendVerification({ verifier_name: 'exact', score: 1 });
    await writer.writeStatus('cancelled', null, 'user cancelled');
    const written = await writer.writeDataPoint();
    const read = await readDataPoint(runDir());
    expect(read).toEqual(written);
    expect(read?.task).toMatchObject(task);
    expect(read?.solver_log.events.map((e) => e.id)).toEqual([
      'user-0000-task-g0',
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-tool-g0',
      'step-0001-post-g0',
    ]);
    expect(read?.solver_log.status).toBe('aborted');
    expect(read?.verification['exact']?.score).toBe(1);
    expect(read?.metadata).toMatchObject({
      run_id: 'run-1',
      created_at: T,
      stats: {
        run_status: 'cancelled',
        end_reason: 'cancelled',
        end_detail: 'user cancelled',
        status_updated_at: T,
        num_events: 5,
        num_actions: 1,
      },
    });
  });
});

describe('screenshots', () => {
  it('names them screenshot_<n>_<phase>.png relative to the run folder and stores the bytes', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', task);
    expect(writer.screenshotPath(3, 'pre')).toBe('screenshot_3_pre.png');
    expect(await writer.saveScreenshot(3, 'post', Buffer.from('png'))).toBe('screenshot_3_post.png');
    expect(await writer.saveScreenshot(3, 'pre', Buffer.from('again'), 1)).toBe('screenshot_3_g1_pre.png');
    expect(await writer.saveScreenshot(3, 'post', Buffer.from('again'), 1)).toBe('screenshot_3_g1_post.png');
    expect(await fs.readFile(path.join(runDir(), 'screenshot_3_post.png'), 'utf8')).toBe('png');
  });
});
