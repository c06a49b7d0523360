// Evaluation activities on the shared queue: read the task set (its size, then pages of task inputs: the set itself
// never enters workflow history whole), score a finished run by its rules into its run folder's verification.jsonl,
// and wait for a task run that an earlier run of the evaluation started (a child is awaitable only from the run
// that started it; after continue-as-new the client waits for it here, heartbeating).
import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { connectClient } from '../src/runtime/connect';
import { scoreByRules } from '../src/eval/checks';
import { filterTasks, loadTaskSet, substituteSites, TaskSetError } from '../src/eval/task-set';
import type { EvalTask } from '../src/eval/task-set';
import { TrajectoryWriter } from '../src/trajectory/writer';
import { loadVerification } from '../src/trajectory/reader';
import { TaskInputSchema } from '../workflows/contract';
import type { TaskResult } from '../workflows/contract';
import { outcomeOfFailure, outcomeOfResult } from '../workflows/eval-contract';
import type { AttemptOutcome, EvalTaskSpec, EvaluationInput, TaskSetRef } from '../workflows/eval-contract';
import { nonRetryable, withHeartbeat } from './support';
import type { ActivityDeps } from './support';

/** The verifier name of the rule checks in verification.jsonl (one entry per run: scoring twice is a no-op). */
export const RULES_VERIFIER = 'eval_rules';

export interface ScoreRunInput {
  taskSet: TaskSetRef;
  index: number;
  runId: string;
  outcome: AttemptOutcome;
}

export interface ScoreRunResult {
  score: number | null;
  reasoning: string;
  site: string | null;
  level: string | null;
  tags: string[];
}

type SpecOptions = Pick<EvaluationInput, 'model' | 'maxSteps' | 'taskDefaults'>;

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
  const input: EvalTaskSpec['input'] = {
    ...opts.taskDefaults,
    instruction: task.instruction,
    ...(task.startUrl ? { startUrl: substituteSites(task.startUrl, sites, where) } : {}),
    ...(maxSteps ? { maxSteps } : {}),
    ...(task.autoReply ? { autoReply: task.autoReply } : {}),
    model,
  };
  const parsed = TaskInputSchema.safeParse({ ...input, runId: 'check' });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TaskSetError(`${where}: field '${issue?.path.join('.') || 'input'}': ${issue?.message ?? 'invalid'}`);
  }
  return { index, taskId: task.id, input };
}

export function createEvalActivities(deps: ActivityDeps) {
  const cache = new Map<string, { mtimeMs: number; tasks: EvalTask[] }>();
  let client: Promise<Client> | undefined;

  /** The filtered task set (cached per file version); a bad file is a non-retryable TaskSetError. */
  function tasksOf(ref: TaskSetRef): EvalTask[] {
    try {
      const mtimeMs = fs.statSync(ref.path).mtimeMs;
      const key = JSON.stringify([ref.path, ref.format, ref.answers, ref.filter]);
      const hit = cache.get(key);
      if (hit && hit.mtimeMs === mtimeMs) return hit.tasks;
      const tasks = filterTasks(loadTaskSet(ref.path, { format: ref.format, answers: ref.answers }), ref.filter);
      cache.set(key, { mtimeMs, tasks });
      return tasks;
    } catch (err) {
      if (err instanceof TaskSetError) nonRetryable(err);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        nonRetryable(new TaskSetError(`no task set at ${ref.path}`));
      throw err;
    }
  }

  function specs(ref: TaskSetRef, opts: SpecOptions, offset: number, limit: number): EvalTaskSpec[] {
    const tasks = tasksOf(ref);
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
      const tasks = tasksOf(req.taskSet);
      specs(req.taskSet, req.options, 0, tasks.length);
      return tasks.length;
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
      const task = tasksOf(req.taskSet)[req.index];
      if (!task) nonRetryable(new TaskSetError(`the task set has no task #${req.index} any more (was it edited?)`));
      const about = { site: task.site ?? hostOf(task.startUrl, req.taskSet), level: task.level, tags: task.tags };
      const writer = await TrajectoryWriter.open(deps.config.runsDir, req.runId);
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
