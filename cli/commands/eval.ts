// `cua eval <tasks> …`: run a task set as one durable evaluation workflow, print its progress while it runs, and write
// eval-results.json and a self-contained HTML report; `cua eval compare A B` lists the tasks that flipped.
// The task set's `{{demo}}`, `{{fixture}}` and `{{scripted}}` placeholders not given with --site are served from this
// process (the bundled demo site, the test fixture site, the scripted stand-in model), so the shipped set runs offline.
// With no Temporal server at the configured (local) address the command starts one and a worker for the evaluation
// and stops them at the end (eval-embedded.ts); `--judge…` flags choose the LLM judge (src/eval/judge.ts). The task set
// is a file, or `store:KEY`: an object in the configured run store (src/eval/task-source.ts), which workers on other
// machines read too. Run folders are read from the run store for the report (an S3 run is copied to a temp folder).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { JUDGE_KINDS } from '../../src/eval/judge';
import type { JudgeSettings } from '../../src/eval/judge';
import { evalBackend } from './eval-embedded';
import type { EvalBackend } from './eval-embedded';
import { startFixtureSite } from '../../demo/fixture-site';
import { startDemoSite } from '../../demo/site';
import { dataDir } from '../../src/infra/paths';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { startScriptedModelServer } from '../../src/scripted/server';
import { filterTasks, pageProbesOf, sitePlaceholders, TASK_SET_FORMATS, TaskSetError } from '../../src/eval/task-set';
import type { EvalTask, TaskFilter, TaskSetFormat } from '../../src/eval/task-set';
import { isInside, loadTaskSetFrom, storeKeyOf, workerTaskSetFolders } from '../../src/eval/task-source';
import { copyRun, openRunStore } from '../../src/trajectory/open-store';
import { S3RunStore } from '../../src/trajectory/s3-store';
import { LocalRunStore } from '../../src/trajectory/store';
import type { RunStore } from '../../src/trajectory/store';
import { compareResults, DEFAULT_STEP_BUDGETS, summarize, summarizeTasks } from '../../src/eval/results';
import type { EvalResultsFile } from '../../src/eval/results';
import { renderEvalReport } from '../../src/eval/report-html';
import { REPORT_FILE, writeTrajectoryReport } from '../../src/viewer/report';
import { EVALUATION_SEARCH_ATTRIBUTE, evalProgressQuery } from '../../workflows/eval-messages';
import { EVALUATION_WORKFLOW } from '../../src/eval/records';
import type { EvalProgress, EvaluationInput, EvaluationResult } from '../../src/eval/records';
import type { evaluation } from '../../workflows/evaluation';
import { intFlag, parse, UsageError } from '../args';

export const EVAL_USAGE =
  'npx cua eval <tasks.jsonl|store:KEY> [--concurrency N] [--trials K] [--out DIR] [--filter ID-PATTERN] [--tag TAG]\n' +
  '       [--level LEVEL] [--first N] [--format local|webvoyager|mind2web] [--answers FILE|store:KEY] [--id EVAL-ID]\n' +
  '       [--max-retries N] [--max-steps N] [--model-base-url URL] [--model NAME] [--site NAME=URL]…\n' +
  '       [--judge auto|webjudge|rubric|none] [--judge-base-url URL] [--judge-model NAME] [--judge-endpoint NAME]\n' +
  '       [--scripted DIR] [--embedded] [--ui-url URL] [--detach] [--config FILE]\n' +
  '       npx cua eval compare <A/eval-results.json> <B/eval-results.json>';

const OPTIONS = {
  concurrency: { type: 'string' },
  trials: { type: 'string' },
  out: { type: 'string', short: 'o' },
  filter: { type: 'string' },
  tag: { type: 'string' },
  level: { type: 'string' },
  first: { type: 'string' },
  format: { type: 'string' },
  answers: { type: 'string' },
  id: { type: 'string' },
  'max-retries': { type: 'string' },
  'max-steps': { type: 'string' },
  'model-base-url': { type: 'string' },
  model: { type: 'string' },
  site: { type: 'string', multiple: true },
  scripted: { type: 'string' },
  judge: { type: 'string' },
  'judge-base-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-endpoint': { type: 'string' },
  embedded: { type: 'boolean' },
  'ui-url': { type: 'string' },
  detach: { type: 'boolean' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

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

function newEvalId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `eval-${stamp}-${randomBytes(2).toString('hex')}`;
}

function siteFlags(values: string[] | undefined): Record<string, string> {
  const sites: Record<string, string> = {};
  for (const v of values ?? []) {
    const m = /^([A-Za-z0-9_-]+)=(https?:\/\/.+)$/.exec(v);
    if (!m?.[1] || !m[2]) throw new UsageError(`--site wants NAME=http(s)://…, got '${v}'`);
    sites[m[1]] = m[2];
  }
  return sites;
}

/** Starts the bundled service a placeholder names, or null for a name this command cannot serve. */
async function bundledService(name: string, scriptsDir: string): Promise<Service | null> {
  if (name === 'demo') return startDemoSite();
  if (name === 'scripted') return startScriptedModelServer({ scriptsDir });
  if (name === 'fixture') return startFixtureSite();
  return null;
}

function progressLine(p: EvalProgress): string {
  const rate = p.passRate === null ? '–' : `${Math.round(p.passRate * 100)}%`;
  return (
    `[eval] ${p.done}/${p.total} done · ${p.running} running · ${p.left} left · ` +
    `passed ${p.passed}/${p.scored} scored (${rate}) · aborted ${p.aborted}`
  );
}

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);

/**
 * A server started before the evaluation existed may lack its search attribute (`cua dev` registers it at start);
 * adding one that exists, or lacking the permission to, is ignored here (the start then names the problem).
 */
async function ensureEvaluationAttribute(client: Client, namespace: string): Promise<void> {
  await client.connection.operatorService
    .addSearchAttributes({ namespace, searchAttributes: { [EVALUATION_SEARCH_ATTRIBUTE.name]: 2 /* KEYWORD */ } })
    .catch(() => undefined);
}

/** The evaluation's result; waiting goes on through a lost connection (a restarting server), not through a failure. */
async function resultOf(handle: WorkflowHandle<typeof evaluation>): Promise<EvaluationResult> {
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      if (err instanceof WorkflowFailedError) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Waits for the evaluation's result, printing a progress line whenever the figures change. */
async function follow(
  handle: WorkflowHandle<typeof evaluation>,
  print: (line: string) => void,
  pollMs: number,
): Promise<EvaluationResult> {
  let last = '';
  let done = false;
  const result = resultOf(handle).finally(() => (done = true));
  result.catch(() => undefined);
  while (!done) {
    try {
      const line = progressLine(await handle.query(evalProgressQuery));
      if (line !== last) print((last = line));
    } catch {
      // Between runs (continue-as-new) or while the server restarts a query can fail; the next poll will do.
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, pollMs))]);
  }
  const final = await result;
  const line = progressLine(final.progress);
  if (line !== last) print(line);
  return final;
}

export interface WrittenReports {
  json: string;
  html: string;
  results: EvalResultsFile;
}

export interface ReportOptions {
  outDir: string;
  /** Where trajectory reports of runs in a shared store go: `<runsDir>/<runId>/report.html`, as `cua view` does. */
  runsDir: string;
  /** The run store the runs are in (default: the folder store under `runsDir`). */
  store?: RunStore;
  taskSet: string;
  options: Record<string, unknown>;
  uiUrl: string | null;
}

/**
 * The trajectory report of one run, or null when it has none: written beside its run folder in a folder store; a run
 * in a shared store (S3) is copied into a temp folder first and its report goes under `runsDir`.
 */
async function trajectoryReport(store: RunStore, runId: string, runsDir: string): Promise<string | null> {
  if (!(await store.exists(`${runId}/task.json`))) return null;
  if (store instanceof LocalRunStore) return (await writeTrajectoryReport(path.join(store.rootDir, runId))).file;
  const temp = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'cua-eval-run-'));
  try {
    await copyRun(store, runId, new LocalRunStore(temp));
    return (await writeTrajectoryReport(path.join(temp, runId), path.join(runsDir, runId, REPORT_FILE))).file;
  } finally {
    await fs.promises.rm(temp, { recursive: true, force: true });
  }
}

/** Writes eval-results.json and report.html (with each run's trajectory report, linked from its row). */
export async function writeEvalReports(result: EvaluationResult, opts: ReportOptions): Promise<WrittenReports> {
  fs.mkdirSync(opts.outDir, { recursive: true });
  const results: EvalResultsFile = {
    evalId: result.evalId,
    createdAt: new Date().toISOString(),
    taskSet: opts.taskSet,
    options: opts.options,
    summary: summarize(result.records, DEFAULT_STEP_BUDGETS),
    tasks: summarizeTasks(result.records),
  };
  const store = opts.store ?? new LocalRunStore(opts.runsDir);
  const trajectories = new Map<string, string>();
  for (const r of result.records) {
    try {
      const file = await trajectoryReport(store, r.runId, opts.runsDir);
      if (file) trajectories.set(r.runId, path.relative(opts.outDir, file));
    } catch {
      // A run folder the viewer (or the store) cannot read still gets its row, without the link.
    }
  }
  const json = path.join(opts.outDir, 'eval-results.json');
  const html = path.join(opts.outDir, 'report.html');
  fs.writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  const ui = opts.uiUrl?.replace(/\/$/, '');
  fs.writeFileSync(
    html,
    renderEvalReport(results, {
      trajectory: (id) => trajectories.get(id) ?? null,
      temporal: (id) => (ui ? `${ui}/namespaces/default/workflows/${encodeURIComponent(id)}` : null),
    }),
  );
  return { json, html, results };
}

function readResults(file: string): EvalResultsFile {
  const target = fs.existsSync(file) && fs.statSync(file).isDirectory() ? path.join(file, 'eval-results.json') : file;
  try {
    return JSON.parse(fs.readFileSync(target, 'utf8')) as EvalResultsFile;
  } catch (err) {
    throw new UsageError(`cannot read ${target}: ${(err as Error).message}`);
  }
}

/** `cua eval compare A B`: the tasks whose pass@k differs, and both success rates. */
export function compareCommand(a: string, b: string, print: (line: string) => void = console.log): number {
  const before = readResults(a);
  const after = readResults(b);
  const flips = compareResults(before, after);
  print(
    `A ${before.evalId}: ${pct(before.summary.successRate)} · B ${after.evalId}: ${pct(after.summary.successRate)}`,
  );
  const word = (x: boolean | null) => (x === null ? 'absent' : x ? 'pass' : 'fail');
  for (const f of flips) print(`${f.taskId}: ${word(f.before)} → ${word(f.after)}`);
  print(`${flips.length} task(s) flipped`);
  return 0;
}

/** The `cua eval` command; returns the exit code (0 done, 2 a bad task set). */
export async function evalCommand(argv: readonly string[], deps: EvalCommandDeps = {}): Promise<number> {
  const print = deps.print ?? console.log;
  if (argv[0] === 'compare') {
    const [, a, b, extra] = argv;
    if (!a || !b || extra !== undefined) throw new UsageError(`compare wants two results\nusage: ${EVAL_USAGE}`);
    return compareCommand(a, b, print);
  }
  const { values, positionals } = parse(argv, OPTIONS, EVAL_USAGE);
  if (values.help) return (print(`usage: ${EVAL_USAGE}`), 0);
  const [file, extra] = positionals;
  if (!file) throw new UsageError(`missing the task set (a file or store:KEY)\nusage: ${EVAL_USAGE}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'\nusage: ${EVAL_USAGE}`);
  const format = values.format as TaskSetFormat | undefined;
  if (format !== undefined && !TASK_SET_FORMATS.includes(format)) {
    throw new UsageError(`--format must be one of ${TASK_SET_FORMATS.join(', ')}, got '${format}'`);
  }
  const filter: TaskFilter = {
    ...(values.filter ? { id: values.filter } : {}),
    ...(values.tag ? { tag: values.tag } : {}),
    ...(values.level ? { level: values.level } : {}),
    ...(values.first ? { first: intFlag(values.first, 'first') } : {}),
  };
  const judge = judgeFlags(values);
  const sites = siteFlags(values.site);
  // The config (and the run store) only when needed: a bad task file is refused before either is read.
  let loaded = deps.config;
  const configOf = () => (loaded ??= loadConfig({ file: values.config }));
  let store: RunStore | undefined;
  const storeOf = () => (store ??= openRunStore(configOf()));
  let taskSet: string;
  let answers: string | undefined;
  let tasks: EvalTask[];
  try {
    taskSet = sourceOf(file);
    answers = values.answers ? sourceOf(values.answers) : undefined;
    tasks = filterTasks(await loadTaskSetFrom({ path: taskSet, format, answers }, storeOf), filter);
  } catch (err) {
    closeStore(store);
    if (!(err instanceof TaskSetError)) throw err;
    print(`error: ${err.message}`);
    return 2;
  }
  if (tasks.length === 0) {
    closeStore(store);
    print('error: no task left after the filters');
    return 2;
  }
  const inStore = storeKeyOf(taskSet) !== null;
  // A set in the store has no folder beside it: its scripts (for {{scripted}}) are the project's, or --scripted.
  const scriptsDir = path.resolve(
    values.scripted ?? (inStore ? path.join('eval', 'scripts') : path.join(path.dirname(taskSet), '..', 'scripts')),
  );
  const services: Service[] = [];
  let backend: EvalBackend | undefined;
  try {
    const config = configOf();
    for (const name of sitePlaceholders(tasks)) {
      if (sites[name]) continue;
      const service = await bundledService(name, scriptsDir);
      if (!service) throw new UsageError(`the task set uses {{${name}}}: give it with --site ${name}=URL`);
      services.push(service);
      sites[name] = service.url;
      print(
        `[eval] serving {{${name}}} at ${service.url}${name === 'scripted' ? ` (scripted stand-in model, scripts ${scriptsDir})` : ''}`,
      );
    }
    const evalId = values.id ?? newEvalId();
    const trials = intFlag(values.trials, 'trials') ?? 1;
    const input: EvaluationInput = {
      evalId,
      taskSet: { path: taskSet, ...(format ? { format } : {}), ...(answers ? { answers } : {}), filter, sites },
      concurrency: intFlag(values.concurrency, 'concurrency') ?? 4,
      trials,
      maxRetries: intFlag(values['max-retries'], 'max-retries', 0) ?? 5,
      ...(values['model-base-url'] || values.model
        ? { model: { baseUrl: values['model-base-url'], model: values.model } }
        : {}),
      ...(values['max-steps'] ? { maxSteps: intFlag(values['max-steps'], 'max-steps') } : {}),
      ...(deps.taskDefaults ? { taskDefaults: deps.taskDefaults } : {}),
      ...(deps.continueAsNewAfter ? { continueAsNewAfter: deps.continueAsNewAfter } : {}),
      ...(judge ? { judge } : {}),
    };
    if (!deps.client) {
      backend = await evalBackend({
        config,
        embedded: !!values.embedded,
        print,
        dataDir: deps.dataDir ?? dataDir(),
        uiPort: deps.uiPort === undefined ? 8233 : deps.uiPort,
        localSources: [taskSet, ...(answers ? [answers] : [])].filter((s) => storeKeyOf(s) === null),
        ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : {}),
      });
    }
    const client = deps.client ?? (backend as EvalBackend).client;
    const ownWorker = backend?.started.includes('a worker') ?? false;
    const folders = workerTaskSetFolders(config.evaluation.taskSetDirs);
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
    await ensureEvaluationAttribute(client, config.temporal.namespace);
    let handle: WorkflowHandle<typeof evaluation>;
    try {
      handle = await client.workflow.start<typeof evaluation>(EVALUATION_WORKFLOW, {
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
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // The same id again: follow the evaluation that has it (running or done), nothing is started twice.
      handle = client.workflow.getHandle<typeof evaluation>(evalId);
      print(`[eval] evaluation ${evalId} exists; following it`);
    }
    const uiUrl = values['ui-url'] ?? backend?.uiUrl ?? 'http://127.0.0.1:8233';
    print(`[eval] Temporal UI: ${uiUrl}/namespaces/${config.temporal.namespace}/workflows/${evalId}`);
    if (values.detach) {
      if (backend?.started.length)
        print('[eval] --detach is ignored: the server and worker this command started would stop with it');
      if (!backend?.started.length) return 0;
    }
    const result = await follow(handle, print, deps.pollMs ?? 1000);
    const outDir = path.resolve(values.out ?? path.join(dataDir(), 'evals', evalId));
    let runs: RunStore | undefined;
    try {
      runs = storeOf();
    } catch (err) {
      // The worker's store keys may not be set here: the report is written all the same, without trajectory links.
      print(`[eval] the report links no trajectories: ${(err as Error).message}`);
    }
    const written = await writeEvalReports(result, {
      outDir,
      runsDir: config.runsDir,
      ...(runs ? { store: runs } : {}),
      taskSet,
      options: {
        concurrency: input.concurrency,
        trials,
        maxRetries: input.maxRetries,
        filter,
        ...(judge ? { judge: { ...judge } } : {}),
      },
      uiUrl,
    });
    const s = written.results.summary;
    print(
      `[eval] success rate ${pct(s.successRate)} (${s.passed}/${s.scored} scored) · aborted ${s.aborted} · ` +
        `pass@${s.trials} ${pct(s.passAtK)} · mean ${s.meanScore === null ? '–' : s.meanScore.toFixed(3)}`,
    );
    print(
      `[eval] within step budgets: ${Object.entries(s.stepBudgets)
        .map(([b, v]) => `≤${b}: ${pct(v)}`)
        .join(' · ')}`,
    );
    const j = s.judge;
    if (j && j.judged > 0) {
      print(
        `[eval] judge: ${j.judged} run(s) judged · ${j.passed} pass · ${j.errors} without a verdict` +
          (j.withRules ? ` · agrees with the rules on ${j.agreeWithRules}/${j.withRules}` : ''),
      );
    }
    print(`[eval] results: ${written.json}`);
    print(`[eval] report: ${written.html}`);
    return 0;
  } finally {
    await backend?.close();
    for (const s of services) await s.close().catch(() => undefined);
    closeStore(store);
  }
}

/** A task set (or answers) argument as it travels: `store:KEY` as given (the key checked), a file path made absolute. */
function sourceOf(arg: string): string {
  return storeKeyOf(arg) === null ? path.resolve(arg) : arg;
}

/** An S3 store's connections closed (a folder store holds none). */
function closeStore(store: RunStore | undefined): void {
  if (store instanceof S3RunStore) store.close();
}

/** The `--judge…` flags as the evaluation's judge settings (undefined: none given, the default `auto`). */
function judgeFlags(values: {
  judge?: string;
  'judge-base-url'?: string;
  'judge-model'?: string;
  'judge-endpoint'?: string;
}): JudgeSettings | undefined {
  const kind = values.judge;
  if (kind !== undefined && kind !== 'auto' && !(JUDGE_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--judge must be one of auto, ${JUDGE_KINDS.join(', ')}, got '${kind}'`);
  }
  const settings: JudgeSettings = {
    ...(kind ? { kind: kind as JudgeSettings['kind'] } : {}),
    ...(values['judge-base-url'] ? { baseUrl: values['judge-base-url'] } : {}),
    ...(values['judge-model'] ? { model: values['judge-model'] } : {}),
    ...(values['judge-endpoint'] ? { endpoint: values['judge-endpoint'] } : {}),
  };
  return Object.keys(settings).length ? settings : undefined;
}
