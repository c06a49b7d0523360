// The LLM judge of a finished run, after Online-Mind2Web's WebJudge: key points from the task, the run's screenshots
// rated for relevance (the best few kept), then a verdict with reasons; or the rubric variant (criteria scored 0–1 and
// an overall score). A task's reference answer goes along as a hint (recorded as `reference_answer` in the metadata).
// The model is reached through `ask` (the activity passes an OpenAI-compatible client), so this module is pure apart
// from the screenshots it loads through the run. An output that cannot be read is no verdict: the outcome carries a
// null score and the error, never a pass.
import { decodeFirstObject } from '../model/lenient-json';
import type { ChatMessage } from '../model/client';
import { keyPointsMessages, relevanceMessages, rubricMessages, verdictMessages } from './judge-prompts';
import type { EvidenceShot } from './judge-prompts';

export const JUDGE_KINDS = ['webjudge', 'rubric', 'none'] as const;
export type JudgeKind = (typeof JUDGE_KINDS)[number];
/** The judge's calls, one kind per stage (the scripted model tells them apart by the `x-cua-call` header). */
export const JUDGE_STAGES = ['key_points', 'relevance', 'verdict', 'rubric'] as const;
export type JudgeStage = (typeof JUDGE_STAGES)[number];

/** Verifier names in verification.jsonl (unique per judge, beside the rules' `eval_rules`). */
export const JUDGE_VERIFIERS = { webjudge: 'webjudge', rubric: 'rubric_judge' } as const;
/** The result types of the run folder format (docs/architecture.md#the-run-folder-format) for each judge. */
export const JUDGE_RESULT_TYPES = { webjudge: 'web_judge', rubric: 'mm_rubric' } as const;

export const DEFAULT_RELEVANCE_THRESHOLD = 3;
export const DEFAULT_MAX_SCREENSHOTS = 4;
/** Screenshots rated at most (the last ones of the run): one model call each. */
export const DEFAULT_MAX_CANDIDATES = 30;

/** What the judge sees of a run. */
export interface JudgedRun {
  task: string;
  answer: string | null;
  /** One line per action, in order. */
  actions: string[];
  /** The run's screenshots in order; `load` gives a data URL. */
  screenshots: { path: string; label: string; load(): Promise<string> }[];
  /** The task's reference answer (WebVoyager's, our `reference_answer`): a hint to the judge, possibly out of date. */
  reference?: string | null;
}

/** One model call: the stage, its messages, and (relevance) the screenshot's position among those rated. */
export type JudgeAsk = (stage: JudgeStage, messages: ChatMessage[], item?: number) => Promise<string>;

export interface JudgeOptions {
  /** Rubric criteria given by the task set (the rubric judge); absent: the key points. */
  rubric?: readonly string[];
  threshold?: number;
  maxScreenshots?: number;
  maxCandidates?: number;
}

export interface JudgeOutcome {
  kind: Exclude<JudgeKind, 'none'>;
  verifier: string;
  resultType: 'web_judge' | 'mm_rubric';
  /** 1/0 (webjudge), 0–1 (rubric); null when the judge gave no readable verdict. */
  score: number | null;
  reasoning: string;
  /** Why there is no score (`unreadable_key_points`, `unreadable_verdict`, …), else null. */
  error: string | null;
  metadata: Record<string, unknown>;
}

/** A judge output that says nothing this module can read. */
export class JudgeOutputError extends Error {
  constructor(
    readonly stage: JudgeStage,
    message: string,
    readonly output: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Stage 1's output: the numbered (or bulleted) lines; none is an unreadable output. */
export function parseKeyPoints(output: string): string[] {
  const points = output
    .split('\n')
    .map((l) => /^\s*(?:\d+\s*[.):]|[-*•])\s+(.+?)\s*$/.exec(l)?.[1]?.replace(/^\*\*|\*\*$/g, ''))
    .filter((p): p is string => !!p && p.length > 0);
  if (points.length === 0) throw new JudgeOutputError('key_points', 'the key points output has no list', output);
  return points.slice(0, 20).map((p) => clip(p, 300));
}

/** Stage 2's output: the last `Score: N` (1–5) and the text before it; null when there is no score. */
export function parseRelevance(output: string): { score: number | null; note: string } {
  const matches = [...output.matchAll(/\**\s*score\s*\**\s*[:：=]?\s*\**\s*([1-5])(?:\s*\/\s*5)?\b/gi)];
  const last = matches.at(-1);
  if (!last) return { score: null, note: clip(output.trim(), 300) };
  const note = output
    .slice(0, last.index)
    .replace(/^\s*(reasoning|reason|description)\s*[:：]\s*/i, '')
    .trim();
  return { score: Number(last[1]), note: clip(note, 300) };
}

/** Stage 3's output: the last `Verdict: success|failure` and the reasons before it; none is an unreadable output. */
export function parseVerdict(output: string): { success: boolean; reasons: string } {
  const re = /\**\s*(?:verdict|status)\s*\**\s*[:：]\s*\**\s*["'`]?(success(?:ful)?|failure|failed|fail)\b/gi;
  const last = [...output.matchAll(re)].at(-1);
  if (!last?.[1])
    throw new JudgeOutputError('verdict', 'the verdict output has no "Verdict: success|failure" line', output);
  const reasons = output
    .slice(0, last.index)
    .replace(/^\s*\**\s*reasons?\s*\**\s*[:：]\s*/i, '')
    .trim();
  return { success: /^success/i.test(last[1]), reasons: clip(reasons || output.trim(), 2000) };
}

export interface RubricScores {
  criteria: { criterion: string; score: number; reason: string }[];
  overall: number;
  reasoning: string;
}

const unit = (x: unknown): number | null =>
  typeof x === 'number' && Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : null;

/** The rubric output: one JSON object; `overall` absent is the mean of the criteria. Anything else is unreadable. */
export function parseRubric(output: string, criteria: readonly string[]): RubricScores {
  let value: unknown;
  try {
    value = decodeFirstObject(output).value;
  } catch (err) {
    throw new JudgeOutputError('rubric', `the rubric output is no JSON object (${(err as Error).message})`, output);
  }
  const obj = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  const listed = Array.isArray(obj.criteria) ? (obj.criteria as unknown[]) : [];
  const scored = listed.flatMap((c, i) => {
    const item = (c && typeof c === 'object' ? c : {}) as Record<string, unknown>;
    const score = unit(item.score);
    if (score === null) return [];
    const n = typeof item.criterion === 'number' ? item.criterion - 1 : i;
    const name = typeof item.criterion === 'string' ? item.criterion : (criteria[n] ?? `criterion ${n + 1}`);
    return [
      { criterion: clip(name, 300), score, reason: clip(typeof item.reason === 'string' ? item.reason : '', 600) },
    ];
  });
  const overall = unit(obj.overall) ?? (scored.length ? scored.reduce((a, c) => a + c.score, 0) / scored.length : null);
  if (overall === null) throw new JudgeOutputError('rubric', 'the rubric output has no scores', output);
  const reasoning = typeof obj.reasoning === 'string' ? obj.reasoning : '';
  return { criteria: scored, overall, reasoning: clip(reasoning, 2000) };
}

interface Rated {
  index: number;
  path: string;
  label: string;
  score: number | null;
  note: string;
}

/** Stage 2 over the run: rate the last `maxCandidates` screenshots, keep the best at or above the threshold. */
async function pickScreenshots(
  run: JudgedRun,
  points: readonly string[],
  ask: JudgeAsk,
  opts: JudgeOptions,
): Promise<{ rated: Rated[]; kept: (Rated & { url: string })[] }> {
  const threshold = opts.threshold ?? DEFAULT_RELEVANCE_THRESHOLD;
  const max = opts.maxScreenshots ?? DEFAULT_MAX_SCREENSHOTS;
  const candidates = run.screenshots.slice(-(opts.maxCandidates ?? DEFAULT_MAX_CANDIDATES));
  const rated: Rated[] = [];
  const urls = new Map<number, string>();
  for (const [index, shot] of candidates.entries()) {
    const url = await shot.load();
    const { score, note } = parseRelevance(
      await ask('relevance', relevanceMessages(run.task, points, shot.label, url), index),
    );
    rated.push({ index, path: shot.path, label: shot.label, score, note });
    if (score !== null && score >= threshold) urls.set(index, url);
  }
  // The best by score (a later screenshot wins a tie: it shows where the run ended), then back in run order.
  const kept = rated
    .filter((r) => urls.has(r.index))
    .sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || b.index - a.index)
    .slice(0, max)
    .sort((a, b) => a.index - b.index)
    .map((r) => ({ ...r, url: urls.get(r.index) ?? '' }));
  return { rated, kept };
}

/** Judges one run; an output it cannot read becomes an outcome with a null score and the error (model errors throw). */
export async function judgeRun(
  kind: Exclude<JudgeKind, 'none'>,
  run: JudgedRun,
  ask: JudgeAsk,
  opts: JudgeOptions = {},
): Promise<JudgeOutcome> {
  const base = { kind, verifier: JUDGE_VERIFIERS[kind], resultType: JUDGE_RESULT_TYPES[kind] } as const;
  const reference = run.reference?.trim() ? run.reference.trim() : null;
  // Recorded first: a verdict (or an unreadable output) given with a reference says so.
  const metadata: Record<string, unknown> = reference ? { reference_answer: clip(reference, 1000) } : {};
  try {
    const given = kind === 'rubric' && opts.rubric?.length ? [...opts.rubric] : null;
    const points = given ?? parseKeyPoints(await ask('key_points', keyPointsMessages(run.task, reference)));
    metadata[given ? 'criteria' : 'key_points'] = points;
    const { rated, kept } = await pickScreenshots(run, points, ask, opts);
    metadata.screenshots = rated.map((r) => ({
      path: r.path,
      relevance: r.score,
      kept: kept.some((k) => k.index === r.index),
    }));
    const shots: EvidenceShot[] = kept.map((k) => ({ label: k.label, url: k.url, note: k.note }));
    if (kind === 'webjudge') {
      const v = parseVerdict(
        await ask('verdict', verdictMessages(run.task, points, run.actions, run.answer, shots, reference)),
      );
      metadata.verdict = v.success ? 'success' : 'failure';
      return { ...base, score: v.success ? 1 : 0, reasoning: v.reasons, error: null, metadata };
    }
    const r = parseRubric(
      await ask('rubric', rubricMessages(run.task, points, run.actions, run.answer, shots, reference)),
      points,
    );
    metadata.criteria_scores = r.criteria;
    metadata.overall = r.overall;
    const detail = r.criteria.map((c) => `${c.criterion}: ${c.score}${c.reason ? ` (${c.reason})` : ''}`).join('; ');
    const reasoning = [r.reasoning, detail].filter(Boolean).join(' — ') || `overall ${r.overall}`;
    return { ...base, score: r.overall, reasoning: clip(reasoning, 3000), error: null, metadata };
  } catch (err) {
    if (!(err instanceof JudgeOutputError)) throw err;
    metadata.reply = clip(err.output, 1000); // `reply`: the eval record's field (a wire name)
    return {
      ...base,
      score: null,
      reasoning: `judge error: ${err.message}; no verdict recorded`,
      error: `unreadable_${err.stage}`,
      metadata,
    };
  }
}

/** The judge settings an evaluation passes down (from `--judge…` flags). */
export interface JudgeSettings {
  /** `auto` (default): tasks without rule checks are judged by webjudge when a judge endpoint is configured. */
  kind?: JudgeKind | 'auto';
  endpoint?: string;
  baseUrl?: string;
  model?: string;
  threshold?: number;
  maxScreenshots?: number;
}

/** A task's own judge choice (task set field `judge`). */
export interface TaskJudge {
  kind: JudgeKind;
  model: { endpoint?: string; baseUrl?: string; model?: string } | null;
  rubric: string[];
}

/**
 * The judge a task gets, or null. `--judge none` turns judging off; else the task's own choice; else an explicit
 * `--judge KIND` for every task (rule-checked ones add it); else (auto) webjudge for a task without rule checks when a
 * judge endpoint is configured (`judgeConfigured`: the flags name one, or the worker config has `models.judge`).
 */
export function judgeKindFor(
  task: { checks: readonly unknown[]; judge: TaskJudge | null },
  settings: JudgeSettings | undefined,
  judgeConfigured: boolean,
): Exclude<JudgeKind, 'none'> | null {
  const flag = settings?.kind ?? 'auto';
  if (flag === 'none') return null;
  const own = task.judge?.kind;
  if (own !== undefined) return own === 'none' ? null : own;
  if (flag !== 'auto') return flag;
  const configured = judgeConfigured || !!(settings?.baseUrl || settings?.model || settings?.endpoint);
  return task.checks.length === 0 && configured ? 'webjudge' : null;
}
