// The decide activity (shared queue): the model call of a step, made by the task's environment's driver
// (environments/: the browser agent's in browser-decide.ts, the desktop agent's in desktop-decide.ts). Each
// rebuilds the chat from the run folder, calls the model, parses and records the action; a retry answers from the
// record and never calls the model twice for one step. The result carries the step's usage (for budgets).
import { eventId, parseEventId } from '../src/trajectory/ids';
import { addUsage, callsOf, emptyUsage } from '../src/trajectory/usage';
import type { DecideResult, StepRef, StepUsage } from '../src/contract/activities';
import type { Environments } from './environments/table';
import { deferredAction } from './step-records';
import type { RunFiles } from './support';

export function createDecideActivity(files: RunFiles, environments: Environments) {
  return {
    /**
     * The model call: rebuild the chat from the run folder, ask the model, parse, record the action. A reply that
     * is no valid action is recorded with its error and returned as `invalid` (the loop goes on; the model reads
     * the error next step), unless the task asked for Fara's terminate-on-parse-error.
     */
    async decide(req: StepRef): Promise<DecideResult> {
      const input = await files.input(req.runId);
      const decision = await environments.forTask(input.environment).decide(req, input);
      return { ...decision, usage: await stepUsage(files, req) };
    },
  };
}

/** What the step's recorded decision (its calls, in the stream or left for act) used: tokens and cost. */
async function stepUsage(files: RunFiles, req: StepRef): Promise<StepUsage> {
  const w = await files.writer(req.runId);
  const mine = (await w.events()).filter((e) => {
    const id = parseEventId(e.id);
    return e.type === 'action' && id?.kind === 'action' && id.step === req.step && id.generation === req.generation;
  });
  const first = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const deferred = mine.some((e) => e.id === first) ? undefined : await deferredAction(w, first);
  const totals = emptyUsage();
  for (const e of deferred ? [...mine, deferred] : mine) {
    if (e.type === 'action') for (const u of callsOf(e)) addUsage(totals, u);
  }
  return { tokens: totals.promptTokens + totals.completionTokens, costUsd: totals.costUsd };
}
