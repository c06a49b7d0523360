// `cua eval <tasks> …`: run a task set as one durable evaluation workflow, print its progress while it runs, and write
// eval-results.json and a self-contained HTML report (eval-report.ts); `cua eval compare A B` lists the tasks that
// flipped.
// The task set's `{{demo}}`, `{{fixture}}` and `{{scripted}}` placeholders not given with --site are served from this
// process (the bundled demo site, the test fixture site, the scripted stand-in model), so the shipped set runs offline.
// With no Temporal server at the configured (local) address the command starts one and a worker for the evaluation
// and stops them at the end (eval-embedded.ts); `--judge…` flags choose the LLM judge (src/eval/judge.ts). The task set
// is a file, or `store:KEY`: an object in the configured run store (src/eval/task-source.ts), which workers on other
// machines read too. Run folders are read from the run store for the report (an S3 run is copied to a temp folder).
// The flags are read in eval-args.ts, the task set in eval-set.ts; eval-progress.ts follows the running evaluation.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { evalBackend } from './eval-embedded';
import type { EvalBackend } from './eval-embedded';
import { EVAL_USAGE, parseEvalArgs } from './eval-args';
import type { EvalArgs } from './eval-args';
import { follow } from './eval-progress';
import { compareCommand, printWritten, writeEvalReports } from './eval-report';
import { loadEvalSet, surroundings } from './eval-set';
import type { LoadedSet, Surroundings } from './eval-set';
import { startFixtureSite } from '../../demo/fixture-site';
import { startDemoSite } from '../../demo/site';
import { dataDir } from '../../src/infra/paths';
import { endpointFamilies } from '../../src/runtime/config-models';
import type { Config } from '../../src/runtime/config';
import { startScriptedModelServer } from '../../src/scripted/server';
import { pageProbesOf, sitePlaceholders } from '../../src/eval/task-set';
import { isInside, storeKeyOf, workerTaskSetFolders } from '../../src/eval/task-source';
import type { RunStore } from '../../src/trajectory/store';
import { EVALUATION_SEARCH_ATTRIBUTE } from '../../workflows/eval-messages';
import { EVALUATION_WORKFLOW } from '../../src/eval/records';
import type { EvaluationInput, EvaluationResult } from '../../src/eval/records';
import type { evaluation } from '../../workflows/evaluation';
import { cacheFlag, intFlag, UsageError } from '../args';

/** What the command uses from its surroundings; tests pass their harness's client and config. */
export interface EvalCommandDeps {
  config?: Config;
  client?: Client;
  print?: (line: string) => void;
  /** How often progress is polled (ms, default 1000). */
  pollMs?: number;
  /** Extra fields for every task's input (tests: fast timings). */
  taskDefaults?: EvaluationInput['taskDefaults'];
  /** Test hook: the evaluation continues-as-new after this many task runs ended in one of its runs. */
  continueAsNewAfter?: number;
  /** Without `client`: where an embedded dev server keeps its SQLite file (default: the project's data folder). */
  dataDir?: string;
  /** Without `client`: the embedded server's UI port (default 8233; null: no UI). */
  uiPort?: number | null;
  /** Without `client`: a prebuilt workflow bundle for an embedded worker. */
  workflowBundle?: WorkflowBundleWithSourceMap;
}

interface Service {
  url: string;
  close(): Promise<void>;
}

type Print = (line: string) => void;

/** What this command started for the evaluation (stopped when it ends). */
interface Started {
  services: Service[];
  backend?: EvalBackend;
}

/** One evaluation as this command runs it. */
interface EvalPlan {
  args: EvalArgs;
  set: LoadedSet;
  config: Config;
  input: EvaluationInput & Required<Pick<EvaluationInput, 'concurrency' | 'trials' | 'maxRetries'>>;
}

function newEvalId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `eval-${stamp}-${randomBytes(2).toString('hex')}`;
}

/** Starts the bundled service a placeholder names, or null for a name this command cannot serve. */
async function bundledService(name: string, scriptsDir: string): Promise<Service | null> {
  if (name === 'demo') return startDemoSite();
  if (name === 'scripted') return startScriptedModelServer({ scriptsDir });
  if (name === 'fixture') return startFixtureSite();
  return null;
}

/**
 * A server started before the evaluation existed may lack its search attribute (`cua dev` registers it at start);
 * adding one that exists, or lacking the permission to, is ignored here (the start then names the problem).
 */
async function ensureEvaluationAttribute(client: Client, namespace: string): Promise<void> {
  await client.connection.operatorService
    .addSearchAttributes({ namespace, searchAttributes: { [EVALUATION_SEARCH_ATTRIBUTE.name]: 2 /* KEYWORD */ } })
    .catch(() => undefined);
}

/** The `cua eval` command; returns the exit code (0 done, 2 a bad task set). */
export async function evalCommand(argv: readonly string[], deps: EvalCommandDeps = {}): Promise<number> {
  const print = deps.print ?? console.log;
  if (argv[0] === 'compare') {
    const [, a, b, extra] = argv;
    if (!a || !b || extra !== undefined) throw new UsageError(`compare wants two results\nusage: ${EVAL_USAGE}`);
    return compareCommand(a, b, print);
  }
  const args = parseEvalArgs(argv);
  if (!args) return (print(`usage: ${EVAL_USAGE}`), 0);
  const env = surroundings(deps.config, args.values.config);
  const set = await loadEvalSet(args, env, print);
  if (!set) return 2;
  const started: Started = { services: [] };
  try {
    const config = env.config();
    await serveBundledSites(set, args.sites, started, print);
    const family = args.family ?? endpointFamilies(config.models)['default'];
    const plan: EvalPlan = { args, set, config, input: evaluationInput(args, set, deps, family) };
    const client = await connect(plan, deps, started, print);
    warnAboutWorkers(plan, started.backend, print);
    const handle = await startEvaluation(client, plan, print);
    const uiUrl = args.values['ui-url'] ?? started.backend?.uiUrl ?? 'http://127.0.0.1:8233';
    print(`[eval] Temporal UI: ${uiUrl}/namespaces/${config.temporal.namespace}/workflows/${plan.input.evalId}`);
    if (args.values.detach) {
      if (started.backend?.started.length)
        print('[eval] --detach is ignored: the server and worker this command started would stop with it');
      if (!started.backend?.started.length) return 0;
    }
    const result = await follow(handle, print, deps.pollMs ?? 1000);
    await writeResults(result, plan, env, uiUrl, print);
    return 0;
  } finally {
    await started.backend?.close();
    for (const s of started.services) await s.close().catch(() => undefined);
    env.close();
  }
}

/** Serves each placeholder of the set that --site did not give from this process, adding its URL to `sites`. */
async function serveBundledSites(
  set: LoadedSet,
  sites: Record<string, string>,
  started: Started,
  print: Print,
): Promise<void> {
  for (const name of sitePlaceholders(set.tasks)) {
    if (sites[name]) continue;
    const service = await bundledService(name, set.scriptsDir);
    if (!service) throw new UsageError(`the task set uses {{${name}}}: give it with --site ${name}=URL`);
    started.services.push(service);
    sites[name] = service.url;
    print(
      `[eval] serving {{${name}}} at ${service.url}${name === 'scripted' ? ` (scripted stand-in model, scripts ${set.scriptsDir})` : ''}`,
    );
  }
}

/** The evaluation workflow's input, from the flags (the sites as served by now) and the tests' hooks. */
function evaluationInput(
  args: EvalArgs,
  set: LoadedSet,
  deps: EvalCommandDeps,
  family: string | undefined,
): EvalPlan['input'] {
  const { values, format, filter, judge, sites } = args;
  const { taskSet, answers } = set;
  const evalId = values.id ?? newEvalId();
  const trials = intFlag(values.trials, 'trials') ?? 1;
  return {
    evalId,
    taskSet: { path: taskSet, ...(format ? { format } : {}), ...(answers ? { answers } : {}), filter, sites },
    concurrency: intFlag(values.concurrency, 'concurrency') ?? 4,
    trials,
    maxRetries: intFlag(values['max-retries'], 'max-retries', 0) ?? 5,
    ...(values['model-base-url'] || values.model
      ? { model: { baseUrl: values['model-base-url'], model: values.model } }
      : {}),
    ...(values['max-steps'] ? { maxSteps: intFlag(values['max-steps'], 'max-steps') } : {}),
    ...(deps.taskDefaults || values.cache !== undefined || family
      ? {
          taskDefaults: {
            ...deps.taskDefaults,
            ...(family ? { profile: family } : {}),
            ...(values.cache !== undefined ? { cache: { name: cacheFlag(values.cache, undefined) } } : {}),
          },
        }
      : {}),
    ...(deps.continueAsNewAfter ? { continueAsNewAfter: deps.continueAsNewAfter } : {}),
    ...(judge ? { judge } : {}),
  };
}

/**
 * The client the evaluation runs through: the tests' own, or the backend's (eval-embedded.ts: the configured server,
 * or one this command starts with a worker), recorded in `started` to be stopped at the end.
 */
async function connect(plan: EvalPlan, deps: EvalCommandDeps, started: Started, print: Print): Promise<Client> {
  if (deps.client) return deps.client;
  const { taskSet, answers } = plan.set;
  started.backend = await evalBackend({
    config: plan.config,
    embedded: !!plan.args.values.embedded,
    print,
    dataDir: deps.dataDir ?? dataDir(),
    uiPort: deps.uiPort === undefined ? 8233 : deps.uiPort,
    localSources: [taskSet, ...(answers ? [answers] : [])].filter((s) => storeKeyOf(s) === null),
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : {}),
  });
  return started.backend.client;
}

/** Warns of what workers this command did not start may refuse or not run: a set outside their folders, page_js. */
function warnAboutWorkers(plan: EvalPlan, backend: EvalBackend | undefined, print: Print): void {
  const { taskSet, answers, tasks } = plan.set;
  const ownWorker = backend?.started.includes('a worker') ?? false;
  const folders = workerTaskSetFolders(plan.config.evaluation.taskSetDirs);
  const unlisted = [taskSet, ...(answers ? [answers] : [])].filter(
    (s) => storeKeyOf(s) === null && !isInside(s, folders),
  );
  if (!ownWorker && unlisted.length > 0) {
    print(
      `[eval] the workers read ${unlisted.join(' and ')} only if its folder is in their evaluation.taskSetDirs ` +
        '(beside the project eval/tasks); otherwise they refuse it: then give it as store:KEY',
    );
  }
  const probing = tasks.filter((t) => pageProbesOf(t.checks).length > 0).length;
  if (probing > 0 && !backend?.started.includes('a Temporal dev server')) {
    print(
      `[eval] ${probing} task(s) have page_js checks: workers run them only with browser.pageProbes on ` +
        '(CUA_PAGE_PROBES=1); on a worker without it those checks fail as not run',
    );
  }
}

/** Starts the evaluation workflow, or follows the one that has its id already (running or done). */
async function startEvaluation(
  client: Client,
  plan: EvalPlan,
  print: Print,
): Promise<WorkflowHandle<typeof evaluation>> {
  const { config, input } = plan;
  const { evalId, trials } = input;
  const { taskSet, tasks, inStore } = plan.set;
  await ensureEvaluationAttribute(client, config.temporal.namespace);
  try {
    const handle = await client.workflow.start<typeof evaluation>(EVALUATION_WORKFLOW, {
      taskQueue: config.taskQueue,
      workflowId: evalId,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      staticSummary: `Evaluation of ${inStore ? taskSet : path.basename(taskSet)}: ${tasks.length} task(s) × ${trials} trial(s)`,
      typedSearchAttributes: [{ key: EVALUATION_SEARCH_ATTRIBUTE, value: evalId }],
    });
    print(
      `[eval] evaluation ${evalId} started: ${tasks.length} task(s) × ${trials} trial(s), concurrency ${input.concurrency}`,
    );
    return handle;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // The same id again: follow the evaluation that has it (running or done), nothing is started twice.
    const handle = client.workflow.getHandle<typeof evaluation>(evalId);
    print(`[eval] evaluation ${evalId} exists; following it`);
    return handle;
  }
}

/** Writes the finished evaluation's results and report (eval-report.ts) and prints its figures. */
async function writeResults(
  result: EvaluationResult,
  plan: EvalPlan,
  env: Surroundings,
  uiUrl: string,
  print: Print,
): Promise<void> {
  const { args, input } = plan;
  const outDir = path.resolve(args.values.out ?? path.join(dataDir(), 'evals', input.evalId));
  let runs: RunStore | undefined;
  try {
    runs = env.store();
  } catch (err) {
    // The worker's store keys may not be set here: the report is written all the same, without trajectory links.
    print(`[eval] the report links no trajectories: ${(err as Error).message}`);
  }
  const written = await writeEvalReports(result, {
    outDir,
    runsDir: plan.config.runsDir,
    ...(runs ? { store: runs } : {}),
    taskSet: plan.set.taskSet,
    options: {
      concurrency: input.concurrency,
      trials: input.trials,
      maxRetries: input.maxRetries,
      filter: args.filter,
      ...(args.judge ? { judge: { ...args.judge } } : {}),
      ...(input.taskDefaults?.cache ? { taskDefaults: { cache: input.taskDefaults.cache } } : {}),
    },
    uiUrl,
  });
  printWritten(written, print);
}
