// A step's model usage as the workflow counts it for budgets (StepUsage: tokens and cost, two small numbers): decide's
// calls (the step's recorded decision), and act's sub-calls (read_page's question), read from the run folder.
import { ACTIONS_WITH_SUB_CALLS } from '../src/agent/page-question';
import { eventId, parseEventId } from '../src/trajectory/ids';
import { addUsage, callsOf, emptyUsage, subCallsOf } from '../src/trajectory/usage';
import type { Action, Event } from '../src/trajectory/schema';
import type { ActInput, StepRef, StepUsage } from '../src/contract/activities';
import { deferredAction } from './step-records';
import type { RunFiles } from './support';

function totalOf(calls: ReturnType<typeof callsOf>): StepUsage {
  const totals = emptyUsage();
  for (const u of calls) addUsage(totals, u);
  return { tokens: totals.promptTokens + totals.completionTokens, costUsd: totals.costUsd };
}

/** What a list of `tool_sub_calls` entries used (the extraction's calls). */
export function subCallsUsage(list: unknown): StepUsage {
  return totalOf(subCallsOf(list));
}

const isAction = (e: Event | undefined): e is Action => e?.type === 'action';

/** What the step's decision used: its calls, in the stream or left for act (deferAction). */
export async function decisionUsage(files: RunFiles, req: StepRef): Promise<StepUsage> {
  const w = await files.writer(req.runId);
  const mine = (await w.events()).filter(isAction).filter((e) => {
    const id = parseEventId(e.id);
    return id?.kind === 'action' && id.step === req.step && id.generation === req.generation;
  });
  const first = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const deferred = mine.some((e) => e.id === first) ? undefined : await deferredAction(w, first);
  return totalOf((deferred ? [...mine, deferred] : mine).flatMap(callsOf));
}

/**
 * What an act's tool used: read_page's question (the action's `tool_sub_calls`), a desktop call's grounding (its tool
 * output's `metadata.tool_sub_calls`); undefined for an act that can have made none (no run folder read then).
 */
export async function actUsage(files: RunFiles, req: ActInput): Promise<StepUsage | undefined> {
  const name = req.action['action'];
  const asks = typeof name === 'string' && ACTIONS_WITH_SUB_CALLS.includes(name);
  if (!asks && req.call === undefined) return undefined;
  const w = await files.writer(req.runId);
  const events = await w.events();
  const at = { step: req.step, generation: req.generation, call: req.call ?? 0 };
  const action = events.find((e) => e.id === eventId({ ...at, kind: 'action' }));
  const tool = events.find((e) => e.id === eventId({ ...at, kind: 'tool' }));
  const calls = [
    ...(isAction(action) ? subCallsOf(action.tool_sub_calls) : []),
    ...subCallsOf((tool?.metadata as { tool_sub_calls?: unknown } | undefined)?.tool_sub_calls),
  ];
  return calls.length > 0 ? totalOf(calls) : undefined;
}
