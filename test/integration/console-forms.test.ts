// The web console's forms and what it shows (issue 29), driven in Chromium: a task started from the list page's form
// on a priced model endpoint runs to completion and the list shows its cost; bad form input gets its one-line error;
// a fork at a step from the task page starts (and completes) the fork; payloads are encrypted (the workers' keys),
// and a console without the key shows the placeholder; secret values show only as their placeholders; the start
// form offers the saved sign-ins, refuses a name not saved, and starts a task on one (saved back when asked); the
// schedules page's form creates a schedule (its runs' task as the start form's), a bad cron refused with nothing lost.
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, BrowserContext, Page } from 'playwright';
import { AgentClient, parseTask } from '../../client/client';
import { firstInput } from '../../client/control';
import { newTaskOf } from '../../client/new-task';
import { replyToTask } from '../../client/tasks';
import { consoleDataConverter } from '../../console/codec';
import { CostColumn } from '../../console/cost';
import { ENCRYPTED_PLACEHOLDER } from '../../console/sealed-payloads';
import { knownSecrets } from '../../console/secrets';
import { startConsole } from '../../console/server';
import type { ConsoleServer } from '../../console/server';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { chromiumPath } from '../../src/infra/paths';
import type { Config } from '../../src/runtime/config';
import { signinStoreFor } from '../../src/runtime/signins';
import { openRunStore } from '../../src/trajectory/open-store';
import { readRun } from '../../src/trajectory/reader';
import { dollars, usageTotals } from '../../src/trajectory/usage';
import { eventually, untilWaiting } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

const TOKEN = 'console-forms-test-token-0123456789';
const PASSWORD = 'hunter2-correct-horse';
const ANSWER = 'Harbor View Lisbon costs €120 per night.';
// Dollars per million tokens: the scripted model reports its tokens, so each call has a cost.
const PRICE = { input: 2, output: 8 };

let h: Harness;
let browser: Browser;
/** The console with the workers' keys, and one without any (its operator has no key). */
const withKey: { server?: ConsoleServer; context?: BrowserContext } = {};
const noKey: { server?: ConsoleServer; context?: BrowserContext } = {};

useHarness((harness) => (h = harness), {
  worker: false,
  env: { CUA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` },
});

async function consoleOf(config: Pick<Config, 'encryption' | 'secrets'>, into: typeof withKey): Promise<void> {
  const client = new Client({ connection: h.client.connection, dataConverter: consoleDataConverter(config) });
  into.server = await startConsole({
    agent: new AgentClient(client, h.config.taskQueue, () => openRunStore(h.config)),
    store: () => openRunStore(h.config),
    token: TOKEN,
    port: 0,
    pollMs: 300,
    endpoints: Object.keys(h.config.models),
    secrets: knownSecrets(config),
  });
  into.context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await into.context.newPage();
  await page.goto(`${into.server.url}/?token=${TOKEN}`);
  await page.close();
}

beforeAll(async () => {
  // The workers' config: a named, priced endpoint on the scripted model (the script is its model name), a secret.
  h.config.models = { scripted: { baseUrl: h.model.url, model: 'book-lisbon', price: PRICE } };
  h.config.secrets = { SITE_PASSWORD: { value: PASSWORD, hosts: [new URL(h.site.url).host] } };
  await h.startWorker();
  browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  await consoleOf(h.config, withKey);
  await consoleOf({}, noKey);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await withKey.server?.close();
  await noKey.server?.close();
});

const open = async (on: typeof withKey, path: string): Promise<Page> => {
  const page = await on.context!.newPage();
  await page.goto(`${on.server!.url}${path}`);
  return page;
};

/** Fills the list page's start form and submits it. */
async function startForm(
  page: Page,
  fields: { instruction: string; url?: string; endpoint?: string; steps?: string },
): Promise<void> {
  if (!(await page.locator('#start-form').isVisible())) await page.click('#start-box summary');
  await page.fill('#start-instruction', fields.instruction);
  await page.fill('#start-url', fields.url ?? '');
  await page.fill('#start-steps', fields.steps ?? '');
  // A name the select does not offer (a stale page, a hand-made request) is refused by the server.
  await page.evaluate((name) => {
    const select = document.querySelector<HTMLSelectElement>('#start-endpoint')!;
    if (!Array.from(select.options).some((o) => o.value === name)) select.add(new Option(name, name));
    select.value = name;
  }, fields.endpoint ?? 'scripted');
  await page.click('#start-send');
}

let started = '';

describe('start a task from the form', () => {
  it('starts it as `cua run` would, on the chosen endpoint; it completes and the list shows its cost', async () => {
    const page = await open(withKey, '/');
    expect(await page.locator('#start-endpoint option').allTextContents()).toEqual(['scripted']);
    await startForm(page, {
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      url: `${h.site.url}/`,
      steps: '12',
    });
    await page.waitForURL(/\/tasks\/task-/);
    started = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await page.locator('#status', { hasText: 'complete' }).waitFor({ timeout: 60_000 });
    await page.locator('#answer', { hasText: ANSWER }).waitFor();
    expect(await page.locator('#instruction').textContent()).toBe(
      'Find the nightly price of the first hotel in Lisbon.',
    );
    expect(await page.locator('#step').textContent()).toMatch(/^step 5( of 12)?$/); // "of N" while it is open

    // The input the form built: the named endpoint, the URL, the step budget; the defaults of `cua run` otherwise.
    const run = await readRun(h.runDir(started));
    const totals = usageTotals(run.events);
    expect(totals).toMatchObject({ calls: 6, unpricedCalls: 0 }); // 5 decisions and read_page's question
    expect(totals.costUsd).toBeGreaterThan(0);
    const { runId: taskId, ...input } = await firstInput(h.client, started);
    const { runId: _id, ...asRun } = parseTask(
      newTaskOf({
        instruction: 'Find the nightly price of the first hotel in Lisbon.',
        startUrl: `${h.site.url}/`,
        maxSteps: 12,
        endpoint: 'scripted',
      }),
    );
    expect(taskId).toBe(started);
    expect(input).toEqual(asRun);
    expect(input).toMatchObject({ environment: 'browser', model: { endpoint: 'scripted' }, maxSteps: 12 });

    // The task page's usage line and the list's cost column say the same dollars.
    const cost = dollars(totals.costUsd);
    await page.locator('#marks', { hasText: '6 model calls' }).waitFor();
    expect(await page.locator('#marks').textContent()).toContain(cost);
    const list = await open(withKey, '/');
    const row = list.locator(`#tasks tr[data-id="${started}"]`);
    await row.waitFor();
    expect(await row.locator('td.cost').textContent()).toBe(cost);
    // The same from the run folder, for a task that publishes no CuaCost (one from before it, or another client's).
    const [listed] = await new AgentClient(h.client, h.config.taskQueue)
      .list({ limit: 50 })
      .then((rows) => rows.filter((r) => r.id === started));
    expect(listed?.cost).toBeCloseTo(totals.costUsd, 9);
    const [fromFolder] = await new CostColumn(() => openRunStore(h.config)).fill([{ ...listed!, cost: null }]);
    expect(fromFolder?.costShown).toBe(cost);
    await Promise.all([page.close(), list.close()]);
  }, 120_000);

  it('shows the one-line error of a bad field in the form, and starts nothing', async () => {
    const page = await open(withKey, '/');
    const before = (await h.client.workflow.count("WorkflowType = 'agentTask'")).count;
    const cases: [Parameters<typeof startForm>[1], RegExp][] = [
      [{ instruction: 'x', url: 'not a url' }, /^invalid task: startUrl: /],
      [{ instruction: 'x', url: `${h.site.url}/`, steps: '0' }, /^invalid task: maxSteps: /],
      [{ instruction: 'x', url: `${h.site.url}/`, steps: '10001' }, /^invalid task: maxSteps: /],
      [
        { instruction: 'x', url: `${h.site.url}/`, steps: 'ten' },
        /^invalid task: maxSteps: must be a whole number; got 'ten'$/,
      ],
      [
        { instruction: 'x', endpoint: 'gpt-nope' },
        /^invalid task: model: no endpoint named 'gpt-nope' in the config's models \(scripted\)$/,
      ],
      [{ instruction: '  ', url: `${h.site.url}/` }, /^invalid task: instruction: instruction must not be empty$/],
    ];
    for (const [fields, error] of cases) {
      await page.evaluate(() => (document.querySelector('#start-error')!.textContent = ''));
      await startForm(page, fields);
      await page.locator('#start-error', { hasText: /\S/ }).waitFor();
      expect(await page.locator('#start-error').textContent()).toMatch(error);
      expect(page.url()).toBe(`${withKey.server!.url}/`);
    }
    expect((await h.client.workflow.count("WorkflowType = 'agentTask'")).count).toBe(before);
    // The start is a POST like the controls: without the page's CSRF token it is refused.
    const status = await page.evaluate(
      async () =>
        (await fetch('/api/tasks', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }))
          .status,
    );
    expect(status).toBe(403);
    await page.close();
  });
});

describe('fork and best of N from the task page', () => {
  it('forks at a step: the fork starts in that step’s page, goes on with the same model and completes', async () => {
    if (!started) throw new Error('needs the task the form started');
    const page = await open(withKey, `/tasks/${started}`);
    await page.locator('#status', { hasText: 'complete' }).waitFor();
    await page.click('#steps li[data-step="2"] button.fork-step[data-what="fork"]');
    expect(await page.locator('#fork-step-label').textContent()).toBe('2');
    await page.fill('#fork-hint', 'The first result is the hotel.');
    await page.click('#fork-send');
    const link = page.locator('#fork-result a');
    await link.waitFor();
    const forkId = (await link.textContent())!;
    expect(forkId).toMatch(new RegExp(`^${started}-fork-2-[0-9a-f]{6}$`));
    expect(await link.getAttribute('href')).toBe(`/tasks/${forkId}`);
    expect(await h.client.workflow.getHandle(forkId).result()).toMatchObject({
      status: 'complete',
      answer: ANSWER,
      steps: 5,
    });
    const run = await readRun(h.runDir(forkId));
    expect(run.task.metadata).toMatchObject({ fork_of: { run_id: started, step: 2 } });
    expect(JSON.stringify(run.events)).toContain('The first result is the hotel.');

    // The fork's own page says whose fork it is.
    await link.click();
    await page.waitForURL(new RegExp(`/tasks/${forkId}$`));
    await page.locator('#marks', { hasText: `fork of ${started} at step 2` }).waitFor();
    // Its cost is its own calls' (steps 3-5 and read_page's question), not the source's steps it inherited.
    const own = usageTotals(run.events);
    expect(own).toMatchObject({ calls: 4, unpricedCalls: 0 });
    expect(await page.locator('#marks').textContent()).toContain(`4 model calls`);
    expect(await page.locator('#marks').textContent()).toContain(dollars(own.costUsd));

    // A step without a saved page (the last, terminate) is refused in one line, and nothing starts.
    await page.goto(`${withKey.server!.url}/tasks/${started}`);
    await page.click('#steps li[data-step="5"] button.fork-step[data-what="fork"]');
    await page.click('#fork-send');
    await page.locator('#fork-error', { hasText: /\S/ }).waitFor();
    expect(await page.locator('#fork-error').textContent()).toMatch(new RegExp(`^cannot fork ${started} at step 5: `));
    expect(await page.locator('#fork-result').textContent()).toBe('');
    await page.close();
  }, 120_000);

  it('starts best of N from a step: the branches are linked, each a fork of that step', async () => {
    const page = await open(withKey, `/tasks/${started}`);
    await page.locator('#status', { hasText: 'complete' }).waitFor();
    await page.click('#steps li[data-step="3"] button.fork-step[data-what="best"]');
    await page.fill('#best-n', '0');
    await page.click('#best-send');
    await page.locator('#fork-error', { hasText: /branches/ }).waitFor();
    expect(await page.locator('#fork-error').textContent()).toMatch(
      /^invalid task: branches: must be a whole number from 1 to \d+; got '0'$/,
    );
    await page.fill('#best-n', '2');
    await page.fill('#best-hints', 'Look closely.\nTake your time.');
    await page.click('#best-send');
    const links = page.locator('#fork-result a');
    await links.nth(1).waitFor();
    const branches = await links.allTextContents();
    expect(branches).toHaveLength(2);
    const parent = branches[0]!.replace(/-b1$/, '');
    expect(parent).toMatch(new RegExp(`^${started}-best-3-[0-9a-f]{6}$`));
    expect(branches).toEqual([`${parent}-b1`, `${parent}-b2`]);
    const record = await new AgentClient(h.client, h.config.taskQueue).branches(parent);
    expect(record).toMatchObject({ id: parent, source: { runId: started, step: 3 } });
    expect(record.branches.map((b) => b.runId)).toEqual(branches);
    for (const b of branches) {
      // The parent starts its branches as children, a moment after it starts.
      await eventually(
        () =>
          h.client.workflow
            .getHandle(b)
            .describe()
            .then(() => true),
        30_000,
        `branch ${b}`,
      );
      const result = await h.client.workflow.getHandle(b).result();
      expect(result).toMatchObject({ status: 'complete', answer: ANSWER });
    }
    await page.close();
  }, 120_000);
});

describe('what the console shows', () => {
  it('a console without the key shows the placeholder for the encrypted instruction and answer', async () => {
    if (!started) throw new Error('needs the task the form started');
    const list = await open(noKey, '/');
    const row = list.locator(`#tasks tr[data-id="${started}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    // The status and step are search attributes (the server indexes them, unencrypted); the instruction is not.
    expect(cells.slice(1, 4)).toEqual(['complete', '5', ENCRYPTED_PLACEHOLDER]);
    const page = await open(noKey, `/tasks/${started}`);
    await page.locator('#status', { hasText: 'complete' }).waitFor();
    expect(await page.locator('#instruction').textContent()).toBe(ENCRYPTED_PLACEHOLDER);
    expect(await page.locator('#answer').textContent()).toBe(`Answer: ${ENCRYPTED_PLACEHOLDER}`);
    // The run folder holds the same words: neither its steps nor its screenshots nor its report are shown.
    await page.locator('#marks', { hasText: 'this console has no key for its payloads' }).waitFor();
    expect(await page.locator('#steps li').count()).toBe(0);
    const shown = await page.evaluate(() => document.body.innerText);
    expect(shown).not.toContain(ANSWER);
    expect(shown).not.toContain('Find the nightly price');
    const status = (url: string) => page.evaluate(async (u) => (await fetch(u)).status, url);
    expect(await status(`/api/tasks/${started}/screenshot?file=screenshot_1_pre.png`)).toBe(403);
    expect(await status(`/tasks/${started}/report`)).toBe(403);
    // The console with the key reads them.
    const keyed = await open(withKey, `/tasks/${started}`);
    await keyed.locator('#answer', { hasText: ANSWER }).waitFor();

    // A task waiting for a person: listed first, its question the placeholder too.
    const asking = await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I name.' });
    await untilWaiting(asking);
    const waiting = list.locator(`#waiting tr[data-id="${asking.workflowId}"]`);
    await waiting.waitFor();
    const waitingCells = await waiting.locator('td').allTextContents();
    expect([waitingCells[1], waitingCells[3]]).toEqual([ENCRYPTED_PLACEHOLDER, ENCRYPTED_PLACEHOLDER]);
    await page.goto(`${noKey.server!.url}/tasks/${asking.workflowId}`);
    await page.locator('#question', { hasText: ENCRYPTED_PLACEHOLDER }).waitFor();
    expect(await page.evaluate(() => document.body.innerText)).not.toContain('Which city');
    await replyToTask(h.client, asking.workflowId, 'Lisbon');
    await Promise.all([list.close(), page.close(), keyed.close()]);
  }, 60_000);

  it('shows a secret only as its placeholder: the typed text in the steps, the instruction, the list', async () => {
    const handle = await h.start({
      script: 'type-secret',
      instruction: `Sign in with {{secret:SITE_PASSWORD}} (a person pasted it here: ${PASSWORD}).`,
    });
    expect(await handle.result()).toMatchObject({ status: 'complete', answer: 'typed' });
    const id = handle.workflowId;
    const page = await open(withKey, `/tasks/${id}`);
    await page.locator('#status', { hasText: 'complete' }).waitFor();
    expect(await page.locator('#steps').textContent()).toContain('{{secret:SITE_PASSWORD}}');
    expect(await page.locator('#instruction').textContent()).toBe(
      'Sign in with {{secret:SITE_PASSWORD}} (a person pasted it here: {{secret:SITE_PASSWORD}}).',
    );
    const list = await open(withKey, '/');
    await list.locator(`#tasks tr[data-id="${id}"]`).waitFor();
    for (const p of [page, list]) {
      expect(await p.evaluate(() => document.body.innerText)).not.toContain(PASSWORD);
    }
    const api = await page.evaluate(async (url) => (await fetch(url)).text(), `/api/tasks/${id}`);
    expect(api).toContain('{{secret:SITE_PASSWORD}}');
    expect(api).not.toContain(PASSWORD);
    await Promise.all([page.close(), list.close()]);
  }, 120_000);
});

describe('a saved sign-in from the start form', () => {
  const signins = () => signinStoreFor(h.config, openRunStore(h.config));
  const fill = async (page: Page, name: string, refresh: boolean) => {
    await page.evaluate(
      ([n, r]) => {
        const select = document.querySelector<HTMLSelectElement>('#start-signin')!;
        if (!Array.from(select.options).some((o) => o.value === n)) select.add(new Option(n, n));
        select.value = n;
        const box = document.querySelector<HTMLInputElement>('#start-signin-refresh');
        if (box) box.checked = r;
      },
      [name, refresh] as const,
    );
  };

  it('offers the saved names, refuses one not saved, and starts the task on the one chosen', async () => {
    expect(await signins().list()).toEqual([]);
    const none = await open(withKey, '/');
    await none.click('#start-box summary');
    expect(await none.locator('#start-signin').isDisabled()).toBe(true);
    expect(await none.locator('#start-signin').textContent()).toContain('npx cua signin save');
    expect(await none.locator('#start-signin-refresh').count()).toBe(0);

    const host = new URL(h.site.url).hostname;
    const cookie = { name: 'member', value: 'ada', domain: host, path: '/', expires: -1, httpOnly: true };
    await signins().save('demo', { cookies: [{ ...cookie, secure: false, sameSite: 'Lax' }], origins: [] }, 'seed');
    const page = await open(withKey, '/');
    await page.click('#start-box summary');
    expect(await page.locator('#start-signin option').allTextContents()).toEqual(['none', 'demo']);

    const before = (await h.client.workflow.count("WorkflowType = 'agentTask'")).count;
    const refusals: [string, boolean, RegExp][] = [
      ['ghost', false, /^invalid task: signin: no saved sign-in named 'ghost' \(saved: demo\)$/],
      ['', true, /^invalid task: signinRefresh: .*needs a signin/],
    ];
    for (const [name, refresh, error] of refusals) {
      await page.evaluate(() => (document.querySelector('#start-error')!.textContent = ''));
      await fill(page, name, refresh);
      await startForm(page, { instruction: 'x', url: `${h.site.url}/` });
      await page.locator('#start-error', { hasText: /\S/ }).waitFor();
      expect(await page.locator('#start-error').textContent()).toMatch(error);
    }
    expect((await h.client.workflow.count("WorkflowType = 'agentTask'")).count).toBe(before);

    await fill(page, 'demo', true);
    await startForm(page, {
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      url: `${h.site.url}/`,
    });
    await page.waitForURL(/\/tasks\/task-/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    expect(await firstInput(h.client, id)).toMatchObject({ signin: 'demo', signinRefresh: true });
    expect(await h.client.workflow.getHandle(id).result()).toMatchObject({ status: 'complete', answer: ANSWER });
    // Saved back when it ended: the task's own page state, with the cookie the sign-in gave it.
    const saved = await signins().load('demo');
    expect(saved?.fromTask).toBe(id);
    expect(saved?.storage.cookies.find((c) => c.name === 'member')?.value).toBe('ada');
    await Promise.all([none.close(), page.close()]);
  }, 120_000);
});

describe('a new schedule from the schedules page', () => {
  const name = `morning-check-${randomBytes(3).toString('hex')}`;
  const agent = () => new AgentClient(h.client, h.config.taskQueue);
  const fields = {
    '#sched-name': name,
    '#sched-instruction': 'Read the nightly price of the first hotel in Lisbon.',
    '#sched-url': '', // the fixture site's, below
    '#sched-steps': '10',
    '#sched-cron': '0 9 * *',
    '#sched-timezone': 'Europe/Lisbon',
    '#sched-notify': 'output.price < 100',
  };
  afterAll(
    async () =>
      void (await agent()
        .deleteSchedule(name)
        .catch(() => undefined)),
  );

  it('shows a bad cron in one line and keeps every field; then creates it, shows its page and lists it', async () => {
    fields['#sched-url'] = `${h.site.url}/`;
    const page = await open(withKey, '/schedules');
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.click('#schedule-box summary');
    for (const [sel, value] of Object.entries(fields)) await page.fill(sel, value);
    await page.selectOption('#sched-overlap', 'buffer_one');
    await page.click('#sched-send');
    await page.locator('#sched-error', { hasText: /\S/ }).waitFor();
    expect(await page.locator('#sched-error').textContent()).toMatch(
      /^invalid schedule: cron: '0 9 \* \*' has 4 field/,
    );
    expect(page.url()).toBe(`${withKey.server!.url}/schedules`);
    for (const [sel, value] of Object.entries(fields)) expect(await page.inputValue(sel)).toBe(value);
    expect(await page.inputValue('#sched-overlap')).toBe('buffer_one');
    expect((await agent().listSchedules()).map((s) => s.name)).not.toContain(name);

    await page.fill('#sched-cron', '0 9 * * 1-5');
    await page.click('#sched-send');
    await page.waitForURL(new RegExp(`/schedules/${name}$`));
    await page.locator('#detail-name', { hasText: name }).waitFor();
    expect(await page.locator('#detail-summary').textContent()).toMatch(
      /^cron 0 9 \* \* 1-5 \(Europe\/Lisbon\) · overlap buffer_one · active · notify when output\.price < 100 · next: /,
    );
    await page.locator(`#schedules a[href="/schedules/${name}"]`).waitFor();
    const described = { cron: '0 9 * * 1-5', timezone: 'Europe/Lisbon', overlap: 'buffer_one', paused: false };
    expect(await agent().describeSchedule(name)).toMatchObject({ ...described, notifyWhen: 'output.price < 100' });
    // Each run's task is the one the start form builds from the same fields.
    const { action } = await h.client.schedule.getHandle(name).describe();
    const input = action.type === 'startWorkflow' ? (action.args?.[0] as Record<string, unknown>) : {};
    const { runId: _r, schedule, ...asScheduled } = input;
    const choices = { instruction: fields['#sched-instruction'], startUrl: fields['#sched-url'], maxSteps: 10 };
    const { runId: _s, ...expected } = parseTask(newTaskOf({ ...choices, endpoint: 'scripted' }));
    expect(asScheduled).toEqual(expected);
    expect(schedule).toEqual({ name, notifyWhen: 'output.price < 100' });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('over HTTP with the token: a name taken is refused in one line; a cookie session needs its CSRF token', async () => {
    const body = JSON.stringify({
      name,
      instruction: 'x',
      startUrl: `${h.site.url}/`,
      endpoint: 'scripted',
      every: '1h',
    });
    const res = await fetch(`${withKey.server!.url}/api/schedules`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: `a schedule named ${name} already exists; delete it first or choose another name`,
    });
    const page = await open(withKey, '/schedules');
    const status = await page.evaluate(
      async (b) =>
        (await fetch('/api/schedules', { method: 'POST', body: b, headers: { 'content-type': 'application/json' } }))
          .status,
      body,
    );
    expect(status).toBe(403);
    await page.close();
  });
});
