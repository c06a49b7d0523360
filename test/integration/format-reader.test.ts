// The run folder read by a reader written from the field contract alone
// (docs/architecture.md#the-run-folder-format), not from our schemas:
// test/fixtures/format-reader/reader.py, pydantic v2 models in the project venv. A real task that asks the user and
// is answered loads in it, with its start page and the reply, as does its snapshot while it waited; every SolverStatus
// value loads; copies tampered to break one rule of the contract each are refused, saying which rule.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { replyToTask } from '../../client/tasks';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import type { TaskResult } from '../../src/contract/task';
import { eventually, untilWaiting } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const ROOT = path.resolve(__dirname, '../..');
const PYTHON = path.join(ROOT, '.tools/venv/bin/python');
const READER = path.join(ROOT, 'test/fixtures/format-reader/reader.py');
const QUESTION = 'Which city should I search in?';
const ANSWER = 'Searched Lisbon as you asked.';
const SOLVER_STATUSES = ['running', 'complete', 'aborted', 'waiting_for_user', 'max_rounds', 'timed_out'];

interface ReaderStep {
  action_id: string;
  action_name: string;
  pre: string[];
  post: string[];
  screenshot: string;
}

interface ReaderResult {
  folder: string;
  ok: boolean;
  errors: string[];
  summary: {
    task_id: string | null;
    events: number;
    message_types: string[];
    status: string | null;
    outcome: string | null;
    run_id: string | null;
    data_point: { status: string | null; events: number } | null;
    start_page: { index: number; id: string; screenshot: string } | null;
    steps: ReaderStep[];
    verification: Record<string, { type: string; score: number | null }>;
  };
}

/** Fails (never skips) when the project venv has no pydantic v2, saying what to run. */
function requirePydantic(): void {
  const r = spawnSync(PYTHON, ['-c', 'import pydantic, sys; sys.exit(0 if pydantic.VERSION.startswith("2.") else 3)'], {
    encoding: 'utf8',
  });
  if (r.error || r.status !== 0) {
    const why = r.error ? `${PYTHON} cannot run: ${r.error.message}` : r.stderr.trim().split('\n').pop() || 'not 2.x';
    throw new Error(`pydantic v2 is missing from .tools/venv: run \`npm run setup\` (${why})`);
  }
}

/** Every folder through the reader in one run (exit 0: all keep the contract; 1: one does not). */
function readFolders(dirs: readonly string[]): Map<string, ReaderResult> {
  requirePydantic();
  const r = spawnSync(PYTHON, [READER, ...dirs], { encoding: 'utf8', timeout: 60_000 });
  if (r.error || (r.status !== 0 && r.status !== 1)) {
    throw new Error(`the reader failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr}`);
  }
  const results = r.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ReaderResult);
  expect(r.status).toBe(results.every((x) => x.ok) ? 0 : 1);
  return new Map(results.map((x) => [x.folder, x]));
}

// ---------- tampering with a copy ----------

type Json = Record<string, unknown>;
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Json;
const writeJson = (file: string, value: unknown) => fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
const eventsFile = (dir: string) => path.join(dir, 'solver_log/events.jsonl');

/** Rewrites the stream the same way in events.jsonl and in data_point.json, so only the intended rule breaks. */
function editEvents(dir: string, edit: (events: Json[]) => Json[]): void {
  const lines = fs.readFileSync(eventsFile(dir), 'utf8').trim().split('\n');
  const events = edit(lines.map((l) => JSON.parse(l) as Json));
  fs.writeFileSync(eventsFile(dir), `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const point = readJson(path.join(dir, 'data_point.json'));
  writeJson(path.join(dir, 'data_point.json'), { ...point, solver_log: { ...(point.solver_log as Json), events } });
}

const editFile = (dir: string, file: string, edit: (value: Json) => Json) =>
  writeJson(path.join(dir, file), edit(readJson(path.join(dir, file))));

const without = (value: Json, key: string): Json =>
  Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));
const indexOf = (events: Json[], test: (e: Json) => boolean) => {
  const i = events.findIndex(test);
  if (i < 0) throw new Error('the run has no such event to tamper with');
  return i;
};
const isAction = (e: Json) => e.type === 'action';

/** Each breaks one rule of the contract; the reader must say so. */
const TAMPERED: [string, (dir: string) => void, RegExp][] = [
  [
    'two actions in a row',
    (dir) =>
      editEvents(dir, (events) => {
        const first = indexOf(events, isAction);
        const second = first + 1 + indexOf(events.slice(first + 1), isAction);
        return [...events.slice(0, first + 1), ...events.slice(second)];
      }),
    /two actions in a row \(step-0001-action-g0, step-0002-action-g1\) with no observation between/,
  ],
  [
    'an action_id naming no action',
    (dir) =>
      editEvents(dir, (events) =>
        events.map((e) => (e.observation_type === 'tool_output' ? { ...e, action_id: 'step-0009-action-g0' } : e)),
      ),
    /names action step-0009-action-g0, which is not in the stream/,
  ],
  [
    'a screenshot named without _pre/_post',
    (dir) => {
      fs.renameSync(path.join(dir, 'screenshot_1_post.png'), path.join(dir, 'screenshot_1_after.png'));
      editEvents(dir, (events) =>
        events.map((e) =>
          e.screenshot_path === 'screenshot_1_post.png' ? { ...e, screenshot_path: 'screenshot_1_after.png' } : e,
        ),
      );
    },
    /screenshot screenshot_1_after\.png does not end in _pre\.png or _post\.png/,
  ],
  [
    'a screenshot file missing',
    (dir) => fs.rmSync(path.join(dir, 'screenshot_1_pre.png')),
    /screenshot screenshot_1_pre\.png is missing/,
  ],
  [
    'an unknown observation_type',
    (dir) => editEvents(dir, (events) => events.map((e, i) => (i === 1 ? { ...e, observation_type: 'dom' } : e))),
    /events\.jsonl:2: .*tag 'dom' found using 'observation_type' does not match any of the expected tags/,
  ],
  [
    'an unknown message_type',
    (dir) =>
      editEvents(dir, (events) =>
        events.map((e) => (e.message_type === 'critical_point_response' ? { ...e, message_type: 'answer' } : e)),
      ),
    /message_type: Input should be 'task', 'followup_task', 'critical_point_response' or 'retry_feedback'/,
  ],
  [
    'an action without its id',
    (dir) => editEvents(dir, (events) => events.map((e) => (isAction(e) ? without(e, 'id') : e))),
    /events\.jsonl:\d+: action\.id: Field required/,
  ],
  [
    'an unknown SolverStatus',
    (dir) => editFile(dir, 'solver_log/status.json', (s) => ({ ...s, status: 'failed' })),
    /status\.json: status: Input should be 'running', 'complete', 'aborted', 'waiting_for_user', 'max_rounds' or 'timed_out'/,
  ],
  [
    'status.json without its outcome',
    (dir) => editFile(dir, 'solver_log/status.json', (s) => without(s, 'outcome')),
    /status\.json: outcome: Field required/,
  ],
  [
    'task.json without task_id',
    (dir) => editFile(dir, 'task.json', (t) => without(t, 'task_id')),
    /task\.json: task_id: Field required/,
  ],
  [
    'task.json other than data_point.json’s task',
    (dir) => editFile(dir, 'task.json', (t) => ({ ...t, instruction: 'Something else.' })),
    /data_point\.json: its task is not the one in task\.json/,
  ],
  [
    'an unknown verification result_type',
    (dir) => {
      const file = path.join(dir, 'verification.jsonl');
      const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
      const first = JSON.parse(lines[0] ?? '{}') as Json;
      fs.writeFileSync(file, `${[JSON.stringify({ ...first, result_type: 'vibes' }), ...lines.slice(1)].join('\n')}\n`);
    },
    /verification\.jsonl:1: result_type: Input should be 'base', 'web_judge'/,
  ],
  [
    'the start page after step 1’s observation',
    (dir) => editEvents(dir, ([task, start, pre, ...rest]) => [task!, pre!, start!, ...rest]),
    /the start page step-0000-pre-g0 does not come right after the task message/,
  ],
];

describe('the run folder in a reader written from FORMAT.md alone (pydantic)', () => {
  let h: Harness;
  useHarness((x) => (h = x));
  let taskId: string;
  let results: Map<string, ReaderResult>;
  const copies = (name: string) => path.join(h.dir, 'format-reader', name);

  beforeAll(async () => {
    requirePydantic(); // before the task runs: a missing pydantic fails at once, saying what to run
    const handle = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I want.' });
    taskId = handle.workflowId;
    const dir = h.runDir(taskId);
    expect((await untilWaiting(handle)).question?.text).toBe(QUESTION);
    const snapshot = () => readJson(path.join(dir, 'data_point.json'));
    await eventually(
      async () => fs.existsSync(path.join(dir, 'data_point.json')) && snapshot().solver_log,
      10_000,
      'the pause snapshot',
    );
    fs.cpSync(dir, copies('waiting'), { recursive: true });
    await replyToTask(h.client, taskId, 'Lisbon');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: ANSWER });
    // Verdicts as an evaluation records them: appended, then the snapshot written again.
    const w = await TrajectoryWriter.open(h.config.runsDir, taskId);
    await w.appendVerification({ verifier_name: 'eval_rules', result_type: 'base', score: 1, reasoning: 'all met' });
    await w.appendVerification({ verifier_name: 'webjudge', result_type: 'web_judge', score: null, reasoning: null });
    await w.writeDataPoint();

    const dirs = [dir, copies('waiting')];
    for (const status of SOLVER_STATUSES) {
      const copy = copies(`status-${status}`);
      fs.cpSync(dir, copy, { recursive: true });
      editFile(copy, 'solver_log/status.json', (s) => ({ ...s, status }));
      editFile(copy, 'data_point.json', (p) => ({ ...p, solver_log: { ...(p.solver_log as Json), status } }));
      dirs.push(copy);
    }
    TAMPERED.forEach(([, tamper], i) => {
      const copy = copies(`tampered-${i}`);
      fs.cpSync(dir, copy, { recursive: true });
      tamper(copy);
      dirs.push(copy);
    });
    results = readFolders(dirs);
  }, 180_000);

  const resultOf = (dir: string): ReaderResult => {
    const result = results.get(dir);
    if (!result) throw new Error(`the reader said nothing of ${dir}`);
    return result;
  };

  it('loads the finished run: the task, the start page, the reply, each step and the verdicts', () => {
    const { ok, errors, summary } = resultOf(h.runDir(taskId));
    expect(errors).toEqual([]);
    expect(ok).toBe(true);
    expect(summary).toMatchObject({
      task_id: taskId,
      run_id: taskId,
      status: 'complete',
      outcome: ANSWER,
      message_types: ['task', 'critical_point_response'],
      start_page: { index: 1, id: 'step-0000-pre-g0', screenshot: 'screenshot_0_pre.png' },
      data_point: { status: 'complete', events: summary.events },
      verification: { eval_rules: { type: 'base', score: 1 }, webjudge: { type: 'web_judge', score: null } },
    });
    expect(summary.steps.map((s) => s.action_name)).toEqual(['ask_user_question', 'left_click', 'type', 'terminate']);
    // The start page is an observation before step 1, with step 1's own after it.
    expect(summary.steps[0]?.pre).toEqual(['user-0000-task-g0', 'step-0000-pre-g0', 'step-0001-pre-g0']);
    expect(summary.steps[1]?.pre).toContain('user-0001-reply-g0');
    for (const step of summary.steps) expect(step.screenshot).toMatch(/^screenshot_\d+(_g\d+)?_post\.png$/);
  });

  it('loads the snapshot written while the task waited for the reply', () => {
    const { ok, errors, summary } = resultOf(copies('waiting'));
    expect(errors).toEqual([]);
    expect(ok).toBe(true);
    expect(summary).toMatchObject({
      status: 'waiting_for_user',
      outcome: QUESTION,
      message_types: ['task'],
      start_page: { index: 1 },
      data_point: { status: 'waiting_for_user' },
    });
    expect(summary.steps.map((s) => s.action_name)).toEqual(['ask_user_question']);
  });

  it.each(SOLVER_STATUSES)('reads the SolverStatus %s', (status) => {
    const result = resultOf(copies(`status-${status}`));
    expect(result.errors).toEqual([]);
    expect(result.summary).toMatchObject({ status, data_point: { status } });
  });

  it.each(TAMPERED.map(([what, , error], i) => [what, i, error] as const))(
    'refuses a copy with %s',
    (_what, i, error) => {
      const result = resultOf(copies(`tampered-${i}`));
      expect(result.ok).toBe(false);
      expect(result.errors.join('\n')).toMatch(error);
    },
  );
});
