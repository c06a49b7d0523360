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

/** What an act's tool used (its sub-calls), for an action whose tool calls a model; undefined for any other. */
export async function actUsage(files: RunFiles, req: ActInput): Promise<StepUsage | undefined> {
  const name = req.action['action'];
  if (typeof name !== 'string' || !ACTIONS_WITH_SUB_CALLS.includes(name)) return undefined;
  const w = await files.writer(req.runId);
  const id = eventId({ step: req.step, kind: 'action', generation: req.generation, call: req.call ?? 0 });
  const action = (await w.events()).find((e) => e.id === id);
  return isAction(action) ? totalOf(subCallsOf(action)) : undefined;
}
