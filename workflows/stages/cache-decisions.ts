// A cached task's steps (input.cache, browser only): the decision cached for a page that looks like this one, when
// its element is still there (no model call); else the model's decision, kept in the cache once acted.
// Deterministic.
import type { DecideCall, ObserveResult, SessionRef } from '../../src/contract/activities';
import { ModelFallback } from './decisions';

export class CacheDecisions extends ModelFallback {
  /** This step was decided by the model: keep its decision once acted. */
  private rememberStep = false;

  async next(session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null> {
    const { state, input, proxies } = this.ctx;
    const counts = (state.cached ??= { hits: 0, healed: 0, decided: 0 });
    const got = await proxies.onSession(session, `step ${state.step} · cache`).cacheStep({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
      sessionId: session.sessionId,
    });
    if (got.kind !== 'diverged') {
      counts[got.kind === 'healed' ? 'healed' : 'hits'] += 1;
      state.invalidReplies = 0;
      return got.decision.calls ?? [got.decision];
    }
    counts.decided += 1;
    const calls = await this.model.decide(obs);
    this.rememberStep = calls !== null;
    return calls;
  }

  /** After a decided step is acted: its decision goes into the cache. */
  override async acted(): Promise<void> {
    if (!this.rememberStep) return;
    this.rememberStep = false;
    const { state, input, proxies } = this.ctx;
    await proxies.shared(`step ${state.step} · cache it`).cacheRemember({
      runId: input.runId,
      step: state.step,
      generation: state.generation,
    });
  }
}
