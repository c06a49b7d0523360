// A third environment from code: an application hosts the worker with an environment of its own (here a "raw page":
// a Playwright page the application drives itself, as a remote-browser service or a VNC bridge would be) and an
// activity of its own. A task naming the environment runs in it like a browser task: every action reaches the
// application's session in viewport coordinates, each step is recorded with its screenshots, a question closes the
// session and the reply re-opens it where it was; a task naming an environment no worker hosts fails at once, saying
// so; the application's workflow calls its own activity and starts an agent task as a child.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, Page } from 'playwright';
import { NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { chromiumPath } from '../../src/infra/paths';
import { EnvironmentSessionLostError } from '../../src/environments/plugin';
import type { CustomEnvironment, EnvironmentSession } from '../../src/environments/plugin';
import { ConfigError } from '../../src/common/config-error';
import { readRun } from '../../src/trajectory/reader';
import { createWorkerRuntime, quietBundler } from '../../worker/main';
import type { WorkerRuntime } from '../../worker/main';
import { replyToTask, validateTaskInput } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { eventually, FAST_TIMING, startHarness, untilWaiting } from './harness';
import type { Harness } from './harness';

let h: Harness;
let browser: Browser;
let runtime: WorkerRuntime;
let running: Promise<void>;
const calls: string[] = [];
let opened: { taskId: string; url: string | null; restore: boolean; screen: { width: number; height: number } }[] = [];
let closed = 0;

/**
 * The application's environment: each session a page it drives with Playwright's mouse and keyboard. `fault`: the
 * first session (or, `every`, each session) throws `error()` at screenshot number `at` (and, `every`, at each one
 * after it).
 */
function rawPageEnv(name: string, fault?: { at: number; error: () => Error; every?: boolean }): CustomEnvironment {
  let sessionsOpened = 0;
  return {
    name,
    async open(req) {
      opened.push({ taskId: req.taskId, url: req.url, restore: req.restore, screen: req.screen });
      const losing = fault !== undefined && (++sessionsOpened === 1 || fault.every === true);
      let shots = 0;
      const context = await browser.newContext({ viewport: req.screen });
      const page: Page = await context.newPage();
      if (req.url) await page.goto(req.url);
      const click = async (x: number, y: number, clickCount = 1, button: 'left' | 'right' = 'left') => {
        calls.push(`click ${x},${y}${clickCount > 1 ? ` ×${clickCount}` : ''}${button === 'right' ? ' right' : ''}`);
        await page.mouse.click(x, y, { clickCount, button });
      };
      const session: EnvironmentSession = {
        leftClick: (x, y) => click(x, y),
        doubleClick: (x, y) => click(x, y, 2),
        tripleClick: (x, y) => click(x, y, 3),
        rightClick: (x, y) => click(x, y, 1, 'right'),
        mouseMove: (x, y) => page.mouse.move(x, y),
        leftClickDrag: async () => {
          throw new Error('drag is not supported by raw-page');
        },
        async type(text, options) {
          calls.push(`type ${text}${options.pressEnter ? ' ⏎' : ''}`);
          if (options.at) await page.mouse.click(options.at.x, options.at.y);
          await page.keyboard.type(text);
          if (!options.pressEnter) return;
          const navigated = page.waitForEvent('framenavigated', { timeout: 5000 }).catch(() => undefined);
          await page.keyboard.press('Enter');
          await navigated;
          await page.waitForLoadState();
        },
        keys: (chord) => page.keyboard.press(chord.join('+')),
        scroll: (dx, dy) => page.mouse.wheel(dx, dy),
        visitUrl: async (url) => void (await page.goto(url)),
        historyBack: () => page.goBack(),
        wait: (seconds) => page.waitForTimeout(seconds * 1000),
        pageMarkdown: () => page.innerText('body'),
        screenshot: async () => {
          shots += 1;
          if (fault && losing && (shots === fault.at || (fault.every && shots > fault.at))) throw fault.error();
          return page.screenshot({ type: 'png' });
        },
        url: () => page.url(),
        pageContext: async () => `raw-page at ${page.url()} (${await page.title()})`,
        async close() {
          closed += 1;
          await context.close();
        },
      };
      return session;
    },
  };
}
const rawPage = rawPageEnv('raw-page');

beforeAll(async () => {
  h = await startHarness({ worker: false });
  browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  const connection = await NativeConnection.connect({ address: h.server.address });
  runtime = await createWorkerRuntime(h.config, {
    connection,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: path.resolve(__dirname, '../fixtures/workflows/with-app.ts'),
      logger: quietBundler,
    }),
    environments: [
      rawPage,
      rawPageEnv('flaky-page', {
        at: 2,
        error: () => new EnvironmentSessionLostError('the kiosk dropped its connection'),
      }),
      rawPageEnv('glitchy-page', { at: 2, error: () => new Error('display not ready') }),
      rawPageEnv('dark-page', { at: 1, error: () => new TypeError('no frame from the display'), every: true }),
    ],
    activities: { appNote: async (text: string) => `noted: ${text}` },
  });
  running = runtime.run().finally(() => connection.close());
}, 120_000);

afterAll(async () => {
  await runtime?.shutdown();
  await running;
  await browser?.close();
  await h?.close();
});

function input(script: string, extra: Record<string, unknown> = {}) {
  return validateTaskInput({
    runId: `it-env-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
    instruction: 'Search hotels in the city I want.',
    startUrl: `${h.site.url}/`,
    timing: FAST_TIMING,
    environment: 'raw-page',
    model: { endpoint: 'default', baseUrl: h.model.url, model: script },
    ...extra,
  });
}

/** Runs a task that must fail: its failure's message and details (the task result, with its end reason). */
async function failureOf(task: ReturnType<typeof input>): Promise<{ details?: unknown[]; message: string }> {
  const handle = await h.client.workflow.start('agentTask', {
    taskQueue: h.config.taskQueue,
    workflowId: task.runId,
    args: [task],
  });
  const err = await handle.result().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  return (err as WorkflowFailedError).cause as { details?: unknown[]; message: string };
}

describe('an environment of the application’s own (createAgentWorker environments)', () => {
  it('runs a task in it like a browser task: actions, records, and a question that closes and re-opens it', async () => {
    calls.length = 0;
    opened = [];
    closed = 0;
    const task = input('ask-city');
    const handle = await h.client.workflow.start('agentTask', {
      taskQueue: h.config.taskQueue,
      workflowId: task.runId,
      args: [task],
    });
    const waiting = await untilWaiting(handle);
    expect(waiting.question?.text).toBe('Which city should I search in?');
    await eventually(async () => closed === 1, 10_000, 'the session to be closed while the task waits');
    await replyToTask(h.client, task.runId, 'Lisbon');
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'Searched Lisbon as you asked.' });
    // The model's coordinates (the fara-1.5 profile's space) reach the session as viewport pixels.
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(/^click \d+,\d+$/);
    expect(calls[1]).toBe('type Lisbon ⏎');
    expect(opened).toEqual([
      { taskId: task.runId, url: `${h.site.url}/`, restore: false, screen: { width: 1440, height: 900 } },
      { taskId: task.runId, url: `${h.site.url}/`, restore: true, screen: { width: 1440, height: 900 } },
    ]);
    expect(closed).toBe(2);
    // Recorded as a browser run is: pre and post screenshots, the tool outputs, the page context it gave.
    const run = await readRun(h.runDir(task.runId));
    const envObs = run.events.filter((e) => e.type === 'observation' && e.observation_type === 'environment');
    expect(envObs.length).toBeGreaterThanOrEqual(4);
    // The start page (step 0) first, from the session's first screenshot, as a browser run has it.
    expect(envObs[0]).toMatchObject({ id: 'step-0000-pre-g0', screenshot_path: 'screenshot_0_pre.png' });
    expect(envObs.map((e) => (e as { page_info?: string }).page_info)).toContain(
      `raw-page at ${h.site.url}/ (Harbor Hotels)`,
    );
    const last = envObs.at(-1) as { url?: string };
    expect(last.url).toMatch(/\/search\?q=Lisbon$/);
    expect(run.status).toBe('complete');
  }, 120_000);

  // The first session's second screenshot (the click's post screenshot) fails; the click is decided again.
  it.each([
    ['says it is lost (EnvironmentSessionLostError)', 'flaky-page'],
    ['throws any other error from its screenshot', 'glitchy-page'],
  ])(
    'opens it again when a session %s, and decides the step anew',
    async (_how, environment) => {
      calls.length = 0;
      opened = [];
      const task = input('click-then-finish', { environment });
      const handle = await h.client.workflow.start('agentTask', {
        taskQueue: h.config.taskQueue,
        workflowId: task.runId,
        args: [task],
      });
      expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'clicked' });
      expect(opened.map((o) => o.restore)).toEqual([false, true]);
      expect(opened[1]?.url).toBe(`${h.site.url}/`);
      expect(calls.filter((c) => c.startsWith('click'))).toHaveLength(2);
      const run = await readRun(h.runDir(task.runId));
      const restored = run.events.find((e) => (e.metadata as { note?: string }).note === 'session_restored');
      expect(JSON.stringify(restored)).toContain(`The ${environment} session was lost and opened again`);
    },
    60_000,
  );

  it('ends the task as an environment failure, saying why, when its screen never comes back', async () => {
    opened = [];
    const task = input('click-then-finish', { environment: 'dark-page' });
    const detail = await failureOf(task);
    expect(detail.message).toMatch(/its screenshot failed \(TypeError: no frame from the display\)/);
    expect((detail.details?.[0] as TaskResult).endReason).toBe('browser');
    // The first open and three more, then the step gives up.
    expect(opened.map((o) => o.restore)).toEqual([false, true, true, true]);
  }, 60_000);

  it('fails a task naming an environment this worker does not host, at once and saying so', async () => {
    const task = input('ask-city', { environment: 'vnc' });
    const detail = await failureOf(task);
    expect(detail.message).toMatch(
      /this worker hosts no environment 'vnc' \(it hosts browser, .*raw-page, flaky-page, glitchy-page, dark-page\)/,
    );
    expect((detail.details?.[0] as TaskResult).endReason).toBe('browser');
  }, 60_000);

  it("runs the application's own workflow: its own activity, and an agent task as a child", async () => {
    const task = input('click-then-finish', { environment: 'browser' });
    const out = (await h.client.workflow.execute('appFlow', {
      taskQueue: h.config.taskQueue,
      workflowId: `app-${task.runId}`,
      args: [task],
    })) as { note: string; result: TaskResult };
    expect(out.note).toBe(`noted: starting ${task.runId}`);
    expect(out.result.status).toBe('complete');
  }, 60_000);

  it('refuses an activity name of the agent’s and a bad environment name, in one line', async () => {
    const connection = await NativeConnection.connect({ address: h.server.address });
    try {
      await expect(
        createWorkerRuntime(h.config, { connection, activities: { decide: async () => 'x' } }),
      ).rejects.toThrow(new ConfigError("activity 'decide' is one of the agent's own; give yours another name"));
      await expect(
        createWorkerRuntime(h.config, { connection, environments: [{ ...rawPage, name: 'desktop' }] }),
      ).rejects.toThrow("environment name 'desktop' is built in; give yours another name");
      await expect(
        createWorkerRuntime(h.config, { connection, environments: [{ ...rawPage, name: 'Raw Page' }] }),
      ).rejects.toThrow(/environment name 'Raw Page': lower-case letters/);
    } finally {
      await connection.close();
    }
  });
});
