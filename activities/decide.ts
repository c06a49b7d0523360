// The decide activity (shared queue): the model call of a step, made by the task's environment's driver
// (environments/: the browser agent's in browser-decide.ts, the desktop agent's in desktop-decide.ts). Each
// rebuilds the chat from the run folder, calls the model, parses and records the action; a retry answers from the
// record and never calls the model twice for one step. The result carries the step's usage (for budgets).
import type { DecideResult, StepRef } from '../src/contract/activities';
import type { Environments } from './environments/table';
import { decisionUsage } from './step-usage';
import type { RunFiles } from './support';

export function createDecideActivity(files: RunFiles, environments: Environments) {
  return {
    /**
     * The model call: rebuild the chat from the run folder, ask the model, parse, record the action. An output that
     * is no valid action is recorded with its error and returned as `invalid` (the loop goes on; the model reads
     * the error next step), unless the task asked for Fara's terminate-on-parse-error.
     */
    async decide(req: StepRef): Promise<DecideResult> {
      const input = await files.input(req.runId);
      const decision = await environments.forTask(input.environment).decide(req, input);
      return { ...decision, usage: await decisionUsage(files, req) };
    },
  };
}
