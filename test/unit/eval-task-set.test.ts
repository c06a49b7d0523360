// Specification of evaluation task sets: our JSONL, the WebVoyager and Online-Mind2Web shapes by their field names,
// filters, site placeholders, one-line errors naming the file, line and field of a bad entry, and a set named by its
// key in the run store (`store:KEY`, here the folder store; the S3 form is in test/integration/eval-s3.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, describe, expect, it } from 'vitest';
import {
  detectFormat,
  filterTasks,
  loadTaskSet,
  pageProbesOf,
  sitePlaceholders,
  substituteSites,
  TaskSetError,
} from '../../src/eval/task-set';
import type { Check } from '../../src/eval/task-set';
import { loadTaskSetFrom, readSource, storeKeyOf } from '../../src/eval/task-source';
import { configFromObject } from '../../src/runtime/config';
import { LocalRunStore } from '../../src/trajectory/store';
import { createEvalActivities, taskSpec } from '../../activities/eval';

const FIX = path.resolve(__dirname, '../fixtures/eval');
const LOCAL = path.resolve(__dirname, '../../eval/tasks/local.jsonl');

describe('task sets', () => {
  it('reads the shipped local task set: ≥ 12 tasks over both bundled sites, each with checks and a script', () => {
    const tasks = loadTaskSet(LOCAL);
    expect(tasks.length).toBeGreaterThanOrEqual(12);
    expect(sitePlaceholders(tasks)).toEqual(['demo', 'fixture', 'scripted']);
    for (const t of tasks) {
      expect(t.checks.length).toBeGreaterThan(0);
      expect(t.model?.model).toMatch(/^eval-/);
    }
  });

  it('reads WebVoyager tasks with their reference answers keyed by site and id', () => {
    const tasks = loadTaskSet(path.join(FIX, 'webvoyager.jsonl'), {
      answers: path.join(FIX, 'webvoyager-answers.json'),
    });
    expect(tasks.map((t) => [t.id, t.site, t.startUrl])).toEqual([
      ['Allrecipes--0', 'Allrecipes', 'https://www.allrecipes.com/'],
      ['Allrecipes--1', 'Allrecipes', 'https://www.allrecipes.com/'],
      ['GitHub--3', 'GitHub', 'https://github.com/'],
    ]);
    expect(tasks[1]?.instruction).toBe('Find a vegan chocolate chip cookie recipe with over 60 reviews.');
    expect(tasks[0]?.referenceAnswer).toBe('Vegetarian Four Cheese Lasagna, 4.6 stars, 181 reviews');
    expect(tasks[2]?.referenceAnswer).toBe('varies by week');
  });

  it('reads Online-Mind2Web tasks (a JSON array): level, site, and a scheme for a bare website', () => {
    const tasks = loadTaskSet(path.join(FIX, 'mind2web.json'));
    expect(tasks.map((t) => [t.id, t.level, t.site, t.startUrl])).toEqual([
      ['0a9d5b7c3e1f', 'medium', 'www.kayak.com', 'https://www.kayak.com/'],
      ['1b2c3d4e5f60', 'easy', 'ikea.com', 'https://ikea.com'],
      ['2c3d4e5f6071', 'hard', 'www.bestbuy.com', 'https://www.bestbuy.com/'],
    ]);
    expect(tasks[0]?.instruction).toBe('Find the cheapest one-way flight from Boston to Denver next Friday.');
  });

  it('tells the formats apart by their field names', () => {
    expect(detectFormat({ web_name: 'x', ques: 'q' })).toBe('webvoyager');
    expect(detectFormat({ task_id: 'x', confirmed_task: 'q' })).toBe('mind2web');
    expect(detectFormat({ id: 'x', instruction: 'q' })).toBe('local');
  });

  it.each([
    ['bad-local.jsonl', "bad-local.jsonl:3: field 'checks.0.value': Invalid input: expected number, received string"],
    [
      'bad-mind2web.jsonl',
      "bad-mind2web.jsonl:2: field 'confirmed_task': Invalid input: expected string, received undefined",
    ],
  ])('refuses a bad entry in %s with one line naming the line and field', (file, message) => {
    const err = (() => {
      try {
        loadTaskSet(path.join(FIX, file));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TaskSetError);
    expect((err as Error).message).toBe(message);
    expect((err as Error).message).not.toContain('\n');
  });

  it('refuses a missing file and a repeated id', () => {
    expect(() => loadTaskSet(path.join(FIX, 'nope.jsonl'))).toThrow(/cannot read the task set .*nope\.jsonl: ENOENT/);
    const tasks = loadTaskSet(LOCAL);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
  });

  it.each([
    [{ id: 'fx-*' }, 11],
    [{ id: 'demo-booking' }, 1],
    [{ id: '^demo-(site|no)' }, 2],
    [{ tag: 'expected-fail' }, 5],
    [{ level: 'hard' }, 1],
    [{ tag: 'price', first: 2 }, 2],
  ])('filters %j', (filter, count) => {
    expect(filterTasks(loadTaskSet(LOCAL), filter)).toHaveLength(count);
  });

  it('replaces site placeholders and names an unknown one', () => {
    expect(substituteSites('{{demo}}/_bookings', { demo: 'http://127.0.0.1:9/' }, 'x')).toBe(
      'http://127.0.0.1:9/_bookings',
    );
    expect(() => substituteSites('{{shop}}/', {}, 'task t1')).toThrow(
      "task t1: no site named 'shop' (give it with --site shop=URL)",
    );
  });

  it('builds each task run input: placeholders resolved, the per-task model, a bad field named', () => {
    const [first] = loadTaskSet(LOCAL);
    const sites = { fixture: 'http://127.0.0.1:1', demo: 'http://127.0.0.1:2', scripted: 'http://127.0.0.1:3/v1' };
    const spec = taskSpec(first!, 0, { path: LOCAL, sites }, { maxSteps: 9 });
    expect(spec.input).toMatchObject({
      startUrl: 'http://127.0.0.1:1/',
      maxSteps: 9,
      model: { endpoint: 'default', baseUrl: 'http://127.0.0.1:3/v1', model: 'eval-fx-lisbon-price' },
    });
    expect(() => taskSpec({ ...first!, startUrl: 'javascript:alert(1)' }, 0, { path: LOCAL, sites }, {})).toThrow(
      /^task fx-lisbon-price: field 'startUrl': /,
    );
  });

  it("carries a task's page_js scripts to its run as final-page probes (each once, in order)", () => {
    const [first] = loadTaskSet(LOCAL);
    const sites = { fixture: 'http://127.0.0.1:1', scripted: 'http://127.0.0.1:3/v1' };
    expect(taskSpec(first!, 0, { path: LOCAL, sites }, {}).input.finalPageProbes).toEqual([
      "document.getElementById('price')?.textContent",
    ]);
    const checks: Check[] = [
      { type: 'page_js', script: 'document.title' },
      { type: 'answer_contains', value: 'x' },
      { type: 'page_js', script: 'location.pathname', equals: '/a' },
      { type: 'page_js', script: 'document.title', equals: 'T' },
    ];
    expect(pageProbesOf(checks)).toEqual(['document.title', 'location.pathname']);
    expect(taskSpec({ ...first!, checks: [] }, 0, { path: LOCAL, sites }, {}).input).not.toHaveProperty(
      'finalPageProbes',
    );
  });

  it("carries a task's saved sign-in (and its refresh) to its run; a bad name or a refresh of nothing is named", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-signin-'));
    const file = path.join(dir, 'signin.jsonl');
    const write = (...lines: object[]) =>
      fs.writeFileSync(file, lines.map((l, i) => JSON.stringify({ id: `t${i}`, instruction: 'x', ...l })).join('\n'));
    write({ signin: 'shop', signin_refresh: true }, { signin: 'shop' }, {});
    const tasks = loadTaskSet(file);
    expect(tasks.map((t) => [t.signin, t.signinRefresh])).toEqual([
      ['shop', true],
      ['shop', undefined],
      [undefined, undefined],
    ]);
    const specs = tasks.map((t, i) => taskSpec(t, i, { path: file }, {}).input);
    expect(specs[0]).toMatchObject({ signin: 'shop', signinRefresh: true });
    expect(specs[1]).toMatchObject({ signin: 'shop' });
    expect(specs[1]).not.toHaveProperty('signinRefresh');
    expect(specs[2]).not.toHaveProperty('signin');
    // A desktop task cannot have one: the task contract says so, naming the task.
    expect(() => taskSpec(tasks[0]!, 0, { path: file }, { taskDefaults: { environment: 'desktop' } })).toThrow(
      /^task t0: field 'signin': /,
    );
    write({}, { signin: 'Shop Login' });
    expect(() => loadTaskSet(file)).toThrow(/^signin\.jsonl:2: field 'signin': a sign-in name: lower-case letters/);
    write({ signin_refresh: true });
    expect(() => loadTaskSet(file)).toThrow("signin.jsonl:1: field 'signin_refresh': needs a signin to save back to");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a page_js script that is no JavaScript expression, naming the line and field', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-js-'));
    const file = path.join(dir, 'js.jsonl');
    const line = (script: string) =>
      JSON.stringify({ id: 't1', instruction: 'x', checks: [{ type: 'page_js', script }] });
    fs.writeFileSync(file, `${line('document.title')}\n`);
    expect(loadTaskSet(file)[0]?.checks).toEqual([{ type: 'page_js', script: 'document.title' }]);
    fs.writeFileSync(file, `${line('document.title')}\n${line('if (x) {')}\n`.replace('"t1"', '"t0"'));
    expect(() => loadTaskSet(file)).toThrow(/^js\.jsonl:2: field 'checks\.0\.script': not a JavaScript expression \(/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('a task set in the run store (store:KEY)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  /** A folder store holding the shipped set and the WebVoyager fixtures under evalsets/. */
  function storeWithSets(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-store-'));
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'evalsets'));
    fs.copyFileSync(LOCAL, path.join(dir, 'evalsets', 'web.jsonl'));
    fs.copyFileSync(path.join(FIX, 'webvoyager.jsonl'), path.join(dir, 'evalsets', 'wv.jsonl'));
    fs.copyFileSync(path.join(FIX, 'webvoyager-answers.json'), path.join(dir, 'evalsets', 'wv-answers.json'));
    fs.copyFileSync(path.join(FIX, 'bad-local.jsonl'), path.join(dir, 'evalsets', 'bad.jsonl'));
    return dir;
  }
  const noStore = () => {
    throw new Error('the store was opened for a file');
  };

  it.each([
    ['store:evalsets/web.jsonl', 'evalsets/web.jsonl'],
    ['store:web.jsonl', 'web.jsonl'],
    ['/abs/web.jsonl', null],
    ['eval/tasks/store:x.jsonl', null],
  ])('reads %j as the store key %j', (source, key) => {
    expect(storeKeyOf(source)).toBe(key);
  });

  it.each(['store:', 'store:/etc/passwd', 'store:../outside.jsonl', 'store:evalsets//web.jsonl', 'store:a/./b'])(
    'refuses the key of %j (it must stay inside the store)',
    (source) => {
      expect(() => storeKeyOf(source)).toThrow(TaskSetError);
      expect(() => storeKeyOf(source)).toThrow(
        `${source}: a store key is a relative path like store:evalsets/web.jsonl`,
      );
    },
  );

  it('reads the set (and WebVoyager answers) from the store, relative to runsDir; a file never opens the store', async () => {
    const dir = storeWithSets();
    const store = () => new LocalRunStore(dir);
    const fromStore = await loadTaskSetFrom({ path: 'store:evalsets/web.jsonl' }, store);
    expect(fromStore).toEqual(loadTaskSet(LOCAL));
    const wv = await loadTaskSetFrom(
      { path: 'store:evalsets/wv.jsonl', answers: 'store:evalsets/wv-answers.json' },
      store,
    );
    expect(wv[0]?.referenceAnswer).toBe('Vegetarian Four Cheese Lasagna, 4.6 stars, 181 reviews');
    expect(await loadTaskSetFrom({ path: LOCAL }, noStore)).toHaveLength(fromStore.length);
    await expect(loadTaskSetFrom({ path: 'store:evalsets/bad.jsonl' }, store)).rejects.toThrow(
      "bad.jsonl:3: field 'checks.0.value': Invalid input: expected number, received string",
    );
  });

  it('names a missing object, and where it looked, in one line', async () => {
    const dir = storeWithSets();
    const err = await readSource('store:evalsets/nope.jsonl', () => new LocalRunStore(dir), 'task set').catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TaskSetError);
    expect((err as Error).message).toBe(
      `task set store:evalsets/nope.jsonl: no such object in the run store (${path.join(dir, 'evalsets', 'nope.jsonl')})`,
    );
    await expect(readSource(path.join(dir, 'nope.json'), noStore, 'reference answers')).rejects.toThrow(
      /^cannot read the reference answers .*nope\.json: ENOENT$/,
    );
  });

  it('the activities read it through the configured store: count and pages, a missing key not retried', async () => {
    const dir = storeWithSets();
    const acts = createEvalActivities({ config: configFromObject({ runsDir: dir }) });
    const sites = { fixture: 'http://127.0.0.1:1', demo: 'http://127.0.0.1:2', scripted: 'http://127.0.0.1:3/v1' };
    const taskSet = { path: 'store:evalsets/web.jsonl', sites, filter: { id: 'fx-*' } };
    expect(await acts.evalTaskCount({ taskSet, options: {} })).toBe(11);
    const page = await acts.evalTaskPage({ taskSet, options: {}, offset: 10, limit: 5 });
    expect(page.map((p) => [p.index, p.taskId])).toEqual([[10, 'fx-dead-endpoint']]);
    // Edited in the store: the next call reads the new text.
    fs.writeFileSync(path.join(dir, 'evalsets', 'web.jsonl'), fs.readFileSync(LOCAL, 'utf8').split('\n')[0] ?? '');
    expect(await acts.evalTaskCount({ taskSet, options: {} })).toBe(1);
    const missing = await acts
      .evalTaskCount({ taskSet: { ...taskSet, path: 'store:evalsets/gone.jsonl' }, options: {} })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApplicationFailure);
    expect(missing).toMatchObject({ nonRetryable: true, type: 'TaskSetError' });
    expect((missing as Error).message).toBe(
      `task set store:evalsets/gone.jsonl: no such object in the run store (${path.join(dir, 'evalsets', 'gone.jsonl')})`,
    );
  });
});

describe('a worker reads local task sets only from its folders (whoever starts an evaluation names the file)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-folders-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const allowed = path.join(tmp, 'sets');
  const outside = path.join(tmp, 'private');
  fs.mkdirSync(allowed);
  fs.mkdirSync(outside);
  fs.copyFileSync(LOCAL, path.join(allowed, 'mine.jsonl'));
  fs.copyFileSync(LOCAL, path.join(outside, 'theirs.jsonl'));
  fs.writeFileSync(path.join(allowed, 'creds.jsonl'), 'aws_secret_access_key = AKIA-NOT-FOR-YOU\n');
  fs.symlinkSync(path.join(outside, 'theirs.jsonl'), path.join(allowed, 'link.jsonl'));
  const sites = { fixture: 'http://127.0.0.1:1', demo: 'http://127.0.0.1:2', scripted: 'http://127.0.0.1:3/v1' };
  const acts = (taskSetDirs: string[]) =>
    createEvalActivities({
      config: configFromObject({ runsDir: path.join(tmp, 'runs'), evaluation: { taskSetDirs } }),
    });
  const count = (a: ReturnType<typeof acts>, file: string) =>
    a.evalTaskCount({ taskSet: { path: file, sites, filter: {} }, options: {} }).catch((e: unknown) => e);
  const refusal = (file: string) =>
    `the task set ${file} is not in a folder this worker reads task sets from (` +
    `${path.resolve(__dirname, '../../eval/tasks')}, ${allowed}): give it as store:KEY, or add its folder to the ` +
    "worker's evaluation.taskSetDirs";

  it("reads the project's eval/tasks and the configured folders", async () => {
    expect(await count(acts([]), LOCAL)).toBe(14);
    expect(await count(acts([allowed]), path.join(allowed, 'mine.jsonl'))).toBe(14);
  });

  it.each([
    ['a file elsewhere', () => path.join(outside, 'theirs.jsonl')],
    ['a file that does not exist (its existence is not told)', () => path.join(outside, 'nothing.jsonl')],
    ['a system file', () => '/etc/passwd'],
    ['a path climbing out', () => path.join(allowed, '..', 'private', 'theirs.jsonl')],
    ['a relative path', () => 'eval/tasks/local.jsonl'],
  ])('refuses %s, without reading it, and does not retry', async (_name, file) => {
    const err = await count(acts([allowed]), file());
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ nonRetryable: true, type: 'TaskSetError', message: refusal(file()) });
  });

  it('refuses a symbolic link out of its folders', async () => {
    const link = path.join(allowed, 'link.jsonl');
    expect(await count(acts([allowed]), link)).toMatchObject({ type: 'TaskSetError', message: refusal(link) });
  });

  it('a file that is not a task set is refused without quoting its words', async () => {
    const err = (await count(acts([allowed]), path.join(allowed, 'creds.jsonl'))) as Error;
    expect(err.message).toBe('creds.jsonl:1: not valid JSON (an unexpected character)');
  });
});
