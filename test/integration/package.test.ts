// The package as a user gets it: `npm pack` (which builds dist/), the tarball installed into an empty project, and a
// plain Node script there that imports `durable-cua/client` and `durable-cua/worker` — no tsx, no repo sources. The
// script hosts a worker (model endpoint from its own resolver), starts a task whose scripted model asks a question,
// watches its steps, answers, and prints what it saw; a TypeScript file there type-checks against the shipped .d.ts.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_TIMING, startHarness } from './harness';
import type { Harness } from './harness';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let h: Harness;
let project: string;

/** npm without the repo's own settings leaking in (a test run under `npm test` exports npm_config_* variables). */
function npmEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('npm_')) delete env[key];
  delete env.NODE_OPTIONS;
  return env;
}

beforeAll(async () => {
  h = await startHarness({ worker: false });
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-pkg-'));
  // prepack runs `npm run build`: the tarball always holds freshly compiled dist/.
  const packed = await run(NPM, ['pack', '--pack-destination', project, '--json'], {
    cwd: ROOT,
    env: npmEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'cua-consumer', version: '1.0.0', private: true }),
  );
  // --prefer-offline: the repo's own install filled npm's cache with the same versions; a fresh machine fetches them.
  await run(NPM, ['install', path.join(project, filename), '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: project,
    env: npmEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
}, 300_000);

afterAll(async () => {
  await h?.close();
  if (project) fs.rmSync(project, { recursive: true, force: true });
});

const CONSUMER = String.raw`
import { createAgentClient, TaskNotFoundError, InvalidTaskInputError, TaskError } from 'durable-cua/client';
import { createAgentWorker } from 'durable-cua/worker';
import { WIRE_NAMES } from 'durable-cua/contract';

const env = JSON.parse(process.env.CONSUMER);
const resolved = [];
const worker = await createAgentWorker({
  config: {
    temporal: { address: env.address },
    taskQueue: env.taskQueue,
    runsDir: env.runsDir,
    browser: { maxSessions: 1 },
    desktop: { maxSessions: 0 },
  },
  // No models in the config: the scripted model comes from the application's resolver.
  modelEndpoints: ({ name, taskId }) => {
    resolved.push(name + ':' + taskId);
    return name === 'default' ? { baseUrl: env.modelUrl, model: 'ask-city' } : undefined;
  },
});
const running = worker.run();
const agent = await createAgentClient({ temporal: { address: env.address }, taskQueue: env.taskQueue });
const out = { events: [], errors: {}, wire: WIRE_NAMES };
try {
  try {
    await agent.start({ instruction: ' ' });
  } catch (err) {
    out.errors.invalid = [err.name, err instanceof InvalidTaskInputError, err instanceof TaskError, err.message];
  }
  try {
    await agent.reply('no-such-task', 'Lisbon');
  } catch (err) {
    out.errors.notFound = [err.name, err instanceof TaskNotFoundError, err.message];
  }
  const { id } = await agent.start({
    instruction: 'Search hotels in the city I want.',
    startUrl: env.siteUrl,
    timing: env.timing,
  });
  out.id = id;
  for await (const event of agent.watch(id, { pollMs: 200 })) {
    if (event.type === 'step') out.events.push('step ' + event.step.step + ' ' + event.step.action);
    if (event.type === 'status') {
      out.events.push('status ' + event.status.status);
      if (event.status.status === 'waiting_for_user') {
        out.question = event.status.question;
        await agent.reply(id, 'Lisbon', { questionId: event.status.question.id });
      }
    }
    if (event.type === 'end') out.result = event.result;
  }
  out.steps = (await agent.steps(id)).map((s) => s.action);
  out.status = (await agent.status(id)).status;
  out.resolved = resolved.length > 0 && resolved.every((r) => r === 'default:' + id);
} finally {
  await agent.close();
  await worker.shutdown();
  await running;
}
console.log('CONSUMER_RESULT ' + JSON.stringify(out));
`;

const TYPED = `
import { createAgentClient, TaskNotWaitingError } from 'durable-cua/client';
import type { AgentClient, TaskSnapshot, TaskState, WatchEvent } from 'durable-cua/client';
import { createAgentWorker, EnvironmentSessionLostError, runAgentWorker } from 'durable-cua/worker';
import type { CustomEnvironment, EnvironmentSession, ModelEndpointResolver } from 'durable-cua/worker';
import { replyUpdate, statusQuery } from 'durable-cua/contract';
import type { TaskStatus } from 'durable-cua/contract';

const resolver: ModelEndpointResolver = ({ name }) => (name === 'default' ? { baseUrl: 'http://x/v1', model: 'm' } : undefined);
export async function use(agent: AgentClient): Promise<string> {
  const state: TaskSnapshot = await agent.status('x');
  const deprecatedName: TaskState = state;
  for await (const e of agent.watch('x')) {
    const event: WatchEvent = e;
    if (event.type === 'status') return event.status.status;
  }
  const s: TaskStatus | null = deprecatedName.progress;
  return String(s?.step ?? replyUpdate.name ?? statusQuery.name) + (TaskNotWaitingError.name);
}
// An environment of the application's own: the session's type comes from the shipped declarations.
const screen: CustomEnvironment = {
  name: 'kiosk',
  async open({ url, screen: size }): Promise<EnvironmentSession> {
    const nothing = async () => undefined;
    if (size.width < 1) throw new EnvironmentSessionLostError('no screen');
    return {
      leftClick: nothing, doubleClick: nothing, tripleClick: nothing, rightClick: nothing, mouseMove: nothing,
      leftClickDrag: nothing, type: nothing, keys: nothing, scroll: nothing, visitUrl: nothing, historyBack: nothing,
      wait: nothing, pageMarkdown: async () => '', screenshot: async () => Buffer.alloc(0), url: () => url ?? '',
      close: async () => undefined,
    };
  },
};
export const worker = () => createAgentWorker({ environments: [screen], activities: { note: async (t: string) => t } });
export const refs = [createAgentClient, createAgentWorker, runAgentWorker, resolver];
`;

describe('the packed tarball', () => {
  it('installs, and its client and worker run a task that asks: watched steps, a reply, the result', async () => {
    const pkg = path.join(project, 'node_modules', 'durable-cua');
    expect(fs.existsSync(path.join(pkg, 'dist', 'workflows', 'index.js'))).toBe(true);
    expect(fs.existsSync(path.join(pkg, 'workflows'))).toBe(false); // no TypeScript sources shipped
    expect(fs.existsSync(path.join(project, 'node_modules', 'tsx'))).toBe(false); // and no tsx needed to run it

    fs.writeFileSync(path.join(project, 'consumer.mjs'), CONSUMER);
    const consumer = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['consumer.mjs'], {
        cwd: project,
        env: {
          ...npmEnv(),
          CONSUMER: JSON.stringify({
            address: h.server.address,
            taskQueue: `pkg-${process.pid}`,
            runsDir: path.join(h.dir, 'pkg-runs'),
            modelUrl: h.model.url,
            siteUrl: `${h.site.url}/`,
            timing: FAST_TIMING,
          }),
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(consumer.code, consumer.stderr).toBe(0);
    const line = consumer.stdout.split('\n').find((l) => l.startsWith('CONSUMER_RESULT '));
    const out = JSON.parse(line?.slice('CONSUMER_RESULT '.length) ?? 'null') as {
      id: string;
      events: string[];
      errors: Record<string, unknown[]>;
      question: { id: string; text: string };
      result: { status: string; steps: number; answer: string };
      steps: string[];
      status: string;
      resolved: boolean;
      wire: Record<string, string>;
    };
    expect(out.errors.invalid).toEqual([
      'InvalidTaskInputError',
      true,
      true,
      'invalid task: instruction: instruction must not be empty',
    ]);
    expect(out.errors.notFound).toEqual(['TaskNotFoundError', true, 'no task with id no-such-task']);
    expect(out.question.text).toBe('Which city should I search in?');
    expect(out.result).toMatchObject({ status: 'complete', steps: 4, answer: 'Searched Lisbon as you asked.' });
    expect(out.steps).toHaveLength(4);
    // Every step once, in order, with the question between the steps before and after the reply.
    const stepEvents = out.events.filter((e) => e.startsWith('step '));
    expect(stepEvents.map((e) => Number(e.split(' ')[1]))).toEqual([1, 2, 3, 4]);
    const waitingAt = out.events.indexOf('status waiting_for_user');
    expect(waitingAt).toBeGreaterThan(0);
    expect(out.events.slice(waitingAt + 1)).toContain('status running');
    expect(out.status).toBe('complete');
    expect(out.resolved).toBe(true);
    expect(out.wire).toMatchObject({ workflow: 'agentTask', replyUpdate: 'reply', statusQuery: 'status' });
    // The worker wrote the run folder where its config object said.
    expect(fs.existsSync(path.join(h.dir, 'pkg-runs', out.id, 'solver_log', 'events.jsonl'))).toBe(true);
  }, 180_000);

  it('type-checks a TypeScript consumer against the shipped declarations', async () => {
    fs.writeFileSync(path.join(project, 'typed.ts'), TYPED);
    fs.writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['typed.ts'],
      }),
    );
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const res = await run(process.execPath, [tsc, '-p', project]).catch((err: { stdout?: string }) => err);
    expect('stdout' in res ? (res.stdout ?? '') : '').toBe('');
  }, 60_000);
});
