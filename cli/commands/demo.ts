// `cua demo`: everything on embedded defaults in one command — the Temporal dev server with its Web UI, the
// Tidewater Travel demo site, the scripted stand-in model (or a real model), a worker — then one booking task
// that searches, reads a page, opens a map popup, asks the user a question, waits, and finishes. Prints a line
// per step, the task's Temporal UI link and the trajectory report. Ctrl-C stops everything it started.
// `--desktop` runs the desktop agent instead: a sandboxed Linux desktop, a text editor, a command, one question; with
// `--family anthropic-computer` or `gemini-computer` its models are called in that provider's own API (tool use,
// function calling), on the scripted stand-in of it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Connection, Client } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { startDemoSite } from '../../demo/site';
import type { DemoSite } from '../../demo/site';
import {
  canConnect,
  freePort,
  SEARCH_ATTRIBUTE_FLAGS,
  startDevServer,
  waitForNamespace,
} from '../../src/infra/devserver';
import type { DevServer } from '../../src/infra/devserver';
import { dataDir, PROJECT_ROOT } from '../../src/infra/paths';
import { ensureTools } from '../../src/infra/tools';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { dataConverterFor } from '../../src/codec/data-converter';
import { DEFAULT_TEMPORAL_ADDRESS, loadConfig } from '../../src/runtime/config';
import { endpointFamilies } from '../../src/runtime/config-models';
import type { Config } from '../../src/runtime/config';
import { createWorkerRuntime, installWorkerLogging } from '../../worker/main';
import type { WorkerRuntime } from '../../worker/main';
import { familyFlag, intFlag, parse, UsageError } from '../args';
import { familyOf } from '../../src/families/registry';
import { toolUseApi } from '../../src/families/family';
import type { ModelFamily } from '../../src/families/family';
import { newTaskId, startTask, validateTaskInput } from '../../client/tasks';
import { writeTrajectoryReport } from '../../src/viewer/report';
import { followTask, promptLine, report } from './run';
import { AgentClient } from '../../client/client';
import { accessToken } from '../../console/access';
import { denyConsole } from '../../console/policy';
import { withControlPlane } from '../../src/runtime/control-plane';
import { knownSecrets } from '../../console/secrets';
import { DEFAULT_CONSOLE_PORT, startConsole } from '../../console/server';
import type { ConsoleServer } from '../../console/server';
import { openRunStore } from '../../src/trajectory/open-store';

export const DEMO_USAGE =
  'npx cua demo [--desktop] [--yes] [--reply TEXT] [--model-base-url URL --model NAME] [--family NAME]\n' +
  '       [--port 7233] [--ui-port 8233] [--config FILE]\n' +
  '       families: fara-1.5 (default), fara-7b, openai-computer, anthropic-computer, gemini-computer, ui-tars-1.5, qwen-vl\n' +
  '       (--desktop: anthropic-computer and gemini-computer call their provider API; the others chat completions)';

export const DEMO_SCRIPTS_DIR = path.join(PROJECT_ROOT, 'demo', 'scripts');
export const DEMO_SCRIPT = 'tidewater-booking';
export const DEMO_TASK_QUEUE = 'cua-demo';
export const DEMO_INSTRUCTION =
  'On Tidewater Travel, book the cheapest room at the best-rated hotel in Lisbon for the dates already filled in ' +
  '(12 Mar 2027, 2 nights) and tell me the booking reference. Ask me whose name to put on the booking.';
const DEFAULT_REPLY = 'Ada Lovelace';
/** The desktop demo (`--desktop`): a task on a sandboxed Linux desktop instead of the demo site. */
export const DESKTOP_DEMO_SCRIPT = 'desktop-notes';
export const DESKTOP_DEMO_INSTRUCTION =
  'Write a shopping list with milk and eggs in a new file notes.txt using the text editor, check the file with a ' +
  'command, then ask me what else to add, add it, and tell me what the list holds.';
const DESKTOP_DEFAULT_REPLY = 'bread';
const AUTO_REPLY_DELAY_MS = 2_000;

const OPTIONS = {
  desktop: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  reply: { type: 'string' },
  answer: { type: 'string' }, // the old name of --reply, still accepted
  'model-base-url': { type: 'string' },
  model: { type: 'string' },
  profile: { type: 'string' },
  family: { type: 'string' },
  port: { type: 'string' },
  'ui-port': { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export class DemoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const say = (line: string) => console.log(`[demo] ${line}`);

/** What the demo started, stopped in reverse order. */
class Started {
  server?: DevServer;
  site?: DemoSite;
  model?: ScriptedModelServer;
  worker?: { runtime: WorkerRuntime; running: Promise<void> };
  connection?: Connection;
  console?: ConsoleServer;
  task?: WorkflowHandle;

  async stop(cancelTask: boolean): Promise<void> {
    if (cancelTask && this.task) {
      const desc = await this.task.describe().catch(() => null);
      if (desc?.status.name === 'RUNNING') {
        say(`cancelling task ${this.task.workflowId}`);
        await this.task.cancel().catch(() => undefined);
        await Promise.race([this.task.result().catch(() => undefined), sleep(15_000)]);
      }
    }
    if (this.worker) {
      await this.worker.runtime.shutdown().catch(() => undefined);
      await this.worker.running.catch(() => undefined);
    }
    await this.console?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
    await this.model?.close();
    await this.site?.close();
    if (this.server) say('stopping the Temporal dev server');
    await this.server?.stop();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The dev server (default :7233, UI :8233, the project's SQLite file); one already running there is reused. */
async function temporal(
  started: Started,
  port: number,
  uiPort: number,
): Promise<{ address: string; uiUrl: string | null }> {
  const address = `127.0.0.1:${port}`;
  if (await canConnect('127.0.0.1', port)) {
    say(`using the Temporal server already running on ${address} (its Web UI, if any, on :${uiPort})`);
    return { address, uiUrl: `http://127.0.0.1:${uiPort}` };
  }
  const dbFile = path.join(dataDir(), 'temporal.sqlite');
  if (await canConnect('127.0.0.1', uiPort)) {
    const taken = uiPort;
    uiPort = await freePort();
    say(`port ${taken} is taken; the Web UI goes on ${uiPort}`);
  }
  say(`starting the Temporal dev server (SQLite file ${dbFile})`);
  started.server = await startDevServer({
    dbFile,
    port,
    uiPort,
    output: path.join(dataDir(), 'temporal-server.log'),
    onRetry: say,
  });
  return { address: started.server.address, uiUrl: started.server.uiUrl };
}

/** A server we did not start may lack our search attributes; adding an existing one is an error we ignore. */
async function ensureSearchAttributes(client: Client): Promise<void> {
  for (const flag of SEARCH_ATTRIBUTE_FLAGS) {
    const [name, type] = flag.split('=') as [string, string];
    await client.connection.operatorService
      .addSearchAttributes({
        namespace: 'default',
        // IndexedValueType: KEYWORD = 2, INT = 3, DOUBLE = 4.
        searchAttributes: { [name]: type === 'Int' ? 3 : type === 'Double' ? 4 : 2 },
      })
      .catch(() => undefined);
  }
}

/** A demo task left running by an interrupted earlier demo points at a site and model that are gone. */
async function endEarlierDemoTasks(client: Client): Promise<void> {
  const query = `TaskQueue="${DEMO_TASK_QUEUE}" AND ExecutionStatus="Running"`;
  for await (const wf of client.workflow.list({ query })) {
    await client.workflow
      .getHandle(wf.workflowId, wf.runId)
      .terminate('ended by a new `cua demo` (its demo site and model are gone)')
      .then(() => say(`ended unfinished demo task ${wf.workflowId} from an earlier run`))
      .catch(() => undefined);
  }
}

function askFromTerminal(defaultReply: string): (question: string) => Promise<string> {
  return async (question) =>
    (await promptLine(`\nThe agent asks: ${question}\nYour reply [${defaultReply}]: `)) || defaultReply;
}

function replyAfterDelay(reply: string): (question: string) => Promise<string> {
  return async (question) => {
    console.log(`\nThe agent asks: ${question}`);
    console.log(`(replying "${reply}" in ${AUTO_REPLY_DELAY_MS / 1000} s — the task is waiting durably meanwhile)`);
    await sleep(AUTO_REPLY_DELAY_MS);
    return reply;
  };
}

function demoConfig(file: string | undefined, address: string): Config {
  return loadConfig({ file, env: { ...process.env, TEMPORAL_ADDRESS: address, CUA_TASK_QUEUE: DEMO_TASK_QUEUE } });
}

export async function demoCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, DEMO_USAGE);
  if (values.help) return (console.log(`usage: ${DEMO_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${DEMO_USAGE}`);
  const family = familyFlag(values);
  const replyFlag = values.reply ?? values.answer;
  if (replyFlag !== undefined && !replyFlag.trim()) {
    throw new UsageError(`--${values.reply !== undefined ? 'reply' : 'answer'} must not be empty`);
  }
  // Check the configuration before starting anything.
  const preflight = loadConfig({ file: values.config });
  const realModel = !!(values['model-base-url'] || values.model || preflight.models.default);
  if (realModel && !(values['model-base-url'] ?? preflight.models.default?.baseUrl)) {
    throw new UsageError('--model needs --model-base-url (or a models.default entry in the config)');
  }

  const port = intFlag(values.port, 'port') ?? 7233;
  const uiPort = intFlag(values['ui-port'], 'ui-port') ?? 8233;
  const desktop = !!values.desktop;
  const reply = replyFlag?.trim() ?? (desktop ? DESKTOP_DEFAULT_REPLY : DEFAULT_REPLY);
  const unattended = !!values.yes || !process.stdin.isTTY;
  if (!values.yes && unattended) say('stdin is not a terminal: the question gets an automatic reply (as --yes)');

  ensureTools(say, desktop ? ['demo', 'desktop'] : ['demo']);
  const started = new Started();
  let interrupted = false;
  let resolveInterrupt: (value: 'interrupted') => void = () => undefined;
  const interrupt = new Promise<'interrupted'>((resolve) => (resolveInterrupt = resolve));
  const onSignal = () => {
    interrupted = true;
    console.log('');
    say('Ctrl-C: stopping everything the demo started');
    resolveInterrupt('interrupted');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A closed output pipe (`cua demo | head`) ends the demo cleanly too.
  process.stdout.once('error', onSignal);
  const t0 = Date.now();
  try {
    const outcome = await Promise.race([
      interrupt,
      runDemo(started, {
        config: values.config,
        reply,
        unattended,
        realModel,
        // No family named: a real model's endpoint may declare one (models.default.family).
        values: {
          ...values,
          profile: family ?? (realModel ? endpointFamilies(preflight.models)['default'] : undefined),
        },
        port,
        uiPort,
        desktop,
      }),
    ]);
    if (outcome === 'interrupted') return 130;
    say(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return outcome;
  } finally {
    await started.stop(interrupted);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.stdout.off('error', onSignal);
  }
}

/** The web console beside the Temporal UI; the worker's browser is denied its address (a page cannot reach it). */
async function demoConsole(started: Started, client: Client, config: Config, uiUrl: string | null): Promise<Config> {
  started.console = await startConsole({
    agent: new AgentClient(client, config.taskQueue, () => openRunStore(config)),
    store: () => openRunStore(config),
    token: accessToken('127.0.0.1', config.console?.token).token,
    port: DEFAULT_CONSOLE_PORT,
    anyPortIfTaken: true,
    temporalUiUrl: uiUrl,
    namespace: config.temporal.namespace,
    endpoints: Object.keys(config.models),
    families: endpointFamilies(config.models),
    secrets: knownSecrets(config),
    ...(config.urlPolicy ? { urlPolicy: config.urlPolicy } : {}),
  });
  say(`web console: ${started.console.link}`);
  return demoWorkerConfig(config, started.console.port, uiUrl);
}

/**
 * The demo worker's config: its browser is denied the web console it started and the Temporal UI (whose port may be
 * --ui-port's, not the frontend's + 1000 the worker assumes), beside the control plane every worker denies.
 */
export function demoWorkerConfig(config: Config, consolePort: number, uiUrl: string | null): Config {
  return withControlPlane(denyConsole(config, '127.0.0.1', consolePort), uiUrl ? [uiUrl] : []);
}

/**
 * The command that adds this project's MCP server to Claude Code, pointed at the demo's Temporal server and run folders
 * (other clients: docs/mcp.md). It serves while a Temporal server answers at `address`: the demo's until it stops, then
 * `npx cua server`.
 */
export function mcpAddLine(address: string, runsDir: string, configFile: string | undefined): string {
  const env = [
    ...(address === DEFAULT_TEMPORAL_ADDRESS ? [] : [`TEMPORAL_ADDRESS=${address}`]),
    `CUA_RUNS_DIR=${path.resolve(runsDir)}`,
    ...(configFile ? [`CUA_CONFIG=${path.resolve(configFile)}`] : []),
  ];
  const bin = path.join(PROJECT_ROOT, 'bin', 'cua.js');
  return `claude mcp add durable-cua ${env.map((e) => `-e ${shellWord(e)}`).join(' ')} -- node ${shellWord(bin)} mcp`;
}

/** A word as a POSIX shell reads it back: bare when it is plain, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The key the demo gives the worker for a provider's stand-in (it checks that a key is sent, not which). */
const STAND_IN_KEY = 'stand-in-key-not-secret';

/** The config with its default endpoint on a provider's stand-in, for a family that speaks that provider's API. */
export function withStandInEndpoint(config: Config, to: { baseUrl: string; model: string; family: string }): Config {
  const endpoint = { baseUrl: to.baseUrl, model: to.model, apiKey: STAND_IN_KEY, profile: to.family };
  return { ...config, models: { ...config.models, default: endpoint } };
}

type DemoModel = { endpoint: string; baseUrl?: string; model?: string };

/**
 * Whether the demo's model speaks the family's provider API rather than chat completions: the browser agent does for
 * every family with a call of its own; the desktop agent, whose calls are function calls, for Anthropic's Messages
 * and Gemini's generateContent (toolUseApi), and chat completions for the others.
 */
function speaksOwnApi(family: ModelFamily, desktop: boolean): boolean {
  return desktop ? toolUseApi(family) !== undefined : family.call !== undefined;
}

/**
 * The demo task's model: a real one (the config's default endpoint, or the flags'), or the scripted stand-in, in the
 * wire format of the family's provider when the family speaks a provider's own API.
 */
async function demoModel(
  started: Started,
  config: Config,
  opts: {
    realModel: boolean;
    desktop: boolean;
    values: { 'model-base-url'?: string; model?: string; profile?: string };
  },
  script: string,
): Promise<{ config: Config; model: DemoModel }> {
  let model: DemoModel;
  if (opts.realModel) {
    const endpoint = config.models.default;
    model = {
      endpoint: 'default',
      ...(opts.values['model-base-url'] ? { baseUrl: opts.values['model-base-url'] } : {}),
      ...(opts.values.model ? { model: opts.values.model } : {}),
    };
    say(`model: ${opts.values.model ?? endpoint?.model} at ${opts.values['model-base-url'] ?? endpoint?.baseUrl}`);
  } else {
    started.model = await startScriptedModelServer({ scriptsDir: DEMO_SCRIPTS_DIR });
    const family = opts.values.profile;
    if (family !== undefined && speaksOwnApi(familyOf(family), opts.desktop)) {
      // A family that speaks its provider's own API: the stand-in speaks it too, on the server's root, and checks a
      // key is sent the provider's way; the key is the worker's (config), as a real provider's would be.
      const root = started.model.url.replace(/\/v1$/, '');
      config = withStandInEndpoint(config, { baseUrl: root, model: script, family });
      model = { endpoint: 'default' };
      say(`model: the SCRIPTED STAND-IN of the ${family} API (a test double replaying demo/scripts/${script}.json in`);
      say(`       that provider's wire format), not a real model; no request leaves this machine;`);
    } else {
      model = { endpoint: 'default', baseUrl: started.model.url, model: script };
      say(`model: the SCRIPTED STAND-IN (a test double replaying demo/scripts/${script}.json), not a real model;`);
    }
    say(
      `       drive the same demo with a real one: npx cua demo${opts.desktop ? ' --desktop' : ''} ` +
        '--model-base-url http://host:8000/v1 --model NAME',
    );
  }

  return { config, model };
}

async function runDemo(
  started: Started,
  opts: {
    config: string | undefined;
    reply: string;
    unattended: boolean;
    realModel: boolean;
    port: number;
    uiPort: number;
    desktop: boolean;
    values: { 'model-base-url'?: string; model?: string; profile?: string };
  },
): Promise<number> {
  const script = opts.desktop ? DESKTOP_DEMO_SCRIPT : DEMO_SCRIPT;
  const instruction = opts.desktop ? DESKTOP_DEMO_INSTRUCTION : DEMO_INSTRUCTION;
  const { address, uiUrl } = await temporal(started, opts.port, opts.uiPort);
  if (uiUrl) say(`Temporal Web UI: ${uiUrl}`);
  let config = demoConfig(opts.config, address);
  let client: Client;
  try {
    started.connection = await Connection.connect({ address, connectTimeout: '5s' });
    // With encryption configured the demo's client speaks it too (its results and queries come back encrypted).
    const dataConverter = dataConverterFor(config, { acceptPlaintext: true });
    client = new Client({ connection: started.connection, ...(dataConverter ? { dataConverter } : {}) });
    await waitForNamespace(client, 'default', started.server ? 30_000 : 5_000);
  } catch (err) {
    throw new DemoError(
      `${address} does not answer as a Temporal server (${(err as Error).message}); ` +
        'stop what runs there or pick other ports with --port and --ui-port',
    );
  }
  if (!started.server) await ensureSearchAttributes(client);
  await endEarlierDemoTasks(client);
  config = await demoConsole(started, client, config, uiUrl);

  if (!opts.desktop) {
    started.site = await startDemoSite();
    say(`demo site "Tidewater Travel": ${started.site.url}/`);
  }
  const chosen = await demoModel(started, config, opts, script);
  config = chosen.config;
  const model = chosen.model;

  say('starting a worker (bundling the workflow code takes a few seconds)');
  installWorkerLogging('ERROR');
  const runtime = await createWorkerRuntime(config, { log: (line) => line.startsWith('desktop') && say(line) });
  started.worker = { runtime, running: runtime.run() };
  if (opts.desktop && !runtime.desktops) throw new DemoError('the worker has no desktop support (see the line above)');

  const input = validateTaskInput({
    runId: newTaskId().replace(/^task-/, opts.desktop ? 'demo-desktop-' : 'demo-'),
    instruction,
    ...(opts.desktop
      ? { environment: 'desktop' as const, maxSteps: 20 }
      : { startUrl: `${started.site?.url}/`, maxSteps: 40 }),
    ...(opts.values.profile ? { profile: opts.values.profile } : {}),
    model,
  });
  const handle = await startTask(client, config.taskQueue, input);
  started.task = handle;
  const taskLink = uiUrl ? `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(input.runId)}` : null;
  say(`task ${input.runId} started${taskLink ? `; watch it live: ${taskLink}` : ''}`);
  console.log(`instruction: ${instruction}`);

  const outcome = await followTask(client, handle, {
    json: false,
    ask: opts.unattended ? replyAfterDelay(opts.reply) : askFromTerminal(opts.reply),
    print: (l) => console.log(l),
  });
  const code = report(input.runId, outcome, false);
  for (const b of started.site?.bookings ?? []) {
    say(
      `the demo site recorded a booking: ${b.reference} · ${b.hotel} · ${b.room} · ${b.nights} nights · €${b.total} · guest ${b.guest}`,
    );
  }
  const runDir = path.join(config.runsDir, input.runId);
  if (opts.desktop) {
    const notes = path.join(runDir, 'home', 'notes.txt');
    const text = await fs.readFile(notes, 'utf8').catch(() => null);
    say(
      text === null
        ? `the desktop's home has no notes.txt`
        : `notes.txt in the desktop's home: ${text.trim().split('\n').join(' · ')}`,
    );
  }
  try {
    const written = await writeTrajectoryReport(runDir);
    say(`trajectory report (${written.steps} steps): ${written.file}`);
  } catch (err) {
    say(`could not write the trajectory report: ${(err as Error).message} (the run folder is ${runDir})`);
  }
  if (taskLink) say(`Temporal UI: ${taskLink}`);
  if (started.console) say(`web console: ${started.console.url}/tasks/${encodeURIComponent(input.runId)}`);
  say(`run folder: ${runDir}`);
  say(`agents can start and follow tasks too (MCP, docs/mcp.md): ${mcpAddLine(address, config.runsDir, opts.config)}`);
  if (started.server) {
    say('the Temporal UI and the console stop with the demo; `npx cua server` and `npx cua console` serve them again');
  }
  if (!opts.unattended && started.server) {
    await promptLine('Press Enter to stop the demo (the UI stays up until then): ');
  }
  return code;
}
