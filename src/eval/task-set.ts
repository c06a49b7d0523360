// Evaluation task sets: our own JSONL format and loaders for the public WebVoyager and Online-Mind2Web files, read
// into one EvalTask shape, with filters. A bad entry is refused with one line naming the file, line and field.
// Pure apart from reading the files; used by the eval activities (worker side) and the eval command (client side).
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { probeExpression } from '../agent/final-page';
import { MAX_PROBE_CHARS } from '../contract/task';
import { JUDGE_KINDS } from './judge';
import { rowOutputSchema } from './task-output-schema';
import type { TaskJudge } from './judge';

export const TASK_SET_FORMATS = ['local', 'webvoyager', 'mind2web'] as const;
export type TaskSetFormat = (typeof TASK_SET_FORMATS)[number];

/** One rule a finished run must satisfy (all of a task's rules must hold for a score of 1). */
export const CheckSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('answer_contains'),
    value: z.string().min(1),
    case_sensitive: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('answer_regex'), pattern: z.string().min(1), flags: z.string().optional() }),
  z.strictObject({
    type: z.literal('answer_number'),
    value: z.number(),
    /** Absolute tolerance (default 0). */
    tolerance: z.number().min(0).optional(),
  }),
  /** A regular expression the URL of the run's last page must match. */
  z.strictObject({ type: z.literal('url_matches'), pattern: z.string().min(1) }),
  /**
   * A JavaScript expression evaluated on the run's last page before its browser is released (the task carries it as
   * a final-page probe): it passes when the value is truthy, or, with `equals`, when the value is that JSON value.
   */
  z.strictObject({
    type: z.literal('page_js'),
    script: z.string().trim().min(1).max(MAX_PROBE_CHARS),
    equals: z.json().optional(),
  }),
  /** The site's own state: GET the URL; the status must match and the body contain / match the given text. */
  z.strictObject({
    type: z.literal('http'),
    url: z.string().min(1),
    status: z.number().int().optional(),
    contains: z.string().optional(),
    regex: z.string().optional(),
  }),
]);
export type Check = z.infer<typeof CheckSchema>;

const JudgeModelSchema = z.strictObject({
  endpoint: z.string().min(1).optional(),
  base_url: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
});

/**
 * A task's judge: a kind (`"webjudge"`, `"rubric"`, `"none"`), or an object with the kind (default: rubric when it
 * lists criteria, else webjudge), the judge's model (a scripted test names its judge script here) and rubric criteria.
 */
export const TaskJudgeSchema = z.union([
  z.enum(JUDGE_KINDS),
  z.strictObject({
    kind: z.enum(JUDGE_KINDS).optional(),
    model: JudgeModelSchema.optional(),
    rubric: z.array(z.string().trim().min(1)).max(30).optional(),
  }),
]);

/** A line of our own JSONL task set. */
export const LocalTaskSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, dot, dash, underscore (max 64)'),
  instruction: z.string().trim().min(1, 'must not be empty'),
  start_url: z.string().min(1).optional(),
  checks: z.array(CheckSchema).default([]),
  max_steps: z.number().int().min(1).max(10_000).optional(),
  tags: z.array(z.string().min(1)).default([]),
  /** Grouping for reports (the site's name); default: the start URL's host. */
  site: z.string().min(1).optional(),
  level: z.string().min(1).optional(),
  /**
   * What a question to the user gets as its reply (a task that asks needs one to run unattended): this text, or with
   * `true` a standing approval to go on without making anything up.
   */
  auto_reply: z.union([z.string().min(1), z.literal(true)]).optional(),
  /** Per-task model choice; a scripted test names its script here (`model`). */
  model: z
    .strictObject({
      endpoint: z.string().min(1).optional(),
      base_url: z.string().min(1).optional(),
      model: z.string().min(1).optional(),
    })
    .optional(),
  reference_answer: z.string().optional(),
  judge: TaskJudgeSchema.optional(),
  /** A saved sign-in the task starts with (docs/signins.md); tasks on one sign-in run one at a time. */
  signin: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a sign-in name: lower-case letters, digits, dot, dash, underscore (max 64)')
    .optional(),
  /** With `signin`: the task's last page state is saved back under the name when it ends. */
  signin_refresh: z.boolean().optional(),
  /** The task's output schema (docs/output.md): a JSON Schema object, or a JSON file's path relative to the set. */
  output_schema: z.union([z.record(z.string(), z.unknown()), z.string().min(1)]).optional(),
});

/** A task of any format, as the evaluation runs it. */
export interface EvalTask {
  id: string;
  instruction: string;
  startUrl: string | null;
  checks: Check[];
  maxSteps: number | null;
  tags: string[];
  site: string | null;
  level: string | null;
  /** A text, or true for the standing approval (src/agent/reply.ts). */
  autoReply: string | true | null;
  model: { endpoint?: string; baseUrl?: string; model?: string } | null;
  referenceAnswer: string | null;
  /** The task's own judge choice (our format only); null: the evaluation's `--judge` decides. */
  judge: TaskJudge | null;
  /** A saved sign-in the task starts with (our format only), and whether it is saved back when the task ends. */
  signin?: string;
  signinRefresh?: boolean;
  /** The task's output schema (our format only; docs/output.md). */
  outputSchema?: Record<string, unknown>;
}

export class TaskSetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const WebVoyagerSchema = z.looseObject({
  web_name: z.string().min(1),
  id: z.string().min(1),
  ques: z.string().trim().min(1, 'must not be empty'),
  web: z.string().min(1),
});

const Mind2WebSchema = z.looseObject({
  task_id: z.string().min(1),
  confirmed_task: z.string().trim().min(1, 'must not be empty'),
  website: z.string().min(1),
  reference_length: z.number().int().min(0).optional(),
  level: z.string().min(1).optional(),
});

/** WebVoyager's reference answers: one JSON object keyed by site name, each with `answers: [{id, ans, type}]`. */
const WebVoyagerAnswersSchema = z.record(
  z.string(),
  z.looseObject({
    answers: z.array(
      z.looseObject({ id: z.union([z.number(), z.string()]), ans: z.string(), type: z.string().optional() }),
    ),
  }),
);

function issueLine(where: string, err: z.ZodError): string {
  const issue = err.issues[0];
  const field = issue?.path.join('.') || '(entry)';
  return `${where}: field '${field}': ${issue?.message ?? 'invalid'}`;
}

/** An id usable in a workflow id: other characters become `_`. */
export function safeTaskId(raw: string): string {
  const id = raw.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[^A-Za-z0-9]+/, '');
  return id.slice(0, 64) || 'task';
}

function hostOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/**
 * Where JSON.parse stopped, without the text around it (V8 quotes the input, and a worker may be pointed at a file
 * that is not its operator's task set: its words must not come back in the error).
 */
function jsonFault(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  const at = /position (\d+)/.exec(message);
  if (at) return `at character ${Number(at[1]) + 1}`;
  if (/Unexpected end/i.test(message)) return 'it ends too early';
  return 'an unexpected character';
}

/** The records of a JSON Lines file (blank lines and `//` comment lines skipped), each with its line number. */
function jsonLines(file: string, text: string): { line: number; value: unknown }[] {
  const out: { line: number; value: unknown }[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('//')) return;
    try {
      out.push({ line: i + 1, value: JSON.parse(line) });
    } catch (err) {
      throw new TaskSetError(`${file}:${i + 1}: not valid JSON (${jsonFault(err)})`);
    }
  });
  return out;
}

/** A JSON array file's entries (Online-Mind2Web ships one array), numbered from 1 as "entries". */
function jsonArrayOrLines(file: string, text: string): { line: number; value: unknown }[] {
  if (!text.trimStart().startsWith('[')) return jsonLines(file, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TaskSetError(`${file}: not valid JSON (${jsonFault(err)})`);
  }
  return (json as unknown[]).map((value, i) => ({ line: i + 1, value }));
}

const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (body: string) => unknown;

/** Why a `page_js` script is no JavaScript expression (compiled here, never run), or null. */
function scriptProblem(script: string): string | null {
  try {
    new AsyncFunction(probeExpression(script));
    return null;
  } catch (err) {
    return `not a JavaScript expression (${(err as Error).message})`;
  }
}

/** The distinct `page_js` scripts of a task, in order: what its run evaluates on the final page. */
export function pageProbesOf(checks: readonly Check[]): string[] {
  return [...new Set(checks.flatMap((c) => (c.type === 'page_js' ? [c.script] : [])))];
}

function fromLocal(file: string, line: number, value: unknown, setWhere: string): EvalTask {
  const parsed = LocalTaskSchema.safeParse(value);
  if (!parsed.success) throw new TaskSetError(issueLine(`${file}:${line}`, parsed.error));
  const t = parsed.data;
  if (t.signin_refresh && t.signin === undefined) {
    throw new TaskSetError(`${file}:${line}: field 'signin_refresh': needs a signin to save back to`);
  }
  for (const [i, c] of t.checks.entries()) {
    if (c.type === 'page_js') {
      const problem = scriptProblem(c.script);
      if (problem) throw new TaskSetError(`${file}:${line}: field 'checks.${i}.script': ${problem}`);
      continue;
    }
    const pattern =
      c.type === 'answer_regex' || c.type === 'url_matches' ? c.pattern : c.type === 'http' ? c.regex : undefined;
    if (pattern === undefined) continue;
    try {
      new RegExp(pattern, c.type === 'answer_regex' ? c.flags : undefined);
    } catch (err) {
      throw new TaskSetError(
        `${file}:${line}: field 'checks.${i}': bad regular expression (${(err as Error).message})`,
      );
    }
  }
  return {
    id: t.id,
    instruction: t.instruction,
    startUrl: t.start_url ?? null,
    checks: t.checks,
    maxSteps: t.max_steps ?? null,
    tags: t.tags,
    site: t.site ?? null,
    level: t.level ?? null,
    autoReply: t.auto_reply ?? null,
    model: t.model ? { endpoint: t.model.endpoint, baseUrl: t.model.base_url, model: t.model.model } : null,
    referenceAnswer: t.reference_answer ?? null,
    judge: taskJudge(t.judge),
    ...(t.signin !== undefined ? { signin: t.signin } : {}),
    ...(t.signin_refresh ? { signinRefresh: true } : {}),
    ...outputSchemaOf(t.output_schema, setWhere, `${file}:${line}`),
  };
}

/** A row's output schema as the task carries it; a bad one is one line naming the file, line and field. */
function outputSchemaOf(value: Record<string, unknown> | string | undefined, setWhere: string, where: string) {
  if (value === undefined) return {};
  try {
    return { outputSchema: rowOutputSchema(value, setWhere) };
  } catch (err) {
    throw new TaskSetError(`${where}: field 'output_schema': ${(err as Error).message}`);
  }
}

function taskJudge(j: z.infer<typeof TaskJudgeSchema> | undefined): TaskJudge | null {
  if (j === undefined) return null;
  if (typeof j === 'string') return { kind: j, model: null, rubric: [] };
  const rubric = j.rubric ?? [];
  return {
    kind: j.kind ?? (rubric.length ? 'rubric' : 'webjudge'),
    model: j.model ? { endpoint: j.model.endpoint, baseUrl: j.model.base_url, model: j.model.model } : null,
    rubric,
  };
}

function fromWebVoyager(file: string, line: number, value: unknown, answers: Map<string, string>): EvalTask {
  const parsed = WebVoyagerSchema.safeParse(value);
  if (!parsed.success) throw new TaskSetError(issueLine(`${file}:${line}`, parsed.error));
  const t = parsed.data;
  // Ids look like "Allrecipes--3"; the answers file keys by site name and the number after the dashes.
  const num = /--(\d+)$/.exec(t.id)?.[1];
  return {
    id: safeTaskId(t.id),
    instruction: t.ques,
    startUrl: t.web,
    checks: [],
    maxSteps: null,
    tags: [t.web_name],
    site: t.web_name,
    level: null,
    autoReply: null,
    model: null,
    referenceAnswer: (num !== undefined ? answers.get(`${t.web_name}#${num}`) : undefined) ?? null,
    judge: null,
  };
}

function fromMind2Web(file: string, line: number, value: unknown): EvalTask {
  const parsed = Mind2WebSchema.safeParse(value);
  if (!parsed.success) throw new TaskSetError(issueLine(`${file}:${line}`, parsed.error));
  const t = parsed.data;
  const url = /^https?:\/\//.test(t.website) ? t.website : `https://${t.website}`;
  return {
    id: safeTaskId(t.task_id),
    instruction: t.confirmed_task,
    startUrl: url,
    checks: [],
    maxSteps: null,
    tags: t.level ? [t.level] : [],
    site: hostOf(url) ?? t.website,
    level: t.level ?? null,
    autoReply: null,
    model: null,
    referenceAnswer: null,
    judge: null,
  };
}

/** WebVoyager's reference answers (`where` names them in errors: a file path or `store:KEY`). */
function parseAnswers(where: string, text: string): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TaskSetError(`${where}: cannot read the reference answers (${(err as Error).message})`);
  }
  const parsed = WebVoyagerAnswersSchema.safeParse(json);
  if (!parsed.success) throw new TaskSetError(issueLine(where, parsed.error));
  const map = new Map<string, string>();
  for (const [site, { answers }] of Object.entries(parsed.data)) {
    for (const a of answers) map.set(`${site}#${a.id}`, a.ans);
  }
  return map;
}

/** The format a file is in, from its first entry's field names. */
export function detectFormat(first: unknown): TaskSetFormat {
  if (first && typeof first === 'object') {
    if ('ques' in first && 'web_name' in first) return 'webvoyager';
    if ('confirmed_task' in first) return 'mind2web';
  }
  return 'local';
}

export interface LoadOptions {
  format?: TaskSetFormat;
  /** WebVoyager's reference-answers file. */
  answers?: string;
}

/** A task set's (or its answers') text and where it came from. */
export interface SourceText {
  /** The name entries are reported under (`web.jsonl:3: …`): the file's or key's base name. */
  name: string;
  /** The whole source, for messages: a file path or `store:KEY`. */
  where: string;
  text: string;
}

/** Reads a task set file (and WebVoyager's answers file, when given); every entry is checked, ids must be unique. */
export function loadTaskSet(file: string, opts: LoadOptions = {}): EvalTask[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new TaskSetError(`cannot read the task set ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const set = { name: path.basename(file), where: file, text };
  if (!opts.answers) return parseTaskSet(set, { format: opts.format });
  let answers: string;
  try {
    answers = fs.readFileSync(opts.answers, 'utf8');
  } catch (err) {
    throw new TaskSetError(`${opts.answers}: cannot read the reference answers (${(err as Error).message})`);
  }
  const answersText = { name: path.basename(opts.answers), where: opts.answers, text: answers };
  return parseTaskSet(set, { format: opts.format, answers: answersText });
}

/** A task set from its text (a file's or a run-store object's); every entry is checked and ids must be unique. */
export function parseTaskSet(set: SourceText, opts: { format?: TaskSetFormat; answers?: SourceText } = {}): EvalTask[] {
  const { name } = set;
  const entries = jsonArrayOrLines(name, set.text);
  const format = opts.format ?? detectFormat(entries[0]?.value);
  const answers =
    format === 'webvoyager' && opts.answers
      ? parseAnswers(opts.answers.where, opts.answers.text)
      : new Map<string, string>();
  const tasks = entries.map(({ line, value }) => {
    if (format === 'webvoyager') return fromWebVoyager(name, line, value, answers);
    if (format === 'mind2web') return fromMind2Web(name, line, value);
    return fromLocal(name, line, value, set.where);
  });
  const seen = new Map<string, number>();
  tasks.forEach((t, i) => {
    const line = entries[i]?.line ?? i + 1;
    const before = seen.get(t.id);
    if (before !== undefined) throw new TaskSetError(`${name}:${line}: field 'id': '${t.id}' repeats line ${before}`);
    seen.set(t.id, line);
  });
  return tasks;
}

export interface TaskFilter {
  /** Ids matching this pattern (`*` wildcards; a string with other regex characters is a regular expression). */
  id?: string;
  tag?: string;
  level?: string;
  /** The first N tasks after the other filters. */
  first?: number;
}

function idMatcher(pattern: string): (id: string) => boolean {
  if (/^[A-Za-z0-9._*-]+$/.test(pattern)) {
    const re = new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
    return (id) => re.test(id);
  }
  const re = new RegExp(pattern);
  return (id) => re.test(id);
}

export function filterTasks(tasks: EvalTask[], filter: TaskFilter = {}): EvalTask[] {
  const idOk = filter.id ? idMatcher(filter.id) : () => true;
  const kept = tasks.filter(
    (t) =>
      idOk(t.id) &&
      (filter.tag === undefined || t.tags.includes(filter.tag) || t.site === filter.tag) &&
      (filter.level === undefined || t.level === filter.level),
  );
  return filter.first === undefined ? kept : kept.slice(0, filter.first);
}

/** `{{name}}` placeholders (start URLs, check URLs) replaced by the named site's base URL; an unknown one is an error. */
export function substituteSites(text: string, sites: Record<string, string>, where: string): string {
  return text.replace(/\{\{([A-Za-z0-9_-]+)\}\}/g, (_, name: string) => {
    const url = sites[name];
    if (url === undefined)
      throw new TaskSetError(`${where}: no site named '${name}' (give it with --site ${name}=URL)`);
    return url.replace(/\/$/, '');
  });
}

/** The placeholders a task set uses (so a command can start or ask for those sites). */
export function sitePlaceholders(tasks: EvalTask[]): string[] {
  const names = new Set<string>();
  for (const t of tasks) {
    const texts = [
      t.startUrl ?? '',
      t.model?.baseUrl ?? '',
      t.judge?.model?.baseUrl ?? '',
      ...t.checks.map((c) => (c.type === 'http' ? c.url : '')),
    ];
    for (const s of texts) for (const m of s.matchAll(/\{\{([A-Za-z0-9_-]+)\}\}/g)) names.add(m[1] ?? '');
  }
  return [...names].sort();
}
