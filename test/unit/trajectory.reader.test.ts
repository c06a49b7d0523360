// Specification of reading a run folder back, including one written by the original Python project and the damage
// a crash can leave.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CorruptFileError, RunFolderNotFoundError } from '../../src/trajectory/errors';
import { preObservation, taskMessage } from '../../src/trajectory/events';
import { readRun } from '../../src/trajectory/reader';
import type { SolverStatus } from '../../src/trajectory/schema';
import type { TaskState } from '../../src/contract/task-state';
import { stepSummaries } from '../../src/trajectory/steps';
import { TrajectoryWriter } from '../../src/trajectory/writer';

const fixture = path.join(__dirname, '../fixtures/trajectory/original_run');

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'trajectory-reader-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const eventsFile = () => path.join(root, 'run-1', 'solver_log/events.jsonl');
const statusFile = () => path.join(root, 'run-1', 'solver_log/status.json');

async function twoEventRun(): Promise<void> {
  const writer = await TrajectoryWriter.create(root, 'run-1', { task_id: 't', instruction: 'go' });
  await writer.appendEvent(taskMessage('go'));
  await writer.appendEvent(preObservation(1, { url: 'http://127.0.0.1/' }));
}

describe('readRun', () => {
  it('loads a folder written by the original project', async () => {
    const run = await readRun(fixture);
    expect(run.task.task_id).toBe('task_1');
    expect(run.events).toHaveLength(8);
    expect(run.events[2]).toHaveProperty('tool_sub_calls', []);
    expect(run).toMatchObject({ status: 'complete', fileStatus: 'complete', outcome: { answer: '9am to 5pm' } });
    expect(Object.keys(run.verification)).toEqual(['exact', 'exact_1']);
    expect(run.metadata).toEqual({
      stats: { steps: 2 },
      run_id: 'task_1_9f3a2b7c',
      created_at: '2026-07-20T10:15:00.123456',
    });
    expect(run.warnings).toEqual([]);
  });

  it('summarises the original folder step by step', async () => {
    const rows = stepSummaries((await readRun(fixture)).events);
    // toMatchObject: the rows' other fields are steps.ts's to specify (trajectory.steps.test.ts).
    expect(rows).toMatchObject([
      {
        step: 1,
        action_name: 'left_click',
        description: 'I will open the hours page. left_click(coordinate=[500, 340])',
        thoughts: 'I will open the hours page.',
        url: 'http://127.0.0.1/',
        screenshot: 'screenshot_1_post.png',
        text_observation: 'I clicked at (720, 489).',
        user_messages: [{ message_type: 'task', content: 'Find the opening hours of the city library' }],
      },
      {
        step: 2,
        action_name: 'terminate',
        description: "Done. terminate(status='success')",
        thoughts: 'Done.',
        url: 'http://127.0.0.1/hours',
        screenshot: '',
        text_observation: '9am to 5pm',
        user_messages: [],
      },
    ]);
  });

  it('is RunFolderNotFoundError without task.json', async () => {
    await expect(readRun(path.join(root, 'nothing'))).rejects.toThrow(RunFolderNotFoundError);
  });

  it('tolerates and reports a torn last line of events.jsonl', async () => {
    await twoEventRun();
    await fs.appendFile(eventsFile(), '{"type":"observation","id":"step-0001-po');
    const run = await readRun(path.join(root, 'run-1'));
    expect(run.events.map((e) => e.id)).toEqual(['user-0000-task-g0', 'step-0001-pre-g0']);
    expect(run.warnings).toEqual([
      { file: eventsFile(), line: 3, message: expect.stringMatching(/torn last line/) as unknown },
    ]);
  });

  it('keeps a valid last line that lost only its newline', async () => {
    await twoEventRun();
    await fs.appendFile(eventsFile(), JSON.stringify(preObservation(2, {})));
    expect((await readRun(path.join(root, 'run-1'))).events).toHaveLength(3);
  });

  it('a damaged line in the middle is CorruptFileError naming file and line', async () => {
    await twoEventRun();
    const lines = (await fs.readFile(eventsFile(), 'utf8')).split('\n');
    await fs.writeFile(eventsFile(), [lines[0], '{oops', lines[1], ''].join('\n'));
    const error = await readRun(path.join(root, 'run-1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error).toMatchObject({ file: eventsFile(), line: 2 });
    expect(String(error)).toContain(`${eventsFile()}:2`);
  });

  it('a line that breaks the schema is CorruptFileError naming file, line and field', async () => {
    await twoEventRun();
    await fs.appendFile(eventsFile(), '{"type":"observation","observation_type":"sound","id":"x","timestamp":"t"}\n');
    await expect(readRun(path.join(root, 'run-1'))).rejects.toThrow(/events\.jsonl:3: observation_type/);
  });

  it('a damaged status.json is CorruptFileError', async () => {
    await twoEventRun();
    await fs.writeFile(path.join(root, 'run-1', 'solver_log/status.json'), '{"status": "paused"}');
    await expect(readRun(path.join(root, 'run-1'))).rejects.toThrow(/status\.json: status/);
  });

  it('reads a missing status.json and metadata.json as defaults, with warnings', async () => {
    await twoEventRun();
    await fs.rm(path.join(root, 'run-1', 'solver_log/status.json'));
    await fs.rm(path.join(root, 'run-1', 'metadata.json'));
    const run = await readRun(path.join(root, 'run-1'));
    expect(run.status).toBe('running');
    expect(run.metadata.run_id).toBe('run-1');
    expect(run.warnings).toHaveLength(2);
  });

  it("reads the Fara-1.5 reader's timed_out as failed, ending timed_out", async () => {
    await twoEventRun();
    await fs.writeFile(statusFile(), JSON.stringify({ status: 'timed_out', outcome: null }));
    expect(await readRun(path.join(root, 'run-1'))).toMatchObject({
      status: 'failed',
      fileStatus: 'timed_out',
      endReason: 'timed_out',
      outcome: null,
    });
  });

  it('keeps timed_out as the end reason over stale extras of ours in metadata.stats', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', { task_id: 't', instruction: 'go' });
    await writer.writeStatus('failed', null, 'no browser', 'browser');
    await fs.writeFile(statusFile(), JSON.stringify({ status: 'timed_out', outcome: null }));
    const run = await readRun(path.join(root, 'run-1'));
    expect(run).toMatchObject({ status: 'failed', fileStatus: 'timed_out', endReason: 'timed_out' });
    expect(run.endDetail).toBeUndefined();
  });

  it.each<[TaskState, string | undefined, SolverStatus]>([
    ['cancelled', undefined, 'aborted'],
    ['failed', 'invalid_replies', 'aborted'],
    ['max_rounds', undefined, 'max_rounds'],
    ['complete', undefined, 'complete'],
  ])(
    'falls back to metadata.stats when the original rewrote status.json without our extras (%s, %s)',
    async (status, endReason, fileStatus) => {
      const writer = await TrajectoryWriter.create(root, 'run-1', { task_id: 't', instruction: 'go' });
      await writer.writeStatus(status, 'the answer', 'how it ended', endReason);
      await fs.writeFile(statusFile(), JSON.stringify({ status: fileStatus, outcome: { answer: 'the answer' } }));
      expect(await readRun(path.join(root, 'run-1'))).toMatchObject({
        status,
        fileStatus,
        endReason: endReason ?? status,
        endDetail: 'how it ended',
        outcome: { answer: 'the answer' },
      });
    },
  );

  it('ignores extras in metadata.stats that disagree with the status the original wrote last', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', { task_id: 't', instruction: 'go' });
    await writer.writeStatus('cancelled', null, 'user cancelled');
    // The original resumed the folder and finished it.
    await fs.writeFile(statusFile(), JSON.stringify({ status: 'complete', outcome: { answer: '42' } }));
    const run = await readRun(path.join(root, 'run-1'));
    expect(run).toMatchObject({ status: 'complete', fileStatus: 'complete', outcome: { answer: '42' } });
    expect(run.endReason).toBeUndefined();
    expect(run.endDetail).toBeUndefined();
  });

  it('prefers the extras in status.json to their mirror', async () => {
    const writer = await TrajectoryWriter.create(root, 'run-1', { task_id: 't', instruction: 'go' });
    await writer.writeStatus('failed', null, 'first', 'browser');
    const file = JSON.parse(await fs.readFile(statusFile(), 'utf8')) as Record<string, unknown>;
    await fs.writeFile(statusFile(), JSON.stringify({ ...file, end_reason: 'model_endpoint', end_detail: 'second' }));
    expect(await readRun(path.join(root, 'run-1'))).toMatchObject({ endReason: 'model_endpoint', endDetail: 'second' });
  });

  it('keeps the first of two lines with the same id, with a warning', async () => {
    await twoEventRun();
    const lines = (await fs.readFile(eventsFile(), 'utf8')).split('\n').filter(Boolean);
    await fs.appendFile(eventsFile(), `${lines[1]}\n`);
    const run = await readRun(path.join(root, 'run-1'));
    expect(run.events).toHaveLength(2);
    expect(run.warnings[0]).toMatchObject({ line: 3, message: 'duplicate event id step-0001-pre-g0' });
  });
});
