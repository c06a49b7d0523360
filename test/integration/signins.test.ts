// Saved sign-ins end to end on the real dev server, worker and Chromium: a sign-in saved from one task's last page
// (`cua signin save`) lets a second task open a members-only page signed in; a third task started meanwhile waits for
// the sign-in's lock (its status says who holds it, and stays running), then runs; with signinRefresh the cookie the
// site rotated is saved back. An unknown sign-in fails the task at its start with one line. An evaluation whose tasks
// share a sign-in runs them one at a time through the lock, though its concurrency would run them together; so do a
// fork and best-of-N branches of a task started with a sign-in.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import type { EvalResultsFile } from '../../src/eval/results';
import { statusQuery } from '../../workflows/messages';
import { signinStoreFor } from '../../src/runtime/signins';
import { openRunStore } from '../../src/trajectory/open-store';
import type { TaskResult } from '../../src/contract/task';
import { forkBranchesOf, forkTask } from '../../client/fork';
import { replyToTask } from '../../client/tasks';
import { main } from '../../cli/cli';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { eventually, failureOf, FAST_TIMING, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

let h: Harness;
let site: FixtureServer;
/** The session cookie each load of the members page came with ('' for none), oldest first. */
const seen: string[] = [];
let issued = 0;

const sessionOf = (cookie: string | undefined) => /(?:^|;\s*)session=([^;]*)/.exec(cookie ?? '')?.[1] ?? '';
const page = (title: string, body: string) =>
  `<!doctype html><title>${title}</title><body style="margin:0;font:20px sans-serif">${body}</body>`;

beforeAll(async () => {
  h = await startHarness();
  site = await startFixtureServer();
  site.route('/signin', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      page(
        'Sign in',
        '<form method="post" action="/login"><button style="display:block;width:100%;height:400px">Sign in</button></form>',
      ),
    );
  });
  site.route('/login', (_req, res) => {
    res.writeHead(303, { location: '/members', 'set-cookie': `session=ada-${++issued}; Path=/; HttpOnly` });
    res.end();
  });
  // Members only; each visit rotates the session cookie, as many sites do.
  site.route('/members', (req, res) => {
    const session = sessionOf(req.headers.cookie);
    seen.push(session);
    if (!session.startsWith('ada-')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page('Please sign in', '<p>Please sign in.</p>'));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'set-cookie': `session=ada-${++issued}; Path=/; HttpOnly`,
    });
    res.end(page('Members', '<p>Members only. Welcome, ada.</p>'));
  });
}, 120_000);

afterAll(async () => {
  await site?.close();
  await h?.close();
});

/** `cua <args>` in this process, against the harness's run store. */
async function cua(...args: string[]): Promise<number> {
  const before = process.env.CUA_RUNS_DIR;
  process.env.CUA_RUNS_DIR = h.config.runsDir;
  try {
    return await main(args);
  } finally {
    if (before === undefined) delete process.env.CUA_RUNS_DIR;
    else process.env.CUA_RUNS_DIR = before;
  }
}

const signins = () => signinStoreFor(h.config, openRunStore(h.config));

describe('saved sign-ins', () => {
  it('a sign-in saved from one task opens the members page for the next; a third waits for the lock', async () => {
    const first = await h.start({ script: 'signin-form', instruction: 'Sign in.', startUrl: site.url('/signin') });
    expect((await first.result()) as TaskResult).toMatchObject({ status: 'complete' });
    expect(await cua('signin', 'save', first.workflowId, 'members')).toBe(0);
    const saved = await signins().list();
    expect(saved).toMatchObject([
      { name: 'members', fromTask: first.workflowId, hosts: expect.arrayContaining(['127.0.0.1']) },
    ]);
    const cookieAtSave = (await signins().load('members'))?.storage.cookies.find((c) => c.name === 'session')?.value;
    expect(cookieAtSave).toMatch(/^ada-\d+$/);

    const members = { instruction: 'Look at the members page.', startUrl: site.url('/members'), signin: 'members' };
    const second = await h.start({ script: 'members-ask', ...members });
    await untilWaiting(second); // it holds the sign-in while it waits for a reply
    expect(seen.at(-1)).toBe(cookieAtSave);

    const third = await h.start({ script: 'members-ask', ...members, autoReply: 'yes', signinRefresh: true });
    const waiting = await eventually(
      async () => {
        const s = await third.query(statusQuery);
        return s.signinWait?.heldBy ? s : undefined;
      },
      30_000,
      'the third task to say it waits for the sign-in',
    );
    expect(waiting).toMatchObject({
      status: 'running',
      step: 0,
      signinWait: { name: 'members', heldBy: second.workflowId },
    });
    const loadsBefore = seen.length;

    await replyToTask(h.client, second.workflowId, 'yes');
    expect((await second.result()) as TaskResult).toMatchObject({ status: 'complete' });
    expect((await third.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'members page seen' });
    // The third task loaded the page only after the second ended (whose page reopened at the reply with the cookie
    // it had rotated), with the saved cookie: the second task did not save its rotation back.
    expect(seen.slice(loadsBefore)).toContain(cookieAtSave);

    // --signin-refresh: the cookie the site rotated at the third task's visit is saved back under the name.
    const refreshed = await signins().load('members');
    expect(refreshed?.fromTask).toBe(third.workflowId);
    expect(refreshed?.storage.cookies.find((c) => c.name === 'session')?.value).toBe(`ada-${issued}`);
    expect(`ada-${issued}`).not.toBe(cookieAtSave);
  }, 180_000);

  it('an unknown sign-in fails the task at its start, in one line', async () => {
    const handle = await h.start({ script: 'members-ask', startUrl: site.url('/members'), signin: 'nobody' });
    const err = (await failureOf(handle.result())) as Error & { cause?: Error };
    expect(err.cause?.message).toMatch(/^task failed at step 0: no saved sign-in named 'nobody'/);
    expect(await cua('signin', 'save', handle.workflowId, 'nobody')).toBe(2); // it never opened a page
    expect(await cua('signin', 'rm', 'members')).toBe(0);
    expect(await signins().list()).toEqual([]);
  }, 60_000);
});

describe('an evaluation on a sign-in', () => {
  it('runs its tasks one at a time through the lock; the one waiting says for whom', async () => {
    await signins().save(
      'eval-members',
      { cookies: [{ name: 'session', value: 'ada-eval', domain: '127.0.0.1', path: '/' }], origins: [] },
      'seed',
    );
    const line = (id: string) =>
      JSON.stringify({
        id,
        instruction: 'Look at the members page.',
        start_url: '{{site}}/members',
        model: { base_url: '{{scripted}}', model: 'members-ask' },
        auto_reply: 'yes',
        signin: 'eval-members',
        checks: [{ type: 'answer_contains', value: 'members page seen' }],
      });
    fs.mkdirSync(path.join(h.config.runsDir, 'evalsets'), { recursive: true });
    fs.writeFileSync(path.join(h.config.runsDir, 'evalsets', 'members.jsonl'), `${line('m1')}\n${line('m2')}\n`);
    const loadsBefore = seen.length;
    const lines: string[] = [];
    const args = ['store:evalsets/members.jsonl', '--concurrency', '2', '--id', 'ev-signin', '--out', h.dir];
    const done = evalCommand([...args, '--site', `site=${site.url('')}`, '--site', `scripted=${h.model.url}`], {
      config: h.config,
      client: h.client,
      print: (l) => lines.push(l),
      pollMs: 300,
      taskDefaults: { timing: FAST_TIMING },
    });
    // Both tasks start at once; one holds the sign-in and the other's status says it waits for it.
    const ids = ['ev-signin-m1-t0-a1', 'ev-signin-m2-t0-a1'];
    const waiting = await eventually(
      async () => {
        for (const id of ids) {
          const s = await h.client.workflow
            .getHandle(id)
            .query(statusQuery)
            .catch(() => undefined);
          if (s?.signinWait?.heldBy) return { id, ...s.signinWait };
        }
        return undefined;
      },
      30_000,
      'a task of the evaluation to wait for the sign-in',
    );
    expect(waiting).toEqual({
      id: expect.any(String),
      name: 'eval-members',
      heldBy: ids.find((i) => i !== waiting.id),
    });
    expect(await done, lines.join('\n')).toBe(0);
    const results = JSON.parse(fs.readFileSync(path.join(h.dir, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    expect(results.tasks.map((t) => [t.taskId, t.trials[0]?.score])).toEqual([
      ['m1', 1],
      ['m2', 1],
    ]);
    expect(seen.slice(loadsBefore).filter((c) => c === 'ada-eval')).toHaveLength(2);
  }, 90_000);
});

describe('forks and branches on a sign-in', () => {
  it('a fork and best-of-N branches of a task with a sign-in take its lock like any task', async () => {
    await signins().save(
      'fork-members',
      { cookies: [{ name: 'session', value: 'ada-fork', domain: '127.0.0.1', path: '/' }], origins: [] },
      'seed',
    );
    const source = await h.start({
      script: 'members-ask',
      startUrl: site.url('/members'),
      signin: 'fork-members',
      autoReply: 'yes',
    });
    expect((await source.result()) as TaskResult).toMatchObject({ status: 'complete' });
    const fork = await forkTask(h.client, source.workflowId, { step: 1 });
    const best = await forkBranchesOf(h.client, source.workflowId, {
      step: 1,
      branches: 2,
      checks: [{ type: 'answer_contains', value: 'members page seen' }],
    });
    const tasks = [fork.id, ...best.branches];
    for (const input of [fork.input, ...best.input.branches]) expect(input.signin).toBe('fork-members');
    // One of the three holds the sign-in; the others say they wait for it, and for whom.
    const waits = new Map<string, string>();
    await eventually(
      async () => {
        for (const id of tasks) {
          const s = await h.client.workflow
            .getHandle(id)
            .query(statusQuery)
            .catch(() => undefined);
          if (s?.signinWait?.heldBy) waits.set(id, s.signinWait.heldBy);
        }
        return waits.size >= 2 || undefined;
      },
      30_000,
      'two of the three to wait for the sign-in',
    );
    for (const [id, holder] of waits) {
      expect(tasks).toContain(holder);
      expect(holder).not.toBe(id);
    }
    for (const id of tasks) {
      expect(await h.client.workflow.getHandle(id).result()).toMatchObject({
        status: 'complete',
        answer: 'members page seen',
      });
    }
  }, 90_000);
});
