// `cua run "<instruction>"`: start a task and follow it, one line per step; reply to its questions from the terminal.
import fs from 'node:fs';
import readline from 'node:readline';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { ENVIRONMENT_NAME } from '../../src/contract/task';
import { loadConfig } from '../../src/runtime/config';
import { endpointFamilies } from '../../src/runtime/config-models';
import type { PendingQuestion, StepSummary, TaskResult, TaskStatus } from '../../src/contract/task';
import { cacheFlag, familyFlag, intFlag, parse, UsageError } from '../args';
import { agentClientFor, parseTask } from '../../client/client';
import type { NewTask } from '../../client/client';
import { newTaskOf } from '../../client/new-task';
import { modelWaitLine, newTaskId, replyToTask, storeWaitLine } from '../../client/tasks';
import { watchTask } from '../../client/watch';
import { outputLine } from '../../src/agent/output-extract';
import { parseOutputSchemaText } from '../../src/agent/output-schema';
import { approveRuleFlags } from './approve-rule';
import { signinFlags } from './signin';
import { signinWaitLine } from './tasks';

export const RUN_USAGE =
  'npx cua run "<instruction>" [--env browser|desktop|NAME] [--url URL] [--max-steps N] [--family NAME]\n' +
  '       [--identity NAME] [--id ID] [--cache NAME] [--signin NAME [--signin-refresh]] [--detach] [--json]\n' +
  '       [--model-base-url URL] [--model NAME] [--auto-reply [TEXT]] [--ask-timeout SECONDS] [--images-kept N]\n' +
  '       [--token-budget N] [--max-invalid-outputs N] [--terminate-on-parse-error] [--config FILE]\n' +
  '       [--max-cost USD] [--max-tokens N] [--max-minutes M] [--approve-rule RULE]... [--output-schema FILE]';

const OPTIONS = {
  env: { type: 'string' },
  url: { type: 'string' },
  'max-steps': { type: 'string' },
  profile: { type: 'string' },
  family: { type: 'string' },
  identity: { type: 'string' },
  id: { type: 'string' },
  detach: { type: 'boolean' },
  json: { type: 'boolean' },
  'model-base-url': { type: 'string' },
  model: { type: 'string' },
  'auto-reply': { type: 'string' },
  'ask-timeout': { type: 'string' },
  'terminate-on-parse-error': { type: 'boolean' },
  'max-invalid-outputs': { type: 'string' },
  'max-invalid-replies': { type: 'string' }, // the old name of --max-invalid-outputs, still accepted
  'images-kept': { type: 'string' },
  'token-budget': { type: 'string' },
  'max-cost': { type: 'string' },
  'max-tokens': { type: 'string' },
  'max-minutes': { type: 'string' },
  cache: { type: 'string' },
  signin: { type: 'string' },
  'signin-refresh': { type: 'boolean' },
  'approve-rule': { type: 'string', multiple: true },
  'output-schema': { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface FollowOptions {
  json: boolean;
  /** Gets the reply to a question; null = leave the task waiting and stop following. */
  ask: (question: string) => Promise<string | null>;
  print: (line: string) => void;
  pollMs?: number;
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

/** `redecided`: an earlier decision of the same step was superseded (its worker was lost mid-step). */
export function stepLine(s: StepSummary, redecided = false): string {
  const head = `step ${String(s.step).padStart(3)} · `;
  const again = redecided ? '(re-decided after a lost worker) ' : '';
  if (s.invalid !== undefined) return `${head}${again}${s.summary}  — ${clip(s.invalid, 110)}`;
  const short = clip(s.thoughts, 90);
  return `${head}${again}${s.summary}${short ? `  — ${short}` : ''}`;
}

/** Prints `prompt` and reads one line from stdin: its trimmed text, or null when stdin closes first. */
export function promptLine(prompt: string): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: false });
    let gotLine = false;
    process.stdout.write(prompt);
    rl.once('line', (line) => {
      gotLine = true;
      rl.close();
      resolve(line.trim());
    });
    rl.once('close', () => {
      if (gotLine) return;
      process.stdout.write('\n');
      resolve(null);
    });
  });
}

export async function readReplyFromTerminal(question: string): Promise<string | null> {
  const line = await promptLine(`\nThe agent asks: ${question}\nYour reply (empty line = leave it waiting): `);
  return line || null;
}

/** What a person is asked: the question, and for a provider's check what a yes and a no do. */
export function questionText(question: Pick<PendingQuestion, 'text' | 'kind'>): string {
  if (question.kind !== 'provider_check') return question.text;
  return `${question.text}\n(The model's provider asks you to confirm: reply yes to go ahead; any other reply declines.)`;
}

/**
 * Follows a task until it ends or waits for a reply nobody gives here: the client's watch (client/watch.ts) printed a
 * line per step, with each question put to `opts.ask` once.
 */
export async function followTask(
  client: Client,
  handle: WorkflowHandle,
  opts: FollowOptions,
): Promise<{ result: TaskResult | null; waiting: TaskStatus | null; failure: string | null }> {
  // The workflow reports a question until it has recorded the reply; never ask the same one twice.
  const replied = new Set<string>();
  for await (const event of watchTask(handle, { pollMs: opts.pollMs ?? 300 })) {
    if (event.type === 'end') return { result: event.result, waiting: null, failure: event.failure };
    if (event.type === 'step') {
      if (!opts.json) opts.print(stepLine(event.step, event.redecided));
      continue;
    }
    const { status } = event;
    if (event.waitingForSession && !opts.json) {
      opts.print("waiting for a session: every worker's slots are taken; the task starts when one frees up");
    }
    if (event.waitingForModel && !opts.json) opts.print(modelWaitLine(event.waitingForModel));
    if (event.waitingForStore && !opts.json) opts.print(storeWaitLine(event.waitingForStore));
    if (status.signinWait && !opts.json) opts.print(signinWaitLine(status.signinWait));
    if (status.status !== 'waiting_for_user' || !status.question || replied.has(status.question.id)) continue;
    const reply = await opts.ask(questionText(status.question));
    if (reply === null) return { result: null, waiting: status, failure: null };
    await replyToTask(client, handle.workflowId, reply, status.question.id);
    replied.add(status.question.id);
  }
  throw new Error(`following task ${handle.workflowId} stopped before it ended`);
}

/**
 * `--auto-reply` given without a text (last, or before another flag) means the standing approval; node's parser
 * wants a value, so the bare flag is taken out before parsing. A text that starts with '-' is given as
 * `--auto-reply=-…`.
 */
export function bareAutoReply(argv: readonly string[]): { argv: string[]; bare: boolean } {
  const end = argv.includes('--') ? argv.indexOf('--') : argv.length; // after '--' everything is the instruction
  const at = argv.findIndex((a, i) => i < end && a === '--auto-reply' && (argv[i + 1] ?? '-').startsWith('-'));
  return at < 0 ? { argv: [...argv], bare: false } : { argv: argv.filter((_a, i) => i !== at), bare: true };
}

export async function runCommand(rawArgv: readonly string[]): Promise<number> {
  const flags = await runFlags(rawArgv);
  if (!flags) {
    console.log(`usage: ${RUN_USAGE}`);
    return 0;
  }
  const { task, values, config } = flags;
  const input = parseTask(task); // before connecting: a bad flag is reported even with no server up
  const agent = await agentClientFor(config);
  await agent.start(task);
  if (values.detach) {
    console.log(values.json ? JSON.stringify({ id: input.runId }) : input.runId);
    return 0;
  }
  if (!values.json) console.log(`task ${input.runId} started on queue ${config.taskQueue}`);
  const follow = () =>
    followTask(agent.temporal, agent.temporal.workflow.getHandle(input.runId), {
      json: !!values.json,
      ask: values.json ? async () => null : readReplyFromTerminal,
      print: (l) => console.log(l),
    });
  let outcome = await follow();
  let code = report(input.runId, outcome, !!values.json);
  // At a terminal, a finished task takes a follow-up in the same run, page and history (an empty line ends it).
  while (outcome.result?.status === 'complete' && !values.json && process.stdin.isTTY) {
    const next = await promptLine('\nFollow-up task (empty line = done): ');
    if (!next) break;
    await agent.continue(input.runId, next);
    outcome = await follow();
    code = report(input.runId, outcome, false);
  }
  return code;
}

/**
 * `cua run`'s flags as the task they start, with the configuration they load (null: --help). `cua schedule create`
 * reads the same flags after its `--`.
 */
export async function runFlags(rawArgv: readonly string[]) {
  const bare = bareAutoReply(rawArgv);
  const { values, positionals } = parse(bare.argv, OPTIONS, RUN_USAGE);
  if (values.help) return null;
  const instruction = positionals.join(' ').trim();
  if (!instruction) throw new UsageError(`missing instruction\nusage: ${RUN_USAGE}`);
  const family = familyFlag(values);
  if (values.env && !ENVIRONMENT_NAME.test(values.env)) {
    throw new UsageError(
      `--env must be browser, desktop, or the name of an environment your workers host (lower-case letters, ` +
        `digits, dashes), got '${values.env}'`,
    );
  }
  if (values.env === 'desktop' && values.url) {
    throw new UsageError('--url is for the browser; a desktop task starts on an empty desktop (drop --url)');
  }
  const config = loadConfig({ file: values.config });
  const askTimeout = values['ask-timeout'] === undefined ? undefined : Number(values['ask-timeout']);
  if (askTimeout !== undefined && !(askTimeout > 0))
    throw new UsageError('--ask-timeout must be a positive number of seconds');
  // No family named: the endpoint's declared one (models.default.family), as the worker checks it.
  const taskFamily = family ?? (values.env === 'desktop' ? undefined : endpointFamilies(config.models)['default']);
  const task: NewTask = {
    ...newTaskOf({
      id: values.id ?? newTaskId(),
      instruction,
      environment: values.env,
      startUrl: values.url,
      maxSteps: intFlag(values['max-steps'], 'max-steps'),
      baseUrl: values['model-base-url'],
      model: values.model,
    }),
    ...(taskFamily ? { profile: taskFamily } : {}),
    ...(values.identity !== undefined ? { identity: values.identity } : {}),
    ...(values.cache !== undefined ? { cache: { name: cacheFlag(values.cache, values.env) } } : {}),
    ...(bare.bare ? { autoReply: true } : values['auto-reply'] ? { autoReply: values['auto-reply'] } : {}),
    ...(askTimeout ? { askTimeoutSeconds: askTimeout } : {}),
    ...(values['terminate-on-parse-error'] ? { terminateOnParseError: true } : {}),
    ...maxInvalidFlag(values),
    ...(values['images-kept'] ? { imagesKept: intFlag(values['images-kept'], 'images-kept') } : {}),
    ...(values['token-budget'] ? { tokenBudget: intFlag(values['token-budget'], 'token-budget', 0) } : {}),
    ...budgetFlags(values),
    ...(await signinFlags(config, values.signin, values['signin-refresh'], values.env)),
    ...approveRuleFlags(values['approve-rule'], values.env),
    ...outputSchemaFlag(values['output-schema']),
  };
  return { task, values, config };
}

export function report(
  id: string,
  outcome: { result: TaskResult | null; waiting: TaskStatus | null; failure: string | null },
  json: boolean,
): number {
  if (json) {
    const status = outcome.result?.status ?? outcome.waiting?.status ?? 'failed';
    console.log(JSON.stringify({ id, status, ...outcome }));
  } else if (outcome.waiting) {
    console.log(`task ${id} is waiting for your reply; reply later with: npx cua reply ${id} "<text>"`);
  } else if (outcome.result?.status === 'failed') {
    const r = outcome.result;
    console.log(`task ${id}: failed (${r.endReason}) after ${r.steps} step(s) — ${r.error ?? outcome.failure}`);
  } else if (outcome.result) {
    const r = outcome.result;
    const why = r.endReason && r.endReason !== r.status ? ` (${r.endReason})` : '';
    console.log(
      `task ${id}: ${r.status}${why} after ${r.steps} step(s)${r.answer !== null ? `\nanswer: ${r.answer}` : ''}`,
    );
    const output = outputLine(r.output, r.outputError);
    if (output) console.log(output);
  } else {
    console.log(`task ${id}: failed — ${outcome.failure}`);
  }
  if (outcome.waiting) return 0;
  if (outcome.result?.status === 'complete') return 0;
  return outcome.result?.status === 'max_rounds' ? 3 : 1;
}

/** `--output-schema FILE`: the task's output schema (docs/output.md), read and checked here (one line when bad). */
export function outputSchemaFlag(file: string | undefined): Partial<NewTask> {
  if (file === undefined) return {};
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--output-schema ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  try {
    return { outputSchema: parseOutputSchemaText(text) };
  } catch (err) {
    throw new UsageError(`--output-schema ${file}: ${(err as Error).message}`);
  }
}

/** `--max-cost 0.50` (or `$0.50`), `--max-tokens N`, `--max-minutes M`: the task's budgets (each asks when reached). */
/** `--max-invalid-outputs` (or its old name) as the input's `maxInvalidReplies` (a wire name). */
function maxInvalidFlag(values: { 'max-invalid-outputs'?: string; 'max-invalid-replies'?: string }): Partial<NewTask> {
  const [name, raw] =
    values['max-invalid-outputs'] !== undefined
      ? ['max-invalid-outputs', values['max-invalid-outputs']]
      : ['max-invalid-replies', values['max-invalid-replies']];
  return raw ? { maxInvalidReplies: intFlag(raw, name) } : {};
}

function budgetFlags(values: { 'max-cost'?: string; 'max-tokens'?: string; 'max-minutes'?: string }): Partial<NewTask> {
  const positive = (name: string, raw: string | undefined): number | undefined => {
    if (raw === undefined) return undefined;
    const n = Number(raw.replace(/^\$/, ''));
    if (!(n > 0)) throw new UsageError(`--${name} must be a positive number, got '${raw}'`);
    return n;
  };
  const maxCost = positive('max-cost', values['max-cost']);
  const maxTokens = intFlag(values['max-tokens'], 'max-tokens');
  const maxMinutes = positive('max-minutes', values['max-minutes']);
  if (maxCost === undefined && maxTokens === undefined && maxMinutes === undefined) return {};
  return {
    budget: {
      ...(maxCost !== undefined ? { maxCost } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(maxMinutes !== undefined ? { maxMinutes } : {}),
    },
  };
}
