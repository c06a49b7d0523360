// Specification of the run folder's own protections: owner-only permissions on everything it writes, and task ids
// that can never name a path outside runsDir (checked by the task input schema and again by the writer).
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidTaskIdError } from '../../src/trajectory/errors';
import { actionEvent, preObservation, taskMessage, toolOutput } from '../../src/trajectory/events';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { TaskInputSchema } from '../../src/contract/task';

let root: string;
const task = { task_id: 't', instruction: 'Book a room for Ada' };

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'cua-perm-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** Every path below `dir`, with its permission bits. */
async function modes(dir: string): Promise<{ rel: string; dir: boolean; mode: number }[]> {
  const out: { rel: string; dir: boolean; mode: number }[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const st = await fs.stat(full);
    out.push({ rel: path.relative(dir, full), dir: st.isDirectory(), mode: st.mode & 0o777 });
  }
  return out;
}

describe('run folder permissions', () => {
  it('creates directories 0700 and files 0600, even under a permissive umask', async () => {
    const previous = process.umask(0o000);
    try {
      const runsDir = path.join(root, 'runs');
      const w = await TrajectoryWriter.create(runsDir, 'run-1', task);
      await w.appendEvent(taskMessage('Book a room for Ada'));
      const shot = await w.saveScreenshot(1, 'pre', new Uint8Array([137, 80, 78, 71]));
      await w.appendEvent(preObservation(1, { screenshot_path: shot, url: 'http://x/', page_info: '' }));
      await w.appendEvent(actionEvent(1, { action_name: 'wait', content: { action: 'wait', arguments: { time: 1 } } }));
      await w.appendEvent(toolOutput(1, 'step-0001-action-g0', { output: 'I waited 1 second.' }));
      await w.writeStatus('complete', 'done');
      await w.writeDataPoint();
      await w.appendVerification({ verifier_name: 'v', score: 1, reasoning: 'ok', result_type: 'base' });

      const found = await modes(runsDir);
      expect(found.map((f) => f.rel)).toEqual(
        expect.arrayContaining([
          'run-1',
          'run-1/task.json',
          'run-1/solver_log/events.jsonl',
          'run-1/screenshot_1_pre.png',
        ]),
      );
      for (const f of found) expect([f.rel, f.mode.toString(8)]).toEqual([f.rel, f.dir ? '700' : '600']);
      expect(((await fs.stat(runsDir)).mode & 0o777).toString(8)).toBe('700');
    } finally {
      process.umask(previous);
    }
  });
});

describe('task ids cannot leave runsDir', () => {
  const hostile = [
    ['..', 'the parent folder'],
    ['.', 'runsDir itself'],
    ['../escape', 'a relative path upwards'],
    ['a/../../b', 'a path with a separator'],
    ['/etc/passwd', 'an absolute path'],
    ['C:\\Windows', 'a Windows path'],
    ['run\u0000id', 'a NUL byte'],
    ['x'.repeat(129), 'a 129-character id'],
    ['x'.repeat(5000), 'a very long id'],
    ['', 'an empty id'],
    ['run id', 'a space'],
    ['run\nid', 'a newline'],
  ] as const;

  it.each(hostile)('the task input refuses %j (%s)', (taskId) => {
    const parsed = TaskInputSchema.safeParse({ runId: taskId, instruction: 'x' });
    expect(parsed.success).toBe(false);
  });

  it.each(hostile)('the writer refuses %j (%s) and writes nothing', async (taskId) => {
    await expect(TrajectoryWriter.create(root, taskId, task)).rejects.toThrow(InvalidTaskIdError);
    await expect(TrajectoryWriter.open(root, taskId)).rejects.toThrow(InvalidTaskIdError);
    expect(await fs.readdir(root)).toEqual([]);
  });

  it('accepts an ordinary id of 128 characters', async () => {
    const taskId = `a${'b'.repeat(127)}`;
    expect(TaskInputSchema.safeParse({ runId: taskId, instruction: 'x' }).success).toBe(true);
    await TrajectoryWriter.create(root, taskId, task);
    expect(await fs.readdir(root)).toEqual([taskId]);
  });
});
