// The `cua eval` command's parts that need no server: a bad task set (a file, or `store:KEY` in the run store) is
// refused with one line (exit 2) before anything starts, and `cua eval compare A B` lists the tasks that flipped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import { summarize, summarizeTasks } from '../../src/eval/results';
import { configFromObject } from '../../src/runtime/config';
import type { EvalRecord } from '../../src/eval/records';
import { SigninStore } from '../../src/trajectory/signins';
import { LocalRunStore } from '../../src/trajectory/store';

const FIX = path.resolve(__dirname, '../fixtures/eval');

function record(setTaskId: string, score: number): EvalRecord {
  const taskId = `e-${setTaskId}-t0-a1`;
  return {
    ...{
      index: 0,
      taskId: setTaskId,
      trial: 0,
      outcome: 'scored',
      endReason: 'complete',
      score,
      steps: 3,
      answer: null,
    },
    ...{ reasoning: '', runId: taskId, attempts: [taskId], site: null, level: null, tags: [] },
  };
}

describe('cua eval', () => {
  it('refuses a bad task set with one line naming the line and field, before connecting anywhere', async () => {
    const lines: string[] = [];
    const code = await evalCommand([path.join(FIX, 'bad-local.jsonl')], { print: (l) => lines.push(l) });
    expect(code).toBe(2);
    expect(lines).toEqual([
      "error: bad-local.jsonl:3: field 'checks.0.value': Invalid input: expected number, received string",
    ]);
  });

  it.each([
    [
      'store:evalsets/nope.jsonl',
      (dir: string) =>
        `error: task set store:evalsets/nope.jsonl: no such object in the run store (${path.join(dir, 'evalsets/nope.jsonl')})`,
    ],
    [
      'store:evalsets/bad.jsonl',
      () => "error: bad.jsonl:3: field 'checks.0.value': Invalid input: expected number, received string",
    ],
    [
      'store:../bad.jsonl',
      () => 'error: store:../bad.jsonl: a store key is a relative path like store:evalsets/web.jsonl',
    ],
  ])('refuses the task set %s of the run store with one line, before connecting anywhere', async (source, message) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-store-'));
    fs.mkdirSync(path.join(dir, 'evalsets'));
    fs.copyFileSync(path.join(FIX, 'bad-local.jsonl'), path.join(dir, 'evalsets', 'bad.jsonl'));
    const lines: string[] = [];
    const config = configFromObject({ runsDir: dir, temporal: { address: '127.0.0.1:9' } });
    expect(await evalCommand([source], { config, print: (l) => lines.push(l) })).toBe(2);
    expect(lines).toEqual([message(dir)]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a task whose sign-in is not saved with one line, before connecting anywhere', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-signin-'));
    const file = path.join(dir, 'set.jsonl');
    const task = (id: string, signin: string) => JSON.stringify({ id, instruction: 'x', signin });
    fs.writeFileSync(file, `${task('a', 'shop')}\n${task('b', 'bank')}\n`);
    const config = configFromObject({ runsDir: dir, temporal: { address: '127.0.0.1:9' } });
    await new SigninStore(new LocalRunStore(dir)).save('shop', { cookies: [], origins: [] }, 'seed');
    const lines: string[] = [];
    expect(await evalCommand([file], { config, print: (l) => lines.push(l) })).toBe(2);
    expect(lines).toEqual(["error: task b: no saved sign-in named 'bank' (see npx cua signin list)"]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an unknown --judge before connecting anywhere', async () => {
    const tasks = path.resolve(__dirname, '../../eval/tasks/judged.jsonl');
    await expect(evalCommand([tasks, '--judge', 'vibes'])).rejects.toThrow(
      "--judge must be one of auto, webjudge, rubric, none, got 'vibes'",
    );
  });

  it('compare lists the tasks that flipped', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-compare-'));
    const write = (name: string, records: EvalRecord[]) => {
      fs.mkdirSync(path.join(dir, name));
      const results = {
        evalId: name,
        createdAt: '',
        taskSet: '',
        options: {},
        summary: summarize(records),
        tasks: summarizeTasks(records),
      };
      fs.writeFileSync(path.join(dir, name, 'eval-results.json'), JSON.stringify(results));
      return path.join(dir, name);
    };
    const a = write('A', [record('t1', 1), record('t2', 0), record('t3', 1)]);
    const b = write('B', [record('t1', 0), record('t2', 1), record('t3', 1)]);
    const lines: string[] = [];
    expect(await evalCommand(['compare', a, path.join(b, 'eval-results.json')], { print: (l) => lines.push(l) })).toBe(
      0,
    );
    expect(lines).toEqual(['A A: 66.7% · B B: 66.7%', 't1: pass → fail', 't2: fail → pass', '2 task(s) flipped']);
  });
});
