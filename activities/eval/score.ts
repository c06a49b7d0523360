// The activity that scores a finished run by its task's rules (src/eval/checks.ts): the checks see the run's end
// reason, answer, last URL and final-page probe results, and the score goes into the run folder's verification.jsonl
// once (a retry reads it back).
import { scoreByRules } from '../../src/eval/checks';
import { judgeKindFor } from '../../src/eval/judge';
import { substituteSites } from '../../src/eval/task-set';
import { FINAL_PAGE_FILE } from '../../src/agent/final-page';
import type { FinalPageRecord } from '../../src/agent/final-page';
import { loadVerification } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import type { EvalActivities, ScoreRunInput, ScoreRunResult, TaskSetRef } from '../../src/eval/records';
import type { ActivityDeps, RunFiles } from '../support';
import type { TaskReader } from './task-reader';

/** The verifier name of the rule checks in verification.jsonl (one entry per run: scoring twice is a no-op). */
export const RULES_VERIFIER = 'eval_rules';

export function createScoreActivity(
  deps: Pick<ActivityDeps, 'config'>,
  files: RunFiles,
  reader: TaskReader,
): Pick<EvalActivities, 'scoreEvalRun'> {
  /** The run's final_page.json (its probe results), or null when it has none or it cannot be read. */
  async function finalPageOf(taskId: string): Promise<FinalPageRecord | null> {
    const text = await files.store.readText(`${taskId}/${FINAL_PAGE_FILE}`);
    if (text === undefined) return null;
    try {
      const record = JSON.parse(text) as FinalPageRecord;
      return Array.isArray(record.probes) ? record : null;
    } catch {
      return null;
    }
  }

  return {
    /** Scores a run by its task's rules and records the result in its run folder (once: a retry reads it back). */
    async scoreEvalRun(req: ScoreRunInput): Promise<ScoreRunResult> {
      const task = await reader.taskAt(req.taskSet, req.index);
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
      const finalUrl = finalUrlOf(await writer.events());
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
  };
}

/** The URL of the run's last environment observation that has one, or null. */
function finalUrlOf(events: readonly Event[]): string | null {
  let finalUrl: string | null = null;
  for (const e of events) {
    if (e.type === 'observation' && e.observation_type === 'environment' && typeof e.url === 'string' && e.url) {
      finalUrl = e.url;
    }
  }
  return finalUrl;
}

/** The site a task runs on, for the results: its start URL's placeholder name or host (null: none or unreadable). */
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
