// Evaluation activities on the shared queue: read the task set (its size, then pages of task inputs: the set itself
// never enters workflow history whole), score a finished run by its rules into its run folder's verification.jsonl,
// judge a finished run with an LLM (WebJudge or a rubric; src/eval/judge.ts) into the same file, and wait for a task
// run that an earlier run of the evaluation started (a child is awaitable only from the run that started it; after
// continue-as-new the client waits for it here, heartbeating). Run folders are read and written in the configured run
// store (the folder under runsDir, or S3), and so is a task set named `store:KEY` (src/eval/task-source.ts).
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectClient } from '../src/runtime/connect';
import { scoreByRules } from '../src/eval/checks';
import { judgeKindFor, judgeRun, JUDGE_RESULT_TYPES, JUDGE_VERIFIERS } from '../src/eval/judge';
import type { JudgedRun, JudgeOutcome, JudgeSettings, JudgeStage } from '../src/eval/judge';
import { resizeScreenshot, toDataUrl } from '../src/image/screenshot';
import { ModelClient, ModelRequestError } from '../src/model/client';
import type { ModelEndpoint } from '../src/model/client';
import { ModelEndpointMissing, ModelOverrideRefused, resolveModelEndpoint } from '../src/model/endpoint-policy';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER, JUDGE_ITEM_HEADER } from '../src/scripted/server';
import type { Event } from '../src/trajectory/schema';
import { filterTasks, pageProbesOf, parseTaskSet, substituteSites, TaskSetError } from '../src/eval/task-set';
import type { EvalTask } from '../src/eval/task-set';
import { readTaskSetSources, workerTaskSetFolders } from '../src/eval/task-source';
import { FINAL_PAGE_FILE } from '../src/agent/final-page';
import type { FinalPageRecord } from '../src/agent/final-page';
import { openRunStore } from '../src/trajectory/open-store';
import { loadVerification } from '../src/trajectory/reader';
import { TaskInputSchema } from '../src/contract/task';
import type { TaskResult } from '../src/contract/task';
import { outcomeOfFailure } from '../workflows/eval-messages';
import { outcomeOfResult } from '../src/eval/records';
import type {
  AttemptOutcome,
  EvalTaskSpec,
  JudgeRecord,
  JudgeRunInput,
  ScoreRunInput,
  ScoreRunResult,
  SpecOptions,
  TaskSetRef,
} from '../src/eval/records';
import { activitySignal, nonRetryable, RunFiles, withHeartbeat } from './support';
import type { ActivityDeps } from './support';

/** The verifier name of the rule checks in verification.jsonl (one entry per run: scoring twice is a no-op). */
export const RULES_VERIFIER = 'eval_rules';

/** The task-input fields of a task (its run id is added by the workflow); a field no task input accepts is an error. */
export function taskSpec(task: EvalTask, index: number, ref: TaskSetRef, opts: SpecOptions): EvalTaskSpec {
  const sites = ref.sites ?? {};
  const where = `task ${task.id}`;
  const baseUrl = task.model?.baseUrl ? substituteSites(task.model.baseUrl, sites, where) : undefined;
  const model = {
    endpoint: task.model?.endpoint ?? opts.model?.endpoint ?? 'default',
    ...((baseUrl ?? opts.model?.baseUrl) ? { baseUrl: baseUrl ?? opts.model?.baseUrl } : {}),
    ...((task.model?.model ?? opts.model?.model) ? { model: task.model?.model ?? opts.model?.model } : {}),
  };
  const maxSteps = task.maxSteps ?? opts.maxSteps;
  const probes = pageProbesOf(task.checks);
  const input: EvalTaskSpec['input'] = {
    ...opts.taskDefaults,
    instruction: task.instruction,
    ...(task.startUrl ? { startUrl: substituteSites(task.startUrl, sites, where) } : {}),
    ...(maxSteps ? { maxSteps } : {}),
    ...(task.autoReply ? { autoReply: task.autoReply } : {}),
    ...(probes.length ? { finalPageProbes: probes } : {}),
    model,
  };
  const parsed = TaskInputSchema.safeParse({ ...input, runId: 'check' });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TaskSetError(`${where}: field '${issue?.path.join('.') || 'input'}': ${issue?.message ?? 'invalid'}`);
  }
  return { index, taskId: task.id, input };
}

/**
 * The evaluation's activities. `files` is the run store they read and write run folders in (the catalog may pass the
 * one its other activities share; default: one opened on the configured store for this activities object).
 */
export function createEvalActivities(
  deps: Pick<ActivityDeps, 'config'>,
  files: RunFiles = new RunFiles(deps.config.runsDir, openRunStore(deps.config)),
) {
  const cache = new Map<string, { version: string; tasks: EvalTask[] }>();
  let client: Promise<Client> | undefined;

  /**
   * The filtered task set, parsed again only when its text changed (it is read on every call: a file or a run-store
   * object); a bad or missing set is a non-retryable TaskSetError, a store that cannot be reached is retried.
   */
  async function tasksOf(ref: TaskSetRef): Promise<EvalTask[]> {
    try {
      const { set, answers } = await readTaskSetSources(
        ref,
        () => files.store,
        workerTaskSetFolders(deps.config.evaluation.taskSetDirs),
      );
      const version = createHash('sha256')
        .update(set.text)
        .update('\0')
        .update(answers?.text ?? '')
        .digest('hex');
      const key = JSON.stringify([ref.path, ref.format, ref.answers, ref.filter]);
      const hit = cache.get(key);
      if (hit && hit.version === version) return hit.tasks;
      const tasks = filterTasks(parseTaskSet(set, { format: ref.format, ...(answers ? { answers } : {}) }), ref.filter);
      cache.set(key, { version, tasks });
      return tasks;
    } catch (err) {
      if (err instanceof TaskSetError) nonRetryable(err);
      throw err;
    }
  }

  /** The run's final_page.json (its probe results), or null when it has none or it cannot be read. */
  async function finalPageOf(runId: string): Promise<FinalPageRecord | null> {
    const text = await files.store.readText(`${runId}/${FINAL_PAGE_FILE}`);
    if (text === undefined) return null;
    try {
      const record = JSON.parse(text) as FinalPageRecord;
      return Array.isArray(record.probes) ? record : null;
    } catch {
      return null;
    }
  }

  async function taskAt(ref: TaskSetRef, index: number): Promise<EvalTask> {
    const task = (await tasksOf(ref))[index];
    if (!task) nonRetryable(new TaskSetError(`the task set has no task #${index} any more (was it edited?)`));
    return task;
  }

  async function specs(ref: TaskSetRef, opts: SpecOptions, offset: number, limit: number): Promise<EvalTaskSpec[]> {
    const tasks = await tasksOf(ref);
    try {
      return tasks.slice(offset, offset + limit).map((t, i) => taskSpec(t, offset + i, ref, opts));
    } catch (err) {
      if (err instanceof TaskSetError) nonRetryable(err);
      throw err;
    }
  }

  return {
    /** How many tasks the (filtered) set has; every task's input is checked here, so a bad one fails the start. */
    async evalTaskCount(req: { taskSet: TaskSetRef; options: SpecOptions }): Promise<number> {
      return (await specs(req.taskSet, req.options, 0, Number.MAX_SAFE_INTEGER)).length;
    },

    async evalTaskPage(req: {
      taskSet: TaskSetRef;
      options: SpecOptions;
      offset: number;
      limit: number;
    }): Promise<EvalTaskSpec[]> {
      return specs(req.taskSet, req.options, req.offset, req.limit);
    },

    /** Scores a run by its task's rules and records the result in its run folder (once: a retry reads it back). */
    async scoreEvalRun(req: ScoreRunInput): Promise<ScoreRunResult> {
      const task = await taskAt(req.taskSet, req.index);
      const judge =
        req.outcome.endReason === 'complete' ? judgeKindFor(task, req.judge, !!deps.config.models.judge) : null;
      const about = {
        site: task.site ?? hostOf(task.startUrl, req.taskSet),
        level: task.level,
        tags: task.tags,
        judge,
      };
      const writer = await files.writer(req.runId);
      const done = (await loadVerification(writer.store, req.runId))[RULES_VERIFIER];
      if (done) return { score: done.score, reasoning: done.reasoning ?? '', ...about };
      const sites = req.taskSet.sites ?? {};
      const checks = task.checks.map((c) =>
        c.type === 'http' ? { ...c, url: substituteSites(c.url, sites, `task ${task.id}`) } : c,
      );
      let finalUrl: string | null = null;
      for (const e of await writer.events()) {
        if (e.type === 'observation' && e.observation_type === 'environment' && typeof e.url === 'string' && e.url) {
          finalUrl = e.url;
        }
      }
      const rules = await scoreByRules(checks, {
        endReason: req.outcome.endReason,
        answer: req.outcome.answer,
        finalUrl,
        finalPage: await finalPageOf(req.runId),
      });
      await writer.appendVerification({
        verifier_name: RULES_VERIFIER,
        result_type: 'base',
        score: rules.score,
        reasoning: rules.reasoning,
        metadata: {
          task_id: task.id,
          end_reason: req.outcome.endReason,
          steps: req.outcome.steps,
          final_url: finalUrl,
          checks: rules.checks.map((c) => ({ ...c })),
        },
      });
      await writer.writeDataPoint();
      return { score: rules.score, reasoning: rules.reasoning, ...about };
    },

    /**
     * Judges a finished run with the LLM judge and records the verdict in its run folder (once: a retry reads it
     * back). The model is called with heartbeats; a 5xx or network failure throws (Temporal retries with backoff), a
     * refused request (4xx), a missing endpoint or an unreadable reply is recorded as an error result (no score).
     */
    async judgeEvalRun(req: JudgeRunInput): Promise<JudgeRecord> {
      const task = await taskAt(req.taskSet, req.index);
      const verifier = JUDGE_VERIFIERS[req.kind];
      const writer = await files.writer(req.runId);
      const done = (await loadVerification(writer.store, req.runId))[verifier];
      if (done) {
        const error = (done.metadata as { error?: unknown }).error;
        return {
          verifier,
          score: done.score,
          reasoning: done.reasoning ?? '',
          error: typeof error === 'string' ? error : null,
        };
      }
      const record = async (outcome: JudgeOutcome, endpoint: ModelEndpoint | null): Promise<JudgeRecord> => {
        await writer.appendVerification({
          verifier_name: outcome.verifier,
          result_type: outcome.resultType,
          score: outcome.score,
          reasoning: outcome.reasoning,
          metadata: {
            task_id: task.id,
            judge_model: endpoint?.model ?? null,
            judge_base_url: endpoint ? shownUrl(endpoint.baseUrl) : null,
            ...(outcome.error ? { error: outcome.error } : {}),
            ...outcome.metadata,
          },
        });
        await writer.writeDataPoint();
        return { verifier, score: outcome.score, reasoning: outcome.reasoning, error: outcome.error };
      };
      const failed = (error: string, reasoning: string, endpoint: ModelEndpoint | null) =>
        record(
          {
            kind: req.kind,
            verifier,
            resultType: JUDGE_RESULT_TYPES[req.kind],
            score: null,
            reasoning,
            error,
            metadata: {},
          },
          endpoint,
        );
      let endpoint: ModelEndpoint;
      try {
        endpoint = judgeEndpoint(deps.config, task.judge?.model ?? null, req.settings, req.taskSet, task.id);
      } catch (err) {
        if (err instanceof ModelEndpointMissing || err instanceof ModelOverrideRefused) {
          return failed(
            'no_judge_endpoint',
            `judge error: ${err.message.replace(/^no model endpoint/, 'no judge endpoint')}`,
            null,
          );
        }
        throw err;
      }
      const client = new ModelClient(endpoint);
      const ask = (stage: JudgeStage, messages: Parameters<ModelClient['complete']>[0], item?: number) =>
        withHeartbeat(async () => {
          const headers = {
            [CALL_KIND_HEADER]: stage,
            [ENTRY_INDEX_HEADER]: '0',
            ...(item !== undefined ? { [JUDGE_ITEM_HEADER]: String(item) } : {}),
          };
          // A signal per call, tied to the activity's: the client leaves a listener on the signal it is given.
          const parent = activitySignal();
          const own = new AbortController();
          const abort = () => own.abort(parent?.reason);
          parent?.addEventListener('abort', abort);
          try {
            return (await client.complete(messages, { headers, signal: own.signal })).text;
          } finally {
            parent?.removeEventListener('abort', abort);
          }
        });
      const run = {
        ...judgedRun(task.instruction, req.outcome.answer, await writer.events(), (p) => files.readBytes(req.runId, p)),
        reference: task.referenceAnswer,
      };
      let outcome: JudgeOutcome;
      try {
        outcome = await judgeRun(req.kind, run, ask, {
          rubric: task.judge?.rubric,
          threshold: req.settings?.threshold,
          maxScreenshots: req.settings?.maxScreenshots,
        });
      } catch (err) {
        // A refused request cannot succeed on a retry: recorded as the judge's error. 5xx and the rest: retried.
        if (err instanceof ModelRequestError)
          return failed('endpoint_refused', `judge error: ${err.message}`, endpoint);
        throw err;
      }
      return record(outcome, endpoint);
    },

    /** Waits for a task run started by an earlier run of the evaluation and returns how it ended. */
    async awaitEvalChild(req: { workflowId: string }): Promise<AttemptOutcome> {
      client ??= connectClient(deps.config);
      client.catch(() => (client = undefined));
      const handle = (await client).workflow.getHandle(req.workflowId);
      return withHeartbeat(async () => {
        try {
          return outcomeOfResult((await handle.result()) as TaskResult);
        } catch (err) {
          const outcome = outcomeOfFailure(err);
          // A failure that is no task outcome (the server went away mid-wait) is retried by Temporal.
          if (outcome.endReason === 'internal' && !isWorkflowFailure(err)) throw err;
          return outcome;
        }
      });
    },
  };
}

/** The judge's endpoint, under the agent's key rule: a configured key goes only to its own base URL. */
export function judgeEndpoint(
  config: ActivityDeps['config'],
  own: { endpoint?: string; baseUrl?: string; model?: string } | null,
  settings: JudgeSettings | undefined,
  ref: TaskSetRef,
  taskId: string,
): ModelEndpoint {
  const name = own?.endpoint ?? settings?.endpoint ?? (config.models.judge ? 'judge' : 'default');
  const rawUrl = own?.baseUrl ?? settings?.baseUrl;
  const baseUrl = rawUrl ? substituteSites(rawUrl, ref.sites ?? {}, `task ${taskId}`) : undefined;
  return resolveModelEndpoint(
    { name, baseUrl, model: own?.model ?? settings?.model },
    { models: config.models, overrides: config.modelOverrides, keys: config.modelKeys },
  );
}

/** What the judge sees of a run: its actions (one line each), answer, and screenshots read from the run store. */
export function judgedRun(
  task: string,
  answer: string | null,
  events: readonly Event[],
  read: (file: string) => Promise<Buffer | undefined>,
): JudgedRun {
  const actions: string[] = [];
  const paths: string[] = [];
  for (const e of events) {
    if (e.type === 'action') {
      const { thoughts: _t, ...args } = e.content.arguments as Record<string, unknown>;
      const described = e.action_nl_description?.trim();
      // The description holds the thoughts and the action on two lines: one line each here.
      actions.push((described || `${e.action_name} ${JSON.stringify(args)}`).replace(/\s*\n\s*/g, ' → ').slice(0, 300));
    } else if (e.observation_type === 'environment' && e.screenshot_path && !paths.includes(e.screenshot_path)) {
      paths.push(e.screenshot_path);
    }
  }
  return {
    task,
    answer,
    actions,
    screenshots: paths.map((p, i) => {
      const m = /screenshot_(\d+)_(pre|post)/.exec(p);
      const when = m ? (m[2] === 'pre' ? `before step ${m[1]}` : `after step ${m[1]}`) : p;
      return {
        path: p,
        label: `screenshot ${i + 1} of ${paths.length} (${when})`,
        load: async () => {
          const png = await read(p);
          if (!png) throw new Error(`screenshot ${p} is missing from the run folder`);
          // Smaller than the agent's view: enough to read a page, fewer tokens per judge call.
          const shot = await resizeScreenshot(png, 28, { format: 'jpeg', quality: 80, maxPixels: 1280 * 800 });
          return toDataUrl(shot.data, shot.mime);
        },
      };
    }),
  };
}

/** A base URL as recorded: without user info, query or fragment. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url;
  }
}

function isWorkflowFailure(err: unknown): boolean {
  return err instanceof Error && err.name === 'WorkflowFailedError';
}

function hostOf(url: string | null, ref: TaskSetRef): string | null {
  if (!url) return null;
  const placeholder = /^\{\{([A-Za-z0-9_-]+)\}\}/.exec(url);
  if (placeholder) return placeholder[1] ?? null;
  try {
    return new URL(substituteSites(url, ref.sites ?? {}, 'site')).host;
  } catch {
    return null;
  }
}
