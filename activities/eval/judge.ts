// The activity that judges a finished run with an LLM (WebJudge or a rubric; src/eval/judge.ts) and records the
// verdict in the run folder's verification.jsonl once (a retry reads it back); with what the judge sees of a run
// (judgedRun) and the endpoint it asks (judgeEndpoint, under the agent's key rule).
import { judgeRun, JUDGE_RESULT_TYPES, JUDGE_VERIFIERS } from '../../src/eval/judge';
import type { JudgedRun, JudgeOutcome, JudgeSettings, JudgeStage } from '../../src/eval/judge';
import { resizeScreenshot, toDataUrl } from '../../src/image/screenshot';
import { ModelClient, ModelRequestError } from '../../src/model/client';
import type { CallUsage, ModelEndpoint } from '../../src/model/client';
import { ModelEndpointMissing, ModelOverrideRefused, resolveModelEndpoint } from '../../src/model/endpoint-policy';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER, JUDGE_ITEM_HEADER } from '../../src/scripted/server';
import { substituteSites } from '../../src/eval/task-set';
import type { EvalTask } from '../../src/eval/task-set';
import { loadVerification } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import type { TrajectoryWriter } from '../../src/trajectory/writer';
import type { EvalActivities, JudgeRecord, JudgeRunInput, TaskSetRef } from '../../src/eval/records';
import { activitySignal, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import type { TaskReader } from './task-reader';

export function createJudgeActivity(
  deps: Pick<ActivityDeps, 'config'>,
  files: RunFiles,
  reader: TaskReader,
): Pick<EvalActivities, 'judgeEvalRun'> {
  return {
    /**
     * Judges a finished run with the LLM judge and records the verdict in its run folder (once: a retry reads it
     * back). The model is called with heartbeats; a 5xx or network failure throws (Temporal retries with backoff), a
     * refused request (4xx), a missing endpoint or an unreadable output is recorded as an error result (no score).
     */
    async judgeEvalRun(req: JudgeRunInput): Promise<JudgeRecord> {
      const task = await reader.taskAt(req.taskSet, req.index);
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
      // The judge's calls, each with its usage: recorded with the verdict, so a run's usage totals include them.
      const calls: JudgeCall[] = [];
      const record = (outcome: JudgeOutcome, endpoint: ModelEndpoint | null) =>
        recordVerdict(writer, task, verifier, outcome, endpoint, calls);
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
      const ask = askerOf(new ModelClient(endpoint), calls);
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
  };
}

/** Appends the judge's verdict (or error) to the run's verification.jsonl, rewrites its data point, and returns it. */
async function recordVerdict(
  writer: TrajectoryWriter,
  task: EvalTask,
  verifier: string,
  outcome: JudgeOutcome,
  endpoint: ModelEndpoint | null,
  calls: readonly JudgeCall[],
): Promise<JudgeRecord> {
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
      // Read by src/trajectory/usage.ts (usageTotals): the judge's tokens and cost count in the run's.
      ...(calls.length > 0 ? { model_calls: calls } : {}),
    },
  });
  await writer.writeDataPoint();
  return { verifier, score: outcome.score, reasoning: outcome.reasoning, error: outcome.error };
}

/** One model call of the judge, as its verification result records it. */
interface JudgeCall {
  stage: JudgeStage;
  item?: number;
  model: string;
  duration_ms: number;
  usage: CallUsage;
}

/**
 * How the judge asks its model: one call per stage (and item), heartbeating, aborted with the activity; each call
 * that answered is added to `calls`.
 */
function askerOf(client: ModelClient, calls: JudgeCall[]) {
  return (stage: JudgeStage, messages: Parameters<ModelClient['complete']>[0], item?: number) =>
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
        const started = Date.now();
        const completion = await client.complete(messages, { headers, signal: own.signal });
        calls.push({
          stage,
          ...(item !== undefined ? { item } : {}),
          model: client.endpoint.model,
          duration_ms: Date.now() - started,
          usage: completion.usage,
        });
        return completion.text;
      } finally {
        parent?.removeEventListener('abort', abort);
      }
    });
}

/** The judge's endpoint, under the agent's key rule: a configured key goes only to its own base URL. */
export function judgeEndpoint(
  config: ActivityDeps['config'],
  own: { endpoint?: string; baseUrl?: string; model?: string } | null,
  settings: JudgeSettings | undefined,
  ref: TaskSetRef,
  setTaskId: string,
): ModelEndpoint {
  const name = own?.endpoint ?? settings?.endpoint ?? (config.models.judge ? 'judge' : 'default');
  const rawUrl = own?.baseUrl ?? settings?.baseUrl;
  const baseUrl = rawUrl ? substituteSites(rawUrl, ref.sites ?? {}, `task ${setTaskId}`) : undefined;
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
