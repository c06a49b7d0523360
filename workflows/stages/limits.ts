// The limits between steps (LIMITS_PATCH): the step's spending added and a used-up budget asked about, and loop
// detection (the same actions on an unchanged page, compared by an activity) told to the model, then asked about. The
// step limit and the other stops are agent-stops.ts. Deterministic; the bookkeeping is task-limits.ts.
import { loopNote, loopQuestion, parseLimitReply } from '../../src/agent/budget';
import type { LimitQuestion } from '../../src/contract/task';
import type { DecideCall, ObserveResult } from '../../src/contract/activities';
import type { StepEnd } from '../agent-stops';
import { addSpent, applyLimitReply, budgetReached, countRepeat, loopKey, repeatsLast } from '../task-limits';
import type { LoopVerdict } from '../task-limits';
import type { TaskContext } from './context';
import type { Questions } from './questions';

export class Limits {
  constructor(
    private readonly ctx: TaskContext,
    private readonly questions: Questions,
  ) {}

  /** After a step: its working time spent, then a used-up budget asked about (unless the step ended the task). */
  async afterStep(stepEnd: StepEnd): Promise<StepEnd> {
    const { state, task, patches, clock } = this.ctx;
    if (!patches.limitsOn) return stepEnd;
    addSpent(state, undefined, clock.working());
    task.publish();
    return stepEnd ?? (await this.checkBudget());
  }

  /** A budget used up asks the user (again while a reply raised it too little); `stop` ends the task. */
  private async checkBudget(): Promise<StepEnd> {
    for (;;) {
      const reached = budgetReached(this.ctx.state, this.ctx.input, this.ctx.state.step);
      if (!reached) return null;
      const end = await this.askLimit(reached.text, reached.expects);
      if (end !== null) return end;
    }
  }

  /**
   * Loop detection after a step's decision: the same actions as the step before on its URL, and a screen that did
   * not change (compared by an activity), count as a repeat. Only for steps of plain actions.
   */
  async trackLoop(obs: ObserveResult, calls: readonly DecideCall[]): Promise<LoopVerdict> {
    const { state, input, proxies, patches } = this.ctx;
    if (!patches.limitsOn || calls.some((c) => c.kind !== 'act')) return 'none';
    const key = loopKey(calls);
    const last = state.loop;
    let samePage = false;
    if (last && repeatsLast(state, key, obs.url)) {
      const distance = await proxies.shared(`step ${state.step} · same page?`).screenDistance({
        runId: input.runId,
        a: last.shot,
        b: obs.screenshot,
      });
      samePage = distance <= input.loop.maxDistance;
    }
    const summary = calls.map((c) => c.summary).join(', ');
    return countRepeat(state, { key, summary, url: obs.url, shot: obs.screenshot }, samePage, input.loop.repeats);
  }

  /** After the step's acts: a loop told to the model (a note with the next step) or asked about. */
  async afterLoop(verdict: LoopVerdict): Promise<StepEnd> {
    const { state, input, proxies } = this.ctx;
    const loop = state.loop;
    if (verdict === 'none' || !loop) return null;
    if (verdict === 'ask') return this.askLimit(loopQuestion(loop.summary, loop.count), { kind: 'loop' });
    await proxies.shared(`step ${state.step + 1} · loop note`).recordControl({
      runId: input.runId,
      step: state.step + 1,
      generation: state.generation,
      kind: 'loop',
      text: loopNote(loop.summary, loop.count),
    });
    return null;
  }

  /** The runtime's question about a budget or a loop, recorded and asked; the reply goes on, or ends the task. */
  private async askLimit(text: string, expects: LimitQuestion): Promise<StepEnd> {
    const { state, input, proxies } = this.ctx;
    const call = state.questionCount + 1;
    await proxies.shared(`step ${state.step} · ${expects.kind} question`).recordControl({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      kind: 'question',
      text,
      index: call,
      metadata: { asked_for: expects.kind === 'loop' ? 'loop' : `budget:${expects.budget}` },
    });
    if (!(await this.questions.ask(text, { by: 'limit', expects, call }))) return 'no_reply';
    const parsed = parseLimitReply(this.questions.lastReply, expects);
    // The validator refused anything else; a reply it never saw (an automatic one) that is no such reply stops.
    if (parsed.ok && applyLimitReply(state, expects, parsed.reply)) return null;
    return expects.kind === 'loop' ? 'loop' : 'budget';
  }
}
