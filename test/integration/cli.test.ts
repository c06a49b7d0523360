// The real `cua` command line as a child process, against the harness's dev server and in-process worker:
// exit codes, one-line errors, run/reply/status/list/show/cancel on real tasks driven by the scripted model.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { TaskResult, TaskStatus } from '../../src/contract/task';
import { statusQuery } from '../../workflows/messages';
import { followTask } from '../../cli/commands/run';
import { STANDING_APPROVAL } from '../../src/agent/reply';
import { readRun } from '../../src/trajectory/reader';
import { eventually, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const CUA_BIN = path.join(ROOT, 'bin/cua.js');
const BOOK_INSTRUCTION = 'Find the nightly price of the first hotel in Lisbon.';
const ASK_INSTRUCTION = 'Search hotels in the city I want.';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let h: Harness;
const children = new Set<ChildProcess>();
const stamp = Date.now().toString(36);
const ids = {
  book: `cli-book-${stamp}`,
  askNow: `cli-ask-now-${stamp}`,
  askLater: `cli-ask-later-${stamp}`,
  cancel: `cli-cancel-${stamp}`,
};

beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await h?.close();
});

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: h.server.address,
    CUA_RUNS_DIR: h.config.runsDir,
    CUA_TASK_QUEUE: h.config.taskQueue,
  };
  for (const key of ['CUA_CONFIG', 'CUA_MODEL_BASE_URL', 'CUA_MODEL', 'TEMPORAL_NAMESPACE', 'NODE_OPTIONS']) {
    delete env[key];
  }
  return env;
}

/** Runs `cua <args>` to its end; stdin gets `stdin` (or nothing) and is then closed. */
function cua(
  args: string[],
  opts: { stdin?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CUA_BIN, ...args], { cwd: ROOT, env: opts.env ?? cliEnv() });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cua ${args.join(' ')} did not end in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const lastJson = <T>(stdout: string): T => JSON.parse(lines(stdout).at(-1) ?? 'null') as T;

/** A failing command printed exactly one error line: `cua: …`. */
function expectOneLineError(res: CliResult, pattern: RegExp): void {
  expect(res.code, res.stderr).not.toBe(0);
  const errLines = lines(res.stderr);
  expect(errLines, res.stderr).toHaveLength(1);
  expect(errLines[0]).toMatch(/^cua: /);
  expect(errLines[0]).toMatch(pattern);
}

const modelFlags = (script: string) => ['--model-base-url', h.model.url, '--model', script];

describe('cua basics', () => {
  it('--version and --help exit 0', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const version = await cua(['--version']);
    expect(version).toMatchObject({ code: 0, stderr: '' });
    expect(version.stdout.trim()).toBe(pkg.version);

    const help = await cua(['--help']);
    expect(help.code).toBe(0);
    for (const word of ['Usage: npx cua', 'run', 'reply', 'status', 'list', 'cancel', 'show']) {
      expect(help.stdout).toContain(word);
    }
  });

  it('--help names both agents and how to start each', async () => {
    const help = await cua(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/the browser agent[^\n]*\n\s+npx cua demo\s/);
    expect(help.stdout).toContain('npx cua run "<task>" --url URL');
    expect(help.stdout).toMatch(/the desktop agent[^\n]*\n\s+npx cua demo --desktop\s/);
    expect(help.stdout).toContain('npx cua run "<task>" --env desktop');
  });

  it('--config FILE before the command is the config of the command that follows', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-cli-config-'));
    const good = path.join(dir, 'good.json');
    fs.writeFileSync(good, JSON.stringify({ temporal: { address: h.server.address } }));
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, '{ "temporal": ');
    const env = { ...cliEnv(), TEMPORAL_ADDRESS: '' }; // only the file names the server
    const listed = await cua(['--config', good, 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(lastJson<unknown[]>(listed.stdout)).toEqual(expect.any(Array));
    expect((await cua([`--config=${good}`, 'list', '--json'], { env })).code).toBe(0);
    expectOneLineError(await cua(['--config', bad, 'list'], { env }), /config file .*bad\.json is not valid JSON/);
    const missing = await cua(['--config', path.join(dir, 'nope.json'), 'list']);
    expect(missing.code).toBe(2);
    expectOneLineError(missing, /--config .*nope\.json: no such file/);
    expectOneLineError(await cua(['--config']), /--config needs a file/);
  });

  it('scripted-model with a missing --scripts folder fails in one line instead of starting', async () => {
    const res = await cua(['scripted-model', '--scripts', '/nonexistent/scripts', '--port', '0']);
    expect(res.code).toBe(2);
    expectOneLineError(res, /--scripts \/nonexistent\/scripts: no such folder/);
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-cli-scripts-'));
    expectOneLineError(await cua(['scripted-model', '--scripts', empty]), /has no \*\.json scripts/);
  });

  it('an unknown command exits 2 with a one-line error', async () => {
    const res = await cua(['frobnicate']);
    expect(res.code).toBe(2);
    expectOneLineError(res, /unknown command 'frobnicate'/);
  });

  it('a bad flag exits 2 with a one-line error (then the usage)', async () => {
    const res = await cua(['run', '--bogus', 'x']);
    expect(res.code).toBe(2);
    const [first, ...rest] = lines(res.stderr);
    expect(first).toMatch(/^cua: .*--bogus/);
    // Only the usage follows the error line.
    expect(rest[0]).toMatch(/^usage: npx cua run/);
    expect(rest.slice(1).every((l) => /^\s/.test(l))).toBe(true);
    expect(res.stdout).toBe('');
  });
});

describe('cua run', () => {
  it('runs a task to completion and prints JSON', async () => {
    const res = await cua(
      [
        'run',
        BOOK_INSTRUCTION,
        '--url',
        `${h.site.url}/`,
        ...modelFlags('book-lisbon'),
        '--max-steps',
        '10',
        '--id',
        ids.book,
        '--json',
      ],
      { timeoutMs: 120_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const out = lastJson<{ id: string; status: string; result: TaskResult }>(res.stdout);
    expect(out).toMatchObject({
      id: ids.book,
      status: 'complete',
      result: { status: 'complete', steps: 5, answer: 'Harbor View Lisbon costs €120 per night.' },
    });
  }, 150_000);

  it('prints the question, takes the reply from stdin, and the task completes', async () => {
    const res = await cua(
      ['run', ASK_INSTRUCTION, '--url', `${h.site.url}/`, ...modelFlags('ask-city'), '--id', ids.askNow],
      { stdin: 'Lisbon\n', timeoutMs: 120_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('The agent asks: Which city should I search in?');
    // The CLI's own final report is checked in the followTask test below (a product bug makes it racy).
    const result = (await h.client.workflow.getHandle(ids.askNow).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 4, answer: 'Searched Lisbon as you asked.' });
    const after = h.model.requests.find((r) => r.script === 'ask-city' && r.index === 1 && !r.subcall);
    expect(after?.lastUserText).toContain('Lisbon');
  }, 150_000);

  it('at a terminal, offers a follow-up after the answer; the follow-up runs, an empty line ends it', async () => {
    // `script` gives the command a terminal (stdin is a TTY); the two lines wait in it until they are read.
    const command = [process.execPath, CUA_BIN, 'run', 'Answer twice.', '--url', `${h.site.url}/`]
      .concat(modelFlags('follow-up-cli'), ['--id', 'cli-follow-up'])
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    const res = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: cliEnv() });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
      child.stdin.write('Now the second one\n\n');
    });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain('answer: first answer');
    expect(res.stdout).toContain('Follow-up task (empty line = done):');
    expect(res.stdout).toContain('answer: second answer');
    const followUp = h.model.requests.filter((r) => r.script === 'follow-up-cli').at(-1);
    expect(followUp?.lastUserText).toContain('New task from the user: Now the second one');
  }, 150_000);

  it('--auto-reply with no text answers the question with the standing approval, and the task completes', async () => {
    const id = `cli-auto-${stamp}`;
    const res = await cua(
      [
        'run',
        ASK_INSTRUCTION,
        '--url',
        `${h.site.url}/`,
        ...modelFlags('ask-city'),
        '--id',
        id,
        '--json',
        '--auto-reply',
      ],
      { timeoutMs: 120_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(lastJson<{ result: TaskResult }>(res.stdout).result).toMatchObject({ status: 'complete', steps: 4 });
    const run = await readRun(h.runDir(id));
    const replies = run.events.flatMap((e) =>
      e.type === 'observation' && e.observation_type === 'user_message' && e.message_type === 'critical_point_response'
        ? [e.content]
        : [],
    );
    expect(replies).toEqual([STANDING_APPROVAL]);
    expect(STANDING_APPROVAL).toMatch(/made up/);
  }, 150_000);

  it('followTask asks a question once, even while the workflow is still recording the reply', async () => {
    const handle = await h.start({ script: 'ask-city', instruction: ASK_INSTRUCTION, runId: `cli-follow-${stamp}` });
    const waiting = await untilWaiting(handle, 60_000);
    let replied = false;
    let staleServed = false;
    const inWindow = new Proxy(handle, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
        return async (def: unknown, ...args: unknown[]) => {
          if (def === statusQuery && replied && !staleServed) {
            staleServed = true;
            return waiting;
          }
          return (target.query as (d: unknown, ...a: unknown[]) => Promise<unknown>)(def, ...args);
        };
      },
    });
    const asked: string[] = [];
    const outcome = await followTask(h.client, inWindow, {
      json: true,
      print: () => undefined,
      pollMs: 100,
      ask: async (question) => {
        asked.push(question);
        if (asked.length > 1) return null;
        replied = true;
        return 'Lisbon';
      },
    });
    expect(asked).toEqual(['Which city should I search in?']);
    expect(outcome.result).toMatchObject({ status: 'complete', steps: 4 });
  }, 120_000);

  it('leaves the task waiting when stdin is closed; status, list and reply then work on it', async () => {
    const res = await cua(
      ['run', ASK_INSTRUCTION, '--url', `${h.site.url}/`, ...modelFlags('ask-city'), '--id', ids.askLater],
      { timeoutMs: 120_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('The agent asks: Which city should I search in?');
    expect(res.stdout).toContain(`npx cua reply ${ids.askLater}`);

    const status = await cua(['status', ids.askLater, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(lastJson<{ status: TaskStatus }>(status.stdout).status).toMatchObject({
      status: 'waiting_for_user',
      question: { text: 'Which city should I search in?' },
    });

    await eventually(
      async () => {
        const listed = await cua(['list', '--status', 'waiting_for_user', '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        return lastJson<{ id: string; status: string }[]>(listed.stdout).some(
          (r) => r.id === ids.askLater && r.status === 'waiting_for_user',
        );
      },
      30_000,
      '`cua list --status waiting_for_user` to show the waiting task',
    );

    const reply = await cua(['reply', ids.askLater, 'Lisbon']);
    expect(reply.code, reply.stderr).toBe(0);
    expect(reply.stdout).toContain(`reply delivered to ${ids.askLater}`);
    const result = (await h.client.workflow.getHandle(ids.askLater).result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', steps: 4, answer: 'Searched Lisbon as you asked.' });
  }, 180_000);
});

describe('cua errors on unknown or finished tasks', () => {
  it('status of an unknown id', async () => {
    expectOneLineError(await cua(['status', 'no-such-id']), /no-such-id/);
  });

  it('reply to an unknown id', async () => {
    expectOneLineError(await cua(['reply', 'no-such-id', 'x']), /no-such-id/);
  });

  it('reply to a finished task', async () => {
    expectOneLineError(await cua(['reply', ids.book, 'x']), /not waiting/);
  });

  it.each<[string, string[], RegExp]>([
    ['pause of an unknown id', ['pause', 'no-such-id'], /no-such-id/],
    ['resume of a finished task', ['resume', 'BOOK'], /has ended \(completed\)/],
    ['say to a finished task', ['say', 'BOOK', 'hello'], /has ended \(completed\)/],
    ['takeover of a finished task', ['takeover', 'BOOK'], /has ended \(completed\)/],
    ['handback of a finished task', ['handback', 'BOOK'], /has ended \(completed\)/],
    ['continue with a bad budget', ['continue', 'BOOK', 'more', '--max-steps', '0'], /--max-steps must be/],
  ])('a control refused in one line: %s', async (_name, args, pattern) => {
    expectOneLineError(await cua(args.map((a) => (a === 'BOOK' ? ids.book : a))), pattern);
  });

  it.each<[string[], RegExp]>([
    [['say', 'some-id'], /^cua: need a task id and a message$/],
    [['continue', 'some-id'], /^cua: need a task id and the next task$/],
  ])('%j exits 2 with a one-line error, then the usage', async (args, pattern) => {
    const res = await cua(args);
    expect(res.code).toBe(2);
    const [first, usage] = lines(res.stderr);
    expect(first).toMatch(pattern);
    expect(usage).toMatch(new RegExp(`^usage: npx cua ${args[0]} <id>`));
  });
});

describe('cua list and show', () => {
  it('lists the tasks; a bad status filter exits 2', async () => {
    await eventually(
      async () => {
        const listed = await cua(['list', '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        const rows = lastJson<{ id: string; status: string; instruction: string }[]>(listed.stdout);
        const byId = new Map(rows.map((r) => [r.id, r]));
        return (
          byId.get(ids.book)?.status === 'complete' &&
          byId.get(ids.book)?.instruction === BOOK_INSTRUCTION &&
          byId.has(ids.askNow) &&
          byId.has(ids.askLater)
        );
      },
      30_000,
      '`cua list --json` to show the tasks',
    );
    const bad = await cua(['list', '--status', 'bogus']);
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)[0]).toMatch(/^cua: --status must be one of .*'bogus'/);
  });

  it('shows the step table of a run, as text and as JSON', async () => {
    const text = await cua(['show', ids.book]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(BOOK_INSTRUCTION);
    for (const action of ['left_click', 'type', 'read_page_answer_question', 'terminate']) {
      expect(text.stdout).toContain(action);
    }
    // The page question of step 4 has its line under the step: model, prompt size, duration, reply.
    const table = lines(text.stdout);
    const read = table.findIndex((l) => /^\s+4\s+read_page_answer_question/.test(l));
    expect(table[read + 1]).toMatch(
      /^ {6}model call: book-lisbon · [\d,]+ characters of prompt \([\d,]+ tokens\), page text [\d,]+ characters · \d+ ms → .*€120 per night/,
    );

    const json = await cua(['show', ids.book, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const run = lastJson<{ status: string; steps: { action_name: string; sub_calls: { model: string }[] }[] }>(
      json.stdout,
    );
    expect(run.status).toBe('complete');
    expect(run.steps.map((s) => s.sub_calls.map((c) => c.model))).toEqual([[], [], [], ['book-lisbon'], []]);
    expect(run.steps.map((s) => s.action_name)).toEqual([
      'left_click',
      'type',
      'left_click',
      'read_page_answer_question',
      'terminate',
    ]);
  });

  it('show of an unknown run', async () => {
    expectOneLineError(await cua(['show', 'does-not-exist']), /no run folder for 'does-not-exist'/);
  });
});

describe('cua cancel', () => {
  it('cancels a waiting task', async () => {
    const started = await cua([
      'run',
      ASK_INSTRUCTION,
      '--url',
      `${h.site.url}/`,
      ...modelFlags('ask-city'),
      '--id',
      ids.cancel,
      '--detach',
    ]);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout.trim()).toBe(ids.cancel);
    const handle = h.client.workflow.getHandle(ids.cancel);
    await eventually(
      async () => (await handle.query(statusQuery)).status === 'waiting_for_user',
      60_000,
      'the task to ask',
    );

    const res = await cua(['cancel', ids.cancel]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`task ${ids.cancel} cancelled`);
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    const statusFile = path.join(h.runDir(ids.cancel), 'solver_log/status.json');
    expect(JSON.parse(fs.readFileSync(statusFile, 'utf8'))).toMatchObject({ run_status: 'cancelled' });
    await eventually(async () => h.worker?.pool.size === 0, 10_000, 'no browser session left open');
  }, 120_000);
});
